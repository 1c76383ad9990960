"""init reads dates with a two-digit year and a month name (the SBA loan table's
``ApprovalDate``, ``"28-Feb-97"``): as the event time, with its format written, and as
dates to leave out of the features. Neither was recognised: the time was refused as 'not
epoch seconds, milliseconds or ISO-8601' and ``DisbursementDate`` became a category with a
level per day, a new category in every window of an unchanged stream."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.onboard.infer import not_a_feature, text_formats

from ._cli import run_cli as _cli


def test_a_two_digit_year_after_a_month_name_is_a_date() -> None:
    assert text_formats(["28-Feb-97", "01-Jan-01"]) == ["%d-%b-%y"]
    assert (not_a_feature(pd.Series(["28-Feb-97", "03-Mar-97"])) or "").startswith("dates")


def test_init_reads_an_sba_date_as_the_event_time_and_ignores_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = 300
    rng = np.random.default_rng(2)
    days = pd.to_datetime("1997-01-01") + pd.to_timedelta(np.arange(n), unit="D")
    ref = pd.DataFrame({"Term": rng.integers(12, 300, n),
                        "DisbursementDate": (days + pd.Timedelta(days=30)).strftime("%d-%b-%y"),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], n)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live = pd.DataFrame({"LoanNr_ChkDgt": np.arange(n) * 10 + 3,
                         "ApprovalDate": days.strftime("%d-%b-%y"),
                         "Term": rng.integers(12, 300, n),
                         "DisbursementDate": (days + pd.Timedelta(days=30)).strftime("%d-%b-%y"),
                         "score": rng.uniform(0, 1, n).round(3)})
    live.to_csv(tmp_path / "live.csv", index=False)
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--id-field", "LoanNr_ChkDgt",
                           "--time-field", "ApprovalDate", "--label-field", "MIS_Status",
                           "--label-bad", "CHGOFF",
                           "--model", "m", "--connector-out", str(tmp_path / "c.yaml"),
                           "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["event_time"] == {"path": "ApprovalDate", "format": "%d-%b-%y"}
    assert "DisbursementDate" not in fields["features"]
    assert any(x.startswith("ignore: DisbursementDate") and "dates" in x
               for x in out.splitlines()), out
