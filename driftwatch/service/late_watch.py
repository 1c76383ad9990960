"""A warning when a live stream's predictions arrive late in numbers: out of event-time order.

Late events (for a pane already closed: the newest event time, less the policy's
``window.allowed_lateness``, had passed its end) are counted and left out of the windows.
A few are normal; a large share means the stream arrives out of event-time order: a
producer sending late, or a Kafka partition read without the event-time merge (stalled, or
``align_event_time: false``). Only a metric said so; this watch turns it into a log line,
at most once per ``every_s``.

>>> w = LateWatch(min_events=100, share=0.05, every_s=60.0)
>>> w.see(predictions=80, late=40, now=0.0) is None       # too few to judge yet
True
>>> w.see(predictions=40, late=20, now=1.0)[:46]
'50% of the last 120 predictions came late (the'
>>> w.see(predictions=500, late=400, now=30.0) is None    # said a minute ago at most once
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LateWatch"]


@dataclass
class LateWatch:
    """Counts predictions and late events between warnings (see the module docstring)."""

    min_events: int = 1_000
    share: float = 0.05
    every_s: float = 300.0
    _events: int = 0
    _late: int = 0
    _said_at: float | None = None

    def see(self, *, predictions: int, late: int, now: float) -> str | None:
        """Add a poll's counts; the warning to log, when one is due."""
        self._events += predictions
        self._late += late
        if self._events < self.min_events:
            return None
        events, n_late = self._events, self._late
        self._events = self._late = 0
        if n_late < self.share * events:
            return None
        if self._said_at is not None and now - self._said_at < self.every_s:
            return None
        self._said_at = now
        return (f"{n_late / events:.0%} of the last {events:,} predictions came late (their "
                "pane had closed: window.allowed_lateness is the slack) and are left out of "
                "the windows: the stream arrives out of event-time order (a source "
                "producing late, a Kafka partition that stalled or align_event_time: false); "
                "for a recorded history, record it and replay it (README: Running against a "
                "real Kafka)")
