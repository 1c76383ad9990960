"""A flag given to ``init`` acts or is refused with the reason: ``--label-bad`` with no
label column (German credit's ``credit_risk``, 1 good / 2 bad, is not named like a label),
``--approve`` with no decision, ``--score-is`` with no score, ``--ignore`` of a column the
reference lacks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli


def _german(tmp: Path, *, score: str | None = None) -> None:
    rng = np.random.default_rng(3)
    n = 300
    pd.DataFrame({
        "duration": rng.integers(6, 60, n),
        "amount": rng.normal(3000, 900, n).round(1),
        "telephone": rng.choice([1, 2], n),  # two values, 2 among them: not the label
        "credit_risk": rng.choice([1, 2], n, p=[0.7, 0.3]),
    }).to_csv(tmp / "ref.csv", index=False)
    with (tmp / "live.jsonl").open("w") as f:
        for i in range(200):
            rec = {"id": f"a{i}", "ts": 1_714_550_400 + 60 * i,
                   "duration": int(rng.integers(6, 60)),
                   "amount": float(rng.normal(3000, 900)),
                   "telephone": int(rng.choice([1, 2])),
                   "credit_risk": int(rng.choice([1, 2]))}
            if score:
                rec[score] = float(rng.random())
            f.write(json.dumps(rec) + "\n")


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.jsonl"), "--model", "m", "--connector-out",
                    str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def test_label_bad_without_a_label_column_is_refused_naming_the_columns_holding_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "2")
    assert code == 2 and out == ""
    assert "--label-bad 2: no label column found" in err, err
    assert "two-valued columns holding it: telephone, credit_risk" in err, err
    assert "--label-field NAME" in err and "Traceback" not in err
    assert not (tmp_path / "c.yaml").exists()


def test_label_bad_with_the_label_named_makes_it_the_label_not_a_feature(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "2", "--label-field",
                           "credit_risk")
    assert code == 0, err
    assert out.startswith("label: credit_risk "), out
    assert "bad = [2], good = [1]" in out
    assert "is named like a score but" not in out  # credit_risk matches *risk*; it is the label
    pred = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert pred["label"] == {"path": "credit_risk", "bad": [2], "good": [1]}
    assert "credit_risk" not in pred["features"]


@pytest.mark.parametrize(("flags", "said"), [
    (["--label-bad", "3"], "--label-bad 3: no value of the label column credit_risk is one"),
    (["--label-bad", "1", "--label-bad", "2"],
     "every value of the label column credit_risk is bad"),
])
def test_label_bad_values_the_label_lacks_or_all_of_its_values_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
        said: str) -> None:
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, *flags, "--label-field", "credit_risk")
    assert code == 2 and said in err, err
    assert "values 1, 2" in err


def test_approve_without_a_decision_column_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--approve", "yes")
    assert code == 2 and "--approve yes: no decision column found" in err, err
    assert "--decision-field NAME" in err


def test_approve_naming_no_value_of_the_decision_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--decision-field", "telephone", "--approve", "Y")
    assert code == 2, err
    assert "--approve Y: no value of the decision column telephone is one" in err, err


def test_score_is_applies_to_a_score_only_the_stream_has(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path, score="prob")
    code, out, err = _init(tmp_path, capsys, "--score-is", "p_good")
    assert code == 0, err
    assert "score: prob " in out and "P(good)" in out, out
    policy = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert policy["reference"]["score_is"] == "p_good"


def test_score_is_with_no_score_anywhere_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--score-is", "p_good")
    assert code == 2 and "--score-is p_good: no score found" in err, err
    assert "--score-field NAME" in err


def test_ignore_of_a_column_the_reference_lacks_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--ignore", "nosuch", "--ignore", "amount")
    assert code == 2 and "--ignore nosuch: no such reference column" in err, err
    code, _, err = _init(tmp_path, capsys, "--ignore", "id")
    assert code == 2 and "id only in the sample" in err, err


def test_label_bad_values_the_sample_lacks_are_still_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a delinquency code the first records lack (3 here) must not come later as an
    # unknown label, dead-lettered: the user said it is bad
    _german(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--label-bad", "2", "--label-bad", "3",
                           "--label-field", "credit_risk")
    assert code == 0, err
    pred = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert pred["label"] == {"path": "credit_risk", "bad": [2, 3], "good": [1]}
