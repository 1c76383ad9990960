"""``init`` on dates written in digits (``20240131``, ``202401``: SQL's ``yyyymmdd`` integers,
Porto Seguro / AmEx / Home Credit exports): found as the event time, by name or by value,
written as the connector's format, and replayed in dated windows; an integer id or amount
never passes for one."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from driftwatch.onboard.digitdates import digit_formats
from driftwatch.onboard.times import time_reading

from ._cli import run_cli


def _files(tmp: Path, name: str, times: Any, n: int = 400, fmt: str = "csv") -> None:
    rng = np.random.default_rng(11)

    def frame() -> pd.DataFrame:
        return pd.DataFrame({"income": rng.gamma(3, 15000, n).round(0),
                             "dti": rng.gamma(4, 4.5, n).round(2),
                             "purpose": rng.choice(["car", "home", "edu"], n),
                             "target": rng.integers(0, 2, n)})

    frame().to_csv(tmp / "ref.csv", index=False)
    live = frame()
    live.insert(0, "id", np.arange(10**6, 10**6 + n))
    live.insert(1, name, times)
    preds = live.drop(columns=["target"])
    if fmt == "jsonl":
        preds.to_json(tmp / "live.jsonl", orient="records", lines=True)
    else:
        preds.to_csv(tmp / "live.csv", index=False)
    live[["id", "target"]].to_csv(tmp / "out.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], live: str = "live.csv",
          *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample", str(tmp / live),
                    "--outcomes", str(tmp / "out.csv"), "--model", "m", "--connector-out",
                    str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _event_time(tmp: Path) -> dict[str, Any]:
    c = yaml.safe_load((tmp / "c.yaml").read_text())
    return c["source"]["streams"]["predictions"]["fields"]["event_time"]  # type: ignore[no-any-return]


DAYS = pd.date_range("2024-01-01", periods=400, freq="6h")


@pytest.mark.parametrize(("name", "kind"), [("application_date", "jsonl"), ("snapshot", "csv")])
def test_yyyymmdd_integers_are_the_event_time_and_replay_in_dated_windows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str, kind: str) -> None:
    """A field named like a date (or not named so at all) holding 20240131 was refused as
    'not epoch seconds, milliseconds or ISO-8601', or not found."""
    _files(tmp_path, name, DAYS.strftime("%Y%m%d").astype(int), fmt=kind)
    code, out, err = _init(tmp_path, capsys, f"live.{kind}")
    assert code == 0, err
    assert f"event time: {name}" in out and "dates in digits, %Y%m%d" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("  format: %Y%m%d"))
    assert (f"every sample value of {name} is a date written in digits (20240101, 20240102, "
            "20240103, ...)") in line, line
    assert _event_time(tmp_path) == {"path": name, "format": "%Y%m%d"}
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                            f"live.{kind}", "out.csv", "--out", "run", "--quiet",
                            "--no-report"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_by_reason"] == {} and summary["events"] == 400, summary
    assert (summary["first_event"], summary["last_event"]) == ("2024-01-01T00:00:00Z",
                                                               "2024-04-09T00:00:00Z")


def test_yyyymm_months_in_a_field_named_period_are_found_by_value(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, "period", [int(d.strftime("%Y%m")) for d in
                                pd.date_range("2022-01-01", periods=400, freq="D")])
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: period" in out and "(dates in digits, %Y%m)" in out, out
    assert _event_time(tmp_path) == {"path": "period", "format": "%Y%m"}


def test_mmyyyy_months_as_text_are_the_event_time_not_a_count_from_a_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fannie Mae's reporting period, ``012021``: read as 12021 seconds counted from a
    start, its windows would all fall in 1970 and init asked for an origin."""
    months = pd.date_range("2021-01-01", periods=400, freq="D").strftime("%m%Y")
    _files(tmp_path, "ACT_PERIOD", list(months))
    code, out, err = _init(tmp_path, capsys, "live.csv", "--time-field", "ACT_PERIOD")
    assert code == 0, err
    assert "  format: %m%Y" in out, out
    assert "count from a start" not in out, out
    assert _event_time(tmp_path) == {"path": "ACT_PERIOD", "format": "%m%Y"}
    code, _, err = run_cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                            str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.csv"),
                            str(tmp_path / "out.csv"), "--out", str(tmp_path / "run"),
                            "--quiet", "--no-report"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_by_reason"] == {} and summary["events"] == 400, summary
    assert (summary["first_event"], summary["last_event"]) == ("2021-01-01T00:00:00Z",
                                                               "2022-02-01T00:00:00Z")


