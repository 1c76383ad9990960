"""A segmented policy across a group, without a broker: per-segment pane sketches.

Events cut over partitions and polls in any way, sketched per partition and per segment,
moved to another instance through their JSON state (a rebalance), published as the pane
log carries them and merged once every partition has passed a pane, give the windows one
PaneWindow gives on the whole stream: the same ids, bounds, event ranks, whole sketch and
sketch of every segment (kept values, ``other`` for rarer, unseen and blank ones).
Counts are integers and equal exactly; the float sums (score moments, entropy) are added
in another order and agree to rounding.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.errors import ServiceError
from driftwatch.service.group.merge import PaneMerger
from driftwatch.service.group.panelog import (
    decode_value,
    encode_value,
    pane_segments,
    pane_value,
)
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.panes import ClosedWindow, PaneWindow, WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.segments import SegmentCoder
from driftwatch.windows.sketch import Sketch

_rng = np.random.default_rng(3)
PROFILE = ReferenceProfile.build(
    pd.DataFrame({"x": _rng.normal(5.0, 2.0, 4000), "score": _rng.uniform(size=4000),
                  "ch": _rng.choice(["web", "branch", "broker", "shop"], 4000,
                                    p=[0.4, 0.3, 0.2, 0.1])}),
    numeric=["x"], label=None, decision=None, segment="ch", segment_top_k=2)
LAYOUT = PROFILE.layout
assert PROFILE.segments is not None
CODER = PROFILE.segments.coder  # web, branch, then other
#: live values: the kept ones, ones the reference put in other, unseen, blank, "other"
LIVE = np.array(["web", "branch", "broker", "shop", "fax", "", "other"])


def _preds(t: np.ndarray, x: np.ndarray, seg: np.ndarray, score: np.ndarray) -> Batch:
    return Batch.build("predictions", n=len(t), n_numeric=1, numeric=x[:, None],
                       event_time=t, ids=t.astype(str), score=score, segment=seg)


def _same(a: Sketch, b: Sketch) -> None:
    da, db = a.to_dict(), b.to_dict()
    assert da.keys() == db.keys()
    for k, v in da.items():
        if isinstance(v, float):
            assert math.isclose(v, db[k], rel_tol=1e-12, abs_tol=1e-12), k
        else:
            assert v == db[k], k


def _same_windows(got: list[ClosedWindow], want: list[ClosedWindow]) -> None:
    assert [(c.window_id, c.start_time, c.end_time, c.first_index, c.last_index)
            for c in got] == [(c.window_id, c.start_time, c.end_time, c.first_index,
                               c.last_index) for c in want]
    for g, w in zip(got, want, strict=True):
        _same(g.sketch, w.sketch)
        assert g.segments is not None and w.segments is not None
        assert len(g.segments) == len(w.segments) == len(CODER)
        for gs, ws in zip(g.segments, w.segments, strict=True):
            _same(gs, ws)


def _through_the_log(sk: Sketch, segs: list[Sketch] | None, *,
                     provisional: bool = False) -> tuple[Sketch, list[Sketch] | None]:
    value = decode_value(encode_value(pane_value(sk, segs, coder=CODER,
                                                 provisional=provisional)))
    return Sketch.from_dict(LAYOUT, value["sketch"]), pane_segments(LAYOUT, value, CODER)


def _moved(part: PartitionPanes) -> PartitionPanes:
    """The partition on its next owner: its state through JSON, as the log carries it."""
    again = PartitionPanes(LAYOUT, pane_size=part.size, has_outcomes=False, segments=CODER)
    again.load(json.loads(json.dumps(part.to_dict())))
    return again


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 5),
       mode=st.sampled_from(["tumbling", "sliding"]), polls=st.integers(1, 6),
       move_at=st.integers(0, 6))
def test_partition_split_segments_merge_to_one_processs_windows(seed, n_parts, mode, polls,
                                                               move_at) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    t = np.sort(rng.uniform(0.0, 100.0, n))
    x = rng.normal(5.0, 2.0, n)
    seg = rng.choice(LIVE, n, p=[0.35, 0.25, 0.1, 0.1, 0.1, 0.05, 0.05])
    score = rng.uniform(size=n)
    spec = WindowSpec(kind="time", pane_size=10.0, panes=3, mode=mode)
    want = PaneWindow(LAYOUT, spec, segments=CODER).add(_preds(t, x, seg, score))
    part_of = rng.integers(0, n_parts, n)
    size, _ = spec.effective
    parts = [PartitionPanes(LAYOUT, pane_size=size, has_outcomes=False, segments=CODER)
             for _ in range(n_parts)]
    merger = PaneMerger(LAYOUT, n_partitions=n_parts, n_segments=len(CODER))
    ring = PaneWindow(LAYOUT, spec, segments=CODER)
    got = []
    for p in rng.permutation(n_parts):  # partitions progress independently
        rows = np.flatnonzero(part_of == p)
        for i, c in enumerate(np.array_split(rows, polls)):
            if i == move_at:  # a rebalance: the partition's next owner goes on from here
                parts[p] = _moved(parts[p])
            closed = parts[p].take(_preds(t[c], x[c], seg[c], score[c]) if len(c) else None,
                                   None)
            segments = parts[p].take_segments()
            assert sorted(segments) == [k for k, _ in closed]
            for k, sk in closed:
                sk, segs = _through_the_log(sk, segments[k])
                merger.add_pane(int(p), k, sk, segments=segs)
                merger.add_pane(int(p), k, sk, segments=segs)  # a re-published copy
            if parts[p].frontier is not None:
                merger.add_mark(int(p), parts[p].frontier)
            for k, sk, first, last, segs in merger.complete():
                cw = ring.close_merged(k, sk, first=first, last=last, segments=segs)
                if cw is not None:
                    got.append(cw)
    # the last pane of each partition stays open (its watermark has not passed it)
    assert len(got) >= len(want) - 3
    _same_windows(got, want[: len(got)])


def test_an_idle_partitions_copies_carry_their_segments_and_late_events_none() -> None:
    """Partition 1 goes idle with pane 1 open: its provisional copy's segments are merged;
    what it gets for pane 1 afterwards is late, counted on the whole pane only, as one
    process counts an event whose pane has closed."""
    m = PaneMerger(LAYOUT, n_partitions=2, n_segments=len(CODER))
    parts = [PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False, segments=CODER)
             for _ in range(2)]
    ring = PaneWindow(LAYOUT, WindowSpec(kind="time", pane_size=10.0), segments=CODER)
    got: list[ClosedWindow] = []
    seen: list[tuple[float, str]] = []

    def feed(p: int, events: list[tuple[float, str]]) -> None:
        seen.extend(events)
        t = np.array([e[0] for e in events])
        s = np.array([e[1] for e in events])
        closed = parts[p].take(_preds(t, t / 10.0, s, np.full(len(t), 0.25)), None)
        segments = parts[p].take_segments()
        for k, sk in closed:
            sk, segs = _through_the_log(sk, segments[k])
            m.add_pane(p, k, sk, segments=segs)
        m.add_mark(p, parts[p].frontier)
        for k, sk, first, last, segs in m.complete():
            if (cw := ring.close_merged(k, sk, first=first, last=last, segments=segs)):
                got.append(cw)

    feed(0, [(1.0, "web"), (12.0, "branch"), (25.0, "fax")])
    feed(1, [(3.0, "web"), (14.0, "shop")])
    for k, sk in parts[1].open_panes():  # it goes quiet: copies of pane 1, then idle
        sk, segs = _through_the_log(sk, parts[1].segment_panes[k], provisional=True)
        m.add_pane(1, k, sk, provisional=True, segments=segs)
    m.add_mark(1, parts[1].frontier, idle=True)
    feed(0, [(36.0, "web")])
    m.add_mark(1, parts[1].frontier, idle=False)
    feed(1, [(15.0, "web"), (16.0, "branch"), (33.0, "")])  # 15 and 16 came too late
    feed(0, [(44.0, "branch")])
    feed(1, [(41.0, "web")])
    # one process, the events in the order the merge saw them: 15 and 16 are late there
    order = [1.0, 3.0, 12.0, 14.0, 25.0, 36.0, 15.0, 16.0, 33.0, 41.0, 44.0]
    by_t = dict(seen)
    t = np.array(order)
    want = PaneWindow(LAYOUT, WindowSpec(kind="time", pane_size=10.0), segments=CODER).add(
        _preds(t, t / 10.0, np.array([by_t[v] for v in order]), np.full(len(t), 0.25)))
    assert [c.window_id for c in got] == [0, 1, 2, 3]
    for g, w in zip(got, want, strict=True):
        assert g.segments is not None and w.segments is not None
        for gs, ws in zip(g.segments, w.segments, strict=True):
            _same(gs, ws)
    assert [[s.n for s in c.segments or ()] for c in got] == [[2, 0, 0], [0, 1, 1],
                                                              [0, 0, 1], [1, 0, 1]]
    assert sum(c.sketch.n_late for c in got) == 2  # on the whole window only
    assert all(s.n_late == 0 for c in got for s in c.segments or ())


def test_labels_and_bad_records_count_on_the_whole_pane_only() -> None:
    part = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=True, ttl=1e9, segments=CODER)
    ids = np.array(["a", "b", "c"])
    pred = Batch.build("predictions", n=3, n_numeric=1, numeric=np.ones((3, 1)), ids=ids,
                       event_time=np.array([1.0, 2.0, 15.0]), score=np.array([0.2, 0.4, 0.3]),
                       segment=np.array(["web", "fax", "branch"]))
    part.take(pred, None, n_bad=1)
    out = Batch.build("outcomes", n=2, ids=ids[:2], label=np.array([1.0, 0.0]),
                      event_time=np.array([5.0, 11.0]))
    ((k, whole),) = part.take(None, out)
    (segs,) = part.take_segments().values()
    assert (k, whole.n, whole.lab_n.tolist()) == (0, 2, [0, 1])  # a's outcome, bad
    assert [s.n for s in segs] == [1, 0, 1]
    assert all(int(s.lab_n.sum()) == 0 and s.n_bad == 0 for s in segs)


def test_partition_state_keeps_its_segments_for_the_same_values_only() -> None:
    part = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False, segments=CODER)
    t = np.array([1.0, 12.0, 13.0])
    part.take(_preds(t, t, np.array(["web", "branch", "shop"]), np.full(3, 0.5)), None)
    state = json.loads(json.dumps(part.to_dict()))
    again = _moved(part)
    assert again.to_dict() == state
    assert [s.n for s in again.segment_panes[1]] == [0, 1, 1]
    other = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False,
                           segments=SegmentCoder(("shop",)))  # a rebuilt reference
    other.load(state)
    assert other.panes[1].n == 2  # the whole pane is kept; its segments start empty
    assert [s.n for s in other.segment_panes[1]] == [0, 0]
    plain = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False)
    plain.load(state)  # a policy without segments reads a segmented state
    assert plain.segment_panes == {} and "segments" not in plain.to_dict()


def test_a_pane_sketched_on_other_segment_values_counts_as_without_segments() -> None:
    """A pane left in the log by a run on another reference (other top values): its
    segments are not the decider's, so they count as empty, as a checkpoint's do in one
    process; the whole sketch is merged as usual."""
    sk = Sketch.empty(LAYOUT)
    sk.n = 2
    segs = [Sketch.empty(LAYOUT) for _ in range(len(CODER))]
    value = pane_value(sk, segs, coder=SegmentCoder(("shop", "web")))
    assert pane_segments(LAYOUT, value, CODER) is None
    assert pane_segments(LAYOUT, pane_value(sk, segs, coder=CODER), None) is None
    m = PaneMerger(LAYOUT, n_partitions=2, n_segments=len(CODER))
    one = Sketch.empty(LAYOUT)
    one.n = 1
    m.add_pane(0, 0, sk, segments=None)
    m.add_pane(1, 0, sk, segments=[one, Sketch.empty(LAYOUT), Sketch.empty(LAYOUT)])
    m.add_mark(0, 1)
    m.add_mark(1, 1)
    ((_, whole, *_, merged),) = m.complete()
    assert whole.n == 4 and [s.n for s in merged] == [1, 0, 0]


def test_a_pane_with_other_segments_than_the_deciders_is_refused() -> None:
    m = PaneMerger(LAYOUT, n_partitions=1, n_segments=len(CODER))
    with pytest.raises(ServiceError, match="every instance needs the same reference"):
        m.add_pane(0, 0, Sketch.empty(LAYOUT), segments=[Sketch.empty(LAYOUT)])
