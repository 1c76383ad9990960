"""The merge side of a group: complete panes from every partition, in pane order.

Instances publish, per partition, each pane that closed there (its sketch) and a *mark*:
the partition's frontier, below which every pane of that partition has been published.
A pane is complete when every partition's mark is past it; its sketches then add up to
the sketch one process would have built (sketches are mergeable), and the merger hands
it on exactly once. Duplicates (a partition re-read after a crash publishes the same
pane again) replace what is held, and panes already merged are ignored, so nothing is
counted twice.

A partition its owner marks *idle* (no traffic for ``group.idle_timeout``) holds no
pane back; its owner publishes *provisional* copies of its open panes with that mark,
which the merge uses for the panes it passes meanwhile. When every partition is idle,
panes below the largest of their frontiers are complete, as one process would close
them. What a pane of an idle partition holds beyond what was merged (its events arrived
after the merge passed it) is counted late (``n_late`` of the next pane merged), not
added, as one process counts an event whose pane has closed.

With ``n_segments`` (a segmented policy) each pane also carries one sketch per segment,
summed per segment as the whole sketches are: the decider's windows then carry the
segment sketches one process's windows carry. Late events count on the whole pane only,
as in one process.

>>> import numpy as np
>>> from driftwatch.windows.sketch import Sketch, SketchLayout
>>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])
>>> m = PaneMerger(lay, n_partitions=2)
>>> s = Sketch.empty(lay); s.n = 3
>>> m.add_pane(0, 4, s); m.add_mark(0, 5)
>>> m.complete()           # partition 1 has not passed pane 4 yet
[]
>>> m.add_mark(1, 6)
>>> [(k, sk.n, first, last) for k, sk, first, last, _ in m.complete()]
[(4, 3, 0, 2)]
>>> m.add_mark(0, None, idle=True); m.add_mark(1, 9)
>>> [k for k, *_ in m.complete()], m.next_pane   # partition 0 idle: up to pane 9
([], 9)
>>> m.add_pane(0, 7, s); m.add_mark(0, 8, idle=False)   # back: pane 7 came too late
>>> m.add_pane(1, 9, s); m.add_mark(1, 10); m.add_mark(0, 11)
>>> [(k, sk.n, sk.n_late) for k, sk, *_ in m.complete()]
[(9, 3, 3)]
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

from driftwatch.errors import ServiceError
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["PaneMerger", "leader_partition"]


def leader_partition(model: str, n_partitions: int) -> int:
    """The predictions partition whose owner merges and decides for ``model``.

    Models spread over the group as partitions do: whoever the group assigns this
    partition to is the model's one decider.

    >>> leader_partition("credit-risk", 16) == leader_partition("credit-risk", 16)
    True
    """
    return zlib.crc32(model.encode()) % n_partitions


class PaneMerger:
    """Pane sketches per (pane, partition) and each partition's mark, until complete."""

    def __init__(self, layout: SketchLayout, *, n_partitions: int, n_segments: int = 0) -> None:
        self.layout = layout
        self.n_partitions = n_partitions
        #: segments of a segmented policy (0: none); a pane's per-segment sketches add up
        self.n_segments = n_segments
        self.marks: dict[int, int] = {}
        #: partitions their owner marked idle (they hold no pane back): their frontier then
        self.idle: dict[int, int | None] = {}
        #: events (and bad records) of panes that arrived after the merge passed them
        self.late = [0, 0]
        #: ``(partition, pane)`` of the provisional copies pending, and of those merged
        #: (with their events and bad records, to count what the real pane adds as late)
        self.provisional: set[tuple[int, int]] = set()
        self.merged_early: dict[tuple[int, int], tuple[int, int]] = {}
        self.pending: dict[int, dict[int, Sketch]] = {}
        #: the segment sketches of the pending panes, like ``pending``
        self.pending_segments: dict[int, dict[int, Sequence[Sketch]]] = {}
        #: the first pane not yet merged (None: none merged yet)
        self.next_pane: int | None = None
        #: events in the panes merged so far (event ranks: a pane's first/last index)
        self.n_before = 0
        #: ``(partition, pane)`` of the sketches merged since the caller last took them
        self.merged: list[tuple[int, int]] = []

    def add_pane(self, partition: int, pane: int, sketch: Sketch, *,
                 provisional: bool = False, segments: Sequence[Sketch] | None = None) -> None:
        """Pane ``pane`` of ``partition``; ``provisional`` for an idle partition's copy of
        a pane still open there; ``segments``: its sketch per segment (code order)."""
        key = (partition, pane)
        if self.next_pane is not None and pane < self.next_pane:
            if provisional:
                return
            early = self.merged_early.pop(key, None)
            if early is None and pane < self.marks.get(partition, pane):
                return  # merged already: a re-published copy of the same pane
            # merged without (all of) it while the partition was idle: the rest is late
            n0, bad0 = early or (0, 0)
            self.late[0] += max(0, int(sketch.n) + int(sketch.n_late) - n0)
            self.late[1] += max(0, int(sketch.n_bad) - bad0)
            self.merged.append(key)  # counted: its message can go
            return
        self.pending.setdefault(pane, {})[partition] = sketch
        if self.n_segments:
            if segments is not None and len(segments) != self.n_segments:
                raise ServiceError(f"group: pane {pane} of partition {partition} has "
                                   f"{len(segments)} segments and the decider's reference "
                                   f"{self.n_segments}; every instance needs the same "
                                   "reference")
            # None: sketched without (these) segments; they count as empty
            self.pending_segments.setdefault(pane, {})[partition] = segments or ()
        (self.provisional.add if provisional else self.provisional.discard)(key)

    def add_mark(self, partition: int, frontier: int | None, *,
                 idle: bool | None = None) -> None:
        """A partition's frontier (None: none yet); ``idle`` as its owner says (None: as
        it was)."""
        if frontier is not None:
            self.marks[partition] = max(frontier, self.marks.get(partition, frontier))
        if idle is True:
            self.idle[partition] = frontier
        elif idle is False:
            self.idle.pop(partition, None)

    @property
    def complete_below(self) -> int | None:
        """Panes below this are complete on every partition that is not idle; when every
        one is idle, below the largest frontier (None: one has no mark yet)."""
        active = [p for p in range(self.n_partitions) if p not in self.idle]
        if not active:
            ends = [f for f in self.idle.values() if f is not None]
            return max(ends) if ends else None
        if any(p not in self.marks for p in active):
            return None
        return min(self.marks[p] for p in active)

    def complete(self) -> list[tuple[int, Sketch, int, int, tuple[Sketch, ...] | None]]:
        """``(pane, merged sketch, first, last, segments)`` of each newly complete pane,
        in order; ``first``/``last`` are event ranks (-1 when the pane has no prediction),
        ``segments`` the merged sketch of each segment (None without segments)."""
        below = self.complete_below
        if below is None:
            return []
        out = []
        for k in sorted(k for k in self.pending if k < below):
            parts = self.pending.pop(k)
            self.merged += [(p, k) for p in sorted(parts)]
            for p in sorted(parts):
                if (p, k) in self.provisional:
                    self.provisional.discard((p, k))
                    s = parts[p]
                    self.merged_early[(p, k)] = (int(s.n) + int(s.n_late), int(s.n_bad))
            sk = Sketch.sum(self.layout, (parts[p] for p in sorted(parts)))
            if self.late != [0, 0]:
                sk.n_late += self.late[0]
                sk.n_bad += self.late[1]
                self.late = [0, 0]
            n = int(sk.n) + int(sk.n_late)
            first, last = (self.n_before, self.n_before + n - 1) if sk.n else (-1, -1)
            self.n_before += n
            out.append((k, sk, first, last, self._segments(k)))
        self.next_pane = below if self.next_pane is None else max(self.next_pane, below)
        return out

    def _segments(self, pane: int) -> tuple[Sketch, ...] | None:
        """The merged segment sketches of ``pane`` (a partition without them adds none)."""
        if not self.n_segments:
            return None
        parts = self.pending_segments.pop(pane, {})
        return tuple(Sketch.sum(self.layout, (parts[p][c] for p in sorted(parts) if parts[p]))
                     for c in range(self.n_segments))

    def progress(self) -> dict[str, Any]:
        """What a new merger resumes from (panes and marks are re-read from the log)."""
        return {"next_pane": self.next_pane, "n_before": self.n_before, "late": self.late,
                "merged_early": [[p, k, n, b] for (p, k), (n, b)
                                 in sorted(self.merged_early.items())]}

    def resume(self, d: dict[str, Any]) -> None:
        self.next_pane = None if d["next_pane"] is None else int(d["next_pane"])
        self.n_before = int(d["n_before"])
        self.late = [int(x) for x in d.get("late", (0, 0))]
        self.merged_early = {(int(p), int(k)): (int(n), int(b))
                             for p, k, n, b in d.get("merged_early", ())}
        if self.next_pane is not None:
            for k in [k for k in self.pending if k < self.next_pane]:
                del self.pending[k]
                self.pending_segments.pop(k, None)
