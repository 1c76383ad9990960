"""Event times to epoch seconds: epoch seconds, epoch milliseconds or ISO-8601 text.

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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from driftwatch.connectors.columns import Raw, is_arrow, python_values

__all__ = ["MS_THRESHOLD", "UNITS", "event_times", "from_numbers", "from_text"]

UNITS = ("auto", "s", "ms", "iso")
MS_THRESHOLD = 1e11
_EPOCH = pd.Timestamp(0, tz="UTC")
_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
# pandas reads these words as the wall clock whatever the format: a replay must not
_CLOCK_WORDS = ("now", "today")


def from_numbers(v: np.ndarray, unit: str) -> np.ndarray:
    """Seconds from numbers in ``unit`` (NaN where ``unit`` is ``iso``: numbers are bad)."""
    if unit == "s":
        return v.astype(np.float64, copy=True)
    if unit == "ms":
        return v / 1000.0
    if unit == "auto":
        return np.where(v > MS_THRESHOLD, v / 1000.0, v)
    return np.full(len(v), np.nan)


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
            readable = ser[rest].where(~ser[rest].isin(_CLOCK_WORDS), None)
            dt = pd.to_datetime(readable, format="ISO8601", utc=True, errors="coerce")
            out[rest] = ((dt - _EPOCH).dt.total_seconds()).to_numpy(np.float64, na_value=np.nan)
    return out


def event_times(raw: Raw, unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seconds, missing, bad)`` for a raw column; bad includes non-finite results."""
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
            secs = from_numbers(v, unit)
            return secs, missing, ~missing & ~np.isfinite(secs)
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            secs = from_text(arr.to_numpy(zero_copy_only=False), unit)
            return secs, missing, ~missing & ~np.isfinite(secs)
        raw = python_values(arr)
    return _from_python(raw, unit)  # type: ignore[arg-type]


def _from_python(vals: list[Any], unit: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(vals)
    secs = np.full(n, np.nan)
    missing = np.fromiter((v is None for v in vals), bool, n)
    is_num = np.fromiter((type(v) is int or type(v) is float for v in vals), bool, n)
    is_text = np.fromiter((type(v) is str for v in vals), bool, n)
    if is_num.any():
        idx = np.flatnonzero(is_num)
        secs[idx] = from_numbers(np.array([vals[i] for i in idx], dtype=np.float64), unit)
    if is_text.any():
        idx = np.flatnonzero(is_text)
        secs[idx] = from_text(np.array([vals[i] for i in idx], dtype=object), unit)
    return secs, missing, ~missing & ~np.isfinite(secs)
