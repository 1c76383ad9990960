"""init reads dates with a two-digit year and a month name (the SBA loan table's
``ApprovalDate``, ``"28-Feb-97"``): as the event time, with its format written, and as
dates to leave out of the features. Neither was recognised: the time was refused as 'not
epoch seconds, milliseconds or ISO-8601' and ``DisbursementDate`` became a category with a
level per day, a new category in every window of an unchanged stream."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.eventtime import event_times
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.onboard.infer import not_a_feature, text_formats
from driftwatch.schema import FeatureSchema

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
    assert fields["event_time"] == {"path": "ApprovalDate", "format": "%d-%b-%y",
                                    "century_start": dt.datetime.now(dt.UTC).year - 98}
    assert "DisbursementDate" not in fields["features"]
    assert any(x.startswith("ignore: DisbursementDate") and "dates" in x
               for x in out.splitlines()), out


# -- where a two-digit year falls: never more than a year after today ------------------------


def _epoch(d: dt.datetime) -> float:
    return (d - dt.datetime(1970, 1, 1)).total_seconds()


def test_the_decoder_reads_a_1960s_year_a_century_back_by_today() -> None:
    """strptime reads '66' as 2066: SBA loans of 1966 were approved in the future."""
    mapping = StreamMapping("p", FieldPath.parse("id"),
                            TimeField(FieldPath.parse("d"), format="%d-%b-%y"))
    texts = ["15-Mar-66", "31-Dec-68", "01-Jan-69", "28-Feb-97", "01-Jun-27"]
    recs = [json.dumps({"id": str(i), "d": t}).encode() for i, t in enumerate(texts)]
    today = Decoder(mapping, FeatureSchema(), now=_epoch(dt.datetime(2026, 12, 6)))
    batch, bad = today.decode(recs, source="f", positions=np.arange(len(recs)))
    assert bad == []
    assert batch.event_time.tolist() == [
        _epoch(dt.datetime(y, m, d)) for y, m, d in
        ((1966, 3, 15), (1968, 12, 31), (1969, 1, 1), (1997, 2, 28), (2027, 6, 1))]
    later = Decoder(mapping, FeatureSchema(), now=_epoch(dt.datetime(2065, 6, 1)))
    assert later.decode(recs[:1], source="f", positions=np.arange(1))[0].event_time.tolist() == [
        _epoch(dt.datetime(2066, 3, 15))]  # within a year of that day: as written


@settings(max_examples=200, deadline=None)
@given(day=st.dates(dt.date(1902, 1, 1), dt.date(2100, 12, 31)),
       today=st.dates(dt.date(2001, 1, 1), dt.date(2099, 12, 31)),
       fmt=st.sampled_from(["%d-%b-%y", "%m/%d/%y", "%y%m%d"]))
def test_a_two_digit_year_lands_in_the_hundred_years_up_to_a_year_after_today(
    day: dt.date, today: dt.date, fmt: str
) -> None:
    now = _epoch(dt.datetime.combine(today, dt.time()))
    text = day.strftime(fmt)
    got = event_times([text], "auto", fmt=fmt, now=now)[0][0]
    want = dt.datetime.combine(day, dt.time())
    while _epoch(want) > now + 366 * 86_400:
        want = want.replace(year=want.year - 100)
    while _epoch(want.replace(year=want.year + 100)) <= now + 366 * 86_400:
        want = want.replace(year=want.year + 100)
    if not (day.month == 2 and day.day == 29):  # a century off may be no leap year
        assert got == _epoch(want), (text, today)


def test_a_stream_crossing_1968_replays_in_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'31-Dec-68' was 2068 and '01-Jan-69' 1969: a window from 1969 to 2068 and the
    timeline jumping back a century."""
    rng = np.random.default_rng(4)
    days = pd.date_range("1967-01-01", "1970-12-31")
    n = 3000
    ref = pd.DataFrame({"NoEmp": rng.poisson(8, n), "score": rng.uniform(0, 1, n).round(3),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], n, p=[0.8, 0.2])})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live = pd.DataFrame({"LoanNr_ChkDgt": 1_000_003_000 + 7 * np.arange(n),
                         "ApprovalDate": pd.Series(np.sort(rng.choice(days, n))).dt.strftime(
                             "%d-%b-%y"),
                         "NoEmp": rng.poisson(8, n), "score": rng.uniform(0, 1, n).round(3),
                         "MIS_Status": rng.choice(["P I F", "CHGOFF"], n, p=[0.8, 0.2])})
    live.drop(columns="MIS_Status").to_csv(tmp_path / "pred.csv", index=False)
    live[["LoanNr_ChkDgt", "MIS_Status"]].to_csv(tmp_path / "out.csv", index=False)
    args = ["--connector", str(tmp_path / "c.yaml"), "--policy", str(tmp_path / "p.yaml")]
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "pred.csv"), "--outcomes", str(tmp_path / "out.csv"),
                           "--label-bad", "CHGOFF", "--pane", "250", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                         capsys)
    assert code == 0, err
    span = re.search(r"a window of 250 events spans about (\d+)d", out)
    assert span is not None and 100 < int(span[1]) < 140, out  # 4 years / 12: not a century
    code, _, err = _cli(["replay", "-q", "--no-report", *args, "-i", str(tmp_path / "pred.csv"),
                         str(tmp_path / "out.csv"), "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    windows = [json.loads(x) for x in (tmp_path / "o/timeline.jsonl").read_text().splitlines()]
    starts = [w["start"] for w in windows if w["n_events"]]
    assert starts == sorted(starts) and starts[0].startswith("1967-01-01"), starts
    assert all(w["end"] <= "1971" for w in windows), [w["end"] for w in windows]
    assert {w["tier"] for w in windows} == {"none"}