def test_an_integer_that_is_no_date_is_never_the_event_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    # eight-digit account numbers and six-digit amounts: no month 13 is written, but some
    # day or month of each is out of range
    # named like no time: the file is read in record order, the integers stay data
    _files(tmp_path, "account", rng.integers(10**7, 10**8, 400))
    code, out, err = _init(tmp_path, capsys)
    assert code == 0 and "event time: record order" in out, err
    assert _event_time(tmp_path) == {"source": "order"}
    _files(tmp_path, "amount", rng.integers(10**5, 10**6, 400))
    code, out, err = _init(tmp_path, capsys, "live.csv", "--force")
    assert code == 0 and "event time: record order" in out, err
    assert _event_time(tmp_path) == {"source": "order"}


def test_the_time_format_flag_reads_integers_in_digits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Day first, as integers: 1012024 is 01012024, its leading zero lost."""
    _files(tmp_path, "txn_date", [int(d.strftime("%d%m%Y")) for d in DAYS], fmt="jsonl")
    code, out, err = _init(tmp_path, capsys, "live.jsonl", "--time-format", "%d%m%Y")
    assert code == 0, err
    assert "event time: txn_date" in out and "(dates in digits, %d%m%Y)" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("  format: %d%m%Y"))
    assert line.split(None, 2)[2] == "from --time-format", line  # every value reads
    assert _event_time(tmp_path) == {"path": "txn_date", "format": "%d%m%Y"}


def test_time_reading_takes_digits_before_a_count_from_a_start() -> None:
    r = time_reading("dt", [20240131, 20240201], "f")
    assert (r.unit, r.format, r.offsets) == ("auto", "%Y%m%d", False)
    r = time_reading("dt", [20240131.0, None, "20240201"], "f")
    assert r.format == "%Y%m%d"
    r = time_reading("Time", [0, 172792], "f")
    assert r.offsets and r.format is None


@pytest.mark.parametrize(("values", "expected"), [
    ([20240131, 20240229], ["%Y%m%d"]),
    (["202401", 202412.0], ["%Y%m"]),
    ([20240131235959], ["%Y%m%d%H%M%S"]),
    ([20230229], []),  # no February 29 in 2023
    ([20240131, 2024013], []),  # one value short of a digit
    ([1012024, 31012024], []),  # day first: only --time-format says so
    ([20240131, 202401], []),  # two widths
    (["012020", "122019", 32021], ["%m%Y"]),  # month first: Fannie Mae's periods
    (["012020", "202001"], []),  # month first and year first: neither reads both
    ([132020], []),  # no month 13 written month first
    ([30240131], []),  # the year 3024
    ([18991231], []),  # the year 1899
    ([202401, -1], []),
    ([True, False], []),
    ([202401.5], []),
    (["2024-01"], []),
    ([], []),
])  # fmt: skip
def test_digit_formats(values: list[Any], expected: list[str]) -> None:
    assert digit_formats(values) == expected


_FORMAT_WIDTH = {"%Y%m%d": 8, "%Y%m": 6, "%Y%m%d%H%M%S": 14, "%m%Y": 6}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10**15), min_size=20, max_size=200, unique=True))
def test_distinct_integers_are_taken_as_dates_only_when_every_one_is_a_date(
        ints: list[int]) -> None:
    found = digit_formats(ints)
    if not found:
        return
    (fmt,) = found
    width = _FORMAT_WIDTH[fmt]
    assert {len(str(i)) for i in ints} <= set(range(1, width + 1))
    for i in ints:  # every one, its lost leading zeros added, reads as a date in 1900-2100
        when = dt.datetime.strptime(str(i).zfill(width), fmt)
        assert 1900 <= when.year <= 2100 and when.strftime(fmt) == str(i).zfill(width)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.datetimes(min_value=dt.datetime(1900, 1, 1),
                             max_value=dt.datetime(2100, 12, 31)), min_size=1, max_size=50),
       st.sampled_from(sorted(_FORMAT_WIDTH)), st.booleans())
def test_dates_written_in_digits_are_read_in_their_format(
        dates: list[dt.datetime], fmt: str, as_text: bool) -> None:
    # month-first periods all in 1900, 2000 or 2100 (61900, 12000) are read as round
    # amounts, not months: the one case a column of such dates is not said to be one
    assume(fmt != "%m%Y" or any(d.year % 100 for d in dates))
    texts = [d.strftime(fmt) for d in dates]
    assert digit_formats(texts if as_text else [int(t) for t in texts]) == [fmt]
