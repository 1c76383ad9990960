"""The key store against its frozen copy (``_old_key_store``): on the same random calls,
the same answers in the same order, and the same checkpoints.

Which row goes first among rows with the same time, and the order in which popped rows
come back, follow where rows sit in the store: a change in how rows are laid out or when
they are compacted would show here, not only in the set of rows returned.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.store import KeyStore, _union_sorted
from driftwatch.state import CheckpointStore

from . import _old_key_store as old

_COLS = {"score": np.float64, "decision": np.int8, "exposure": np.float64,
         "time": np.float64, "cohort": np.int64, "c0": np.int32}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        assert a[k].tobytes() == b[k].tobytes(), k


def _rows(rng: np.random.Generator, keys: np.ndarray, clock: float,
          disorder: float) -> dict[str, np.ndarray]:
    n = keys.size
    t = clock + np.sort(rng.uniform(0, 10, n))
    late = rng.uniform(size=n) < disorder
    t[late] -= rng.uniform(0, 50, int(late.sum()))
    t = np.round(t)  # ties
    t[rng.uniform(size=n) < disorder / 10] = np.nan
    return {"score": rng.uniform(size=n), "decision": rng.integers(0, 3, n).astype(np.int8),
            "exposure": rng.uniform(0, 1e4, n), "time": t,
            "cohort": rng.integers(-1, 9, n), "c0": rng.integers(-1, 5, n).astype(np.int32)}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), disorder=st.sampled_from([0.0, 0.05, 1.0]),
       big=st.booleans())
def test_the_store_answers_like_its_frozen_copy(seed: int, disorder: float, big: bool,
                                               tmp_path_factory) -> None:
    rng = np.random.default_rng(seed)
    new, ref = KeyStore(_COLS), old.KeyStore(_COLS)
    held: set[int] = set()
    clock = 0.0
    span = 40_000 if big else 3_000
    for step in range(150):
        op = int(rng.integers(0, 7))
        if op <= 2:
            n = int(rng.integers(1, 900 if big else 60))
            keys = np.unique(rng.integers(0, span, n).astype(np.uint64))
            keys = keys[~np.isin(keys, np.array(sorted(held), dtype=np.uint64))]
            rng.shuffle(keys)
            cols = _rows(rng, keys, clock, disorder)
            clock = max(clock, float(np.nanmax(cols["time"], initial=clock)))
            new.insert(keys, cols)
            ref.insert(keys, cols)
            held.update(keys.tolist())
        elif op == 3:
            keys = rng.integers(0, span, int(rng.integers(1, 600 if big else 40)))
            keys = keys.astype(np.uint64)  # repeats included
            (f1, r1), (f2, r2) = new.pop(keys), ref.pop(keys)
            assert f1.tolist() == f2.tolist()
            _same(r1, r2)
            held.difference_update(keys.tolist())
        elif op == 4:
            keys = rng.integers(0, span, 50).astype(np.uint64)
            (f1, r1), (f2, r2) = new.get(keys), ref.get(keys)
            assert f1.tolist() == f2.tolist()
            _same(r1, r2)
            assert new.contains(keys).tolist() == ref.contains(keys).tolist()
        elif op == 5:
            count = int(rng.integers(0, 400 if big else 30))
            g1, g2 = new.evict_oldest(count, "time"), ref.evict_oldest(count, "time")
            _same(g1, g2)
            held.difference_update(g1["key"].tolist())
        else:
            column = "time" if rng.uniform() < 0.8 else "score"
            limit = clock - float(rng.uniform(0, 60)) if column == "time" else rng.uniform()
            g1, g2 = new.pop_where_below(column, limit), ref.pop_where_below(column, limit)
            _same(g1, g2)
            held.difference_update(g1["key"].tolist())
        assert len(new) == len(ref)
        if step % 25 == 0:
            assert new.to_dict() == ref.to_dict()
    assert new.to_dict() == ref.to_dict()
    # a binary checkpoint of either store restores into the other with the same rows
    for a, b in ((new, ref), (ref, new)):
        store = CheckpointStore(tmp_path_factory.mktemp("cp"))
        store.save({"m": {"ks": a.to_dict(store.capture("m"))}}, now=0.0)
        back = type(b).from_dict(store.load().models["m"]["ks"])
        assert back.to_dict() == a.to_dict()
    back_new, back_ref = KeyStore.from_dict(ref.to_dict()), old.KeyStore.from_dict(new.to_dict())
    keys = np.arange(span, dtype=np.uint64)
    _same(back_new.get(keys)[1], back_ref.get(keys)[1])
    _same(back_new.evict_oldest(len(back_new) // 2, "time"),
          back_ref.evict_oldest(len(back_ref) // 2, "time"))


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 300)), st.sets(st.integers(0, 300)))
def test_the_union_of_sorted_rows_is_numpys(a: set[int], b: set[int]) -> None:
    x, y = np.array(sorted(a), dtype=np.int64), np.array(sorted(b), dtype=np.int64)
    got = _union_sorted(x, y)
    assert got.dtype == np.int64
    assert got.tolist() == np.union1d(x, y).tolist()
