"""Which of a member's partitions are idle: no traffic for ``group.idle_timeout``.

A partition that receives nothing keeps its mark where it is, and every pane of the
group would wait for it forever. Its owner marks it idle once it has had no record for
the timeout (wall-clock seconds on the injected clock) while it is caught up (read up to
the end the broker last reported); the merge then stops waiting for it. Its first
record after that makes it active again, and it holds panes back from then on. Nothing
here does I/O; the runtime publishes the marks.

>>> idle = IdlePartitions(30.0)
>>> idle.assigned(3, now=0.0); idle.assigned(4, now=0.0)
>>> idle.due(now=20.0, caught_up=lambda p: True)
[]
>>> idle.traffic(4, now=25.0)
False
>>> idle.due(now=31.0, caught_up=lambda p: True), sorted(idle.idle)
([3], [3])
>>> idle.traffic(3, now=40.0)    # active again: the runtime says so in the log
True
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["IdlePartitions"]


class IdlePartitions:
    """Last traffic per owned partition and those marked idle (None: never idle)."""

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self.last: dict[int, float] = {}
        self.idle: set[int] = set()

    def assigned(self, partition: int, *, now: float) -> None:
        """A partition this member now owns: active, its timeout starts now."""
        self.last[partition] = now
        self.idle.discard(partition)

    def revoked(self, partition: int) -> None:
        self.last.pop(partition, None)
        self.idle.discard(partition)

    def traffic(self, partition: int, *, now: float) -> bool:
        """A record on ``partition``; True when it was idle (and is active again)."""
        self.last[partition] = now
        if partition in self.idle:
            self.idle.discard(partition)
            return True
        return False

    def due(self, *, now: float, caught_up: Callable[[int], bool]) -> list[int]:
        """Partitions that become idle now: quiet for the timeout and caught up."""
        if self.timeout_s is None:
            return []
        out = sorted(p for p, t in self.last.items() if p not in self.idle
                     and now - t >= self.timeout_s and caught_up(p))
        self.idle.update(out)
        return out
