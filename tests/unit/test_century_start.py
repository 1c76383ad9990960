"""``event_time: {format: "%d-%b-%y", century_start: 1928}``: a two-digit year read in
fixed hundred years. Without the key the years end a year after the reader's today, so a
recording of 1920s/2020s dates replayed years apart read ``'27'`` a century apart and broke
"same input, same timeline"."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.eventtime import event_times
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

from ._cli import run_cli as _cli
from ._csvconn import one_stream


def _text(time: str) -> str:
    return one_stream("p.jsonl", ("event_id: id", f"event_time: {time}",
                                  "features: {x: {path: x, type: numeric}}"))


def _connector(time: str) -> Any:
    return parse_connector(_text(time), file="c.yaml")


def _epoch(d: dt.date) -> float:
    return (dt.datetime.combine(d, dt.time()) - dt.datetime(1970, 1, 1)).total_seconds()


def _decode(time: str, values: list[Any], now: dt.date) -> Any:
    dec = Decoder(_connector(time).stream("predictions"), FeatureSchema(numeric=("x",)),
                  now=_epoch(now))
    lines = b"\n".join(orjson.dumps({"id": f"r{i}", "ts": v, "x": 1.0})
                       for i, v in enumerate(values))
    return dec.decode_block(lines, source="p.jsonl")


def test_the_key_loads_into_the_mapping() -> None:
    t = _connector('{path: d, format: "%d-%b-%y", century_start: 1928}').stream(
        "predictions").event_time
    assert (t.format, t.century_start) == ("%d-%b-%y", 1928)
    assert _connector('{path: d, format: "%d-%b-%y"}').stream(
        "predictions").event_time.century_start is None


def test_a_recording_replayed_decades_apart_reads_the_same_times() -> None:
    time = '{path: ts, format: "%d-%b-%y", century_start: 1928}'
    texts = ["31-Dec-27", "01-Jan-28", "15-Mar-66", "28-Feb-97", "01-Jun-05"]
    want = [_epoch(dt.date(y, m, d)) for y, m, d in
            ((2027, 12, 31), (1928, 1, 1), (1966, 3, 15), (1997, 2, 28), (2005, 6, 1))]
    for today in (dt.date(2026, 12, 6), dt.date(2045, 1, 1), dt.date(2090, 7, 1)):
        batch, bad = _decode(time, texts, today)
        assert bad == [] and batch.event_time.tolist() == want, today
    # without the key the reading moves with today: what the key is for
    early, _ = _decode('{path: ts, format: "%d-%b-%y"}', texts[:1], dt.date(2026, 1, 1))
    late, _ = _decode('{path: ts, format: "%d-%b-%y"}', texts[:1], dt.date(2045, 1, 1))
    assert early.event_time.tolist() != late.event_time.tolist()


_FORMATS = ["%d-%b-%y", "%m/%d/%y", "%y%m%d", "%d.%m.%y %H:%M"]


@settings(max_examples=300, deadline=None)
@given(first=st.integers(1678, 2162), offset=st.integers(0, 99),
       month_day=st.dates(dt.date(2001, 1, 1), dt.date(2001, 12, 31)),
       today=st.dates(dt.date(1990, 1, 1), dt.date(2200, 1, 1)),
       fmt=st.sampled_from(_FORMATS))
def test_a_two_digit_year_reads_in_the_hundred_years_from_century_start(
    first: int, offset: int, month_day: dt.date, today: dt.date, fmt: str
) -> None:
    """Any day of the span, written with its year in two digits, reads back as itself,
    whatever today is."""
    day = month_day.replace(year=first + offset)
    text = pd.Timestamp(day).strftime(fmt)
    secs, missing, bad = event_times([text], "auto", fmt=fmt, century_start=first,
                                     now=_epoch(today))
    assert (secs.tolist(), missing.tolist(), bad.tolist()) == ([_epoch(day)], [False], [False])


@pytest.mark.parametrize(("first", "year"), [(1901, 2000), (2000, 2000), (1900, None),
                                             (2001, None)])
def test_29_february_00_in_a_century_year_without_it_is_a_bad_time(
        first: int, year: int | None) -> None:
    """'00' is 1900 or 2100 from 1900 or 2001: years with no 29 February."""
    secs, _, bad = event_times(["29-Feb-00"], "auto", fmt="%d-%b-%y", century_start=first)
    assert bad.tolist() == [year is None]
    if year is not None:
        assert secs.tolist() == [_epoch(dt.date(year, 2, 29))]


@pytest.mark.parametrize(("value", "message", "found"), [
    ("1500", "expected a year from 1678 to 2162", "1500"),
    ("2163", "expected a year from 1678 to 2162", "2163"),
    ("true", "expected a year from 1678 to 2162", "true"),
    ('"1928"', "expected a year from 1678 to 2162", "'1928'"),
    ("1928.5", "expected a year from 1678 to 2162", "1928.5"),
])  # fmt: skip
def test_a_bad_century_start_is_a_located_error(value: str, message: str, found: str) -> None:
    time = f'{{path: ts, format: "%d-%b-%y", century_start: {value}}}'
    with pytest.raises(ConnectorError) as info:
        _connector(time)
    err = info.value
    line = _text(time).splitlines().index(
        f"        event_time: {time}") + 1
    assert message in err.message and err.found == found, str(err)
    assert (err.file, err.line) == ("c.yaml", line) and err.col is not None, str(err)
    assert "Traceback" not in str(err)


@pytest.mark.parametrize(("time", "found"), [
    ('{path: ts, format: "%d-%b-%Y", century_start: 1928}', "format '%d-%b-%Y'"),
    ("{path: ts, century_start: 1928}", "no format"),
])
def test_century_start_without_a_two_digit_year_is_refused(time: str, found: str) -> None:
    with pytest.raises(ConnectorError) as info:
        _connector(time)
    assert "expected a format with %y" in info.value.message and info.value.found == found


def test_init_writes_the_hundred_years_of_today_beside_a_y_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = 200
    rng = np.random.default_rng(3)
    days = pd.to_datetime("1997-01-01") + pd.to_timedelta(np.arange(n), unit="D")
    ref = pd.DataFrame({"Term": rng.integers(12, 300, n),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], n)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live = pd.DataFrame({"LoanNr": np.arange(n) * 10 + 3, "ApprovalDate": days.strftime(
        "%d-%b-%y"), "Term": rng.integers(12, 300, n), "score": rng.uniform(0, 1, n)})
    live.to_csv(tmp_path / "live.csv", index=False)
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--id-field", "LoanNr",
                           "--time-field", "ApprovalDate", "--label-field", "MIS_Status",
                           "--label-bad", "CHGOFF", "--model", "m",
                           "--connector-out", str(tmp_path / "c.yaml"),
                           "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    first = dt.datetime.now(dt.UTC).year - 98  # ends next year, as the default reading
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["event_time"] == {"path": "ApprovalDate", "format": "%d-%b-%y",
                                    "century_start": first}
    assert f"century_start: {first}" in out and f"{first} to {first + 99}" in out, out
    code, _, err = _cli(["policy", "check", "--connector", str(tmp_path / "c.yaml"),
                         str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err


def test_init_writes_no_century_start_for_a_four_digit_year(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = 200
    rng = np.random.default_rng(3)
    days = pd.to_datetime("2015-01-01") + pd.to_timedelta(np.arange(n), unit="D")
    pd.DataFrame({"Term": rng.integers(12, 300, n), "bad": rng.integers(0, 2, n)}).to_csv(
        tmp_path / "ref.csv", index=False)
    pd.DataFrame({"id": np.arange(n), "issue_d": days.strftime("%b-%Y"),
                  "Term": rng.integers(12, 300, n), "score": rng.uniform(0, 1, n)}).to_csv(
        tmp_path / "live.csv", index=False)
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--id-field", "id", "--time-field",
                           "issue_d", "--label-field", "bad", "--model", "m",
                           "--connector-out", str(tmp_path / "c.yaml"),
                           "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert "century_start" not in (tmp_path / "c.yaml").read_text() + out


# -- a zone near new year: the century goes by the date as written ----------------------------

_ZONED = "%d-%b-%y %H:%M %z"


@settings(max_examples=400, deadline=None)
@given(first=st.integers(1678, 2162), edge=st.sampled_from(["first", "last", "any"]),
       offset=st.integers(0, 99), month_day=st.dates(dt.date(2000, 1, 1), dt.date(2000, 12, 31)),
       minutes=st.integers(0, 1439), zone=st.integers(-1439, 1439), arrow=st.booleans())
def test_a_zoned_time_near_new_year_reads_in_the_years_its_text_writes(
    first: int, edge: str, offset: int, month_day: dt.date, minutes: int, zone: int,
    arrow: bool,
) -> None:
    """'01-Jan-28 00:30 +0200' with century_start 1928 is 1928 (1927 in UTC: it was read
    in 2027), '31-Dec-27 23:30 -0200' is 2027 (2028 in UTC: it was read in 1928)."""
    year = {"first": first, "last": first + 99, "any": first + offset}[edge]
    if edge == "any":
        if month_day.month == 2 and month_day.day == 29 and not _leap(year):
            return
        day = month_day.replace(year=year)
    else:
        day = dt.date(year, 1, 1) if edge == "first" else dt.date(year, 12, 31)
    local = dt.datetime.combine(day, dt.time(minutes // 60, minutes % 60),
                                dt.timezone(dt.timedelta(minutes=zone)))
    text = local.strftime(_ZONED)
    raw: Any = pa.array([text, "15-Jun-50 12:00 +0000"]) if arrow else [text]
    secs, _, bad = event_times(raw, "auto", fmt=_ZONED, century_start=first)
    assert not bad[0] and secs[0] == local.timestamp(), (text, first)


def _leap(y: int) -> bool:
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0


@pytest.mark.parametrize(("text", "first", "want"), [
    ("01-Jan-28 00:30 +0200", 1928, "1927-12-31T22:30:00+00:00"),
    ("31-Dec-27 23:30 -0200", 1928, "2028-01-01T01:30:00+00:00"),
    ("29-Feb-96 00:30 +0200", 2001, "2096-02-28T22:30:00+00:00"),
    ("29-Feb-00 00:30 +0200", 2001, None),  # 2100 has no 29 February
    ("01-Mar-00 00:30 +0200", 2001, "2100-02-28T22:30:00+00:00"),
])
def test_the_written_date_decides_at_the_edges(text: str, first: int, want: str | None) -> None:
    secs, _, bad = event_times([text], "auto", fmt=_ZONED, century_start=first)
    if want is None:
        assert bad.tolist() == [True]
    else:
        assert secs.tolist() == [dt.datetime.fromisoformat(want).timestamp()]
