"""How ``init`` reads a time field's sample values: the connector's ``unit``, the strptime
``format`` of dated text, or the ``origin`` that a count from a start needs, each decision
with the line that says why.

>>> r = time_reading("issue_d", ["Dec-2015", "Jan-2016"], "live.csv")
>>> r.unit, r.format, r.lines[0][0]
('auto', '%b-%Y', '  format: %b-%Y')
>>> r = time_reading("Time", [0.0, 2.0, 172792.0], "live.csv")
>>> r.unit, r.format, r.offsets, 'origin: "YYYY-MM-DDTHH:MM:SSZ"' in r.lines[0][1]
('s', None, True, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.eventtime import event_times, format_problem, from_numbers
from driftwatch.errors import ConfigError
from driftwatch.onboard.bareyears import bare_years, year_note
from driftwatch.onboard.digitdates import digit_formats
from driftwatch.onboard.infer import text_formats, time_unit
from driftwatch.onboard.roles import present, shown

__all__ = ["ORIGIN_PLACEHOLDER", "TimeReading", "check_time_format", "counts_from_start",
           "time_reading", "zoneless"]

#: What init writes where only the user knows the instant a count starts from
ORIGIN_PLACEHOLDER = "YYYY-MM-DDTHH:MM:SSZ"
#: Numbers below this are no epoch seconds init takes (1999-10-15): a count from a start
_EPOCH_FLOOR = 9.4e8


@dataclass(frozen=True)
class TimeReading:
    """How the connector reads a time field, and what init says about it."""

    unit: str = "auto"  # auto | s | ms | us | ns | iso
    format: str | None = None  # a strptime format for text times
    offsets: bool = False  # a count from a start: the connector needs an origin
    lines: tuple[tuple[str, str], ...] = ()  # (what, why) for init's output
    note: str = ""  # added to the time's own line


def counts_from_start(values: Sequence[Any]) -> bool:
    """Whether every present value is a number from 0 up to below any epoch second (ULB's
    ``Time``: seconds since the first transaction; IEEE-CIS's ``TransactionDT``).

    >>> counts_from_start([0, 2.5, 172792]), counts_from_start([1.7e9]), counts_from_start([-1])
    (True, False, False)
    """
    vals = [v for v in values if present(v)]
    if not vals or not all(isinstance(v, int | float) and not isinstance(v, bool)
                           for v in vals):
        return False
    arr = np.asarray(vals, dtype=np.float64)
    return bool(np.isfinite(arr).all() and arr.min() >= 0 and arr.max() < _EPOCH_FLOOR)


_ZONE = re.compile(r"(z|[+-]\d{2}(:?\d{2})?)$", re.IGNORECASE)


def zoneless(values: Sequence[Any]) -> list[str]:
    """The ISO-8601 texts among ``values`` that carry no zone (no ``Z``, no offset after the
    time of day; a date alone has none): replay reads them as UTC.

    >>> zoneless(["2024-05-01T09:00:00", "2024-05-01T09:00:00Z", "2024-05-01 09:00+02:00",
    ...           "2024-05-01", "2024-05-01T09:00:00.5-0500"])
    ['2024-05-01T09:00:00', '2024-05-01']
    """
    out = []
    for v in values:
        if isinstance(v, str):
            parts = re.split(r"[Tt ]", v.strip(), maxsplit=1)
            if len(parts) == 1 or not _ZONE.search(parts[1].strip()):
                out.append(v)
    return out


def _iso(values: Sequence[Any]) -> TimeReading:
    """ISO-8601 text: said to be read as UTC where the sample's times carry no zone."""
    texts = [v for v in values if isinstance(v, str)]
    bare = zoneless(texts)
    if not bare:
        return TimeReading("iso")
    some = "" if len(bare) == len(texts) else f"{len(bare)} of {len(texts)} of "
    return TimeReading("iso", note=(
        f"; {some}its times carry no zone ({shown(bare)}): read as UTC (write Z or the "
        "offset, e.g. +02:00, if they are local times)"))


def _as_time(v: Any) -> str:
    """How replay's ``unit: auto`` reads a number that is not an epoch time."""
    try:
        x = float(v)
        return pd.Timestamp(from_numbers(np.array([x]), "auto")[0], unit="s",
                            tz="UTC").isoformat()
    except (TypeError, ValueError, OverflowError, pd.errors.OutOfBoundsDatetime):
        return "unreadable"


def check_time_format(fmt: str | None, where: str) -> None:
    """Refuse a ``--time-format`` the connector would refuse (``where``: the sample)."""
    if fmt is not None and (problem := format_problem(fmt)):
        raise ConfigError(f"--time-format: {problem}", file=where, found=repr(fmt),
                          hint="a strptime format with a year, quoted: --time-format '%d/%m/%Y'")


def _given(name: str, values: Sequence[Any], where: str, fmt: str) -> TimeReading:
    """``--time-format FMT``: checked as the connector checks it, then on the sample."""
    check_time_format(fmt, where)
    vals = [v for v in values if present(v)]
    unread = int(event_times(vals, "auto", fmt=fmt)[2].sum())  # as the decoder reads them
    why = "from --time-format"
    if unread:
        why += (f"; {unread} of {len(vals)} sample values of {name} do not read with it "
                f"(replay dead-letters them as bad_time)")
    return TimeReading("auto", fmt, lines=((f"  format: {fmt}", why),))


def _in_digits(name: str, fmt: str, distinct: Sequence[Any]) -> TimeReading:
    """Dates written in digits (``fmt``: ``%Y%m%d``, ...): read as numbers or as text."""
    return TimeReading("auto", fmt, lines=((
        f"  format: {fmt}", f"every sample value of {name} is a date written in digits "
        f"({shown(distinct)}); written as its event_time format, which reads them as "
        "numbers or as text (no zone: UTC)"),))


def time_reading(name: str, values: Sequence[Any], where: str, fmt: str | None = None
                 ) -> TimeReading:
    """How to read the time field ``name`` of the sample ``where`` (``fmt``: the user's
    ``--time-format``). Text in several formats that give different times is an error
    naming them."""
    if fmt is not None:
        return _given(name, values, where, fmt)
    distinct = list(dict.fromkeys(v for v in values if present(v)))
    unit = time_unit(values)
    # text '20240131' is ISO's basic form too, but unit: iso refuses the number 20240131
    # that a stream of such text also sends: the digit format reads both
    if unit == "iso" and (digits := digit_formats(values)):
        return _in_digits(name, digits[0], distinct)
    if unit == "iso" and bare_years(values) is not None:  # amounts sent as text, maybe
        return TimeReading("iso", note=year_note(name, values))
    if unit == "iso":
        return _iso(values)
    if unit is not None:
        return TimeReading(unit)
    formats = text_formats(values)
    if len(formats) > 1:
        raise ConfigError(
            f"cannot tell the format of the event time {name}: its values ({shown(distinct)}) "
            "read with " + " and with ".join(repr(f) for f in formats) + ", as different "
            "times", file=where,
            hint=f"pass --time-format with the one that is right (e.g. {formats[0]!r})")
    if formats:
        return TimeReading("auto", formats[0], lines=((
            f"  format: {formats[0]}", f"every sample value of {name} reads with it "
            f"({shown(distinct)}); written as its event_time format (no zone: UTC)"),))
    if digits := digit_formats(values):  # before counts from a start: 20240131 is one too
        return _in_digits(name, digits[0], distinct)
    first = next((v for v in values if present(v)), None)
    if counts_from_start(values):
        from driftwatch.onboard.write import q  # write reads plans, which read times

        return TimeReading("s", offsets=True, lines=((
            f"  warning: {name}", f"its values ({shown(values)}) count from a start, not "
            f"from 1970: replay reads {first!r} as {_as_time(first)}. Add the instant they "
            f"count from (init cannot know it) to the connector: event_time: {{path: "
            f'{q(name)}, unit: s, origin: "{ORIGIN_PLACEHOLDER}"}} (unit: ms, min, h or d if '
            "they count milliseconds, minutes, hours or days: PaySim's step counts hours)"),))
    return TimeReading("auto", lines=((
        f"  warning: {name}", f"its values ({shown(values)}) are not epoch seconds, "
        f"milliseconds, ISO-8601 or dates in a common format: replay reads {first!r} as "
        f"{_as_time(first)}; convert them to epoch time, or write the event_time format: "
        "(a strptime format) in the connector"),))
