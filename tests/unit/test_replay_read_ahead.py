"""Taiwan's "default of credit card clients": outcomes in a file without times, read ahead of
the predictions, so every join counts as a late prediction (``late_predictions: 16000``
for 16000 joins). The count is true, but alone in ``summary.json`` and the report's label
join counters it read like a lagging prediction stream. The summary now says the outcomes
were read ahead (``"outcomes_read_ahead": true``), replay prints why the count is expected,
and the report says so beside the counters; the count stays."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.replay.cli import read_ahead_line

from ._cli import init_then_replay

EXPECTED = "as expected here: the outcomes have no times (event_time: {source: arrival})"


def _taiwan(tmp: Path, n: int = 800, outcome_time: bool = False) -> None:
    """A Taiwan-shaped table: no times, an id, the label spelled with dots in the outcomes
    (``outcome_time``: the outcomes dated, and the predictions too)."""
    rng = np.random.default_rng(6)

    def frame(k: int) -> pd.DataFrame:
        return pd.DataFrame({"LIMIT_BAL": (rng.lognormal(11.8, 0.8, k) // 10000 * 10000),
                             "EDUCATION": rng.choice([1, 2, 3], k),
                             "PAY_AMT1": rng.lognormal(7.5, 1.5, k).round(0)})

    ref = frame(n)
    ref["default payment next month"] = (rng.random(n) < 0.22).astype(int)
    ref.to_csv(tmp / "ref.csv", index=False)
    live = frame(n)
    live.insert(0, "ID", np.arange(15001, 15001 + n))
    if outcome_time:
        live.insert(1, "ts", 1_700_000_000 + np.arange(n) * 600)
    live["score"] = rng.random(n).round(5)
    live.to_csv(tmp / "live.csv", index=False)
    out = pd.DataFrame({"ID": live["ID"],
                        "default.payment.next.month": (rng.random(n) < 0.22).astype(int)})
    if outcome_time:
        out.insert(1, "ts", live["ts"] + 30 * 86400)
    out.to_csv(tmp / "out.csv", index=False)


@given(st.booleans(), st.integers(0, 10**6), st.integers(0, 10**6))
def test_the_line_comes_only_for_outcomes_read_ahead_that_joined(
        ahead: bool, late: int, joined: int) -> None:
    summary = {"labels": {"late_predictions": late, "joined": joined},
               **({"outcomes_read_ahead": True} if ahead else {})}
    line = read_ahead_line(summary)
    if not ahead or not late:
        assert line is None
    else:
        assert line is not None
        assert line.startswith(f"outcomes read ahead: {late} of {joined} joins counted as "
                               "late_predictions, " + EXPECTED), line


def test_a_replay_of_outcomes_without_times_says_the_late_joins_are_expected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _taiwan(tmp_path)
    said_init, said = init_then_replay(tmp_path, capsys, reference="ref.csv",
                                       sample="live.csv", outcomes="out.csv",
                                       init_flags=["--pane", "200"])
    assert "outcomes time: arrival" in said_init, said_init
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["outcomes_read_ahead"] is True
    assert summary["labels"]["late_predictions"] == summary["labels"]["joined"] == 800
    line = next(ln.strip() for ln in said.splitlines() if "outcomes read ahead" in ln)
    assert line.startswith("outcomes read ahead: 800 of 800 joins counted as "
                           "late_predictions, " + EXPECTED), line
    assert "the prediction stream lags" in line, line
    report = (tmp_path / "o" / "report.html").read_text()
    assert ("late_predictions counts the 800 outcomes that were there before their "
            "prediction, as expected here") in report


def test_dated_outcomes_say_nothing_of_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _taiwan(tmp_path, outcome_time=True)
    _, said = init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                               outcomes="out.csv", init_flags=["--pane", "200"])
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "outcomes_read_ahead" not in summary and "outcomes read ahead" not in said
    assert "late_predictions counts" not in (tmp_path / "o" / "report.html").read_text()
