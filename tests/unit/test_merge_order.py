"""The merged order of several inputs is the order of their records by (running maximum of
event time, rank, line), whatever the chunks they are read in and the batch size cuts.

Random inputs of good and bad records (times with ties, missing times), read a chunk at a
time as :class:`~driftwatch.connectors.file.FileSource` reads them (the input that limits
the merge first) and handed out a few records at a time: every record comes out once, in
the order plain Python sorts them, and each take says where its bad records sit among its
good ones and which stream each good one is of.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.merge import EventMerger

STREAMS = ("predictions", "outcomes")
#: a record: its event time (NaN: none) and whether it is bad
records = st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0, math.nan]),
                             st.booleans()), max_size=25)  # fmt: skip


def expected(inputs: list[list[tuple[float, bool]]], ranks: list[int]) -> list[tuple[int, int]]:
    """Every record as ``(input, line)``, by (running maximum of times, rank, line): a bad
    record has no time (it rides behind the record before it)."""
    keyed = []
    for i, recs in enumerate(inputs):
        key = -math.inf
        for line, (t, bad) in enumerate(recs, start=1):
            if not bad and not math.isnan(t):
                key = max(key, t)
            keyed.append(((key, ranks[i], line), (i, line)))
    return [where for _, where in sorted(keyed)]


def chunk(i: int, s: int, recs: list[tuple[float, bool]], first: int) -> tuple[
        dict[int, tuple[Batch, np.ndarray]], list[BadRecord], list[int]]:
    """Lines ``first``.. of input ``i`` (stream ``s``) as a reader hands them to the merge;
    a record's position says which input and line it is."""
    good = [(first + k, t) for k, (t, bad) in enumerate(recs) if not bad]
    bad = [first + k for k, (_, b) in enumerate(recs) if b]
    lines = np.array([ln for ln, _ in good], dtype=np.int64)
    batch = Batch.build(STREAMS[s], n=len(good), event_time=[t for _, t in good],
                        position=1000 * i + lines)
    parts = {s: (batch, lines)} if good else {}
    return parts, [BadRecord("bad", "", f"in{i}", 1000 * i + ln, b"") for ln in bad], bad


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 3), limit=st.integers(1, 12))
def test_records_leave_in_merged_order_whatever_the_cuts(data: st.DataObject, n: int,
                                                         limit: int) -> None:
    inputs = [data.draw(records) for _ in range(n)]
    streams = [data.draw(st.integers(0, 1)) for _ in range(n)]
    ranks = data.draw(st.permutations(range(n)))
    sizes = [data.draw(st.integers(1, 8)) for _ in range(n)]
    merger = EventMerger(list(ranks))
    read = [0] * n
    out: list[tuple[int, int]] = []
    while True:
        while not merger.done and merger.ready() < limit:
            i = merger.limiting()
            if i is None:
                break
            got = inputs[i][read[i] : read[i] + sizes[i]]
            parts, bad, bad_lines = chunk(i, streams[i], got, read[i] + 1)
            read[i] += len(got)
            merger.add(i, parts, bad, bad_lines, end_line=read[i],
                       exhausted=read[i] == len(inputs[i]))
        if merger.done and merger.ready() == 0:
            break
        taken = merger.take(limit)
        by_stream = dict(taken.batches)
        rows = {s: iter(b.position.tolist()) for s, b in by_stream.items()}
        good = [next(rows[s]) for s in taken.order.tolist()]
        assert all(next(r, None) is None for r in rows.values())  # each row once
        assert [by_stream[s].stream for s in by_stream] == [STREAMS[s] for s in by_stream]
        assert taken.bad_at.tolist() == sorted(taken.bad_at.tolist())
        seq = list(good)
        for k, (b, at) in enumerate(zip(taken.bad, taken.bad_at.tolist(), strict=True)):
            seq.insert(at + k, b.position)
        assert 0 < len(seq) <= limit
        out += [divmod(p, 1000) for p in seq]
        # the last line handed out of each input: where a resumed read starts
        assert merger.positions() == [max([ln for j, ln in out if j == i], default=0)
                                      for i in range(n)]
    assert out == expected(inputs, list(ranks))
    assert merger.positions() == [len(r) for r in inputs]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 3), limit=st.integers(1, 12))
def test_an_input_of_two_streams_leaves_in_merged_order(data: st.DataObject, n: int,
                                                        limit: int) -> None:
    """A recording's input holds both streams, their lines interleaved: ties between them
    are broken by line, however their runs lie (the merge sorts by key alone only where
    its runs already lie in rank and line order)."""
    inputs = [data.draw(records) for _ in range(n)]
    kinds = [[data.draw(st.integers(0, 1)) for _ in recs] for recs in inputs]
    ranks = list(data.draw(st.permutations(range(n))))
    merger = EventMerger(ranks)
    read = [0] * n
    out: list[tuple[int, int]] = []
    while not (merger.done and merger.ready() == 0):
        while not merger.done and merger.ready() < limit:
            i = merger.limiting()
            if i is None:
                break
            got = range(read[i], min(read[i] + 5, len(inputs[i])))
            parts: dict[int, tuple[Batch, np.ndarray]] = {}
            for s in (0, 1):
                good = [k for k in got if kinds[i][k] == s and not inputs[i][k][1]]
                lines = np.array([k + 1 for k in good], dtype=np.int64)
                if good:
                    parts[s] = (Batch.build(STREAMS[s], n=len(good), position=1000 * i + lines,
                                            event_time=[inputs[i][k][0] for k in good]), lines)
            bad = [k + 1 for k in got if inputs[i][k][1]]
            read[i] = got.stop
            merger.add(i, parts, [BadRecord("bad", "", f"in{i}", 1000 * i + ln, b"")
                                  for ln in bad], bad, end_line=read[i],
                       exhausted=read[i] == len(inputs[i]))
        taken = merger.take(limit)
        rows = {s: iter(b.position.tolist()) for s, b in taken.batches}
        seq = [next(rows[s]) for s in taken.order.tolist()]
        for k, (b, at) in enumerate(zip(taken.bad, taken.bad_at.tolist(), strict=True)):
            seq.insert(at + k, b.position)
        out += [divmod(p, 1000) for p in seq]
    assert out == expected(inputs, ranks)
