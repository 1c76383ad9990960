"""Kafka partitions held at a message whose writer schema the registry cannot serve now.

On a stream with ``avro: {registry: ...}`` a value whose schema id is not cached cannot be
read while the registry is down (:mod:`~driftwatch.connectors.schema_registry`). It is not
a bad record: dead-lettering it would take it out of the windows, and going past it would
lose it. So the Kafka source *holds* its partition there: the records before it go on, the
partition's position goes back to that message (the positions the source reports, hence
the checkpoint and the committed offset, end before it), and the partition is paused. When
the registry's backoff has run out the partition is resumed, the message fetched again and
read; once it reads the hold ends, so each record is counted once. Other partitions go on
as far as their own values read.

:class:`PartitionHolds` is the bookkeeping (which partition, at which offset, why, since
when) and what the daemon is told (:attr:`PartitionHolds.fault`, the log lines); the
source does the consumer's pause, seek and resume.

>>> holds = PartitionHolds()
>>> holds.hold("tp0", key="p:0", offset=42, stream="predictions",
...            reason="schema registry http://r:8081: cannot fetch schema id 3 (HTTP 503)",
...            now=1704067200.0, attempt=1)
>>> holds.positions(), holds.paused()
({'p:0': 42}, ['tp0'])
>>> print(*holds.fault.split("; "), sep="\\n")
schema registry http://r:8081: cannot fetch schema id 3 (HTTP 503)
unreachable since 2024-01-01T00:00:00Z
held: p:0 at offset 42
>>> holds.resumable(lambda stream: True)
['tp0']
>>> holds.release("tp0", now=1704067230.0)
>>> holds.fault, len(holds)
('', 0)
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

__all__ = ["Hold", "PartitionHolds"]

log = logging.getLogger(__name__)


@dataclass
class Hold:
    """One partition held: ``offset`` is the message to read next (not read yet)."""

    key: str  # "topic:partition"
    offset: int
    stream: str
    reason: str
    since: float  # wall-clock epoch seconds when the partition was first held
    paused: bool = True  # False: resumed to try the registry again


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PartitionHolds:
    """The partitions held now, by the consumer's partition object (module docstring)."""

    def __init__(self) -> None:
        self._holds: dict[Any, Hold] = {}
        self._since: float | None = None  # the outage as this source saw it (wall clock)
        self._attempts: dict[str, int] = {}  # the registry tries logged, per stream
        self.used = False  # a partition was ever paused here (see kafka_aligned.py's unpark)

    def __contains__(self, tp: Any) -> bool:
        return tp in self._holds

    def __len__(self) -> int:
        return len(self._holds)

    def hold(self, tp: Any, *, key: str, offset: int, stream: str, reason: str, now: float,
             attempt: int) -> None:
        """``tp`` held (again) at ``offset``; ``attempt`` counts the registry's failures in a
        row, so a failed retry is logged once, not once per partition."""
        self.used = True
        if self._since is None:
            self._since = now
            log.warning("%s; unreachable since %s: %s is held at offset %d (not skipped, "
                        "not committed) and the registry is asked again with backoff",
                        reason, _iso(now), key, offset)
        elif tp not in self._holds:
            log.warning("%s: %s is held at offset %d until the schema registry answers",
                        reason, key, offset)
        elif attempt != self._attempts.get(stream):
            log.warning("%s; still unreachable after %.0f s (try %d); %d partition(s) held",
                        reason, now - self._since, attempt, len(self._holds))
        self._attempts[stream] = attempt
        old = self._holds.get(tp)
        self._holds[tp] = Hold(key, offset, stream, reason,
                               since=now if old is None else old.since)

    def release(self, tp: Any, *, now: float) -> None:
        """``tp``'s held message was read: the hold ends (the outage too, with the last)."""
        hold = self._holds.pop(tp, None)
        if hold is None:
            return
        log.info("%s reads again from offset %d after %.0f s held", hold.key, hold.offset,
                 now - hold.since)
        if not self._holds and self._since is not None:
            log.info("schema registry answers again after %.0f s: no partition is held",
                     now - self._since)
            self._since = None
            self._attempts.clear()

    def forget(self, tp: Any) -> None:
        """Drop ``tp``'s hold without a word (sought elsewhere, or no longer assigned)."""
        self._holds.pop(tp, None)
        if not self._holds:
            self._since = None
            self._attempts.clear()

    def prune(self, assigned: Collection[Any]) -> None:
        """Drop the holds of partitions not assigned here any more: their next owner reads
        them from the committed offset, which is before the held message."""
        for tp in [tp for tp in self._holds if tp not in assigned]:
            self.forget(tp)

    def resumable(self, due: Callable[[str], bool]) -> list[Any]:
        """The paused partitions whose stream's registry may be asked again now; each is
        marked resumed (the source resumes it on the consumer)."""
        out = []
        for tp, hold in self._holds.items():
            if hold.paused and due(hold.stream):
                hold.paused = False
                out.append(tp)
        return out

    def paused(self) -> list[Any]:
        """The held partitions that are paused (waiting for the registry's backoff)."""
        return [tp for tp, h in self._holds.items() if h.paused]

    def positions(self) -> dict[str, int]:
        """``{"topic:partition": held offset}``."""
        return {h.key: h.offset for h in self._holds.values()}

    @property
    def fault(self) -> str:
        """What is wrong, in words ("" when nothing is held): the registry's last error,
        since when, and where each partition waits."""
        if not self._holds:
            return ""
        last = list(self._holds.values())[-1]
        since = self._since if self._since is not None else last.since
        where = ", ".join(f"{h.key} at offset {h.offset}" for h in self._holds.values())
        return f"{last.reason}; unreachable since {_iso(since)}; held: {where}"
