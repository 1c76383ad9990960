"""How ``init`` reads a time field's sample values: the connector's ``unit``, the strptime
``format`` of dated text, or the ``origin`` that a count from a start needs, each decision
with the line that says why.

>>> r = time_reading("issue_d", ["Dec-2015", "Jan-2016"], "live.csv")
>>> r.unit, r.format, r.lines[0][0]
('auto', '%b-%Y', '  format: %b-%Y')
>>> r = time_reading("Time", [0.0, 2.0, 172792.0], "live.csv")
>>> r.unit, r.format, r.offsets, 'origin: "YYYY-MM-DDTHH:MM:SSZ"' in r.lines[0][1]
('s', None, True, True)

A count from a start is read in the unit the user gives (``--time-unit``): PaySim's
``step`` counts hours.

>>> r = time_reading("step", [1, 1, 2, 743], "live.csv", unit="h")
>>> r.unit, r.offsets, "count hours (--time-unit h)" in r.lines[0][1]
('h', True, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.eventtime import (
    UNIT_WORDS,
    event_times,
    format_problem,
    from_numbers,
)
from driftwatch.errors import ConfigError
from driftwatch.onboard.bareyears import bare_years, year_note
from driftwatch.onboard.digitdates import digit_formats
from driftwatch.onboard.infer import epoch_text_unit, text_formats, time_unit
from driftwatch.onboard.matching import name_key
from driftwatch.onboard.roles import present, shown

__all__ = ["COUNT_UNITS", "ORIGIN_PLACEHOLDER", "TimeReading",
           "check_time_format", "check_time_unit", "counter_unit", "counts_from_start",
           "time_reading", "zoneless"]

#: What init writes where only the user knows the instant a count starts from
ORIGIN_PLACEHOLDER = "YYYY-MM-DDTHH:MM:SSZ"
#: Numbers below this are no epoch seconds init takes (1999-10-15): a count from a start
_EPOCH_FLOOR = 9.4e8
#: The units ``--time-unit`` may give a time written as a number: the connector's count
#: units (``auto`` and ``iso`` are no count)
COUNT_UNITS = tuple(UNIT_WORDS)
#: Words of a field's name that say what one step of its count is: PaySim's ``step`` is an
#: hour of its simulation, IEEE-CIS's ``TransactionDT`` a second (``min`` alone is left out:
#: a minimum as often as a minute)
_NAME_UNITS = {"ms": "ms", "msec": "ms", "millis": "ms", "milliseconds": "ms",
               "sec": "s", "secs": "s", "second": "s", "seconds": "s", "dt": "s",
               "minute": "min", "minutes": "min", "mins": "min",
               "step": "h", "steps": "h", "hour": "h", "hours": "h", "hr": "h", "hrs": "h",
               "day": "d", "days": "d"}


@dataclass(frozen=True)
class TimeReading:
    """How the connector reads a time field, and what init says about it."""

    unit: str = "auto"  # auto | s | ms | us | ns | min | h | d | iso
    format: str | None = None  # a strptime format for text times
    offsets: bool = False  # a count from a start: the connector needs an origin
    lines: tuple[tuple[str, str], ...] = ()  # (what, why) for init's output
    note: str = ""  # added to the time's own line


def counter_unit(name: str) -> str | None:
    """The unit a count from a start most likely steps in, as its name says (None where
    the name says none, or several): what ``init`` suggests with ``--time-unit``.

    >>> counter_unit("step"), counter_unit("hours_since_open"), counter_unit("TransactionDT")
    ('h', 'h', 's')
    >>> counter_unit("elapsedDays"), counter_unit("Time"), counter_unit("min_balance")
    ('d', None, None)
    """
    found = {_NAME_UNITS[w] for w in name_key(name).split("_") if w in _NAME_UNITS}
    return found.pop() if len(found) == 1 else None


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


def _as_time(v: Any, unit: str = "auto") -> str:
    """How replay reads a number that is not an epoch time in ``unit`` (``auto``: as
    seconds, or milliseconds where large), without an origin."""
    try:
        x = float(v)
        return pd.Timestamp(from_numbers(np.array([x]), unit)[0], unit="s",
                            tz="UTC").isoformat()
    except (TypeError, ValueError, OverflowError, pd.errors.OutOfBoundsDatetime):
        return "unreadable"


def check_time_format(fmt: str | None, where: str) -> None:
    """Refuse a ``--time-format`` the connector would refuse (``where``: the sample)."""
    if fmt is not None and (problem := format_problem(fmt)):
        raise ConfigError(f"--time-format: {problem}", file=where, found=repr(fmt),
                          hint="a strptime format with a year, quoted: --time-format '%d/%m/%Y'")


def check_time_unit(unit: str | None, fmt: str | None, where: str) -> None:
    """Refuse a ``--time-unit`` beside a ``--time-format`` (``where``: the sample): a format
    reads text, a unit counts numbers, and the connector takes one or the other."""
    if unit is not None and fmt is not None:
        raise ConfigError(f"--time-unit {unit} and --time-format {fmt!r}: a format reads "
                          "text times, a unit counts numbers; the connector's event_time "
                          "takes one or the other", file=where,
                          hint="drop one: --time-unit for a number, --time-format for text")


def _counted(name: str, values: Sequence[Any], where: str, unit: str) -> TimeReading:
    """``--time-unit UNIT``: numbers that count from a start are offsets in ``unit``; epoch
    numbers keep the unit their values show, so a unit that reads them otherwise (epoch
    seconds as hours) is refused, as is any value that is no number."""
    vals = [v for v in values if present(v)]
    if not vals or not all(isinstance(v, int | float) and not isinstance(v, bool)
                           for v in vals):
        raise ConfigError(f"--time-unit {unit}: the event time {name} is not written as "
                          f"numbers ({shown(vals)})", file=where,
                          hint="drop --time-unit (for dates written as text, --time-format "
                          "gives their format)")
    if counts_from_start(vals):
        return _offsets(name, vals, unit, given=True)
    epoch = time_unit(vals)
    if epoch == unit:
        return TimeReading(unit)
    first = vals[0]
    if epoch is not None:
        raise ConfigError(f"--time-unit {unit}: the values of {name} ({shown(vals)}) are epoch "
                          f"{UNIT_WORDS[epoch]}, which {unit} would read otherwise ({first!r} "
                          f"as {_as_time(first, unit)})", file=where,
                          hint=f"drop --time-unit (init reads them as {epoch}), or pass "
                          f"--time-unit {epoch}")
    raise ConfigError(f"--time-unit {unit}: the values of {name} ({shown(vals)}) neither count "
                      "from a start (whole or decimal numbers from 0 up) nor are epoch "
                      "seconds, milliseconds, microseconds or nanoseconds", file=where,
                      hint="drop --time-unit, or convert the times to epoch time upstream")


def _offsets(name: str, values: Sequence[Any], unit: str, given: bool) -> TimeReading:
    """Numbers counting from a start, read in ``unit`` (``given``: from ``--time-unit``;
    else seconds, with the unit the field's name suggests, or the choice): the origin
    is the user's to add, and the warning says so with the line to add."""
    from driftwatch.onboard.write import q  # write reads plans, which read times

    first = next((v for v in values if present(v)), None)
    counting = f"count {UNIT_WORDS[unit]} (--time-unit {unit})" if given else "count"
    if given:
        other = ""
    elif (guess := counter_unit(name)) not in (None, "s"):
        other = (f" (its name says {UNIT_WORDS[guess]}: pass --time-unit {guess} to read "
                 f"them so and write unit: {guess})")
    else:
        other = (" (pass --time-unit ms, min, h or d if they count milliseconds, minutes, "
                 "hours or days: PaySim's step counts hours)")
    return TimeReading(unit, offsets=True, lines=((
        f"  warning: {name}", f"its values ({shown(values)}) {counting} from a start, not "
        f"from 1970: replay reads {first!r} as {_as_time(first, unit)}. Add the instant "
        f"they count from (init cannot know it) to the connector: event_time: {{path: "
        f'{q(name)}, unit: {unit}, origin: "{ORIGIN_PLACEHOLDER}"}}{other}'),))


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


def time_reading(name: str, values: Sequence[Any], where: str, fmt: str | None = None,
                 unit: str | None = None) -> TimeReading:
    """How to read the time field ``name`` of the sample ``where`` (``fmt``: the user's
    ``--time-format``, ``unit`` their ``--time-unit``). Text in several formats that give
    different times is an error naming them."""
    check_time_unit(unit, fmt, where)
    if fmt is not None:
        return _given(name, values, where, fmt)
    if unit is not None:
        return _counted(name, values, where, unit)
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
    if text_unit := epoch_text_unit(values):  # replay reads such text as its number
        return TimeReading(text_unit)
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
        return _offsets(name, values, "s", given=False)
    return TimeReading("auto", lines=((
        f"  warning: {name}", f"its values ({shown(values)}) are not epoch seconds, "
        f"milliseconds, ISO-8601 or dates in a common format: replay reads {first!r} as "
        f"{_as_time(first)}; convert them to epoch time, or write the event_time format: "
        "(a strptime format) in the connector"),))
