"""Dates written in digits alone: ``20240131`` (``%Y%m%d``), ``202401`` (``%Y%m``),
``20240131235959`` (``%Y%m%d%H%M%S``), as integers or as text (SQL's ``yyyymmdd`` columns,
Kaggle exports of Porto Seguro, AmEx and Home Credit), and months written month first,
``012020`` (``%m%Y``: Fannie Mae's loan performance periods, ``12020`` as an integer).

An integer id or amount must not pass for one, so a format is taken only when every
present value of the sample reads with it, as the decoder reads it, to a real date in the
years :data:`YEARS` (a month 13, a day 32, a year 3000 or a digit short is no date).

>>> digit_formats([20240131, 20240229, "20240301"]), digit_formats([202401, 202412.0])
(['%Y%m%d'], ['%Y%m'])
>>> digit_formats(["012020", "122019", 32021])
['%m%Y']
>>> digit_formats([20240131, 20241301]), digit_formats([123456, 654321]), digit_formats([1.5])
([], [], [])
>>> digit_formats([61900, 121900, 52000])  # round amounts, not June 1900
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from driftwatch.connectors.eventtime import digit_width, event_times

__all__ = ["DIGIT_FORMATS", "YEARS", "digit_dates", "digit_formats"]

#: The formats tried. Six digits read one way at most: a year of :data:`YEARS` starts 19,
#: 20 or 21, a month 01 to 12, so ``%Y%m`` and ``%m%Y`` never both read a value. Day
#: first or month first in eight digits (``01022020``) is no such choice: only
#: ``--time-format`` says which.
DIGIT_FORMATS = ("%Y%m%d%H%M%S", "%Y%m%d", "%Y%m", "%m%Y")
#: The years a date written in digits may fall in (first, last)
YEARS = (1900, 2100)
_WHOLE = re.compile(r"\s*\d+(\.0*)?\s*")


def _digits(v: Any) -> str | None:
    """The digits of a whole non-negative number, or of text that is one."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | np.integer):
        return str(int(v)) if v >= 0 else None
    if isinstance(v, float | np.floating):
        return str(int(v)) if np.isfinite(v) and v >= 0 and float(v).is_integer() else None
    if isinstance(v, str) and _WHOLE.fullmatch(v):
        return v.strip().split(".")[0]
    return None


def _present(values: Iterable[Any]) -> Iterator[Any]:
    """``values`` without the missing ones (None, NaN)."""
    return (v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v)))


def digit_formats(values: Sequence[Any], formats: Sequence[str] = DIGIT_FORMATS) -> list[str]:
    """The first format of ``formats`` written in digits alone that reads every present
    value of ``values``, as the decoder reads it (a number's missing leading zeros added:
    ``1012024`` under ``%d%m%Y``), as a date in :data:`YEARS`; empty when none does."""
    digits: dict[str, None] = {}
    for v in _present(values):
        if (d := _digits(v)) is None:
            return []  # at the first value that is no whole number: a wide table has many
        digits[d] = None
    if not digits:
        return []
    distinct = list(digits)
    longest = max(len(d) for d in distinct if d is not None)
    for fmt in formats:
        width = digit_width(fmt)
        if width is None or longest > width:
            continue
        if fmt == "%m%Y" and all(d is not None and d.endswith("00") for d in distinct):
            continue  # every "period" in 1900, 2000 or 2100: round amounts (61900), not months
        secs = event_times(distinct, "auto", fmt=fmt)[0]
        if np.isnan(secs).any():
            continue
        years = secs.astype("datetime64[s]").astype("datetime64[Y]").astype(int) + 1970
        if YEARS[0] <= years.min() and years.max() <= YEARS[1]:
            return [fmt]
    return []


def digit_dates(values: Sequence[Any]) -> str | None:
    """Why a reference column of dates written in digits (Freddie Mac's ``MATURITY_DATE``,
    ``204907``; Home Credit-like ``application_date``, ``20240131``) makes no feature, or
    None: as numbers or as categories, each later period is one the reference never saw,
    so it drifts in every window of an unchanged stream.

    >>> digit_dates([204907, 204908, None])[:42]
    'dates written in digits (204907, 204908; %'
    >>> digit_dates([150000, 230000]) is None, digit_dates([2022, 2023]) is None
    (True, True)
    """
    seen: dict[Any, None] = {}
    for v in _present(values):
        if _digits(v) is None:
            return None  # no date; the rest of a column of amounts is not read
        seen[v] = None
    distinct = list(seen)
    fmts = digit_formats(distinct)
    if not fmts:
        return None
    first = ", ".join(_digits(v) or str(v) for v in distinct[:2])
    return (f"dates written in digits ({first}; {fmts[0]}): every new period is a value the "
            "reference never saw; to watch it, add its age (e.g. months before the event) "
            "as a number")
