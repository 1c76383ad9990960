"""The merger hands out the rows of its chunks whole and unchanged, every field of them,
however takes cut across chunks; and it keeps a chunk as it was added (a chunk is not
joined to the rows left before it: only a take that spans chunks copies its rows)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.merge import EventMerger

FIELDS = ("ids", "keys", "event_time", "position", "numeric", "categorical", "score",
          "model_version", "decision", "segment", "label", "exposure")


def _chunk(first: int, n: int) -> tuple[Batch, np.ndarray]:
    """Lines ``first``.. (``n`` of them) as a decoder gives them: column-major matrices,
    every field telling the line it came from; times rise, so every row may leave."""
    lines = np.arange(first, first + n, dtype=np.int64)
    x = lines.astype(np.float64)
    batch = Batch.build(
        "predictions", n=n, n_numeric=2, n_categorical=2,
        ids=np.array([f"id-{k}" for k in lines]), event_time=x, position=lines,
        numeric=np.asfortranarray(np.stack([x, -x], axis=1)),
        categorical=np.asfortranarray(np.stack([lines % 7, lines % 3], axis=1).astype(np.int32)),
        score=x / 1e4, model_version=np.array([f"v{k % 2}" for k in lines]),
        decision=(lines % 2).astype(np.int8), segment=np.array([f"s{k % 5}" for k in lines]),
        label=(lines % 2).astype(np.float64), exposure=x * 10,
    )
    return batch, lines


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(0, 9), min_size=1, max_size=6),
       limits=st.lists(st.integers(1, 12), min_size=1, max_size=6))
def test_rows_leave_whole_whatever_the_chunks_and_takes(sizes: list[int],
                                                       limits: list[int]) -> None:
    merger = EventMerger(ranks=[0])
    chunks, got, first = [], [], 1
    for k, n in enumerate(sizes):
        b, lines = _chunk(first, n)
        chunks.append(b)
        first += n
        merger.add(0, {0: (b, lines)} if n else {}, [], [], end_line=first - 1,
                   exhausted=k == len(sizes) - 1)
        taken = merger.take(limits[k % len(limits)])
        got += [b for _, b in taken.batches]
    while (taken := merger.take(limits[0])).batches:
        got += [b for _, b in taken.batches]
    assert merger.done and merger.positions() == [first - 1]
    want = [c for c in chunks if len(c)]
    for f in FIELDS:
        # the expected rows are the chunks' own, as built above
        mine = np.concatenate([getattr(b, f) for b in got]) if got else None
        if want:
            assert mine is not None
            assert np.array_equal(mine, np.concatenate([getattr(c, f) for c in want]))
        else:
            assert mine is None


def test_a_chunk_is_not_copied_when_the_next_one_comes() -> None:
    merger = EventMerger(ranks=[0])
    a, la = _chunk(1, 4)
    b, lb = _chunk(5, 4)
    merger.add(0, {0: (a, la)}, [], [], end_line=4, exhausted=False)
    first = merger.take(2).batches[0][1]
    merger.add(0, {0: (b, lb)}, [], [], end_line=8, exhausted=True)
    second = merger.take(2).batches[0][1]  # lines 3-4: still the first chunk's own rows
    assert second.position.tolist() == [3, 4]
    assert np.shares_memory(second.numeric, a.numeric)
    assert np.shares_memory(second.ids, a.ids)
    then = merger.take(3).batches[0][1]  # lines 5-7: the second chunk's own rows
    assert then.position.tolist() == [5, 6, 7]
    assert np.shares_memory(then.event_time, b.event_time)
    assert first.position.tolist() == [1, 2]
    assert merger.take(5).batches[0][1].position.tolist() == [8]
