"""Outcome label values the connector names on none of its lists (``bad``, ``good``,
``pending``): another lender's loan states (``Repurchased``, ``Sold``; Lending Club's own
final ``Default``, which a sample lacks, init lists as bad). They are not guessed: each is
a bad record (``bad_label``), counted, dead-lettered, and a burst of them is a data-quality
fault (a label feed that changed is a pipeline matter, alerted on before a model is changed
on it), while a few rejected rows among many outcomes are not. Checked on Lending
Club-shaped data replayed with its outcomes file read after its predictions (no outcome
times: joined where they arrive)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

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
    out.loc[out.index[-300:], "loan_status"] = ["Repurchased", "Sold"] * 150
    summary, said = _replay(out, capsys)
    assert summary["bad_by_reason"] == {"bad_label": 300}, summary["bad_by_reason"]
    faults = summary["data_quality_faults"]
    assert faults and "bad_record_rate" in faults[0]["signals"], (faults, said)


def test_the_summary_names_each_unknown_label_and_the_connector_key_that_takes_it(
        onboarded: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: '300 bad records' and a dead-letter file whose details said 'expected one of
    [...] (bad) or [...] (good)', without the pending list or where a value goes. Adding
    each value where the line says clears them."""
    out = onboarded.copy()
    out.loc[out.index[-300:], "loan_status"] = ["Repurchased", "Repurchased", "Sold"] * 100
    summary, said = _replay(out, capsys)
    assert summary["unknown_labels"] == {"outcomes": {"Repurchased": 200, "Sold": 100}}
    assert ("  unknown labels: 'Repurchased' x200, 'Sold' x100 on the outcomes stream are "
            "on none of its connector's label lists (dead-lettered as bad_label): add each to "
            "streams.outcomes.fields.label bad: or good: if it is an outcome, pending: if it "
            "is no outcome yet") in said.splitlines(), said
    dead = [json.loads(x) for x in Path("run/dead_letter.jsonl").read_text().splitlines()]
    assert all("is on none of the connector's label lists" in d["detail"] for d in dead)
    conn = yaml.safe_load(Path("c.yaml").read_text())
    label = conn["source"]["streams"]["outcomes"]["fields"]["label"]
    label["bad"].append("Sold")
    label["pending"] = [*label.get("pending", []), "Repurchased"]
    Path("c.yaml").write_text(yaml.safe_dump(conn))
    summary, _ = _replay(out, capsys)
    assert summary["bad_records"] == 0 and summary["unknown_labels"] == {}, summary
    assert summary["labels"]["invalid_outcomes"] == 200, summary["labels"]


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
