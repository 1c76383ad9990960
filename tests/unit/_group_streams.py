"""Streams cut into polls and split over partitions, for the group tests without a broker."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from driftwatch.batch import Batch


def polls(pred: Batch, out: Batch, step: float) -> Iterator[tuple[Batch, Batch]]:
    """Polls of ``step`` seconds: the predictions and the outcomes stamped in each."""
    end = float(max(pred.event_time.max(), out.event_time.max())) + 1
    for a in np.arange(0.0, end, step):
        yield (pred.take((pred.event_time >= a) & (pred.event_time < a + step)),
               out.take((out.event_time >= a) & (out.event_time < a + step)))


def share(pred: Batch, out: Batch, key_part: Mapping[int, int], i: int
          ) -> tuple[Batch | None, Batch | None]:
    """Partition ``i``'s predictions and outcomes of a poll (None where it has none)."""
    pm = np.array([key_part[k] == i for k in pred.keys.tolist()], dtype=bool)
    om = np.array([key_part[k] == i for k in out.keys.tolist()], dtype=bool)
    return (pred.take(pm) if pm.any() else None, out.take(om) if om.any() else None)


def delayed_outcomes(rng: np.random.Generator, t: np.ndarray, ids: np.ndarray) -> Batch:
    """Outcomes for 80% of the predictions (times ``t``, ids ``ids``), up to 2000 s after
    each, in outcome-time order; 30% bad."""
    lab = np.sort(rng.permutation(len(t))[: int(0.8 * len(t))])
    out_t = t[lab] + rng.uniform(1.0, 2000.0, lab.size)
    order = np.argsort(out_t, kind="stable")
    return Batch.build("outcomes", n=lab.size, ids=ids[lab][order],
                       label=(rng.uniform(size=lab.size) < 0.3) * 1.0, event_time=out_t[order])
