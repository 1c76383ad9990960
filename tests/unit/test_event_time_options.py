"""``event_time`` ``format:`` (text in a strptime format) and ``origin:`` (numbers are offsets
from an instant): what loads, what a user is told when it does not, and what every reader
(JSON lines, Kafka payloads, CSV, Parquet) makes of the values."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.eventtime import digit_width, event_times, format_problem, parse_origin
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("x",))
ULB_START = "2013-09-01T00:00:00Z"
ULB_EPOCH = 1_377_993_600.0  # ULB_START in epoch seconds

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      paths: [PATHS]
      fields:
        event_id: id
        event_time: TIME
        features: {x: {path: x, type: numeric}}
"""


def connector(time: str, paths: str = "p.jsonl", base_dir: Path | None = None) -> Any:
    return parse_connector(CONNECTOR.replace("TIME", time).replace("PATHS", paths),
                           file="c.yaml", base_dir=base_dir)


def error_of(time: str) -> ConnectorError:
    with pytest.raises(ConnectorError) as info:
        connector(time)
    return info.value


def where(text: str, snippet: str) -> tuple[int, int]:
    for n, line in enumerate(text.splitlines(), 1):
        if snippet in line:
            return n, line.index(snippet) + 1
    raise AssertionError(snippet)


def decode(time: str, values: list[Any], *, block: bool = True) -> tuple[Any, list[Any]]:
    dec = Decoder(connector(time).stream("predictions"), SCHEMA, block_parse=block)
    lines = b"\n".join(orjson.dumps({"id": f"r{i}", "ts": v, "x": 1.0})
                       for i, v in enumerate(values))
    return dec.decode_block(lines, source="p.jsonl")


# -- loading --------------------------------------------------------------------------------


def test_format_and_origin_load_into_the_mapping() -> None:
    t = connector('{path: issue_d, format: "%b-%Y"}').stream("predictions").event_time
    assert (t.path.text, t.unit, t.format, t.origin) == ("issue_d", "auto", "%b-%Y", None)
    t = connector(f'{{path: Time, unit: s, origin: "{ULB_START}"}}').stream(
        "predictions").event_time
    assert (t.unit, t.format, t.origin) == ("s", None, ULB_START)


@pytest.mark.parametrize(("origin", "seconds"), [
    ("2013-09-01T00:00:00Z", ULB_EPOCH),        # YAML reads it as an aware datetime
    ("2013-09-01 02:00:00+02:00", ULB_EPOCH),
    ("2013-09-01", ULB_EPOCH),                  # a date, no zone: UTC midnight
    ("2013-09-01T00:00:00", ULB_EPOCH),         # a naive datetime: UTC
])  # fmt: skip
def test_an_unquoted_origin_yaml_reads_as_a_date_is_taken_as_written(
        origin: str, seconds: float) -> None:
    t = connector(f"{{path: Time, origin: {origin}}}").stream("predictions").event_time
    assert t.origin is not None and parse_origin(t.origin) == seconds


@pytest.mark.parametrize(("time", "at", "message", "found"), [
    ('{path: ts, format: "Mon-YYYY"}', '"Mon-YYYY"',
     "expected a strptime format with a year directive, such as '%b-%Y'", "'Mon-YYYY'"),
    ('{path: ts, format: "ISO8601"}', '"ISO8601"', "with a year directive", "'ISO8601'"),
    ('{path: ts, format: "%d/%m %H:%M"}', '"%d/%m', "with a year directive", "'%d/%m %H:%M'"),
    ('{path: ts, format: "%q-%Y"}', '"%q-%Y"', "'q' is a bad directive", "'%q-%Y'"),
    ('{path: ts, format: "%Y-%Y"}', '"%Y-%Y"', "each directive once", "'%Y-%Y'"),
    ('{path: ts, format: "%Y%"}', '"%Y%"', "stray %", "'%Y%'"),
    ('{path: ts, format: "%b-%Y", unit: s}', "s}",
     "a format reads text: expected unit auto or iso", "'s'"),
    ('{path: ts, format: "%b-%Y", origin: "2013-09-01"}', "origin",
     "origin cannot be combined with format", None),
    ('{path: ts, origin: "the start"}', '"the start"',
     "expected an ISO-8601 instant such as '2013-09-01T00:00:00Z'", "'the start'"),
    ('{path: ts, origin: "now"}', '"now"', "expected an ISO-8601 instant", "'now'"),
    ("{path: ts, origin: 5}", "5}", "expected text", "5"),
    ('{path: ts, origin: "2013-09-01", unit: iso}', "iso}",
     "an origin makes numbers offsets: expected unit s, ms, us, ns, min, h or d", "'iso'"),
    ('{source: kafka_timestamp, format: "%b-%Y"}', "format",
     "format reads the values at a path; source: kafka_timestamp has no path", None),
])  # fmt: skip
def test_a_bad_format_or_origin_is_a_located_error(
        time: str, at: str, message: str, found: str | None) -> None:
    text = CONNECTOR.replace("TIME", time)
    err = error_of(time)
    assert message in err.message, err.message
    assert err.file == "c.yaml" and (err.line, err.col) == where(text, at), str(err)
    assert err.found == found
    assert "Traceback" not in str(err)


