"""The merge side of a group: complete panes from every partition, in pane order.

Instances publish, per partition, each pane that closed there (its sketch) and a *mark*:
the partition's frontier, below which every pane of that partition has been published.
A pane is complete when every partition's mark is past it; its sketches then add up to
the sketch one process would have built (sketches are mergeable), and the merger hands
it on exactly once. Duplicates (a partition re-read after a crash publishes the same
pane again) replace what is held, and panes already merged are ignored, so nothing is
counted twice.

>>> import numpy as np
>>> from driftwatch.windows.sketch import Sketch, SketchLayout
>>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])
>>> m = PaneMerger(lay, n_partitions=2)
>>> s = Sketch.empty(lay); s.n = 3
>>> m.add_pane(0, 4, s); m.add_mark(0, 5)
>>> m.complete()           # partition 1 has not passed pane 4 yet
[]
>>> m.add_mark(1, 6)
>>> [(k, sk.n, first, last) for k, sk, first, last in m.complete()]
[(4, 3, 0, 2)]
"""

from __future__ import annotations

import zlib
from typing import Any

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

    def __init__(self, layout: SketchLayout, *, n_partitions: int) -> None:
        self.layout = layout
        self.n_partitions = n_partitions
        self.marks: dict[int, int] = {}
        self.pending: dict[int, dict[int, Sketch]] = {}
        #: the first pane not yet merged (None: none merged yet)
        self.next_pane: int | None = None
        #: events in the panes merged so far (event ranks: a pane's first/last index)
        self.n_before = 0
        #: ``(partition, pane)`` of the sketches merged since the caller last took them
        self.merged: list[tuple[int, int]] = []

    def add_pane(self, partition: int, pane: int, sketch: Sketch) -> None:
        if self.next_pane is not None and pane < self.next_pane:
            return  # merged already: a re-published copy of the same pane
        self.pending.setdefault(pane, {})[partition] = sketch

    def add_mark(self, partition: int, frontier: int) -> None:
        self.marks[partition] = max(frontier, self.marks.get(partition, frontier))

    @property
    def complete_below(self) -> int | None:
        """Panes below this are complete on every partition (None: some has no mark)."""
        if len(self.marks) < self.n_partitions:
            return None
        return min(self.marks[p] for p in range(self.n_partitions))

    def complete(self) -> list[tuple[int, Sketch, int, int]]:
        """``(pane, merged sketch, first, last)`` of each newly complete pane, in order;
        ``first``/``last`` are event ranks (-1 when the pane has no prediction)."""
        below = self.complete_below
        if below is None:
            return []
        out = []
        for k in sorted(k for k in self.pending if k < below):
            parts = self.pending.pop(k)
            self.merged += [(p, k) for p in sorted(parts)]
            sk = Sketch.sum(self.layout, (parts[p] for p in sorted(parts)))
            n = int(sk.n) + int(sk.n_late)
            first, last = (self.n_before, self.n_before + n - 1) if sk.n else (-1, -1)
            self.n_before += n
            out.append((k, sk, first, last))
        self.next_pane = below if self.next_pane is None else max(self.next_pane, below)
        return out

    def progress(self) -> dict[str, Any]:
        """What a new merger resumes from (panes and marks are re-read from the log)."""
        return {"next_pane": self.next_pane, "n_before": self.n_before}

    def resume(self, d: dict[str, Any]) -> None:
        self.next_pane = None if d["next_pane"] is None else int(d["next_pane"])
        self.n_before = int(d["n_before"])
        if self.next_pane is not None:
            for k in [k for k in self.pending if k < self.next_pane]:
                del self.pending[k]
