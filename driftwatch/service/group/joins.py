"""The label joins of a group member: its partitions' joiners, read as one.

Each instance joins outcomes to predictions for the partitions it owns, so its join
counters, backlog and label delays are the sums over those partitions' joiners; the
group's are the sums over its instances (a partition's counts move with it when the group
rebalances).

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.labels.joiner import LabelJoiner
>>> a, b = LabelJoiner(1e9, 100), LabelJoiner(1e9, 100)
>>> _ = a.add_predictions(Batch.build("predictions", n=2, ids=["x", "y"], event_time=[0.0, 1.0]))
>>> _ = b.add_predictions(Batch.build("predictions", n=1, ids=["z"], event_time=[2.0]))
>>> _ = b.add_outcomes(Batch.build("outcomes", n=1, ids=["z"], label=[1.0], event_time=[9.0]))
>>> j = PartitionJoins.of([a, b])
>>> j.backlog, j.counters["predictions"], j.counters["joined"], j.delays.count
(2, 3, 1, 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from driftwatch.labels.cohorts import DelayHistogram
from driftwatch.labels.joiner import COUNTERS, LabelJoiner

__all__ = ["PartitionJoins"]


@dataclass
class PartitionJoins:
    """Backlog, counters and delay histogram summed over joiners."""

    backlog: int
    counters: dict[str, int]
    delays: DelayHistogram

    @classmethod
    def of(cls, joiners: Iterable[LabelJoiner]) -> PartitionJoins:
        counters = dict.fromkeys(COUNTERS, 0)
        delays = DelayHistogram()
        backlog = 0
        for j in joiners:
            backlog += j.backlog
            for k, v in j.counters.items():
                counters[k] = counters.get(k, 0) + int(v)
            h = j.delays
            delays.counts = delays.counts + h.counts
            delays.count += h.count
            delays.total += h.total
            delays.max = max(delays.max, h.max)
            delays.negative += h.negative
        return cls(backlog, counters, delays)
