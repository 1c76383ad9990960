"""``init`` and ``replay`` on the shapes of more public tables and streams: Give Me Some
Credit (a 0/1 ``SeriousDlqin2yrs`` in the reference, written as JSON booleans by the
service that sends the outcomes)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli as _cli


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], ref: str, live: str, out: str,
          *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / ref), "--sample", str(tmp / live),
                 "--outcomes", str(tmp / out), "--model", "m", "--connector-out",
                 str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _timeline(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "timeline.jsonl").read_text().splitlines()]


def _gmsc(tmp: Path, n: int = 600) -> np.ndarray:
    """Give Me Some Credit's reference (0/1 label, pandas' blank-headed index) and a JSON
    stream whose outcomes say the label as ``true``/``false``; returns the outcomes."""
    rng = np.random.default_rng(3)
    util = rng.beta(0.6, 1.4, n).round(6)
    age = rng.integers(21, 90, n)
    score = (1 / (1 + np.exp(-(-3 + 2.5 * util)))).round(4)
    bad = rng.uniform(size=n) < score * 2
    pd.DataFrame({"SeriousDlqin2yrs": bad.astype(int),
                  "RevolvingUtilizationOfUnsecuredLines": util, "age": age,
                  "score": score}).to_csv(tmp / "cs-training.csv")
    with (tmp / "live.jsonl").open("w") as f, (tmp / "out.jsonl").open("w") as g:
        for i in range(n):
            f.write(json.dumps({"request_id": f"r{i}", "created_at": 1.7e9 + 60 * i,
                                "applicant": {"RevolvingUtilizationOfUnsecuredLines":
                                              float(util[i]), "age": int(age[i])},
                                "score": float(score[i])}) + "\n")
            g.write(json.dumps({"request_id": f"r{i}", "SeriousDlqin2yrs": bool(bad[i])})
                    + "\n")
    return bad


def test_a_boolean_outcome_reads_the_reference_s_1_as_true(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: bad = [] and good = [False, True], so every default counted as repaid
    _gmsc(tmp_path)
    code, out, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == [True] and label["good"] == [False], label
    assert "outcomes label: SeriousDlqin2yrs   bad = [True], good = [False]" in out, out


def test_a_boolean_outcome_given_as_label_bad_1_reads_true_as_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gmsc(tmp_path)
    code, _, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl",
                         "--label-bad", "1")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == [True] and label["good"] == [False], label


def test_replay_counts_the_true_outcomes_as_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    bad = _gmsc(tmp_path)
    code, _, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl")
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "predictions=live.jsonl", "outcomes=out.jsonl", "--out", "run"],
                        capsys)
    assert code == 0, err
    windows = _timeline(tmp_path / "run")
    assert sum(w["n_labelled"] for w in windows) == len(bad)
    assert sum(w["n_labelled_bad"] for w in windows) == int(bad.sum()) > 0
