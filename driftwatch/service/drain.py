"""Finishing a run's work before ``--exit-when-done`` exits: the drain.

When every source is consumed, reports may still wait for the writer thread and actions
for the lanes. The loop then polls a :class:`Drain` (running its hand-offs and checkpoints
meanwhile) with what is left, a :class:`Backlog`; the drain logs progress every
``every_s`` seconds and says when nothing is left, or when ``timeout_s`` (None: no limit)
has passed first. SIGTERM or Ctrl-C end the loop as always: the bounded shutdown takes
over and what is left resumes on the next start.

>>> from driftwatch.clock import ManualClock
>>> clock = ManualClock()
>>> left = [Backlog(reports=3, actions=(7,)), Backlog(actions=(7,)), Backlog()]
>>> drain = Drain(lambda: left.pop(0), clock=clock, timeout_s=None)
>>> drain.poll() is None   # 3 reports, 1 action left
True
>>> clock.advance(4.0)
>>> drain.poll() is None   # 1 action left
True
>>> clock.advance(4.0)
>>> drain.poll()
DrainResult(done=True, left=Backlog(reports=0, actions=(), waiting=()), seconds=8.0)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from driftwatch.clock import Clock
from driftwatch.policy.durations import format_duration

__all__ = ["Backlog", "Drain", "DrainResult"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Backlog:
    """What is left: reports queued or being written, the ids of the actions the lanes
    can still finish alone, and why some of those wait (``waiting``: one line each).

    >>> str(Backlog(reports=37, actions=(12, 13)))
    '37 reports, 2 actions (ids 12, 13)'
    >>> str(Backlog(reports=1)), str(Backlog())
    ('1 report', 'nothing')
    """

    reports: int = 0
    actions: tuple[int, ...] = ()
    waiting: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.reports == 0 and not self.actions

    def __str__(self) -> str:
        parts = []
        if self.reports:
            parts.append(f"{self.reports} report{'s' if self.reports != 1 else ''}")
        if self.actions:
            n = len(self.actions)
            ids = ", ".join(str(i) for i in self.actions[:10]) + (", ..." if n > 10 else "")
            parts.append(f"{n} action{'s' if n != 1 else ''} (id{'s' if n != 1 else ''} {ids})")
        return ", ".join(parts) or "nothing"


@dataclass(frozen=True)
class DrainResult:
    """How the drain ended: ``done`` (nothing left) or not (the limit passed first)."""

    done: bool
    left: Backlog
    seconds: float


class Drain:
    """Polled by the loop until the backlog is empty or ``timeout_s`` has passed."""

    def __init__(self, backlog: Callable[[], Backlog], *, clock: Clock,
                 timeout_s: float | None, every_s: float = 5.0) -> None:
        self._backlog = backlog
        self._clock = clock
        self.timeout_s = timeout_s
        self._every_s = every_s
        self._started = clock.monotonic()
        self._said_at: float | None = None
        self.last = Backlog()

    @property
    def seconds(self) -> float:
        return self._clock.monotonic() - self._started

    def poll(self) -> DrainResult | None:
        """None while work is left and time remains; else how it ended (logged)."""
        self.last = left = self._backlog()
        took = self.seconds
        if left.empty:
            if self._said_at is not None:  # said nothing when there was nothing to wait for
                log.info("finished what the run started in %.1fs", took)
            return DrainResult(True, left, took)
        if self.timeout_s is not None and took >= self.timeout_s:
            log.warning("--drain-timeout %s passed with %s left%s; left unfinished (they "
                        "resume on the next start)", format_duration(self.timeout_s), left,
                        "".join(f"; {w}" for w in left.waiting))
            return DrainResult(False, left, took)
        now = self._clock.monotonic()
        if self._said_at is None or now - self._said_at >= self._every_s:
            first = self._said_at is None
            self._said_at = now
            log.info("%s: %s left%s%s", "every source is consumed; finishing" if first
                     else "finishing", left, "".join(f"; {w}" for w in left.waiting),
                     " (SIGTERM or Ctrl-C stops now; the rest resumes on the next start)"
                     if first else f" ({took:.0f}s)")
        return None
