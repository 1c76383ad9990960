"""Off-peak windows: when deferrable retraining may run.

Pure time logic: every method takes ``now`` (epoch seconds) as an argument. A window
``"22:00-06:00"`` crosses midnight; with ``weekends=True`` all of Saturday and Sunday
(in the configured timezone) are off-peak too.

>>> from datetime import datetime
>>> from zoneinfo import ZoneInfo
>>> w = OffPeakWindows(["22:00-06:00"], weekends=True, tz="Europe/Berlin")
>>> at = lambda *a: datetime(*a, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
>>> w.contains(at(2024, 5, 8, 23, 30)), w.contains(at(2024, 5, 9, 5, 59))  # Wed night
(True, True)
>>> w.contains(at(2024, 5, 8, 12, 0)), w.contains(at(2024, 5, 11, 12, 0))  # Wed, Sat noon
(False, True)
>>> w.next_start(at(2024, 5, 8, 12, 0)) == at(2024, 5, 8, 22, 0)
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from driftwatch.gpupool.errors import PoolConfigError

__all__ = ["OffPeakWindows"]

_SPAN = re.compile(r"\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*")
_DAY = 24 * 60


@dataclass(frozen=True)
class OffPeakWindows:
    """Daily ``HH:MM-HH:MM`` windows (end exclusive; ``24:00`` allowed as an end) plus,
    optionally, whole weekends, in timezone ``tz`` (an IANA name)."""

    windows: Sequence[str] = ("22:00-06:00",)
    weekends: bool = True
    tz: str = "UTC"
    _spans: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    _zone: ZoneInfo = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        windows = (self.windows,) if isinstance(self.windows, str) else tuple(self.windows)
        object.__setattr__(self, "windows", windows)
        object.__setattr__(self, "_spans", tuple(_parse_span(w) for w in windows))
        try:
            zone = ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise PoolConfigError(
                f"unknown timezone {self.tz!r}; expected an IANA name like 'Europe/Berlin'"
            ) from None
        object.__setattr__(self, "_zone", zone)

    def contains(self, now: float) -> bool:
        """Whether ``now`` falls in an off-peak window."""
        local = datetime.fromtimestamp(now, self._zone)
        if self.weekends and local.weekday() >= 5:
            return True
        minute = local.hour * 60 + local.minute + local.second / 60.0
        return any(_in_span(minute, span) for span in self._spans)

    def next_start(self, now: float) -> float | None:
        """``now`` when off-peak, else when the next window opens; ``None`` if never."""
        if self.contains(now):
            return now
        local = datetime.fromtimestamp(now, self._zone)
        best: float | None = None
        for days in range(8):
            day = (local + timedelta(days=days)).date()
            starts = [time(s // 60, s % 60) for s, _ in self._spans]
            if self.weekends and day.weekday() == 5:
                starts.append(time(0, 0))
            for start in starts:
                t = datetime.combine(day, start, tzinfo=self._zone).timestamp()
                if t > now and (best is None or t < best):
                    best = t
        return best


def _parse_span(text: str) -> tuple[int, int]:
    m = _SPAN.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise PoolConfigError(f"off-peak window must look like '22:00-06:00', found {text!r}")
    h1, m1, h2, m2 = (int(g) for g in m.groups())
    start, end = h1 * 60 + m1, h2 * 60 + m2
    if h1 > 23 or m1 > 59 or m2 > 59 or end > _DAY:
        raise PoolConfigError(f"off-peak window has an impossible time, found {text!r}")
    if start == end:
        raise PoolConfigError(
            f"off-peak window must not start where it ends, found {text!r}; "
            "for all day use '00:00-24:00'"
        )
    return start, end


def _in_span(minute: float, span: tuple[int, int]) -> bool:
    start, end = span
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end  # crosses midnight
