"""A recording played as if it were live: events are delivered at a pace set by event time.

:class:`PacedSource` wraps any finite :class:`~driftwatch.connectors.base.Source` (the
demo's ``FileSource``) and holds each micro-batch back until the wall clock, scaled by
``speed``, has caught up with its event time: at ``speed=3600`` an hour of events goes by
per second. The first batch after a start (or a seek) anchors event time to the clock.
Positions, seeks and commits pass through unchanged, so checkpoints work as for Kafka.
A table whose records carry no time (``event_time: {source: order}``) is paced by its
records instead (``count_records``): at ``speed=100``, 100 predictions a second, as its
windows and durations count them.

While a batch is not due, :meth:`PacedSource.poll` waits at most ``timeout_s`` and then
returns an empty :class:`Polled` (like a quiet Kafka topic), so one slow model never holds
up the others. :meth:`PacedSource.interrupt` ends a wait at once (shutdown).

>>> from driftwatch.batch import Batch
>>> from driftwatch.clock import ManualClock
>>> class Recording:
...     def __init__(self, times): self.times = list(times)
...     def poll(self, max_records=10_000, timeout_s=1.0):
...         if not self.times: return None
...         t = self.times.pop(0)
...         return Polled([Batch.build("predictions", n=1, event_time=[t])], positions={"f": 1})
...     def seek(self, positions): pass
...     def commit(self, positions): pass
...     def close(self): pass
>>> clock = ManualClock(0.0)
>>> src = PacedSource(Recording([0.0, 3600.0, 7200.0]), speed=3600, clock=clock,
...                   sleep=clock.advance)
>>> [src.poll().n_events for _ in range(3)], clock.now()   # 2 h of events in 2 s
([1, 1, 1], 2.0)
>>> src.poll() is None
True
>>> untimed = PacedSource(Recording([math.nan] * 3), speed=2, clock=clock,
...                       sleep=clock.advance, count_records=True)
>>> [untimed.poll().n_events for _ in range(3)], clock.now()   # 2 records a second
([1, 1, 1], 3.0)
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping

import numpy as np

from driftwatch.clock import Clock
from driftwatch.connectors.base import Polled, Source
from driftwatch.pipeline.intake import OUTCOMES

__all__ = ["PacedSource"]


def _max_event_time(p: Polled) -> float:
    best = -math.inf
    for b in p.batches:
        if len(b):
            t = np.nanmax(b.event_time) if np.isfinite(b.event_time).any() else -math.inf
            best = max(best, float(t))
    return best


def _predictions(p: Polled) -> float:
    """The predictions in ``p`` (-inf for none: nothing to wait for)."""
    n = sum(len(b) for b in p.batches if b.stream != OUTCOMES)
    return float(n) if n else -math.inf


class PacedSource:
    """Deliver ``inner``'s batches at ``speed`` event seconds per wall second (0: no pacing).

    ``sleep(seconds)`` waits; by default it waits on an event that :meth:`interrupt` sets,
    with tests passing ``ManualClock.advance``. ``count_records``: the records carry no
    time; a poll's time is the number of its last prediction (counted from the start or
    the last seek), so ``speed`` is predictions per wall second.
    """

    def __init__(
        self,
        inner: Source,
        *,
        speed: float,
        clock: Clock,
        sleep: Callable[[float], object] | None = None,
        count_records: bool = False,
    ) -> None:
        if speed < 0 or math.isnan(speed):
            raise ValueError(f"speed must be >= 0, got {speed}")
        self.inner = inner
        self.speed = float(speed)
        self._clock = clock
        self._stop = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._pending: Polled | None = None
        self._anchor: tuple[float, float] | None = None  # (event time, clock.monotonic())
        self._high = -math.inf
        self.done = False
        self.count_records = count_records
        self._records = 0  # predictions delivered since the start or the last seek

    @property
    def ready(self) -> bool:
        """A file is always there; a recording is 'connected' until it is consumed."""
        return True

    def _due(self, p: Polled) -> float:
        """The monotonic time at which ``p`` may be delivered."""
        t = self._records + _predictions(p) if self.count_records else _max_event_time(p)
        if not math.isfinite(t):
            return -math.inf  # only bad records: no event time to wait for
        self._high = max(self._high, t)
        if self._anchor is None:
            self._anchor = (self._high, self._clock.monotonic())
        t0, m0 = self._anchor
        return m0 + (self._high - t0) / self.speed

    def poll(self, max_records: int = 10_000, timeout_s: float = 1.0) -> Polled | None:
        if self._pending is None:
            if self.done:
                return None
            p = self.inner.poll(max_records, timeout_s)
            if p is None:
                self.done = True
                return None
            if self.speed == 0:
                return p
            self._pending = p
        pending = self._pending
        wait = self._due(pending) - self._clock.monotonic()
        if wait > 0:
            if self._stop.is_set():
                return Polled()
            self._sleep(min(wait, max(0.0, timeout_s)))
            if self._due(pending) > self._clock.monotonic():
                return Polled()  # not due yet: nothing delivered, positions unchanged
        self._pending = None
        if self.count_records:
            self._records += _predictions(pending)
        return pending

    def seek(self, positions: Mapping[str, int]) -> None:
        self._pending = None
        self._anchor = None
        self._high = -math.inf
        self._records = 0
        self.done = False
        self.inner.seek(positions)

    def commit(self, positions: Mapping[str, int]) -> None:
        self.inner.commit(positions)

    def stopping(self) -> None:
        """Shutdown has begun: the inner source caps its broker waits, if it can."""
        hook = getattr(self.inner, "stopping", None)
        if callable(hook):
            hook()

    def interrupt(self) -> None:
        """End any wait now and stop waiting from here on (used on shutdown)."""
        self._stop.set()

    def close(self) -> None:
        self.interrupt()
        self.inner.close()
