"""The report's bad-record share is of every record read, as the data-quality gate's is.

Before, the HTML report said "Bad records: N (x% of input)" with x = bad / (predictions +
bad): once the gate counted outcome records too, a run that read outcomes showed a share
above the one its ``bad_record_rate`` signal and the replay summary were taken of.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from driftwatch.report import RunData

from ._cli import run_cli
from .test_unknown_outcome_labels import _replay
from .test_unknown_outcome_labels import onboarded as onboarded  # the fixture, shared


def test_the_bad_share_is_of_predictions_outcomes_and_bad_records_read(
        onboarded: pd.DataFrame, capsys: pytest.CaptureFixture[str]) -> None:
    out = onboarded.copy()
    out.loc[out.index[-300:], "loan_status"] = ["Repurchased", "Sold"] * 150
    summary, said = _replay(out, capsys)
    bad, events = summary["bad_records"], summary["events"]
    assert bad == 300 and summary["outcome_records"] == len(out) - bad
    assert summary["records_read"] == events + len(out)  # each outcome row: joined or bad
    share = bad / (events + len(out))
    assert f"300 bad records ({share:.2%} of {events + len(out)} records read)" in said, said

    code, _, err = run_cli(["report", "-i", "run"], capsys)
    assert code == 0, err
    html = Path("run/report.html").read_text()
    head = re.search(r"Bad records: 300 \(([\d.]+)% of the ([\d,]+) records read: "
                     r"predictions, outcomes and bad ones\)", html)
    assert head is not None, re.findall(r"Bad records:[^<]*", html)
    assert float(head.group(1)) == pytest.approx(100 * share, abs=0.005)
    assert int(head.group(2).replace(",", "")) == events + len(out)
    assert float(head.group(1)) < 100 * bad / (events + bad)  # what it said before
    assert re.search(rf"bad records \({100 * share:.2f}% of records read\)", html), \
        re.findall(r"bad records \([^<]*", html)


def test_a_summary_from_before_records_read_takes_its_outcomes() -> None:
    run = RunData(Path("."), [{"window_id": 0}], {"events": 900, "outcomes": 80,
                                                  "bad_records": 20})
    assert run.bad_records() == (20, 1000)
