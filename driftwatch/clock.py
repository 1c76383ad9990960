"""Injected time. Logic never calls ``time.time()``; it asks a :class:`Clock`.

In replay the clock follows event time, so a replay is deterministic.

>>> c = ManualClock(100.0)
>>> c.now()
100.0
>>> c.advance(5)
>>> c.now()
105.0
>>> ev = EventTimeClock()
>>> ev.observe(50.0); ev.observe(40.0); ev.now()
50.0
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "EventTimeClock", "ManualClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Source of the current time in epoch seconds (UTC)."""

    def now(self) -> float: ...

    def monotonic(self) -> float: ...


class SystemClock:
    """Wall-clock time; the daemon's default."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told to: for tests."""

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)

    def now(self) -> float:
        return self._t

    def monotonic(self) -> float:
        return self._t

    def advance(self, seconds: float) -> None:
        self._t += float(seconds)

    def set(self, t: float) -> None:
        self._t = float(t)


class EventTimeClock:
    """Follows the largest event time seen so far (the watermark): replay's clock."""

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)

    def observe(self, t: float) -> None:
        if t > self._t:
            self._t = float(t)

    def now(self) -> float:
        return self._t

    def monotonic(self) -> float:
        return self._t
