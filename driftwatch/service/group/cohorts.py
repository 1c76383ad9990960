"""Prediction cohorts in a group: each partition's cohort rows travel with its panes.

Every partition's label joiner keeps a :class:`~driftwatch.labels.landing.LandingBook`:
the cohort rows (held predictions, joined outcomes, expiries) of that partition, staged by
the pane they land in. Once a pane closed on the partition, its rows go to the pane log
(``cohorts/<p>/<k>/m``, beside the pane's sketch) and leave the partition. The decider
stages what every partition published for a pane once the pane is complete and folds
them when a window closes, as one process does: the label-free estimates of a window
and the verdict on each cohort see the same rows as the replay's. Sums are fixed point,
so the split does not change a bit.

>>> import numpy as np
>>> from driftwatch.labels.landing import LandingBook
>>> part = LandingBook(pane_size=10.0)
>>> part.add_predictions(np.array([0, 0]), np.array([0.1, 0.3]), np.array([1.0, 2.0]))
>>> held = CohortParts()
>>> for pane, rows in part.take(1):
...     held.add(3, pane, encode(rows), next_pane=None)
>>> decider = LandingBook(pane_size=10.0)
>>> [(pane, p) for pane, p in held.stage_into(decider, below=1)]
[(0, 3)]
>>> decider.fold(0); decider.get(0).predicted
2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from driftwatch.labels.cohort_book import Cohort
from driftwatch.labels.landing import LandingBook
from driftwatch.service.group.paneparts import PaneParts

__all__ = ["CohortParts", "cohort_ids", "decode", "encode", "restore_leader"]


def cohort_ids(event_time: np.ndarray, pane_size: float) -> np.ndarray:
    """The cohort (time pane) of each prediction; -1 without an event time, as the
    monitor numbers them (:func:`driftwatch.pipeline.cohorts.cohort_ids`).

    >>> cohort_ids(np.array([5.0, 12.0, np.nan]), 10.0).tolist()
    [0, 1, -1]
    """
    t = np.asarray(event_time, dtype=np.float64)
    out = np.full(t.size, -1, dtype=np.int64)
    ok = np.isfinite(t)
    out[ok] = np.floor(t[ok] / pane_size).astype(np.int64)
    return out


def encode(rows: list[Cohort]) -> list[dict[str, Any]]:
    return [c.to_dict() for c in rows]


def decode(rows: list[dict[str, Any]]) -> list[Cohort]:
    return [Cohort.from_dict(r) for r in rows]


class CohortParts(PaneParts):
    """Cohort rows per (pane, partition) read from the log, until their pane is complete
    (:class:`~driftwatch.service.group.paneparts.PaneParts`)."""

    def delta(self, payload: Any, merged: Any) -> list[dict[str, Any]]:
        """The rows of ``payload`` less those merged: sums are integers, so exact."""
        old = {c.key: c for c in decode(merged or [])}
        out = []
        for c in decode(payload):
            if c.key in old:
                c.subtract(old[c.key])
            out.append(c.to_dict())
        return out

    def stage_into(self, book: LandingBook, *, below: int | None,
                   late_at: int | None = None) -> list[tuple[int, int]]:
        """Stage the rows of every pane below ``below`` (complete on every partition)
        into ``book``, and the late rows of panes merged from provisional copies into
        pane ``late_at`` (the first one not merged: where one process lands a late row);
        returns their ``(pane, partition)`` (the log may forget them)."""
        done = []
        for pane, p, rows in self.take_below(below):
            book.stage(pane, decode(rows))
            done.append((pane, p))
        for pane, p, rows in self.take_late():
            book.stage(pane if late_at is None else max(pane, late_at), decode(rows))
            done.append((pane, p))
        return done


def restore_leader(monitor: Any, book: dict[str, Any], engine: dict[str, Any]) -> None:
    """A new decider takes the merged cohorts and their verdicts' engine state from the
    leader state in the log."""
    from driftwatch.policy.state import EngineState

    size, _ = monitor.spec.effective
    restored = LandingBook.from_dict(book, pane_size=size)
    restored.ttl = monitor.joiner.ttl
    restored.max_cohorts = monitor.joiner.book.max_cohorts
    monitor.joiner.book = restored
    monitor.cohort_state = EngineState.from_dict(engine)
