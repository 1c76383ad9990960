"""Event time: the fields whose values read as times, and how a stream reads the one chosen.

>>> find = times_by_value(["id", "at"], {"id": [1, 2], "at": ["Dec-2015", "Jan-2016"]}.get)
>>> [(c.name, c.why) for c in find()]
[('at', 'every value reads as a time (text in %b-%Y)')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from driftwatch.connectors.eventtime import (
    UNIT_WORDS,
    century_start_at,
    event_times,
    writes_two_digit_year,
)
from driftwatch.errors import ConfigError
from driftwatch.onboard.bareyears import bare_years, in_year_range, named_year
from driftwatch.onboard.digitdates import DIGIT_FORMATS, digit_formats
from driftwatch.onboard.infer import (
    TIME_FORMATS,
    Candidate,
    name_rank,
    text_formats,
    time_unit,
)
from driftwatch.onboard.matching import stream_path
from driftwatch.onboard.plandata import Plan, StreamPlan
from driftwatch.onboard.roles import present
from driftwatch.onboard.times import (
    counter_unit,
    counts_from_start,
    time_reading,
)

__all__ = ["clock_hint", "fix_two_digit_years", "offset_clock", "on_prediction_clock",
           "read_time", "same_clock", "time_todo", "times_by_value"]

#: Names of a clock that counts from an unstated start (IEEE-CIS's ``TransactionDT``, a
#: ``txn_dt``): "dt" as the last word of the snake_case name
OFFSET_NAMES = (r"(?:.+_)?dt",)
#: Share of consecutive sample records such a clock may step back (records a little out
#: of order)
_BACK_STEPS = 0.05


def offset_clock(names: Sequence[str], vals: Callable[[str], list[Any]]) -> str | None:
    """The one field of ``names`` named like a clock from an unstated start
    (:data:`OFFSET_NAMES`) whose sample values are whole numbers counting from a start
    that rarely step back: a time ``init`` does not take by itself (replay would read it
    as 1970 without the origin only the user knows), but names on the record-order line.

    >>> offset_clock(["TransactionID", "TransactionDT"], {"TransactionID": [1, 2, 3],
    ...     "TransactionDT": [86400, 86401, 86460]}.get)
    'TransactionDT'
    >>> offset_clock(["TransactionDT"], {"TransactionDT": [86400, 10, 86460, 5]}.get) is None
    True
    """
    found = []
    for n in names:
        got = [v for v in vals(n) if present(v)]
        if len(got) < 2 or not name_rank(n, (), OFFSET_NAMES) or not counts_from_start(got):
            continue
        arr = np.asarray(got, dtype=np.float64)
        if np.all(np.mod(arr, 1) == 0) and np.mean(np.diff(arr) < 0) <= _BACK_STEPS:
            found.append(n)
    return found[0] if len(found) == 1 else None


def clock_hint(path: str, values: Sequence[Any]) -> str | None:
    """How to read the field ``path`` as the event time, where its sample values are whole
    numbers counting from a start that rarely step back (three distinct at least): the
    ``--time-field`` and ``--time-unit`` to pass, with the unit its name says
    (:func:`~driftwatch.onboard.times.counter_unit`: PaySim's ``step``, an hour), or the
    choice of units where it says none; None for other values.

    >>> clock_hint("step", [1, 1, 2, 3, 5]).split(": pass ")[1].split(";")[0]
    '--time-field step --time-unit h (its name says hours'
    >>> "--time-unit UNIT" in clock_hint("tick", [0, 1, 2])
    True
    >>> clock_hint("step", [3, 1, 2, 0]), clock_hint("amount", [1.5, 2.5, 3.5])
    (None, None)
    """
    got = [v for v in values if present(v)]
    if len(set(got)) < 3 or not counts_from_start(got):
        return None
    arr = np.asarray(got, dtype=np.float64)
    if not np.all(np.mod(arr, 1) == 0) or np.mean(np.diff(arr) < 0) > _BACK_STEPS:
        return None
    unit = counter_unit(path)
    then = "init then prints the origin: line to add"
    if unit is None:
        return (f"if it counts time from a start, window by it: pass --time-field {path} "
                "--time-unit UNIT, what one step of it is (s, min, h or d; its name does not "
                f"say; {then})")
    if unit == "s":  # what --time-field reads it as
        return (f"if it counts time from a start, window by it: pass --time-field {path} "
                f"(read as seconds; {then})")
    return (f"if it counts time from a start, window by it: pass --time-field {path} "
            f"--time-unit {unit} (its name says {UNIT_WORDS[unit]}; {then})")


def time_todo(name: str, vals: list[Any]) -> str:
    """What to do about ``name``, named like a time, whose values do not read as one."""
    todo = "convert it to epoch time (seconds or milliseconds since 1970) or ISO-8601"
    order = "; if no field holds a time, pass --time-field none to read the file in record order"
    if counts_from_start(vals):
        return (f"{todo}; if it counts from a start, pass --time-field {name} and init "
                f"prints the origin: to add{order}")
    return f"{todo}, or pass --time-format FORMAT for dates written otherwise{order}"


def times_by_value(names: Sequence[str], vals: Callable[[str], list[Any]],
                   fmt: str | None = None) -> Callable[[], list[Candidate]]:
    """Fields not named like a time whose every value is ISO-8601 text, a timestamp, text
    in a common date format (``txn.at``, ``reported``, Lending Club's ``issue_d``) or a
    date in digits (a ``yyyymmdd`` column named ``period``); other numbers are left out, an
    epoch may be any count. Plain numbers written as text that ISO-8601 reads as years
    (:func:`~driftwatch.onboard.bareyears.bare_years`: amounts sent as strings) are a time
    only in a field named like a year, in the years a date may fall in, and rank below any
    other time: without one, the table is read in record order. ``fmt``: the user's
    ``--time-format``."""
    def find() -> list[Candidate]:
        out = []
        for n in names:
            unit = time_unit(vals(n))
            if unit == "iso" and (years := bare_years(vals(n))) is not None:
                # an amount sent as text ("2001") is no time: a table without one is read
                # in record order, so only a field named like a year is taken for years
                if in_year_range(years) and named_year(n):
                    out.append(_as_years(n))
            elif unit in ("iso", "auto"):
                what = "ISO-8601 text" if unit == "iso" else "timestamps"
                out.append(Candidate(n, _TIME, f"every value reads as a time ({what})"))
            elif unit is None and (formats := text_formats(vals(n), (fmt,) if fmt
                                                                   else TIME_FORMATS)):
                out.append(Candidate(n, _TIME, "every value reads as a time (text in "
                                     f"{' or '.join(formats)})"))
            elif unit is None and (formats := digit_formats(vals(n), (fmt,) if fmt
                                                                    else DIGIT_FORMATS)):
                out.append(Candidate(n, _TIME, "every value reads as a time (dates in "
                                     f"digits, {formats[0]})"))
        return out
    return find


#: Ranks of the fields found by value: a time, then plain numbers in a field named like a
#: year, taken only where nothing else reads as a time
_TIME, _NAMED_YEAR = 2, 1


def _as_years(name: str) -> Candidate:
    """A field named like a year whose values are plain numbers ISO-8601 reads as years."""
    return Candidate(name, _NAMED_YEAR, "every value is a year in digits, and its name "
                     "says year")


def read_time(plan: Plan, sp: StreamPlan, line: tuple[str, str], name: str,
              values: list[Any], where: str, fmt: str | None = None,
              unit: str | None = None) -> None:
    """Set how ``sp`` reads its time field ``name`` and say it: ``line`` (what, why) with
    the reading's note (a zone-less time read as UTC), then the reading's own lines (see
    :func:`~driftwatch.onboard.times.time_reading`; ``fmt`` and ``unit``: the user's
    ``--time-format`` and ``--time-unit``)."""
    r = time_reading(name, values, where, fmt, unit)
    sp.time_path, sp.time_unit, sp.time_format, sp.time_offsets = (
        name, r.unit, r.format, r.offsets)
    plan.say(line[0], line[1] + r.note)
    for what, why in r.lines:
        plan.say(what, why)


def same_clock(preds: StreamPlan, names: Sequence[str],
               vals: Callable[[str], list[Any]]) -> str | None:
    """The field of ``names`` (an outcomes sample's) that carries the predictions' time
    field, by its path or a name spelled otherwise (:func:`stream_path`), and whose every
    value reads as the predictions' do (``preds``' unit or format), counting from a start
    where theirs do: IEEE-CIS's outcomes dated by their own ``TransactionDT``, read as
    seconds from the predictions' start. None where the predictions take no time from a
    field, or no such field reads so.

    >>> preds = StreamPlan("predictions", None, "id", "TransactionDT", time_unit="s",
    ...                    time_offsets=True)
    >>> same_clock(preds, ["id", "transaction_dt"], {"transaction_dt": [86400, 90000]}.get)
    'transaction_dt'
    >>> same_clock(preds, ["id", "TransactionDT"], {"TransactionDT": [1.7e9]}.get) is None
    True
    """
    if preds.time_source != "payload" or preds.time_path is None:
        return None
    try:
        path = stream_path(preds.time_path, names)
    except ConfigError:  # several fields spelled so: none is taken
        return None
    if path is None:
        return None
    got = [v for v in vals(path) if present(v)]
    if not got or counts_from_start(got) != preds.time_offsets:
        return None
    _, _, bad = event_times(got, preds.time_unit, fmt=preds.time_format,
                            century_start=preds.time_century_start)
    return None if bad.any() else path


def on_prediction_clock(plan: Plan, out: StreamPlan, path: str, given: bool) -> None:
    """Read the outcomes' ``path`` (:func:`same_clock`'s) as the predictions read their time
    field (its unit or format, a count from the same start), and say so (``given``: that
    field came from ``--time-field``): each outcome then lands at its own event time,
    windowed and waited for in the predictions' clock, not at its arrival."""
    sp = plan.predictions
    out.time_source = "payload"
    out.time_path, out.time_unit, out.time_format, out.time_offsets = (
        path, sp.time_unit, sp.time_format, sp.time_offsets)
    how = f"unit: {sp.time_unit}" if sp.time_format is None else f"format: {sp.time_format}"
    plan.say(f"outcomes time: {path}", f"the predictions' time field {sp.time_path}"
             + (" (--time-field)" if given else "") + f", read as theirs ({how}"
             + (", a count from the same start" if sp.time_offsets else "")
             + "): each outcome is placed at its own time in the same clock, for the "
             "windows and the label wait, not at its arrival"
             + ("; give it the predictions' origin: too" if sp.time_offsets else ""))


def fix_two_digit_years(plan: Plan, now: float) -> None:
    """Give each stream whose time format writes a two-digit year (``%y``) the
    ``century_start`` that reads it as today (epoch seconds ``now``) does, and say it:
    written down, a replay years later reads ``'27'`` as this one does."""
    for sp in (plan.predictions, plan.outcomes):
        if sp is None or not writes_two_digit_year(sp.time_format):
            continue
        sp.time_century_start = first = century_start_at(now)
        plan.say(f"  century_start: {first}", f"{sp.name}: a two-digit year of "
                 f"{sp.time_path} reads as {first} to {first + 99} (the hundred years "
                 "ending next year), written down so a later replay reads it alike")
