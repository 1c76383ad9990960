"""How often the policy ``init`` writes may act: cooldowns and blast-radius limits.

Without them a lasting drift acts on every window: one alert per window, and once a tier
is edited to ``retrain``, one retraining job per window. The engine measures a cooldown in
event time (window ends), so init scales each one to the span of a window in the sample
(``pane`` events at the sample's event rate; init's window is one pane) and writes it
exactly where it is whole seconds (``1h8m``, not ``2h``), else rounded up in the largest
unit that states it within 2% (or to the second), and at most :data:`MAX_COOLDOWN_S`
(30 days: where a window spans weeks, a drift that lasts is raised again each month):

* ``cooldown``: 3 windows after ``mild`` (an online update needs a labelled window or two
  to show whether it helped), 6 after ``moderate`` (a shadow needs outcomes to judge the
  challenger), 12 after ``severe`` (a retraining job trains, then shadows, then promotes).
  A tier's cooldown also holds the tiers below it; a worse tier still acts at once.
* ``data_quality.cooldown``: 4 windows: a broken feed is re-raised sooner than drift.
* ``limits``: at most 4 mild, 2 moderate and 1 severe actions in any 24 hours of event
  time, whatever the cooldowns allow (they matter where windows are short), and one
  retraining job at a time.

A sample without event times (a Kafka record timestamp, or outcomes joined on arrival)
gives no rate: init then takes a window as :data:`UNKNOWN_WINDOW_S` and says so. A file
without times (``event_time: {source: order}``) numbers its records: event time counts
records, so a window of ``pane`` events spans ``pane`` seconds of it exactly, and each
cooldown is written as that many records (``3000s``: 1s is one record), never capped.

>>> choose_pace(1000.0, per_record=True).cooldown
{'mild': '3000s', 'moderate': '6000s', 'severe': '12000s'}

>>> p = choose_pace(30000.0)  # 500 events a minute apart
>>> p.cooldown, p.data_quality
({'mild': '1d1h', 'moderate': '2d2h', 'severe': '4d4h'}, '1d9h20m')
>>> choose_pace(45.0).cooldown["severe"], choose_pace(None).window
('9m', None)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from driftwatch.connectors.eventtime import event_times
from driftwatch.onboard.plandata import StreamPlan
from driftwatch.policy.durations import format_duration

__all__ = [
    "COOLDOWN_WINDOWS",
    "DQ_WINDOWS",
    "MAX_ACTIONS_PER_DAY",
    "MAX_COOLDOWN_S",
    "PRECISION",
    "UNKNOWN_WINDOW_S",
    "Pace",
    "choose_pace",
    "pace_line",
    "round_up",
    "window_seconds",
    "window_text",
]

#: Windows a tier's cooldown lasts after it acts.
COOLDOWN_WINDOWS: dict[str, int] = {"mild": 3, "moderate": 6, "severe": 12}
#: Windows between two data-quality alerts while the feed stays broken.
DQ_WINDOWS = 4
#: Actions per tier in any 24 hours (event time).
MAX_ACTIONS_PER_DAY: dict[str, int] = {"mild": 4, "moderate": 2, "severe": 1}
#: The span taken for a window when the sample gives no event rate.
UNKNOWN_WINDOW_S = 3600.0

_MINUTE, _HOUR, _DAY = 60, 3600, 86400
#: The longest cooldown init writes.
MAX_COOLDOWN_S = 30 * _DAY
#: How far past the span it stands for a written cooldown may run (whole seconds aside).
PRECISION = 0.02
#: The share by which a span measured on timestamps near 1.7e9 s may be off by float
#: noise: 68 minutes measured as 4080.0000002 s is written ``1h8m``, not ``1h9m``.
_NOISE = 1e-9


@dataclass(frozen=True)
class Pace:
    """The cooldowns init writes (duration text) with what each spans, and the limits."""

    window: float | None  # seconds a window spans in the sample; None: unknown
    cooldown: dict[str, str]  # per tier
    data_quality: str
    #: per tier and ``data_quality``: what the duration stands for ("12 windows")
    spans: dict[str, str] = field(default_factory=dict)
    max_actions_per_day: dict[str, int] = field(
        default_factory=lambda: dict(MAX_ACTIONS_PER_DAY))
    max_concurrent_retrains: int = 1
    #: event time counts records (``source: order``): durations are numbers of records
    per_record: bool = False


def round_up(seconds: float) -> str:
    """A duration at least ``seconds`` long: exactly where it is a whole number of seconds
    (largest units first), else rounded up in the largest unit (days, hours, minutes) that
    states it to within :data:`PRECISION`, else to the second; at least ``1s``, never more
    than :data:`MAX_COOLDOWN_S`.

    >>> round_up(68 * 60), round_up(3601), round_up(8 * 86400 + 1.5), round_up(1e9)
    ('1h8m', '1h1s', '8d1h', '30d')
    >>> round_up(0.2), round_up(45.5), round_up(25 * 3600 + 17 * 60 + 5.5)
    ('1s', '46s', '1d1h18m')
    """
    if seconds >= MAX_COOLDOWN_S:
        return format_duration(MAX_COOLDOWN_S)
    whole = round(seconds)
    if whole >= 1 and abs(seconds - whole) <= _NOISE * seconds:
        return format_duration(whole)
    for unit in (_DAY, _HOUR, _MINUTE):
        up = math.ceil(seconds / unit) * unit
        if up - seconds <= PRECISION * seconds:
            return format_duration(up)
    return format_duration(max(1, math.ceil(seconds)))


def choose_pace(window: float | None, *, per_record: bool = False) -> Pace:
    """The cooldowns for windows of ``window`` seconds (None: unknown); ``per_record``:
    ``window`` is a number of records (``source: order``), and so is each cooldown.

    >>> choose_pace(7 * 86400).spans["severe"]
    '30d, the most init writes (12 windows span longer)'
    """
    if per_record and window is not None:
        counts = {**COOLDOWN_WINDOWS, "data_quality": DQ_WINDOWS}
        n = round(window)
        return Pace(window=window, per_record=True,
                    cooldown={t: f"{k * n}s" for t, k in COOLDOWN_WINDOWS.items()},
                    data_quality=f"{DQ_WINDOWS * n}s",
                    spans={k: f"{c} windows" for k, c in counts.items()})
    span = UNKNOWN_WINDOW_S if window is None else window
    counts = {**COOLDOWN_WINDOWS, "data_quality": DQ_WINDOWS}
    spans = {k: f"{n} windows" if n * span <= MAX_COOLDOWN_S else
             f"{format_duration(MAX_COOLDOWN_S)}, the most init writes ({n} windows span "
             "longer)" for k, n in counts.items()}
    return Pace(window=window,
                cooldown={t: round_up(n * span) for t, n in COOLDOWN_WINDOWS.items()},
                data_quality=round_up(DQ_WINDOWS * span), spans=spans)


def window_seconds(sp: StreamPlan, pane: int, now: float | None = None) -> float | None:
    """Seconds ``pane`` events span at the sample's event rate; None when its time field
    gives no rate (none in the payload, fewer than two times, or all alike). The stream's
    ``century_start``, or else ``now``, places a two-digit year, as the decoder does."""
    if sp.time_source == "order":  # event time is the record's number
        return float(pane)
    if sp.time_source != "payload" or sp.time_path is None:
        return None
    secs, _, _ = event_times(sp.sample.values(sp.time_path), sp.time_unit,
                             fmt=sp.time_format, now=now,
                             century_start=sp.time_century_start)
    secs = secs[np.isfinite(secs)]
    if len(secs) < 2 or secs.max() <= secs.min():
        return None
    return float(pane * (secs.max() - secs.min()) / (len(secs) - 1))


def window_text(pace: Pace, pane: int) -> str:
    """What the cooldowns were scaled to, for the policy's comment and init's line."""
    if pace.per_record:
        return (f"the sample has no event times: records are numbered in file order, a "
                f"window is {pane} records")
    if pace.window is None:
        return (f"the sample has no event times: a window of {pane} events taken as "
                f"{format_duration(UNKNOWN_WINDOW_S)}; set them to your stream's pace")
    about = format_duration(pace.window) if pace.window >= 1 else "under a second"
    return f"a window of {pane} events spans about {about} in the sample"


def pace_line(pace: Pace, pane: int) -> tuple[str, str]:
    """Init's line (what, why) for the cooldowns it writes."""
    c, n = pace.cooldown, COOLDOWN_WINDOWS
    most = "in records, 1s = one record" if pace.per_record else \
        f"at most {format_duration(MAX_COOLDOWN_S)}"
    return (f"cooldowns: {c['mild']}, {c['moderate']}, {c['severe']}",
            f"{n['mild']}, {n['moderate']} and {n['severe']} windows ({most}) after mild, "
            f"moderate and severe act; {window_text(pace, pane)}")
