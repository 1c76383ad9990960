"""Plain numbers written as text that ISO-8601 reads as years: ``'2188'`` is 2188-01-01 to
pandas' ISO reader (and ``'1500.5'`` May 1500), so a JSON sample's amounts sent as strings
(``"amount": "2188"``) read as event times. Such a column is a time only where its name
says year (and no other field reads as a time), and then init says it.

>>> bare_years(["2188", " 1999", None]), bare_years(["1500.5"]), bare_years([2015])
([2188, 1999], [1500], None)
>>> bare_years(["2024-01-31"]), bare_years(["20240131"]), bare_years(["250"])
(None, None, None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from driftwatch.onboard.digitdates import YEARS
from driftwatch.onboard.roles import present, shown

__all__ = ["bare_years", "in_year_range", "named_year", "year_note"]

#: A plain number of at most four digits before any point: longer digits that ISO-8601
#: reads are a date in its basic form (``20240131``), which digitdates reads
_PLAIN = re.compile(r"\s*[+-]?\d{1,4}(\.\d*)?\s*")


def bare_years(values: Sequence[Any]) -> list[int] | None:
    """The years ISO-8601 reads from ``values`` when every present one is text of a plain
    number that it reads as a time; None otherwise (a number that is no text, a date with
    its dashes, a number ISO does not read)."""
    vals = [v for v in values if present(v)]
    if not vals or not all(isinstance(v, str) and _PLAIN.fullmatch(v) for v in vals):
        return None
    read = pd.to_datetime(pd.Series(vals), errors="coerce", utc=True, format="ISO8601")
    if read.isna().any():
        return None
    return [int(y) for y in read.dt.year]


def in_year_range(years: Sequence[int]) -> bool:
    """Whether every year falls in :data:`~driftwatch.onboard.digitdates.YEARS`: a year 1500
    or 3200 is no event's."""
    return bool(years) and YEARS[0] <= min(years) and max(years) <= YEARS[1]


def named_year(name: str) -> bool:
    """Whether ``name`` says it holds a year (``year``, ``issue_year``, ``VintageYear``).

    >>> named_year("issue_year"), named_year("VintageYear"), named_year("amount")
    (True, True, False)
    """
    return "year" in name.lower()


def year_note(name: str, values: Sequence[Any]) -> str:
    """What init's time line adds for a time field whose values are :func:`bare_years`."""
    texts = [v for v in values if present(v)]
    first = str(texts[0]).strip() if texts else ""
    years = bare_years(texts) or [0]
    return (f"; its values are plain numbers ({shown(texts)}), read as ISO-8601 years "
            f"({first!r} is {years[0]:04d}-01-01T00:00:00Z, the start of the year): if "
            f"{name} holds amounts or counts, not years, pass --time-field with the field "
            "that holds the event time")