def test_an_unquoted_format_is_a_yaml_error_that_says_where() -> None:
    err = error_of("{path: ts, format: %b-%Y}")
    assert "YAML syntax error" in err.message and err.line == 11


def test_format_problem_accepts_what_the_decoder_reads() -> None:
    for fmt in ("%b-%Y", "%d/%m/%Y %H:%M", "%Y-%m-%dT%H:%M:%S.%f%z", "%y%m%d", "%G-W%V-%u"):
        assert format_problem(fmt) is None, fmt


# -- decoding -------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [True, False])
def test_format_reads_month_year_text_and_dead_letters_the_rest(block: bool) -> None:
    values = ["Dec-2015", "Jan-2016", "2015-12-01", 1449878400, "", "now", None]
    batch, bad = decode('{path: ts, format: "%b-%Y"}', values, block=block)
    assert batch.ids.tolist() == ["r0", "r1"]
    assert batch.event_time.tolist() == [1_448_928_000.0, 1_451_606_400.0]
    assert [(b.reason, b.position) for b in bad] == [
        ("bad_time", 3), ("bad_time", 4), ("bad_time", 5), ("bad_time", 6),
        ("missing_time", 7)]
    assert bad[0].detail == ("event_time (ts): expected text in the format '%b-%Y', found "
                             "text '2015-12-01'")


def test_a_format_with_a_zone_converts_it_and_one_without_is_utc() -> None:
    batch, bad = decode('{path: ts, format: "%d/%m/%Y %H:%M%z"}',
                        ["01/12/2015 10:30+0100", "01/12/2015 09:30+0000"])
    assert bad == [] and batch.event_time.tolist() == [1_448_962_200.0] * 2
    batch, _ = decode('{path: ts, format: "%d/%m/%Y %H:%M"}', ["01/12/2015 09:30"])
    assert batch.event_time.tolist() == [1_448_962_200.0]


@pytest.mark.parametrize(("unit", "values", "expected"), [
    ("s", [0, 172792, 2.5, "10"], [0.0, 172792.0, 2.5, 10.0]),
    ("auto", [0, 172792, 2e11], [0.0, 172792.0, 2e11]),  # auto: seconds, no ms rule
    ("ms", [0, 1500, "2000"], [0.0, 1.5, 2.0]),
    # PaySim's step counts hours from the start of its month; minutes and days alike
    ("h", [1, 743, "2"], [3600.0, 743 * 3600.0, 7200.0]),
    ("min", [1, 90, 0.5], [60.0, 5400.0, 30.0]),
    ("d", [0, 30, "1"], [0.0, 30 * 86400.0, 86400.0]),
])  # fmt: skip
def test_origin_makes_numbers_offsets(unit: str, values: list[Any],
                                      expected: list[float]) -> None:
    for block in (True, False):
        batch, bad = decode(f'{{path: Time, unit: {unit}, origin: "{ULB_START}"}}'
                            .replace("Time", "ts"), values, block=block)
        assert bad == [] and batch.event_time.tolist() == [ULB_EPOCH + e for e in expected]


def test_with_an_origin_a_value_that_is_no_number_is_a_bad_time() -> None:
    batch, bad = decode(f'{{path: ts, unit: s, origin: "{ULB_START}"}}',
                        [1, "2013-09-02T00:00:00Z", "soon", True])
    assert len(batch) == 1
    assert [b.reason for b in bad] == ["bad_time"] * 3
    assert bad[0].detail.startswith(f"event_time (ts): expected seconds after {ULB_START}")


