"""The group's merge protocol, without a broker: partition panes, completeness, merge.

Events cut over partitions and polls in any way, sketched per partition and merged once
every partition has passed a pane, give the windows one PaneWindow gives on the whole
stream: the same ids, bounds, event ranks and sketches.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.service.group.merge import PaneMerger, leader_partition
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.panes import PaneWindow, WindowSpec
from driftwatch.windows.sketch import SketchLayout

LAYOUT = SketchLayout.fit(numeric_names=("x",), numeric=np.linspace(0.0, 10.0, 200)[:, None])


def _preds(t: np.ndarray, x: np.ndarray, ids: np.ndarray | None = None) -> Batch:
    return Batch.build("predictions", n=len(t), n_numeric=1, numeric=x[:, None],
                       event_time=t, ids=ids if ids is not None else t.astype(str),
                       score=np.full(len(t), 0.3))


def _windows(closed) -> list[tuple]:
    return [(c.window_id, c.start_time, c.end_time, c.first_index, c.last_index,
             c.sketch.n, c.sketch.num_fine.tolist(), c.sketch.t_min, c.sketch.t_max)
            for c in closed]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 5),
       mode=st.sampled_from(["tumbling", "sliding"]), polls=st.integers(1, 6))
def test_merged_partitions_equal_one_pane_window(seed, n_parts, mode, polls) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    t = np.sort(rng.uniform(0.0, 100.0, n))
    x = rng.normal(5.0, 2.0, n)
    spec = WindowSpec(kind="time", pane_size=10.0, panes=3, mode=mode)
    whole = PaneWindow(LAYOUT, spec)
    want = whole.add(_preds(t, x))
    part_of = rng.integers(0, n_parts, n)
    size, _ = spec.effective
    parts = [PartitionPanes(LAYOUT, pane_size=size, has_outcomes=False) for _ in range(n_parts)]
    merger = PaneMerger(LAYOUT, n_partitions=n_parts)
    ring = PaneWindow(LAYOUT, spec)
    got = []
    for p in rng.permutation(n_parts):  # partitions progress independently
        rows = np.flatnonzero(part_of == p)
        for chunk in np.array_split(rows, polls):
            for k, sk in parts[p].take(_preds(t[chunk], x[chunk]) if len(chunk) else None,
                                       None):
                merger.add_pane(int(p), k, sk)
                merger.add_pane(int(p), k, sk)  # a re-published copy changes nothing
            if parts[p].frontier is not None:
                merger.add_mark(int(p), parts[p].frontier)
            for k, sk, first, last, _ in merger.complete():
                cw = ring.close_merged(k, sk, first=first, last=last)
                if cw is not None:
                    got.append(cw)
    # the last pane of each partition stays open (its watermark has not passed it)
    assert _windows(got) == _windows(want[: len(got)])
    below = merger.complete_below
    assert below is not None
    assert [c.end_time for c in want[len(got):]] == [
        c.end_time for c in want[len(got):] if c.end_time > below * size]


def test_a_pane_waits_for_every_partition_and_is_merged_once() -> None:
    m = PaneMerger(LAYOUT, n_partitions=3)
    parts = [PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False) for _ in range(3)]
    for p, times in enumerate(([1.0, 12.0], [2.0, 3.0, 15.0], [4.0])):
        for k, sk in parts[p].take(_preds(np.array(times), np.ones(len(times))), None):
            m.add_pane(p, k, sk)
        if parts[p].frontier is not None:
            m.add_mark(p, parts[p].frontier)
    assert m.complete_below == 0 and m.complete() == []  # partition 2 is still in pane 0
    for k, sk in parts[2].take(_preds(np.array([21.0]), np.ones(1)), None):
        m.add_pane(2, k, sk)
    m.add_mark(2, parts[2].frontier)
    done = m.complete()
    assert [(k, sk.n, first, last) for k, sk, first, last, _ in done] == [(0, 4, 0, 3)]
    m.add_pane(0, 0, done[0][1])  # a copy re-published after a crash: ignored
    assert m.complete() == [] and m.next_pane == 1


def test_a_pane_closes_only_once_both_streams_passed_it() -> None:
    part = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=True, ttl=1e9)
    ids = np.array(["a", "b"])
    assert part.take(_preds(np.array([1.0, 25.0]), np.ones(2), ids), None) == []
    assert part.frontier is None  # no outcome yet: the outcome watermark is -inf
    out = Batch.build("outcomes", n=1, ids=np.array(["a"]), label=np.array([1.0]),
                      event_time=np.array([8.0]))
    assert part.take(None, out) == []  # both passed 8: pane 0 [0, 10) is still open
    late_out = Batch.build("outcomes", n=1, ids=np.array(["b"]), label=np.array([0.0]),
                           event_time=np.array([31.0]))
    closed = part.take(None, late_out)
    assert [(k, sk.n, sk.lab_n.tolist()) for k, sk in closed] == [(0, 1, [0, 1])]
    assert part.frontier == 2 and sorted(part.panes) == [2, 3]


def test_partition_state_round_trips() -> None:
    part = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=True, ttl=1e9)
    part.take(_preds(np.array([1.0, 25.0]), np.ones(2), np.array(["a", "b"])), None)
    again = PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=True, ttl=1e9)
    again.load(part.to_dict())
    assert again.to_dict() == part.to_dict()
    assert math.isinf(again.out_wm)


def test_models_spread_over_the_leader_partitions() -> None:
    leaders = {leader_partition(f"model-{i}", 16) for i in range(64)}
    assert len(leaders) > 8  # hundreds of models do not all land on one instance
    assert leader_partition("credit-risk", 16) == leader_partition("credit-risk", 16)


def test_an_idle_partition_holds_no_pane_back_and_its_late_panes_count_late() -> None:
    """Partition 2 has no traffic: once its owner marks it idle, the merge of 0 and 1 is
    the whole stream's; an event it gets later, for a merged pane, is counted late."""
    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(0.0, 60.0, 120))
    x = rng.normal(5.0, 2.0, 120)
    spec = WindowSpec(kind="time", pane_size=10.0, panes=2, mode="sliding")
    want = PaneWindow(LAYOUT, spec).add(_preds(t, x))
    size, _ = spec.effective
    parts = [PartitionPanes(LAYOUT, pane_size=size, has_outcomes=False) for _ in range(3)]
    merger = PaneMerger(LAYOUT, n_partitions=3)
    ring = PaneWindow(LAYOUT, spec)
    got = []

    def feed(p: int, rows: np.ndarray) -> None:
        for k, sk in parts[p].take(_preds(t[rows], x[rows]), None):
            merger.add_pane(p, k, sk)
        merger.add_mark(p, parts[p].frontier)
        for k, sk, first, last, _ in merger.complete():
            if (cw := ring.close_merged(k, sk, first=first, last=last)) is not None:
                got.append(cw)

    half = np.arange(len(t)) % 2
    feed(0, np.flatnonzero(half == 0))
    feed(1, np.flatnonzero(half == 1))
    assert got == []  # partition 2 has no mark: everything waits
    merger.add_mark(2, None, idle=True)
    feed(0, np.array([], dtype=int))
    assert got and _windows(got) == _windows(want[: len(got)])
    # partition 2 wakes up with an event of pane 0, merged long ago
    merger.add_mark(2, parts[2].frontier, idle=False)
    for k, sk in parts[2].take(_preds(np.array([3.0, 70.0]), np.ones(2)), None):
        merger.add_pane(2, k, sk)
    merger.add_mark(2, parts[2].frontier)
    t2 = np.array([75.0, 81.0])
    for p in (0, 1):
        for k, sk in parts[p].take(_preds(t2, np.ones(2)), None):
            merger.add_pane(p, k, sk)
        merger.add_mark(p, parts[p].frontier)
    done = merger.complete()  # pane 5 [50, 60) of partitions 0 and 1; 7 waits for 2
    assert [k for k, *_ in done] == [5]
    assert done[0][1].n == int(((t >= 50.0) & (t < 60.0)).sum())
    assert done[0][1].n_late == 1  # the event at 3.0, not added to pane 0 again


