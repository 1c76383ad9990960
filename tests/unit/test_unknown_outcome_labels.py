"""Outcome label values the connector names on none of its lists (``bad``, ``good``,
``pending``): another lender's loan state (``Repurchased``), a final state the sample
lacked (``Default``). They are not guessed: each is a bad record (``bad_label``), counted,
dead-lettered, and a burst of them is a data-quality fault (a label feed that changed is a
pipeline matter, alerted on before a model is changed on it), while a few rejected rows
among many outcomes are not. Checked on Lending Club-shaped data replayed with its
outcomes file read after its predictions (no outcome times: joined where they arrive)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import run_cli


def _lending_club(n: int, seed: int, start: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rate = rng.uniform(6, 28, n).round(2)
    p_bad = 1 / (1 + np.exp(-(rate - 18) / 3))
    return pd.DataFrame({
        "id": np.arange(start, start + n),
        "loan_amnt": rng.integers(10, 350, n) * 100,
        "int_rate": [f" {r:.2f}%" for r in rate],
        "grade": rng.choice(list("ABCDEFG"), n),
        "annual_inc": rng.lognormal(11.1, 0.5, n).round(2),
        "dti": rng.uniform(0, 35, n).round(2),
        "loan_status": np.where(rng.uniform(size=n) < p_bad, "Charged Off", "Fully Paid"),
        "score": (p_bad * 0.8 + rng.uniform(0, 0.2, n)).round(4),
    })


@pytest.fixture
def onboarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> pd.DataFrame:
    monkeypatch.chdir(tmp_path)
    _lending_club(3000, 1, 0).drop(columns="score").to_csv("ref.csv", index=False)
    live = _lending_club(3000, 2, 10**6)
    live.insert(1, "ts", 1_700_000_000 + 600 * np.arange(len(live)))
    live.drop(columns="loan_status").to_csv("pred.csv", index=False)
    live[["id", "loan_status"]].to_csv("out-sample.csv", index=False)
    code, _, err = run_cli(["init", "-r", "ref.csv", "-s", "pred.csv", "--outcomes",
                            "out-sample.csv", "-m", "lc", "--connector-out", "c.yaml",
                            "--policy-out", "p.yaml", "--pane", "1000"], capsys)
    assert code == 0, err
    return live[["id", "loan_status"]]


def _replay(outcomes: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    outcomes.to_csv("out.csv", index=False)
    code, said, err = run_cli(["replay", "-c", "c.yaml", "-p", "p.yaml", "-i",
                               "predictions=pred.csv", "outcomes=out.csv", "-o", "run",
                               "--no-report"], capsys)
    assert code == 0, err
    return json.loads(Path("run/summary.json").read_text()), said


def test_a_burst_of_unknown_outcome_labels_is_a_data_quality_fault(
        onboarded: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the 300 rejected outcomes fell in a pane with no prediction after the
    stream's last window, which was dropped: 300 bad records and no data-quality fault."""
    out = onboarded.copy()
    out.loc[out.index[-300:], "loan_status"] = ["Repurchased", "Default"] * 150
    summary, said = _replay(out, capsys)
    assert summary["bad_by_reason"] == {"bad_label": 300}, summary["bad_by_reason"]
    faults = summary["data_quality_faults"]
    assert faults and "bad_record_rate" in faults[0]["signals"], (faults, said)


def test_a_few_rejected_outcome_rows_are_no_fault(
        onboarded: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    """Lending Club's trailer rows ('Total amount funded in policy code 1: ...', no
    status) at the end of the outcomes file: 2 bad records among 3000 outcomes read. Taken
    as a share of the predictions in their pane (none), they were 100% bad records."""
    out = pd.concat([onboarded, pd.DataFrame({
        "id": ["Total amount funded in policy code 1: 6417608175",
               "Total amount funded in policy code 2: 1944088810"],
        "loan_status": [None, None]})], ignore_index=True)
    summary, _ = _replay(out, capsys)
    assert summary["bad_records"] == 2, summary["bad_by_reason"]
    assert summary["data_quality_faults"] == [], summary["data_quality_faults"]
