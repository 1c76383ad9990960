"""Event times to epoch seconds: epoch seconds, epoch milliseconds, ISO-8601 text, text in a
strptime ``format``, or offsets from an ``origin``.

``auto`` takes numbers above 1e11 as milliseconds (1e11 s is the year 5138) and text as
ISO-8601 unless it is a number; ISO times without a zone are UTC.

>>> secs, missing, bad = event_times([1704067200, 1704067200123, "2024-01-01T01:00:00+01:00",
...                                   "2024-01-01 00:00", None, "soon", {"a": 1}], "auto")
>>> secs[:4].tolist(), missing.tolist()[4], bad.tolist()[5:]
([1704067200.0, 1704067200.123, 1704067200.0, 1704067200.0], True, [True, True])
>>> event_times(["1704067200"], "iso")[2].tolist()
[True]
>>> event_times(["now", "today"], "auto")[2].tolist()  # never the wall clock
[True, True]

A ``fmt`` reads text only (zone-less results are UTC); text it does not match, and any
number, is a bad time; but a format of digits alone (``%Y%m%d``, ``%Y%m``: SQL's
``yyyymmdd`` integers, Kaggle exports) reads a whole number, or its text (spaces around
it dropped, as a fixed-width export pads it), by its digits, as many as the format
writes: the leading zeros a number cannot write are added (``1012024`` under
``%d%m%Y``), so ``2024131`` under ``%Y%m%d`` is the year 202, a bad time, never a guess at
January 31:

>>> event_times([20240131, "20240131", "20240131.0", " 20240131 ", 2024131, 20241301,
...              "2024 0131"], "auto", fmt="%Y%m%d")[0].tolist()
[1706659200.0, 1706659200.0, 1706659200.0, 1706659200.0, nan, nan, nan]
>>> event_times([1012024, "1012024"], "auto", fmt="%d%m%Y")[0].tolist()
[1704067200.0, 1704067200.0]

An ``origin`` (epoch seconds, see :func:`parse_origin`) makes every
number, or text that is one, an offset from it in ``unit`` (``auto`` means seconds); any
other value is a bad time. A table's own timestamp or date column keeps its time with
either.

>>> event_times(["Dec-2015", "Jan-2016", "2015-12", 1449878400], "auto", fmt="%b-%Y")[0].tolist()
[1448928000.0, 1451606400.0, nan, nan]
>>> origin = parse_origin("2013-09-01T00:00:00Z")
>>> event_times([0, 172792, "2.5", "2013-09-01"], "s", origin=origin)[0].tolist()
[1377993600.0, 1378166392.0, 1377993602.5, nan]

A two-digit year (``%y``) is not read as strptime reads it (00-68 as 2000-2068, 69-99 as
1969-1999): the SBA's loans of the 1960s (``'15-Mar-66'``) are not approved in 2066, and a
stream of them crossing 1968 does not jump back a century. ``century_start`` (the
connector's key of that name) fixes the hundred years it is read in, so a recording reads
the same whenever it is replayed; without it they are those that end a year after ``now``
(the reader's today), which moves as the years pass:

>>> secs = event_times(["15-Mar-66", "31-Dec-68", "01-Jan-69", "28-Feb-97", "31-Dec-27"],
...                    "auto", fmt="%d-%b-%y", century_start=1928)[0]
>>> [str(t)[:10] for t in secs.astype("datetime64[s]")]
['1966-03-15', '1968-12-31', '1969-01-01', '1997-02-28', '2027-12-31']
>>> now = parse_origin("2026-12-06")
>>> secs = event_times(["15-Mar-66", "01-Jun-27"], "auto", fmt="%d-%b-%y", now=now)[0]
>>> [str(t)[:10] for t in secs.astype("datetime64[s]")]
['1966-03-15', '2027-06-01']
>>> format_problem("%b-%Y") is None, format_problem("Mon-YYYY")
(True, "expected a strptime format with a year directive, such as '%b-%Y'")
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from driftwatch.connectors.columns import Raw, is_arrow, python_values

__all__ = [
    "CENTURY_STARTS",
    "MS_THRESHOLD",
    "NS_THRESHOLD",
    "SECONDS_IN",
    "UNITS",
    "UNIT_WORDS",
    "US_THRESHOLD",
    "century_start_at",
    "digit_width",
    "event_times",
    "format_problem",
    "from_format",
    "from_numbers",
    "from_text",
    "parse_origin",
    "two_digit_years",
    "writes_two_digit_year",
    "written_dates",
]

UNITS = ("auto", "s", "ms", "us", "ns", "min", "h", "d", "iso")
#: Each unit a number counts (every unit but ``auto`` and ``iso``), in words
UNIT_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds",
              "min": "minutes", "h": "hours", "d": "days"}
#: Seconds in each unit coarser than the second: an offset clock that counts minutes,
#: hours (PaySim's ``step``) or days
SECONDS_IN = {"min": 60.0, "h": 3600.0, "d": 86400.0}
#: ``unit: auto`` reads a number above each as the next finer unit: milliseconds, then
#: microseconds, then nanoseconds (each past the year 5000 read in the coarser unit)
MS_THRESHOLD = 1e11
US_THRESHOLD = 1e14
NS_THRESHOLD = 1e17
#: The epoch seconds of the first and last instants pandas holds in nanoseconds
_FIRST, _LAST = pd.Timestamp.min.timestamp(), pd.Timestamp.max.timestamp()
_EPOCH_DAY = datetime.date(1970, 1, 1)
_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
# pandas reads these words as the wall clock whatever the format: a replay must not
_CLOCK_WORDS = ("now", "today")
_DIRECTIVE = re.compile(r"%(.)", re.DOTALL)
_YEARS = frozenset("YyG")
# an instant every directive writes distinctly, to check that a format reads its own text
_PROBE = pd.Timestamp("2023-11-27T13:45:56.123456", tz="UTC")


def from_numbers(v: np.ndarray, unit: str) -> np.ndarray:
    """Seconds from numbers in ``unit`` (NaN where ``unit`` is ``iso``: numbers are bad)."""
    if unit == "s":
        return v.astype(np.float64, copy=True)
    if unit in ("ms", "us", "ns"):
        return v / _PER_SECOND[unit]
    if unit in SECONDS_IN:
        return v * SECONDS_IN[unit]
    if unit == "auto":
        per = np.select([v > NS_THRESHOLD, v > US_THRESHOLD, v > MS_THRESHOLD],
                        [1e9, 1e6, 1e3], 1.0)
        return v / per
    return np.full(len(v), np.nan)


def _seconds(dt: pd.Series) -> np.ndarray:
    """Epoch seconds of parsed times, NaN where none or outside the years pandas' nanoseconds
    hold (1677 to 2262). pandas 3 reads ``0999-12-31`` in a coarser unit, and subtracting
    the epoch in nanoseconds from it raised out of the decoder: one such record stopped a
    replay."""
    arr = dt.array
    secs = arr.asi8.astype(np.float64) / _PER_SECOND[arr.unit]
    secs[dt.isna().to_numpy() | (secs < _FIRST) | (secs > _LAST)] = np.nan
    return secs


def _readable(ser: pd.Series) -> pd.Series:
    """``ser`` without the words pandas would read as the current time."""
    return ser.where(~ser.isin(_CLOCK_WORDS), None)


def from_text(s: np.ndarray, unit: str) -> np.ndarray:
    """Seconds from an object array of text (NaN where it cannot be read in ``unit``)."""
    ser = pd.Series(s, dtype=object)
    out = np.full(len(s), np.nan)
    if unit != "iso":
        nums = pd.to_numeric(ser, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        out = from_numbers(nums, unit)
    if unit in ("auto", "iso"):
        rest = np.isnan(out)
        if rest.any():
            dt = pd.to_datetime(_readable(ser[rest]), format="ISO8601", utc=True,
                                errors="coerce")
            out[rest] = _seconds(dt)
    return out


_DIGIT_FORMAT = re.compile(r"(%[YmdHMS])+")


def digit_width(fmt: str) -> int | None:
    """How many digits ``fmt`` writes when it writes nothing else (``%Y%m%d``: 8), else
    None.

    >>> digit_width("%Y%m%d"), digit_width("%Y%m"), digit_width("%Y-%m")
    (8, 6, None)
    """
    if not _DIGIT_FORMAT.fullmatch(fmt):
        return None
    return sum(4 if d == "Y" else 2 for d in fmt[1::2])


def _digits(ser: pd.Series, width: int) -> pd.Series:
    """Text of ``width`` digits: spaces around dropped, a whole number's ``.0`` dropped (a
    CSV column with blanks is written as floats) and the leading zeros a number cannot
    write added (``1012024`` under ``%d%m%Y``); None for anything else, longer text too
    (init's :func:`~driftwatch.onboard.digitdates.digit_formats` takes the same values)."""
    text = ser.astype("string").str.strip().str.replace(r"\.0*$", "", regex=True)
    text = text.where(text.str.fullmatch(rf"\d{{1,{width}}}"), None).str.zfill(width)
    return text.astype(object).where(text.notna(), None)


def from_format(s: np.ndarray, fmt: str) -> np.ndarray:
    """Seconds from an object array of text read with the strptime format ``fmt`` (NaN
    where it does not match); a result without a zone is UTC."""
    if len(s) == 0:
        return np.zeros(0)
    ser = _readable(pd.Series(s, dtype=object))
    if (width := digit_width(fmt)) is not None:
        ser = _digits(ser, width)
    return _seconds(pd.to_datetime(ser, format=fmt, utc=True, errors="coerce"))


#: How far after ``now`` a two-digit year may fall before it is read a century earlier
TWO_DIGIT_LEAD_S = 366 * 86_400
#: The first years ``century_start`` may name: its hundred years lie within the years
#: pandas' nanoseconds hold (1677-09-21 to 2262-04-11)
CENTURY_STARTS = range(1678, 2163)
_TWO_DIGIT_YEAR = re.compile(r"(?<!%)(%%)*%y")


def writes_two_digit_year(fmt: str | None) -> bool:
    """Whether the strptime format ``fmt`` writes a two-digit year (``%y``, not ``%%y``).

    >>> [writes_two_digit_year(f) for f in ("%d-%b-%y", "%Y-%m", "%%y%Y")]
    [True, False, False]
    """
    return fmt is not None and _TWO_DIGIT_YEAR.search(fmt) is not None


def century_start_at(now: float) -> int:
    """The ``century_start`` that reads two-digit years as they are read without one on the
    day ``now`` (epoch seconds): the hundred years ending the year after it.

    >>> century_start_at(parse_origin("2026-12-06"))
    1928
    """
    return int(pd.Timestamp(now, unit="s", tz="UTC").year) - 98


def two_digit_years(secs: np.ndarray, fmt: str | None, now: float | None,
                    century_start: int | None = None,
                    written: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                    ) -> np.ndarray:
    """``secs`` read with ``fmt`` moved by whole centuries, the same day of the year, into
    the years ``century_start`` to ``century_start + 99`` or, without it, the hundred years
    that end :data:`TWO_DIGIT_LEAD_S` after ``now``, when ``fmt`` writes a two-digit year
    (``%y``); ``secs`` itself otherwise (or with neither given). A 29 February moved into a
    year that has none (``29-Feb-00`` in 1900) is no date: NaN. ``written``: each row's
    year, month and day as its text writes them (NaN: its UTC date's), which place it in
    ``century_start``'s hundred years (:func:`written_dates`: a zoned time on 1 January
    may be 31 December in UTC).

    >>> now, read = parse_origin("2026-01-01"), np.array([parse_origin("2066-03-15")])
    >>> two_digit_years(read, "%d-%b-%y", now) == parse_origin("1966-03-15")
    array([ True])
    >>> two_digit_years(read, "%d-%b-%y", None, century_start=2000) is read  # in its span
    True
    >>> two_digit_years(read, "%d-%b-%Y", now) is read  # four digits: as written
    True
    """
    if not writes_two_digit_year(fmt):
        return secs
    if century_start is not None:
        return _in_century(secs, century_start, written)
    if now is None:
        return secs
    last = now + TWO_DIGIT_LEAD_S
    when = pd.to_datetime(pd.Series(secs), unit="s", utc=True)
    late = np.isfinite(secs) & (secs > last)
    # strptime's 69-99 are 1969-1999: from 2068 on, a century too early
    early = np.isfinite(secs) & ~late & (
        _seconds(when + pd.DateOffset(years=100)) <= last)
    if not (late.any() or early.any()):
        return secs
    out = secs.copy()
    out[late] = _seconds(when[late] - pd.DateOffset(years=100))
    out[early] = _seconds(when[early] + pd.DateOffset(years=100))
    return out


def _in_century(secs: np.ndarray, first: int,
                written: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                ) -> np.ndarray:
    """``secs`` moved by whole centuries into the years ``first`` to ``first + 99``, by the
    date each row's text writes (``written``, where known) or else its UTC date."""
    ok = np.isfinite(secs)
    if not ok.any():
        return secs
    when = pd.to_datetime(pd.Series(secs), unit="s", utc=True)
    dates = [np.array(f.to_numpy(dtype=np.float64, na_value=np.nan))  # a copy: written
             for f in (when.dt.year, when.dt.month, when.dt.day)]
    if written is not None:
        known = np.isfinite(written[0])
        for d, w in zip(dates, written, strict=True):
            d[known] = w[known]
    year, month, day = dates
    shift = np.zeros(len(secs), np.int64)
    shift[ok] = ((first + (year[ok] - first) % 100) - year[ok]).astype(np.int64)
    if not shift.any():
        return secs
    out = secs.copy()
    # a 29 February (as written) moved into a year without one is no such day
    target = year + shift
    leap = ((target % 4 == 0) & (target % 100 != 0)) | (target % 400 == 0)
    gone = (month == 2) & (day == 29) & ~leap & (shift != 0)
    for years in np.unique(shift[shift != 0]).tolist():
        rows = shift == years
        out[rows] = _seconds(when[rows] + pd.DateOffset(years=years))
    out[gone] = np.nan
    return out


#: A strptime zone directive (``%z``: ``+0200``; ``%Z``: a name)
_ZONE = re.compile(r"(?<!%)(%%)*%[zZ]")


def written_dates(raw: Raw, secs: np.ndarray, fmt: str | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Year, month and day as the text of each row writes them, where ``fmt`` has a zone
    and its UTC date (``secs``) is a day from a new year or a 29 February at most, so the
    written date may differ (NaN elsewhere, and where the text does not read); None
    when ``fmt`` has no zone. Read with :func:`datetime.datetime.strptime`, whose ``%y``
    is pandas' (00-68 as 2000-2068), for those few rows only.

    >>> y, m, d = written_dates(["01-Jan-28 00:30 +0200", "15-Jun-28 00:30 +0200"],
    ...                         np.array([parse_origin("2027-12-31T22:30Z"),
    ...                                   parse_origin("2028-06-14T22:30Z")]),
    ...                         "%d-%b-%y %H:%M %z")
    >>> y.tolist(), m.tolist(), d.tolist()
    ([2028.0, nan], [1.0, nan], [1.0, nan])
    """
    if fmt is None or _ZONE.search(fmt) is None:
        return None
    n = len(secs)
    out = tuple(np.full(n, np.nan) for _ in range(3))
    ok = np.isfinite(secs)
    if not ok.any():
        return out
    when = pd.to_datetime(pd.Series(np.where(ok, secs, 0.0)), unit="s", utc=True)
    m, d = when.dt.month.to_numpy(), when.dt.day.to_numpy()
    # a zone moves a date by a day at most: a new year's eve or day, or 28 February to
    # 1 March in UTC, may be another year or a 29 February as written
    near = ok & (((m == 12) & (d == 31)) | ((m == 1) & (d == 1)) | ((m == 2) & (d >= 28))
                 | ((m == 3) & (d == 1)))
    if not near.any():
        return out
    rows = np.flatnonzero(near)
    vals = (raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw) \
        if is_arrow(raw) else raw
    for i in rows.tolist():
        v = vals[i]
        text = v.as_py() if is_arrow(raw) else v
        if not isinstance(text, str):
            continue
        try:
            written = datetime.datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
        out[0][i], out[1][i], out[2][i] = written.year, written.month, written.day
    return out


def _whole_numbers_as_text(v: np.ndarray) -> np.ndarray:
    """An object array of the digits of each whole non-negative number of ``v``, '' for the
    rest."""
    out = np.full(len(v), "", dtype=object)
    whole = np.isfinite(v) & (v >= 0) & (v < 1e16)
    whole[whole] = np.mod(v[whole], 1) == 0
    out[whole] = v[whole].astype(np.int64).astype(str)
    return out


def format_problem(fmt: str) -> str | None:
    """What ``fmt`` should have been, for an error that names it as found; None when it
    reads event times.

    A format needs a year directive (``%Y``, ``%y`` or ``%G``): without one every time
    falls in 1900. It must be one pandas reads, and read the text it writes itself.
    """
    found = [m.group(1) for m in _DIRECTIVE.finditer(fmt)]
    if not _YEARS & set(found):
        return "expected a strptime format with a year directive, such as '%b-%Y'"
    try:
        text = _PROBE.strftime(fmt)
        back = pd.to_datetime(pd.Series([text], dtype=object), format=fmt, utc=True)
    except re.error:  # the pattern pandas builds names each directive once
        return "expected a strptime format with each directive once"
    except ValueError as exc:  # a bad directive, a stray %, %G without %V
        return f"expected a strptime format ({str(exc).splitlines()[0].rstrip('.')})"
    if back.isna().any():
        return "expected a strptime format that reads the text it writes"
    return None


def parse_origin(text: str) -> float:
    """Epoch seconds of an ISO-8601 instant (no zone: UTC); ValueError when it is not one.

    >>> parse_origin("1970-01-02"), parse_origin("2013-09-01T02:00:00+02:00")
    (86400.0, 1377993600.0)
    """
    if text.strip() in _CLOCK_WORDS:
        raise ValueError(f"{text!r} is not an ISO-8601 instant")
    try:
        t = pd.to_datetime(pd.Series([text], dtype=object), format="ISO8601", utc=True)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{text!r} is not an ISO-8601 instant") from exc
    secs = float(_seconds(t)[0])
    if not np.isfinite(secs):
        raise ValueError(f"{text!r} is not an ISO-8601 instant")
    return secs


def event_times(
    raw: Raw, unit: str, *, fmt: str | None = None, origin: float | None = None,
    now: float | None = None, century_start: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seconds, missing, bad)`` for a raw column; bad includes non-finite results.

    ``fmt`` (a strptime format) reads text; ``origin`` (epoch seconds) makes numbers
    offsets in ``unit``. They are not meant together (the connector refuses it); given
    both, ``fmt`` wins. ``century_start`` (a year), or else ``now`` (epoch seconds),
    places a two-digit year (:func:`two_digit_years`).
    """
    secs, missing, bad = _event_times(raw, unit, fmt, origin)
    # the century goes by the date as written: a zone may set it a day off in UTC
    written = written_dates(raw, secs, fmt) if century_start is not None and \
        writes_two_digit_year(fmt) else None
    secs = two_digit_years(secs, fmt, now, century_start, written)
    return secs, missing, bad | (~missing & ~np.isfinite(secs))


def _event_times(raw: Raw, unit: str, fmt: str | None, origin: float | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if origin is not None and unit == "auto":
        unit = "s"  # an offset is a count: no epoch rule tells its unit
    if is_arrow(raw):
        arr = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
        t = arr.type
        missing = arr.is_null().to_numpy(zero_copy_only=False)
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            if pa.types.is_date(t):
                arr = arr.cast(pa.timestamp("s"))
            # the column's own ticks (a zone changes no tick): pandas writes nanoseconds,
            # which a cast to a coarser unit refuses as losing data
            ticks = pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False)
            secs = ticks.astype(np.float64) / _PER_SECOND[arr.type.unit]
            secs[missing] = np.nan
            return secs, missing, ~missing & ~np.isfinite(secs)
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            v = arr.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
            secs = _numbers(v, unit, fmt, origin)
            return secs, missing, ~missing & ~np.isfinite(secs)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            secs = _text(arr.to_numpy(zero_copy_only=False), unit, fmt, origin)
            return secs, missing, ~missing & ~np.isfinite(secs)
        raw = python_values(arr)
    return _from_python(raw, unit, fmt, origin)  # type: ignore[arg-type]


def _numbers(v: np.ndarray, unit: str, fmt: str | None, origin: float | None) -> np.ndarray:
    if fmt is not None:
        if digit_width(fmt) is None:
            return np.full(len(v), np.nan)
        return from_format(_whole_numbers_as_text(v), fmt)
    secs = from_numbers(v, unit)
    return secs if origin is None else secs + origin


def _text(s: np.ndarray, unit: str, fmt: str | None, origin: float | None) -> np.ndarray:
    if fmt is not None:
        return from_format(s, fmt)
    secs = from_text(s, unit)
    return secs if origin is None else secs + origin


def _from_python(vals: list[Any], unit: str, fmt: str | None, origin: float | None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(vals)
    secs = np.full(n, np.nan)
    missing = np.fromiter((v is None for v in vals), bool, n)
    is_num = np.fromiter((type(v) is int or type(v) is float for v in vals), bool, n)
    is_text = np.fromiter((type(v) is str for v in vals), bool, n)
    if is_num.any():
        idx = np.flatnonzero(is_num)
        secs[idx] = _numbers(np.array([vals[i] for i in idx], dtype=np.float64), unit, fmt,
                             origin)
    if is_text.any():
        idx = np.flatnonzero(is_text)
        secs[idx] = _text(np.array([vals[i] for i in idx], dtype=object), unit, fmt, origin)
    # an instant (an Avro timestamp or date) keeps its own time whatever the unit, format
    # or origin, as a table's timestamp column does
    for i in np.flatnonzero(~missing & ~is_num & ~is_text).tolist():
        v = vals[i]
        if isinstance(v, datetime.datetime):
            secs[i] = (v if v.tzinfo is not None else v.replace(tzinfo=datetime.UTC)).timestamp()
        elif isinstance(v, datetime.date):
            secs[i] = (v - _EPOCH_DAY).days * 86400.0
    return secs, missing, ~missing & ~np.isfinite(secs)