def test_an_idle_partitions_open_panes_are_merged_as_copies_and_what_follows_is_late() -> None:
    m = PaneMerger(LAYOUT, n_partitions=2)
    parts = [PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False) for _ in range(2)]

    def feed(p: int, times: list[float]) -> None:
        for k, sk in parts[p].take(_preds(np.array(times), np.ones(len(times))), None):
            m.add_pane(p, k, sk)
        m.add_mark(p, parts[p].frontier)

    feed(0, [1.0, 12.0, 25.0])
    feed(1, [3.0, 14.0])
    assert [(k, sk.n) for k, sk, *_ in m.complete()] == [(0, 2)]  # 1 is still open on 1
    # partition 1 goes quiet: copies of its open pane, then the idle mark
    for k, sk in parts[1].open_panes():
        m.add_pane(1, k, sk, provisional=True)
    m.add_mark(1, parts[1].frontier, idle=True)
    feed(0, [36.0])
    assert [(k, sk.n) for k, sk, *_ in m.complete()] == [(1, 2), (2, 1)]
    assert sorted(parts[1].panes) == [1]  # still open where it is sketched
    # it wakes up with two more events of pane 1 (merged meanwhile) and one of pane 3
    m.add_mark(1, parts[1].frontier, idle=False)
    feed(1, [15.0, 16.0, 33.0, 41.0])
    feed(0, [44.0])
    done = m.complete()  # pane 3: 0's event at 36 and 1's at 33; 1's extra two are late
    assert [(k, sk.n, sk.n_late) for k, sk, *_ in done] == [(3, 2, 2)]
    m.add_pane(1, 1, done[0][1])  # pane 1 re-published after a crash: nothing more
    assert m.late == [0, 0]


def test_with_every_partition_idle_panes_below_the_newest_frontier_complete() -> None:
    m = PaneMerger(LAYOUT, n_partitions=2)
    parts = [PartitionPanes(LAYOUT, pane_size=10.0, has_outcomes=False) for _ in range(2)]
    for p, times in enumerate(([1.0, 12.0, 25.0], [3.0, 14.0])):
        for k, sk in parts[p].take(_preds(np.array(times), np.ones(len(times))), None):
            m.add_pane(p, k, sk)
        m.add_mark(p, parts[p].frontier)
    assert [k for k, *_ in m.complete()] == [0]
    for p in (0, 1):
        for k, sk in parts[p].open_panes():
            m.add_pane(p, k, sk, provisional=True)
        m.add_mark(p, parts[p].frontier, idle=True)
    # one process would have closed pane 1 (its time, 25, passed it), not pane 2
    assert [(k, sk.n) for k, sk, *_ in m.complete()] == [(1, 2)]
    assert sorted(m.pending) == [2]