@pytest.mark.parametrize("block", [True, False])
def test_a_digit_format_reads_yyyymmdd_integers_and_their_text(block: bool) -> None:
    """SQL's yyyymmdd integers (Kaggle exports) under ``format: "%Y%m%d"``: numbers were
    all bad times, as a format read text only."""
    values = [20240131, "20240131", 20240229.0, 2024131, 20241301, "Jan-2024", -20240131]
    batch, bad = decode('{path: ts, format: "%Y%m%d"}', values, block=block)
    assert batch.ids.tolist() == ["r0", "r1", "r2"]
    jan31 = dt.datetime(2024, 1, 31, tzinfo=dt.UTC).timestamp()
    feb29 = dt.datetime(2024, 2, 29, tzinfo=dt.UTC).timestamp()
    assert batch.event_time.tolist() == [jan31, jan31, feb29]
    assert [(b.reason, b.position) for b in bad] == [("bad_time", i) for i in range(4, 8)]


def test_a_long_block_of_digit_dates_reads_on_every_parse_path() -> None:
    """Integers under a digit format are block-parsed, not typed as text that every block
    refuses (then read line by line)."""
    days = pd.date_range("2023-12-01", periods=400, freq="D")
    lines = b"\n".join(orjson.dumps({"id": f"r{i}", "ts": int(d), "x": 1.0})
                       for i, d in enumerate(days.strftime("%Y%m%d")))
    for block in (True, False):
        dec = Decoder(connector('{path: ts, format: "%Y%m%d"}').stream("predictions"),
                      SCHEMA, block_parse=block)
        batch, bad = dec.decode_block(lines, source="p.jsonl")
        assert bad == [] and batch.event_time.tolist() == [d.timestamp() for d in
                                                           days.tz_localize("UTC")]
        assert dec.rows_block_parsed >= (len(days) - 64 if block else 0)


@pytest.mark.parametrize(("time", "values"), [
    ("ts", ["2024-01-31T00:00:00Z", "0999-12-31T00:00:00Z", "2300-01-01"]),
    ('{path: ts, format: "%Y-%m-%d"}', ["2024-01-31", "0999-12-31", "2300-01-01"]),
    ('{path: ts, format: "%Y%m%d"}', [20240131, 9991231, "23000101"]),
])  # fmt: skip
@pytest.mark.parametrize("block", [True, False])
def test_a_time_outside_the_years_pandas_holds_is_a_bad_time(
        time: str, values: list[Any], block: bool) -> None:
    """pandas 3 reads the year 999 in seconds, and the decoder's subtraction of the epoch
    in nanoseconds raised: one such record stopped the replay."""
    batch, bad = decode(time, values, block=block)
    assert batch.event_time.tolist() == [dt.datetime(2024, 1, 31, tzinfo=dt.UTC).timestamp()]
    assert [(b.reason, b.position) for b in bad] == [("bad_time", 2), ("bad_time", 3)]


def test_a_format_not_of_digits_alone_still_refuses_numbers() -> None:
    _, bad = decode('{path: ts, format: "%Y-%m"}', [202401])
    assert [b.reason for b in bad] == ["bad_time"]


# -- files ----------------------------------------------------------------------------------


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    if path.suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    elif path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")


def _times(time: str, path: Path) -> tuple[list[float], list[str]]:
    c = connector(time, paths=path.name, base_dir=path.parent)
    src = FileSource(c, SCHEMA, batch_size=3)
    secs: list[float] = []
    reasons: list[str] = []
    while (p := src.poll()) is not None:
        for b in p.batches:
            secs += b.event_time.tolist()
        reasons += [b.reason for b in p.bad]
    return secs, reasons


@pytest.mark.parametrize("ext", [".jsonl", ".csv", ".parquet"])
def test_every_file_format_honours_format_and_origin(tmp_path: Path, ext: str) -> None:
    months = ["Dec-2015", "Jan-2016", "Feb-2016", "bad", "Mar-2016"]
    path = tmp_path / f"lc{ext}"
    _write(path, [{"id": f"a{i}", "issue_d": m, "x": 1.0} for i, m in enumerate(months)])
    secs, reasons = _times('{path: issue_d, format: "%b-%Y"}', path)
    assert secs == [pd.Timestamp(f"01-{m}", tz="UTC").timestamp() for m in
                    ("Dec-2015", "Jan-2016", "Feb-2016", "Mar-2016")]
    assert reasons == ["bad_time"]
    path = tmp_path / f"period{ext}"
    _write(path, [{"id": f"p{i}", "period": m, "x": 1.0} for i, m in
                  enumerate([202312, 202401, 202413])])
    secs, reasons = _times('{path: period, format: "%Y%m"}', path)
    assert secs == [pd.Timestamp(t, tz="UTC").timestamp() for t in ("2023-12", "2024-01")]
    assert reasons == ["bad_time"]
    path = tmp_path / f"ulb{ext}"
    _write(path, [{"id": f"u{i}", "Time": t, "x": 1.0} for i, t in enumerate([0.0, 1.0, 86400.0])])
    secs, reasons = _times(f'{{path: Time, unit: s, origin: "{ULB_START}"}}', path)
    assert reasons == [] and secs == [ULB_EPOCH, ULB_EPOCH + 1, ULB_EPOCH + 86400]


