"""Line up a Kafka backlog's partitions in event time before the windows see it.

Kafka orders each partition, not the partitions of a topic or two topics against each
other, and a consumer reading a backlog gets whole runs of one partition, then of
another. Fed as they come, the first partition's records move the watermark days ahead
and every other partition's records count as late; outcomes read ahead of their
predictions move it too. :class:`PartitionAligner` merges the partitions the way
:class:`~driftwatch.connectors.merge.EventMerger` merges a recording's files: each
partition is an input keyed by the running maximum of its event times, and a record
leaves once no partition that is still *behind* (the broker holds records this consumer
has not fetched) can bring anything before it. A partition that has caught up holds
nothing back, so live traffic, read as it arrives, passes straight through.

Each partition's records leave as a prefix in offset order, so the position the source
reports (and the checkpoint and the group commit) is the offset after the last record
handed out: records held here are read again after a crash, never skipped, never counted
twice. A partition that is behind but fetches nothing for ``stall_s`` (its leader away)
stops holding the others back, and :meth:`PartitionAligner.stalled` names it.

>>> from driftwatch.batch import Batch
>>> def chunk(times):
...     return Batch.build("predictions", n=len(times), event_time=times,
...                        position=np.arange(len(times)))
>>> a = PartitionAligner(stall_s=30.0)
>>> b = chunk([1.0, 2.0, 3.0, 9.0])  # partition 0: a backlog read ahead
>>> a.add("p:0", rank=0, stream=0, batch=b, bad=[], start=0, end=4, now=0.0)
>>> a.behind({"p:0": False, "p:1": True}, now=0.0)  # partition 1: nothing fetched yet
>>> a.take(100).batches
[]
>>> b = chunk([2.5, 4.0])
>>> a.add("p:1", rank=1, stream=0, batch=b, bad=[], start=0, end=2, now=1.0)
>>> a.behind({"p:0": False, "p:1": True}, now=1.0)  # partition 1 has more to read
>>> [b.event_time.tolist() for _, b in a.take(100).batches]
[[1.0, 2.0, 2.5, 3.0, 4.0]]
>>> a.positions()  # next offset per partition: 9.0 waits for partition 1
{'p:0': 3, 'p:1': 2}
>>> a.behind({"p:0": False, "p:1": False}, now=2.0)  # caught up: nothing to wait for
>>> [b.event_time.tolist() for _, b in a.take(100).batches], a.positions()
([[9.0]], {'p:0': 4, 'p:1': 2})
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.merge import EventMerger, Taken, _Input

__all__ = ["PartitionAligner"]


@dataclass
class _Part:
    index: int  # the input in the merger
    seen_at: float  # when it last fetched something (or was caught up, or resumed)
    behind: bool = True  # the broker holds records not fetched yet (or: not known yet)
    paused: bool = False  # not fetching: it holds enough (see KafkaSource)
    stalled: bool = False
    fetched: bool = False  # records (or an empty fetch) came: its position is known


class PartitionAligner:
    """Holds records until every partition behind has read past them (module docstring).

    Keys are ``"topic:partition"``; ``rank`` breaks ties in event time (streams, then
    partitions, in the order the source gives); ``stream`` is the index of the record's
    stream in :attr:`Taken.batches`.
    """

    def __init__(self, *, stall_s: float) -> None:
        self.stall_s = float(stall_s)
        self._merger = EventMerger([])
        self._parts: dict[str, _Part] = {}
        self._free: list[int] = []  # inputs of partitions forgotten, for reuse

    # -- what the source feeds in ----------------------------------------------------------
    def add(self, key: str, *, rank: int, stream: int, batch: Batch | None,
            bad: list[BadRecord], start: int, end: int, now: float) -> None:
        """One partition's records of a poll: the good ones (``position`` the offset), the
        bad ones (the same), fetched from ``start`` up to ``end`` (the next offset to
        fetch)."""
        part = self._parts.get(key)
        if part is None or not part.fetched:
            i = self._slot() if part is None else part.index
            self._merger.inputs[i] = _Input(rank=rank, consumed=start - 1, read_to=start - 1)
            part = self._parts[key] = _Part(index=i, seen_at=now, fetched=True)
        parts = {} if batch is None or not len(batch) else {
            stream: (batch, np.asarray(batch.position, np.int64))}
        self._merger.add(part.index, parts, list(bad), [b.position for b in bad],
                         end_line=end - 1, exhausted=False)
        part.seen_at = now
        part.stalled = False

    def behind(self, behind: Mapping[str, bool], *, now: float,
               paused: Collection[str] = ()) -> None:
        """Which partitions have records on the broker not fetched yet (every assigned one;
        a partition not in ``behind`` is treated as caught up), and which the source has
        paused. A partition behind that fetched nothing for ``stall_s`` no longer holds
        the others back."""
        for key, part in self._parts.items():
            was_paused, part.paused = part.paused, key in paused
            part.behind = bool(behind.get(key, False))
            if not part.behind or part.paused or was_paused:
                part.seen_at = now  # caught up or not fetching by choice: not stalling
            part.stalled = part.behind and now - part.seen_at >= self.stall_s
            self._merger.inputs[part.index].exhausted = not part.behind or part.stalled
        for key, is_behind in behind.items():  # assigned, nothing fetched yet: wait for it
            if is_behind and key not in self._parts:
                self._waiting(key, now)

    def _waiting(self, key: str, now: float) -> None:
        """A partition behind that has fetched nothing yet holds everything back (until
        it stalls): an input with no records and no event time so far."""
        i = self._slot()
        self._merger.inputs[i] = _Input(rank=0)
        self._parts[key] = _Part(index=i, seen_at=now)

    def _slot(self) -> int:
        if self._free:
            return self._free.pop()
        self._merger.inputs.append(_Input(rank=0, exhausted=True))
        return len(self._merger.inputs) - 1

    def forget(self, keys: Iterable[str]) -> None:
        """Drop what is held for these partitions (revoked, or sought elsewhere: they are
        read again from the position reported for them)."""
        for key in keys:
            part = self._parts.pop(key, None)
            if part is not None:
                self._merger.inputs[part.index] = _Input(rank=0, exhausted=True)
                self._free.append(part.index)

    # -- what the source hands out ---------------------------------------------------------
    def take(self, max_records: int) -> Taken:
        """Up to ``max_records`` records (good and bad) that may leave, in merged order."""
        return self._merger.take(max_records)

    def positions(self) -> dict[str, int]:
        """The next offset per partition that has fetched records: after the last record
        handed out (everything fetched, when nothing is held)."""
        out = {}
        for key, part in self._parts.items():
            inp = self._merger.inputs[part.index]
            if part.fetched:
                out[key] = (inp.read_to if inp.buffered == 0 else inp.consumed) + 1
        return out

    def held(self, key: str) -> int:
        """Records of this partition held back now."""
        part = self._parts.get(key)
        return 0 if part is None else self._merger.inputs[part.index].buffered

    @property
    def n_held(self) -> int:
        return sum(self._merger.inputs[p.index].buffered for p in self._parts.values())

    def stalled(self) -> list[str]:
        """Partitions behind that fetched nothing for ``stall_s``: not waited for."""
        return sorted(k for k, p in self._parts.items() if p.stalled)
