"""The daemon's readiness model: named dependencies, each up, down or not yet known, with why.

A part of the daemon that relies on something outside it declares it once and then says
what it sees, either by pushing (``mark(name, up, reason)``, e.g. the action executor after
each MLflow call) or through a probe read when asked (``declare(name, probe=...)``, e.g. the
Kafka sources' connection state). ``/readyz`` shows :meth:`Dependencies.to_dict`, the
``driftwatch_dependency_up`` gauge one series per dependency (NaN until its state is known)
and ``driftwatch_dependency_down_seconds`` how long each has been down.

A *critical* dependency makes the daemon unready while it is down: without Kafka nothing is
monitored, without its state disk nothing is checkpointed. MLflow is not critical: the
actions that need it wait and retry while monitoring, alerts and webhooks go on.

>>> from driftwatch.clock import ManualClock
>>> clock = ManualClock(100.0)
>>> deps = Dependencies(clock)
>>> deps.declare("mlflow", critical=False)
>>> deps.declare("kafka", probe=lambda: (True, ""))
>>> deps.mark("mlflow", False, "connection refused")
>>> clock.advance(5)
>>> deps.ready()
True
>>> deps.to_dict()["mlflow"]
{'state': 'down', 'critical': False, 'reason': 'connection refused', 'since_seconds': 5.0}
>>> deps.gauges()
{'kafka': 1.0, 'mlflow': 0.0}
>>> deps.down_seconds()
{'kafka': 0.0, 'mlflow': 5.0}
>>> deps.declare("state_disk")
>>> deps.mark("state_disk", False, "no space left on device")
>>> deps.ready(), deps.down()
(False, ['mlflow', 'state_disk'])
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from driftwatch.clock import Clock

__all__ = ["Dependencies", "DependencyState", "DependencyStatus", "Probe"]

#: ``() -> (up, reason)``; ``up`` None: not known yet.
Probe = Callable[[], tuple[bool | None, str]]


class DependencyState(StrEnum):
    UP = "up"
    DOWN = "down"
    UNKNOWN = "unknown"

    @classmethod
    def of(cls, up: bool | None) -> DependencyState:
        return cls.UNKNOWN if up is None else cls.UP if up else cls.DOWN


@dataclass(frozen=True)
class DependencyStatus:
    """One dependency as last seen: ``since`` is the monotonic time its state last changed."""

    name: str
    state: DependencyState
    critical: bool
    reason: str = ""
    since: float | None = None


@dataclass
class _Entry:
    critical: bool
    probe: Probe | None
    state: DependencyState = DependencyState.UNKNOWN
    reason: str = ""
    since: float | None = None


class Dependencies:
    """A thread-safe registry of named dependencies (see module doc)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def declare(self, name: str, *, critical: bool = True, probe: Probe | None = None) -> None:
        """Add ``name`` (state unknown until marked or probed); declaring again replaces it."""
        with self._lock:
            self._entries[name] = _Entry(critical, probe)

    def mark(self, name: str, up: bool | None, reason: str = "") -> None:
        """What a caller just saw of ``name`` (a name never declared is declared critical)."""
        with self._lock:
            entry = self._entries.setdefault(name, _Entry(True, None))
            self._set(entry, DependencyState.of(up), "" if up else reason)

    def _set(self, entry: _Entry, state: DependencyState, reason: str) -> None:
        if state is not entry.state:
            entry.since = self._clock.monotonic()
        entry.state, entry.reason = state, reason

    def status(self) -> dict[str, DependencyStatus]:
        """Every dependency, probes read now, by name (sorted)."""
        with self._lock:
            items = sorted(self._entries.items())
        out = {}
        for name, e in items:
            if e.probe is not None:
                up, reason = e.probe()
                with self._lock:
                    self._set(e, DependencyState.of(up), "" if up else reason)
            out[name] = DependencyStatus(name, e.state, e.critical, e.reason, e.since)
        return out

    def ready(self) -> bool:
        """No critical dependency is down (unknown counts as not down)."""
        return not any(s.critical and s.state is DependencyState.DOWN
                       for s in self.status().values())

    def down(self) -> list[str]:
        """The names of the dependencies that are down, critical or not."""
        return [n for n, s in self.status().items() if s.state is DependencyState.DOWN]

    def gauges(self) -> dict[str, float]:
        """1 (up), 0 (down) or NaN (not known yet) per dependency."""
        return {n: math.nan if s.state is DependencyState.UNKNOWN
                else float(s.state is DependencyState.UP) for n, s in self.status().items()}

    def down_seconds(self) -> dict[str, float]:
        """Seconds each dependency has been down (0 while up or not known yet)."""
        now = self._clock.monotonic()
        return {n: max(0.0, now - s.since) if s.state is DependencyState.DOWN
                and s.since is not None else 0.0 for n, s in self.status().items()}

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """What ``/readyz`` shows under ``dependencies``."""
        now = self._clock.monotonic()
        return {n: {"state": s.state.value, "critical": s.critical, "reason": s.reason,
                    "since_seconds": None if s.since is None else round(now - s.since, 3)}
                for n, s in self.status().items()}
