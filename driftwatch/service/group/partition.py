"""One input partition's panes in a group: sketched where the partition is consumed.

In a consumer group each instance keeps, per assigned partition of the predictions topic
(and the co-partitioned outcomes topic), the open event-time panes of that partition, its
label joiner and two watermarks. A pane closes for the partition when *both* watermarks
(the largest prediction time and the largest outcome time seen on it) minus the allowed
lateness pass its end: every prediction and outcome of the pane on this partition has
then arrived, so the pane holds exactly the events and joined labels a single process
would have put there. With a segment coder each pane also keeps one sketch per segment
(the coder's code order), as one process's panes do: the prediction events of that
segment (labels, late events and bad records count on the whole pane only). Nothing
here does I/O; the caller publishes what :meth:`take` and :meth:`take_segments` return.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.windows.sketch import SketchLayout
>>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])
>>> p = PartitionPanes(lay, pane_size=10.0, has_outcomes=False)
>>> b = Batch.build("predictions", n=3, n_numeric=1, numeric=np.ones((3, 1)),
...                 event_time=np.array([1.0, 12.0, 25.0]))
>>> [(k, s.n) for k, s in p.take(b, None)], p.frontier
([(0, 1), (1, 1)], 2)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from driftwatch.batch import Batch
from driftwatch.labels.cohort_book import Cohort
from driftwatch.labels.joiner import Joined, LabelJoiner
from driftwatch.labels.landing import LandingBook
from driftwatch.service.group.cohorts import cohort_ids
from driftwatch.service.group.labelled import LabelledPanes
from driftwatch.windows.segments import SegmentCoder
from driftwatch.windows.sketch import Sketch, SketchLayout, add_labelled_at

__all__ = ["PartitionPanes"]


class PartitionPanes:
    """Open panes, label joiner and watermarks of one partition (see the module doc).

    ``frontier`` is the index of the first pane still open: every pane below it has been
    returned by :meth:`take` (None before the first event).
    """

    def __init__(self, layout: SketchLayout, *, pane_size: float, allowed_lateness: float = 0.0,
                 has_outcomes: bool = True, ttl: float = math.inf,
                 max_pending: int = 1_000_000, segments: SegmentCoder | None = None,
                 labelled: LabelledPanes | None = None) -> None:
        self.layout = layout
        self.segments = segments
        #: per pane, one sketch per segment (with a coder): open panes, and closed ones
        #: until :meth:`take_segments` hands them out
        self.segment_panes: dict[int, list[Sketch]] = {}
        self.size = float(pane_size)
        self.lateness = float(allowed_lateness)
        self.has_outcomes = has_outcomes
        self.joiner = LabelJoiner(ttl, max_pending)
        #: the joiner's cohort rows, staged by landing pane until published
        self.book = LandingBook(self.size, ttl=ttl)
        self.joiner.book = self.book
        #: feature rows of waiting predictions and joined rows staged by landing pane
        self.labelled = labelled
        self.panes: dict[int, Sketch] = {}
        self.pred_wm = -math.inf
        self.out_wm = -math.inf
        self.frontier: int | None = None
        self.n_seen = 0

    # -- helpers -----------------------------------------------------------------------
    @property
    def watermark(self) -> float:
        """The partition's event time: the slower of its two streams."""
        return min(self.pred_wm, self.out_wm) if self.has_outcomes else self.pred_wm

    def _pane(self, k: int) -> Sketch:
        s = self.panes.get(k)
        if s is None:
            s = self.panes[k] = Sketch.empty(self.layout)
            if self.segments is not None:
                self.segment_panes[k] = self._empty_segments(self.segments)
        return s

    def _empty_segments(self, coder: SegmentCoder) -> list[Sketch]:
        return [Sketch.empty(self.layout) for _ in range(len(coder))]

    def _add(self, k: int, batch: Batch) -> None:
        """Prediction events of pane ``k``: to the pane, and each to its segment's sketch."""
        self._pane(k).add_batch(batch)
        if self.segments is not None:
            segs = self.segment_panes[k]
            for code, part in self.segments.split(batch):
                segs[code].add_batch(part)

    def _floor(self) -> float:
        return -math.inf if self.frontier is None else float(self.frontier)

    def _label(self, joined: Joined, time: np.ndarray) -> None:
        with np.errstate(invalid="ignore"):
            own = np.floor(np.asarray(time, dtype=np.float64) / self.size)
        target = np.nan_to_num(np.fmax(own, self._floor()), nan=0.0, neginf=0.0)
        target = target.astype(np.int64)
        # every pane's outcomes in one call, as a single process's windows take them
        panes, group = np.unique(target, return_inverse=True)
        add_labelled_at([self._pane(int(k)) for k in panes], group, joined.score,
                        joined.label, joined.exposure)
        if self.labelled is not None:
            self.labelled.join(joined, target)

    # -- updates -----------------------------------------------------------------------
    def take(self, pred: Batch | None, out: Batch | None, *, n_bad: int = 0
             ) -> list[tuple[int, Sketch]]:
        """Feed one poll of this partition; returns the panes that closed, in order.

        Events of a pane that already closed here are late: counted (``n_late`` of the
        first open pane), not added.
        """
        floor = self._floor()
        self.book.floor = self.frontier  # cohort rows land in open panes only
        if pred is not None and len(pred):
            if self.labelled is not None:
                self.labelled.add_predictions(pred)
            late_joins = self.joiner.add_predictions(pred, cohort_ids(pred.event_time,
                                                                      self.size))
            if len(late_joins.label):
                self._label(late_joins, late_joins.outcome_time)
            with np.errstate(invalid="ignore"):
                idx = np.floor(pred.event_time / self.size)
            late = idx < floor
            if late.any():
                self._pane(int(floor)).n_late += int(late.sum())
            keep = ~late
            for k in np.unique(idx[keep]):
                self._add(int(k), pred.take(keep & (idx == k)))
            self.n_seen += len(pred)
            if np.isfinite(pred.event_time).any():
                self.pred_wm = max(self.pred_wm, float(np.nanmax(pred.event_time)))
        if out is not None and len(out):
            t = out.event_time
            if np.isnan(t).any():  # outcomes without a time: stamped where they arrive
                t = np.where(np.isnan(t), max(self.pred_wm, self.out_wm), t)
                out = replace(out, event_time=t)
            joined = self.joiner.add_outcomes(out)
            if len(joined.label):
                self._label(joined, joined.outcome_time)
            if np.isfinite(t).any():
                self.out_wm = max(self.out_wm, float(np.nanmax(t)))
        n_out = 0 if out is None else len(out)
        if n_bad or (n_out and self.panes):
            # outcome records beside the bad ones, in the same pane: the share is of both
            # (no pane is opened for outcome records alone)
            k = max(self.panes) if self.panes else int(max(floor, 0.0))
            self._pane(k).n_bad += int(n_bad)
            self._pane(k).n_outcome_records += n_out
        wm = self.watermark
        if not math.isfinite(wm):
            return []
        self.joiner.expire(wm)
        if self.labelled is not None:
            self.labelled.expire(wm - self.joiner.ttl)
        front = math.floor((wm - self.lateness) / self.size)
        self.frontier = front if self.frontier is None else max(self.frontier, front)
        closed = sorted(k for k in self.panes if k < self.frontier)
        return [(k, self.panes.pop(k)) for k in closed]

    def open_panes(self) -> list[tuple[int, Sketch]]:
        """The panes still open here, in order, left open (the partition goes idle: the
        merge may use these copies; the panes close here as usual)."""
        return [(k, self.panes[k]) for k in sorted(self.panes)]

    def take_segments(self) -> dict[int, list[Sketch]]:
        """The segment sketches of the panes closed here since the last call, by pane
        (empty without a segment coder); an open pane's are in ``segment_panes``."""
        if self.frontier is None:
            return {}
        closed = [k for k in self.segment_panes if k < self.frontier]
        return {k: self.segment_panes.pop(k) for k in sorted(closed)}

    def take_cohorts(self) -> list[tuple[int, list[Cohort]]]:
        """The cohort rows landed in panes closed here since the last call, by pane
        (:mod:`~driftwatch.service.group.cohorts`)."""
        if self.frontier is None:
            return []
        return self.book.take(self.frontier)

    def open_rows(self) -> tuple[list[tuple[int, Any]], list[tuple[int, dict[str, Any]]]]:
        """Copies of the cohort rows and the labelled rows staged in open panes, by pane
        (the partition goes idle: the merge may use these copies; the rows stay)."""
        return self.book.peek(), ([] if self.labelled is None else self.labelled.open_rows())

    def take_labelled(self) -> list[tuple[int, dict[str, Any]]]:
        """The labelled rows landed in panes closed here since the last call, by pane
        (:mod:`~driftwatch.service.group.labelled`)."""
        return [] if self.labelled is None else self.labelled.take(self.frontier)

    # -- checkpoints -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        seg = {} if self.segments is None else {
            "segments": self.segments.to_dict(),
            "segment_panes": [[k, [s.to_dict() for s in self.segment_panes[k]]]
                              for k in sorted(self.segment_panes)]}
        return {
            **seg,
            "panes": [[k, self.panes[k].to_dict()] for k in sorted(self.panes)],
            "pred_wm": None if math.isinf(self.pred_wm) else self.pred_wm,
            "out_wm": None if math.isinf(self.out_wm) else self.out_wm,
            "frontier": self.frontier,
            "n_seen": self.n_seen,
            "joiner": self.joiner.to_dict(),
            **({} if self.labelled is None else {"labelled": self.labelled.to_dict()}),
        }

    def load(self, d: dict[str, Any]) -> None:
        """Back to a state written by :meth:`to_dict` (settings stay this object's).
        Segment sketches saved for other segment values (a rebuilt reference) start
        empty, as one process's window does (``PaneWindow.from_dict``)."""
        ttl, cap = self.joiner.ttl, self.joiner.max_pending
        self.panes = {int(k): Sketch.from_dict(self.layout, s) for k, s in d["panes"]}
        self.segment_panes = {}
        if self.segments is not None:
            saved = d.get("segments")
            if saved is not None and SegmentCoder.from_dict(saved) == self.segments:
                self.segment_panes = {int(k): [Sketch.from_dict(self.layout, s) for s in ss]
                                      for k, ss in d["segment_panes"]}
            for k in self.panes:
                self.segment_panes.setdefault(k, self._empty_segments(self.segments))
        self.pred_wm = -math.inf if d["pred_wm"] is None else float(d["pred_wm"])
        self.out_wm = -math.inf if d["out_wm"] is None else float(d["out_wm"])
        self.frontier = None if d["frontier"] is None else int(d["frontier"])
        self.n_seen = int(d["n_seen"])
        self.joiner = LabelJoiner.from_dict(d["joiner"])
        self.joiner.ttl, self.joiner.max_pending = ttl, cap
        self.book = LandingBook.from_dict(d["joiner"]["book"], pane_size=self.size)
        self.book.ttl = ttl
        self.joiner.book = self.book
        if self.labelled is not None and "labelled" in d:
            self.labelled.load(d["labelled"])
