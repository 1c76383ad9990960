"""``PaneWindow``: the current window as a ring of mergeable panes.

Panes are count-based (every N prediction events, by arrival) or event-time based
(``[k*size, (k+1)*size)``). A window is the sum of the last ``panes`` panes; *sliding*
windows close at every pane close, *tumbling* ones every ``panes`` panes. Event-time panes
close when the watermark (largest event time seen) minus ``allowed_lateness`` passes their
end; an event for an already-closed pane is *late*: counted in ``n_late``, not added.
Each event is judged against the watermark of the events before it, so results do not
depend on how the stream was cut into micro-batches. Memory is panes x bins.

A window is ``partial`` when the stream covers only part of its span: a count window
holding fewer events than its size (the first windows of a sliding one, the last at
flush), a time window starting before the stream's first event, or one closed by
:meth:`PaneWindow.flush` before the watermark reached its end.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.windows.sketch import SketchLayout
>>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])
>>> w = PaneWindow(lay, WindowSpec(kind="count", pane_size=4, panes=2, mode="sliding"))
>>> b = Batch.build("predictions", n=10, n_numeric=1, numeric=np.ones((10, 1)),
...                 event_time=np.arange(10.0))
>>> [(c.window_id, c.first_index, c.last_index, c.n_events, c.partial) for c in w.add(b)]
[(0, 0, 3, 4, True), (1, 0, 7, 8, False)]
>>> [(c.window_id, c.n_events, c.partial) for c in w.flush()]
[(2, 6, True)]
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from driftwatch.batch import Batch
from driftwatch.windows.segments import SegmentCoder
from driftwatch.windows.sketch import Sketch, SketchLayout, add_labelled_at

__all__ = ["ClosedWindow", "PaneWindow", "WindowSpec"]


@dataclass(frozen=True)
class WindowSpec:
    """How windows are cut. ``pane_size`` is events (count) or seconds (time)."""

    kind: Literal["count", "time"] = "count"
    pane_size: float = 5_000
    panes: int = 1
    mode: Literal["tumbling", "sliding"] = "tumbling"
    allowed_lateness: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("count", "time"):
            raise ValueError(f"window kind must be 'count' or 'time', not {self.kind!r}")
        if self.mode not in ("tumbling", "sliding"):
            raise ValueError(f"window mode must be 'tumbling' or 'sliding', not {self.mode!r}")
        if self.pane_size <= 0 or self.panes < 1 or self.allowed_lateness < 0:
            raise ValueError("pane_size must be > 0, panes >= 1, allowed_lateness >= 0")
        if self.kind == "count" and int(self.pane_size) != self.pane_size:
            raise ValueError("a count pane size must be a whole number of events")

    @property
    def effective(self) -> tuple[float, int]:
        """(pane size, panes per window): a tumbling window is one pane of the whole size."""
        if self.mode == "tumbling":
            return self.pane_size * self.panes, 1
        return self.pane_size, self.panes


@dataclass
class ClosedWindow:
    """A window that just closed, ready for the detectors."""

    window_id: int
    sketch: Sketch
    start_time: float
    end_time: float
    first_index: int
    last_index: int
    partial: bool = False
    #: One sketch per segment (the coder's code order) when the window is segmented.
    segments: tuple[Sketch, ...] | None = None
    #: Index of the (effective) pane the window closed with: its newest pane.
    pane: int = -1
    #: For a window cut short by :meth:`PaneWindow.flush` (the end of a finite stream, or
    #: a daemon's change of window or reference), the share of a full window the stream
    #: covered: a count window's events over a full window's, a time window's span up to
    #: the watermark over its whole span (0 to 1). None for every other window.
    tail_coverage: float | None = None

    @property
    def n_events(self) -> int:
        return self.sketch.n


@dataclass
class _Pane:
    index: int
    sketch: Sketch
    first: int = -1  # first/last event index (arrival order) in the pane
    last: int = -1
    segments: list[Sketch] | None = None  # per segment, when segmented

    def note(self, lo: int, hi: int) -> None:
        self.first = lo if self.first < 0 else min(self.first, lo)
        self.last = max(self.last, hi)


#: The sketch counters of records read that are no prediction (:meth:`PaneWindow.add_read`).
_READ_COUNTERS = ("n_bad", "n_outcome_records")


def _counter(name: str) -> None:
    """Refuse a name that is no counter of :data:`_READ_COUNTERS` (a caller's slip)."""
    if name not in _READ_COUNTERS:
        raise ValueError(f"no counter of records read: {name!r}")


class PaneWindow:
    """Sliding or tumbling windows over count- or event-time panes.

    With a ``segments`` coder each pane also keeps one sketch per segment (the events of
    that segment); a closed window carries their sums. Labels and bad records are counted
    on the whole pane only.
    """

    def __init__(self, layout: SketchLayout, spec: WindowSpec, *, first_id: int = 0,
                 segments: SegmentCoder | None = None, first_pane: int = 0) -> None:
        self.layout = layout
        self.spec = spec
        self.segments = segments
        self._size, self._k = spec.effective
        self._open: dict[int, _Pane] = {}
        self._closed: deque[_Pane] = deque()
        self.watermark = -math.inf
        self.n_seen = 0
        self.n_late = 0
        self._next_id = int(first_id)
        self._count_pane = int(first_pane)
        #: earliest prediction time in the panes closed so far: the stream's start, as far
        #: as a closed window can see (every pane before it is closed too)
        self._t_first = math.inf

    @property
    def next_pane(self) -> int:
        """Index a new count pane would get (time panes are numbered by event time)."""
        return self._count_pane + 1

    def count_panes(self, n: int) -> np.ndarray:
        """The count pane each of the next ``n`` prediction events will land in."""
        size = int(self._size)
        p = self._open.get(self._count_pane)
        filled = 0 if p is None else p.sketch.n
        return self._count_pane + (filled + np.arange(n, dtype=np.int64)) // size

    @property
    def next_id(self) -> int:
        """Id the next closed window will get."""
        return self._next_id

    @property
    def nbytes(self) -> int:
        """Bytes held by the panes' sketches (open and kept for sliding sums)."""
        return sum(p.sketch.nbytes + sum(s.nbytes for s in p.segments or ())
                   for p in (*self._open.values(), *self._closed))

    # -- helpers -----------------------------------------------------------------------
    def _pane(self, index: int) -> _Pane:
        p = self._open.get(index)
        if p is None:
            p = self._open[index] = _Pane(index, Sketch.empty(self.layout),
                                          segments=self._empty_segments())
        return p

    def _empty_segments(self) -> list[Sketch] | None:
        if self.segments is None:
            return None
        return [Sketch.empty(self.layout) for _ in range(len(self.segments))]

    def _add_to(self, pane: _Pane, batch: Batch) -> None:
        pane.sketch.add_batch(batch)
        if pane.segments is not None and self.segments is not None:
            for code, part in self.segments.split(batch):
                pane.segments[code].add_batch(part)

    def _frontier(self, wm: float) -> float:
        """Panes with index below this are closed at watermark ``wm``."""
        if math.isinf(wm):
            return -math.inf if wm < 0 else math.inf
        return math.floor((wm - self.spec.allowed_lateness) / self._size)

    def _emit(self, pane: _Pane, *, partial: bool = False) -> ClosedWindow | None:
        self._t_first = min(self._t_first, pane.sketch.t_min)
        self._closed.append(pane)
        while self._closed and self._closed[0].index <= pane.index - self._k:
            self._closed.popleft()
        members = [p for p in self._closed if p.index > pane.index - self._k]
        sk = Sketch.sum(self.layout, (p.sketch for p in members))
        if sk.n == 0 and not sk.lab_n.any() and not sk.n_bad:
            # nothing to judge; but bad records alone (outcomes with unknown labels after
            # the last prediction) are a window: the data-quality gate must see them
            return None
        if self.spec.kind == "time":
            start = (pane.index - self._k + 1) * self._size
            end = (pane.index + 1) * self._size
            # a leading window: its span begins before the stream's first event
            partial = partial or self._t_first > start
        else:
            partial = partial or sk.n < self._size * self._k
            start, end = sk.t_min, sk.t_max
            if sk.n == 0 and math.isfinite(self.watermark):
                # outcomes only (joined after the last prediction of the stream): stamped
                # where the stream stood, not with no time at all
                start = end = self.watermark
        firsts = [p.first for p in members if p.first >= 0]
        segs = None
        if self.segments is not None:
            segs = tuple(
                Sketch.sum(self.layout, (p.segments[k] for p in members if p.segments))
                for k in range(len(self.segments)))
        out = ClosedWindow(
            window_id=self._next_id,
            sketch=sk,
            start_time=float(start),
            end_time=float(end),
            first_index=min(firsts) if firsts else -1,
            last_index=max(p.last for p in members),
            partial=partial,
            segments=segs,
            pane=pane.index,
        )
        self._next_id += 1
        return out

    def _close_before(self, frontier: float) -> list[ClosedWindow]:
        out = []
        for idx in sorted(i for i in self._open if i < frontier):
            cw = self._emit(self._open.pop(idx))
            if cw is not None:
                out.append(cw)
        return out

    # -- updates -----------------------------------------------------------------------
    def add(self, batch: Batch) -> list[ClosedWindow]:
        """Add prediction events; returns the windows that closed, in order."""
        if len(batch) == 0:
            return []
        if self.spec.kind == "count":
            return self._add_count(batch)
        return self._add_time(batch)

    def _add_count(self, batch: Batch) -> list[ClosedWindow]:
        out, start, n, size = [], 0, len(batch), int(self._size)
        while start < n:
            pane = self._pane(self._count_pane)
            room = size - pane.sketch.n
            stop = min(n, start + room)
            self._add_to(pane, batch.take(slice(start, stop)))
            pane.note(self.n_seen + start, self.n_seen + stop - 1)
            if pane.sketch.n >= size:
                cw = self._emit(self._open.pop(self._count_pane))
                self._count_pane += 1
                if cw is not None:
                    out.append(cw)
            start = stop
        self.n_seen += n
        t = batch.event_time[np.isfinite(batch.event_time)]
        if t.size:
            self.watermark = max(self.watermark, float(t.max()))
        return out

    def _add_time(self, batch: Batch) -> list[ClosedWindow]:
        t = batch.event_time
        n = len(batch)
        before = np.maximum.accumulate(np.concatenate(([self.watermark], t[:-1])))
        lat = self.spec.allowed_lateness
        with np.errstate(invalid="ignore"):
            frontier = np.floor((before - lat) / self._size)
        pane_idx = np.floor(t / self._size)
        late = pane_idx < frontier
        n_late = int(late.sum())
        if n_late:
            self.n_late += n_late
        keep = ~late
        idx_all = self.n_seen + np.arange(n)
        for p in np.unique(pane_idx[keep]):
            m = keep & (pane_idx == p)
            pane = self._pane(int(p))
            self._add_to(pane, batch.take(m))
            sel = idx_all[m]
            pane.note(int(sel[0]), int(sel[-1]))
        if n_late:  # charged to the oldest pane open when each late event arrived
            at, counts = np.unique(frontier[late], return_counts=True)
            for p, c in zip(at, counts, strict=True):
                self._pane(int(p)).sketch.n_late += int(c)
        self.n_seen += n
        self.watermark = max(self.watermark, float(np.nanmax(t)))
        return self._close_before(self._frontier(self.watermark))

    def close_merged(self, index: int, sketch: Sketch, *, first: int = -1, last: int = -1,
                     segments: Sequence[Sketch] | None = None) -> ClosedWindow | None:
        """Close pane ``index`` whose sketch was built elsewhere (the sum of several
        partitions' panes, in a consumer group): the same ring, window ids and bounds as a
        pane closed here, ``segments`` its sketch per segment (empty ones when None). None
        when the window it closes is empty."""
        segs = self._empty_segments() if segments is None or self.segments is None \
            else list(segments)
        return self._emit(_Pane(int(index), sketch, int(first), int(last), segs))

    def advance_to(self, t: float) -> list[ClosedWindow]:
        """Move the watermark (e.g. on outcome events); closes panes it passes."""
        if self.spec.kind != "time" or not math.isfinite(t) or t <= self.watermark:
            return []
        self.watermark = t
        return self._close_before(self._frontier(t))

    def _filling(self) -> _Pane:
        """The pane being filled: the current count pane, or the newest open time pane."""
        if self.spec.kind == "count":
            return self._pane(self._count_pane)
        front = self._frontier(self.watermark)
        idx = max(self._open) if self._open else front
        if math.isfinite(front):
            idx = max(idx, int(front))
        elif not math.isfinite(idx):
            idx = 0
        return self._pane(int(idx))

    def label_targets(
        self, *, event_index: np.ndarray, time: np.ndarray, watermark: np.ndarray
    ) -> np.ndarray:
        """Pane of each joined outcome, judged where it sits in the merged stream.

        ``event_index``: predictions seen before the outcome (count panes); ``time``: its
        event time and ``watermark``: the largest event time before it (time panes). An
        outcome for a pane already closed at that point goes to the oldest open pane.
        Call before adding the predictions of the same poll.
        """
        if self.spec.kind == "count":
            target = np.asarray(event_index, dtype=np.int64) // int(self._size)
            return np.maximum(target, self._count_pane)
        with np.errstate(invalid="ignore"):
            own = np.floor(np.asarray(time, dtype=np.float64) / self._size)
            front = np.floor((watermark - self.spec.allowed_lateness) / self._size)
        target = np.fmax(own, front)
        now = self._frontier(self.watermark)
        if math.isfinite(now):
            target = np.fmax(target, now)
        return np.nan_to_num(target, nan=0.0, neginf=0.0).astype(np.int64)

    def add_labelled_at(
        self,
        targets: np.ndarray,
        score: np.ndarray,
        label: np.ndarray,
        exposure: np.ndarray | None = None,
    ) -> None:
        """Add joined outcomes to the panes :meth:`label_targets` chose."""
        panes, group = np.unique(targets, return_inverse=True)
        add_labelled_at([self._pane(int(t)).sketch for t in panes], group, score, label,
                        exposure)

    def add_read(self, counter: str, n: int) -> None:
        """Count ``n`` records read that are no prediction (``counter``: ``n_bad`` for bad
        records, ``n_outcome_records`` for outcomes; with the predictions, what a pane's
        bad-record share is taken of) against the pane being filled."""
        _counter(counter)
        if n:
            sk = self._filling().sketch
            setattr(sk, counter, getattr(sk, counter) + int(n))

    def add_read_at(self, counter: str, targets: np.ndarray) -> None:
        """Like :meth:`add_read`, one record against each of the panes :meth:`label_targets`
        chose (where each sits in the merged stream)."""
        _counter(counter)
        for t, n in zip(*np.unique(targets, return_counts=True), strict=True):
            sk = self._pane(int(t)).sketch
            setattr(sk, counter, getattr(sk, counter) + int(n))

    def flush(self) -> list[ClosedWindow]:
        """Close every open pane (end of a finite stream); a window the stream did not
        fill (a count pane short of its size, a time pane the watermark did not pass the
        end of) is ``partial``."""
        out = []
        for idx in sorted(self._open):
            pane = self._open.pop(idx)
            if self.spec.kind == "count":
                partial = pane.sketch.n < int(self._size)
            else:
                partial = self.watermark < (idx + 1) * self._size
            cw = self._emit(pane, partial=partial)
            if cw is not None:
                cw.tail_coverage = self._coverage(cw)
                out.append(cw)
        if self.spec.kind == "count":
            self._count_pane += 1
        return out

    def _coverage(self, cw: ClosedWindow) -> float:
        """The share of a full window ``cw`` holds (see :attr:`ClosedWindow.tail_coverage`)."""
        if self.spec.kind == "count":
            return min(1.0, cw.sketch.n / (self._size * self._k))
        span = cw.end_time - cw.start_time
        if math.isnan(self.watermark):
            return 1.0
        reached = min(max(self.watermark, cw.start_time), cw.end_time) - cw.start_time
        return reached / span if span > 0 else 1.0

    def reshaped(self, spec: WindowSpec) -> PaneWindow:
        """An empty window of ``spec``'s shape going on from this one (flush it first):
        window ids, the watermark, counts and count-pane numbers (each count pane is a
        prediction cohort) carry over. Its first windows hold only what comes after the
        change, so they are ``partial`` as a stream's first windows are."""
        d = self.to_dict()
        d.update(open=[], closed=[], first_time=None)
        return PaneWindow.from_dict(self.layout, spec, d, segments=self.segments)

    # -- checkpoints -------------------------------------------------------------------
    def _pane_dict(self, p: _Pane, arrays: bool = False) -> dict[str, Any]:
        out = {"index": p.index, "first": p.first, "last": p.last,
               "sketch": p.sketch.to_dict(arrays=arrays)}
        if p.segments is not None:
            out["segments"] = [s.to_dict(arrays=arrays) for s in p.segments]
        return out

    def _pane_from(self, d: dict[str, Any], same_segments: bool) -> _Pane:
        segs = self._empty_segments()
        if segs is not None and same_segments and d.get("segments") is not None:
            segs = [Sketch.from_dict(self.layout, s) for s in d["segments"]]
        return _Pane(d["index"], Sketch.from_dict(self.layout, d["sketch"]), d["first"],
                     d["last"], segs)

    def to_dict(self, *, arrays: bool = False) -> dict[str, Any]:
        """JSON-safe, or with sketch counts as numpy arrays when ``arrays``."""
        seg = {} if self.segments is None else {"segments": self.segments.to_dict()}
        return {
            **seg,
            "open": [self._pane_dict(self._open[i], arrays) for i in sorted(self._open)],
            "closed": [self._pane_dict(p, arrays) for p in self._closed],
            "watermark": None if math.isinf(self.watermark) else self.watermark,
            "n_seen": self.n_seen,
            "n_late": self.n_late,
            "next_id": self._next_id,
            "count_pane": self._count_pane,
            "first_time": None if math.isinf(self._t_first) else self._t_first,
        }

    @classmethod
    def from_dict(cls, layout: SketchLayout, spec: WindowSpec, d: dict[str, Any], *,
                  segments: SegmentCoder | None = None) -> PaneWindow:
        """The window a :meth:`to_dict` saved. Segment sketches saved for the same segment
        values come back; for other values (a rebuilt reference) the panes' segments start
        empty, and the whole-window sketches are kept either way."""
        w = cls(layout, spec, segments=segments)
        saved = d.get("segments")
        same = segments is not None and saved is not None \
            and SegmentCoder.from_dict(saved) == segments
        w._open = {p["index"]: w._pane_from(p, same) for p in d["open"]}
        w._closed = deque(w._pane_from(p, same) for p in d["closed"])
        w.watermark = -math.inf if d["watermark"] is None else float(d["watermark"])
        w.n_seen = int(d["n_seen"])
        w.n_late = int(d["n_late"])
        w._next_id = int(d["next_id"])
        w._count_pane = int(d["count_pane"])
        if "first_time" in d:
            w._t_first = math.inf if d["first_time"] is None else float(d["first_time"])
        elif w._next_id or w._closed:  # saved before it was kept: past the leading windows
            w._t_first = -sys.float_info.max  # finite: it is saved again as JSON
        return w