def test_a_parquet_timestamp_column_keeps_its_own_time_under_format_or_origin(
        tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    when = pd.Timestamp("2024-01-01", tz="UTC")
    pq.write_table(pa.table({"id": ["a"], "ts": pa.array([when.to_pydatetime()],
                                                         pa.timestamp("us", "UTC")),
                             "x": [1.0]}), path)
    for time in ('{path: ts, format: "%b-%Y"}', f'{{path: ts, origin: "{ULB_START}"}}'):
        assert _times(time, path) == ([when.timestamp()], [])


# -- properties -----------------------------------------------------------------------------

FORMATS = ["%b-%Y", "%B %Y", "%d/%m/%Y %H:%M", "%m/%d/%Y", "%Y-%m-%dT%H:%M:%S.%f",
           "%d.%m.%y %H:%M:%S", "%Y%m%d", "%Y-%j"]


@settings(max_examples=150, deadline=None)
@given(when=st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2200, 1, 1)),
       fmt=st.sampled_from(FORMATS))
def test_a_format_reads_its_own_text_as_the_standard_library_does(
        when: dt.datetime, fmt: str) -> None:
    text = when.strftime(fmt)
    expected = dt.datetime.strptime(text, fmt).replace(tzinfo=dt.UTC).timestamp()
    for raw in ([text], pa.array([text])):
        secs, missing, bad = event_times(raw, "auto", fmt=fmt)
        assert not missing[0] and not bad[0]
        assert secs[0] == pytest.approx(expected, abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=12), fmt=st.sampled_from(FORMATS))
def test_text_a_format_does_not_match_is_bad_never_another_time(text: str, fmt: str) -> None:
    # a format of digits alone reads a whole number's text too (20240131.0, from a CSV
    # column of floats), with the leading zeros a number cannot write
    whole = text
    if (width := digit_width(fmt)) and re.fullmatch(rf"\d{{1,{width}}}(\.0*)?", text):
        whole = text.split(".")[0].zfill(width)
    try:
        expected: float | None = dt.datetime.strptime(whole, fmt).replace(
            tzinfo=dt.UTC).timestamp()
    except ValueError:
        expected = None
    secs, _, bad = event_times([text], "auto", fmt=fmt)
    if bad[0]:  # pandas may refuse what strptime takes (a year before 1677); never more
        return
    assert expected is not None and secs[0] == pytest.approx(expected, abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(origin=st.datetimes(min_value=dt.datetime(1900, 1, 1),
                           max_value=dt.datetime(2100, 1, 1),
                           timezones=st.sampled_from([None, dt.UTC,
                                                      dt.timezone(dt.timedelta(hours=-5))])),
       offsets=st.lists(st.one_of(st.integers(0, 10**9), st.floats(0, 1e9)), min_size=1,
                        max_size=20),
       unit=st.sampled_from(["auto", "s", "ms", "min", "h", "d"]), as_text=st.booleans())
def test_origin_plus_offsets_in_every_unit_and_form(
        origin: dt.datetime, offsets: list[float], unit: str, as_text: bool) -> None:
    o = parse_origin(origin.isoformat())
    zone = origin.tzinfo or dt.UTC
    assert o == origin.replace(tzinfo=zone).timestamp()
    raw: Any = [repr(v) for v in offsets] if as_text else offsets
    secs, _, bad = event_times(raw, unit, origin=o)
    per = {"ms": 1e-3, "min": 60.0, "h": 3600.0, "d": 86400.0}.get(unit, 1.0)
    assert not bad.any()
    assert secs.tolist() == pytest.approx([o + v * per for v in offsets], rel=1e-12)
    arr = np.asarray(offsets, np.float64)
    assert np.array_equal(event_times(pa.array(arr), unit, origin=o)[0],
                          event_times(arr.tolist(), unit, origin=o)[0])
