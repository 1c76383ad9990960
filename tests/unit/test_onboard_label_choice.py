"""With an outcomes sample, the label is a column the predictions do not carry: Kaggle's
credit_risk_dataset has ``loan_status`` (the outcome) beside ``cb_person_default_on_file``
(a Y/N feature whose name looks like a label)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli


def _credit_risk(tmp: Path, *, outcome: str = "loan_status", live_label: bool = False) -> None:
    rng = np.random.default_rng(0)

    def frame(n: int, start: int) -> pd.DataFrame:
        return pd.DataFrame({
            "id": np.arange(start, start + n),
            "person_income": rng.lognormal(10.8, 0.5, n).round(0),
            "loan_intent": rng.choice(["EDUCATION", "MEDICAL", "VENTURE"], n),
            outcome: (rng.random(n) < 0.22).astype(int),
            "cb_person_default_on_file": rng.choice(["Y", "N"], n, p=[0.18, 0.82]),
            "score": rng.uniform(0, 1, n).round(4),
        })

    frame(2000, 0).to_csv(tmp / "ref.csv", index=False)
    live = frame(1500, 10**6)
    live.insert(1, "ts", 1.7e9 + np.arange(1500) * 60.0)
    (live if live_label else live.drop(columns=[outcome])).to_csv(tmp / "live.csv", index=False)
    live[["id", outcome]].to_csv(tmp / "out.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                    "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml"), *extra], capsys)


def _fields(tmp: Path) -> tuple[dict[str, object], dict[str, object]]:
    streams = yaml.safe_load((tmp / "c.yaml").read_text())["source"]["streams"]
    return streams["predictions"]["fields"], streams["outcomes"]["fields"]


def test_a_feature_named_like_a_label_is_not_the_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _credit_risk(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    pred, outc = _fields(tmp_path)
    assert out.startswith("label: loan_status "), out
    assert outc["label"]["path"] == "loan_status"  # type: ignore[index]
    assert "cb_person_default_on_file" in pred["features"]  # type: ignore[operator]


def test_a_label_named_so_and_only_in_the_outcomes_is_still_found_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _credit_risk(tmp_path, outcome="defaulted")
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert out.startswith("label: defaulted "), out


def test_label_field_still_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _credit_risk(tmp_path, live_label=True)  # the live sample carries the outcome too
    code, out, err = _init(tmp_path, capsys, "--label-field", "loan_status")
    assert code == 0, err
    assert out.startswith("label: loan_status "), out


def test_without_outcomes_the_hint_names_the_column_missing_from_the_sample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _credit_risk(tmp_path, outcome="charged_off")  # named unlike a label
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                            str(tmp_path / "live.csv"), "--model", "m", "--connector-out",
                            str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                           capsys)
    assert code != 0
    assert "not found in the sample" in err and "--label-field charged_off" in err, err


def test_without_outcomes_loan_status_is_the_label_by_its_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # it was cb_person_default_on_file, named like a default flag
    _credit_risk(tmp_path)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                              str(tmp_path / "live.csv"), "--model", "m", "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert out.startswith("label: loan_status "), out
    pred = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert "cb_person_default_on_file" in pred["features"]


def test_a_column_missing_on_every_reference_row_is_no_feature(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _credit_risk(tmp_path)
    for name, value in (("ref.csv", None), ("live.csv", 3.0)):
        df = pd.read_csv(tmp_path / name)
        df["bureau_score"] = value  # filled only since the model went live
        df.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "ignore: bureau_score" in out and "missing on every one of the reference's" in out
    pred, _ = _fields(tmp_path)
    assert "bureau_score" not in pred["features"]  # type: ignore[operator]


@pytest.mark.parametrize(("name", "values", "said"), [
    ("y", ["yes", "no"], "'yes' taken as the event the model predicts, so bad "
                          "(--label-bad no if 'yes' is the good outcome)"),
    ("target", [1, 0], None),  # the name says 1 is the event
    ("loan_status", [1, 0], None),  # a 1 is the event by every convention: no word
    ("outcome", ["Y", "N"], "'Y' taken as the event the model predicts, so bad "
                            "(--label-bad N if 'Y' is the good outcome)"),
])
def test_a_yes_no_label_whose_name_says_neither_is_said_to_be_bad_when_true(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, values: list[object],
        said: str | None) -> None:
    """Bank Marketing's ``y`` (yes: the client subscribed) was made bad = ['yes'] without
    a word on why: the user could not tell whether init had read the column's meaning."""
    rng = np.random.default_rng(2)
    n = 1500
    ref = pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 90, n),
                        "job": rng.choice(["admin.", "technician"], n),
                        name: rng.choice(values, n, p=[0.12, 0.88])})
    ref.drop(columns=["id"]).to_csv(tmp_path / "ref.csv", index=False)
    live = ref.assign(ts=1.7e9 + np.arange(n) * 60.0, score=rng.random(n).round(3))
    live.to_csv(tmp_path / "live.csv", index=False)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                              str(tmp_path / "live.csv"), "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith(f"label: {name} "))
    if said is None:
        assert "name says neither" not in line, line
    else:
        assert said in line, line
