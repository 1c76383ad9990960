"""KeyStore on its hash index: agrees with a dict model, FIFO eviction stays exact."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.hashindex import HashIndex
from driftwatch.labels.store import KeyStore
from driftwatch.state import CheckpointStore


def _model_evict(model: dict[int, tuple[float, float]], count: int) -> list[float]:
    return sorted(t for t, _ in model.values())[:count]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), disorder=st.sampled_from([0.0, 0.05, 1.0]))
def test_time_store_agrees_with_a_dict_model(seed: int, disorder: float) -> None:
    """Inserts in nearly rising time (a share of late rows), pops, evictions of the oldest
    and expiry below a time, against a dict: same rows, same times."""
    rng = np.random.default_rng(seed)
    store = KeyStore({"time": np.float64, "v": np.float64})
    model: dict[int, tuple[float, float]] = {}
    clock = 0.0
    for _ in range(120):
        op = rng.integers(0, 5)
        if op <= 1:
            n = int(rng.integers(1, 80))
            keys = np.unique(rng.integers(0, 5_000, n).astype(np.uint64))
            keys = keys[~np.isin(keys, np.array(list(model), dtype=np.uint64))]
            rng.shuffle(keys)
            t = clock + np.sort(rng.uniform(0, 10, keys.size))
            late = rng.uniform(size=keys.size) < disorder
            t[late] -= rng.uniform(0, 50, int(late.sum()))
            t = np.round(t)  # ties
            clock = float(t.max()) if t.size else clock
            v = rng.uniform(size=keys.size)
            store.insert(keys, {"time": t, "v": v})
            model.update(zip(keys.tolist(), zip(t.tolist(), v.tolist(), strict=True),
                             strict=True))
        elif op == 2:
            keys = rng.integers(0, 5_000, int(rng.integers(1, 40))).astype(np.uint64)
            keys = np.unique(keys)
            found, rows = store.pop(keys)
            expect = [k for k in keys.tolist() if k in model]
            assert found.tolist() == [k in model for k in keys.tolist()]
            assert rows["v"].tolist() == [model.pop(k)[1] for k in expect]
        elif op == 3:
            count = int(rng.integers(0, 30))
            want = _model_evict(model, count)
            gone = store.evict_oldest(count, "time")
            assert sorted(gone["time"].tolist()) == want
            for k, t in zip(gone["key"].tolist(), gone["time"].tolist(), strict=True):
                assert model.pop(k)[0] == t
        else:
            limit = clock - float(rng.uniform(0, 60))
            gone = store.pop_where_below("time", limit)
            want = sorted(k for k, (t, _) in model.items() if t < limit)
            assert sorted(gone["key"].tolist()) == want
            for k in want:
                model.pop(k)
        assert len(store) == len(model)
        probe = np.array(list(model)[:50], dtype=np.uint64)
        assert store.contains(probe).all()
    back = KeyStore.from_dict(store.to_dict())
    assert back.to_dict() == store.to_dict()
    keys = np.array(sorted(model), dtype=np.uint64)
    assert back.get(keys)[1]["time"].tolist() == [model[k][0] for k in sorted(model)]


def test_a_payload_sorted_by_key_is_read_back_in_time_order() -> None:
    """Checkpoints written before the hash index (rows sorted by key, no ``order``)."""
    keys = np.array([1, 2, 3, 4], dtype="<u8")
    t = np.array([40.0, 10.0, 30.0, 20.0])
    old = {"n": 4, "dtypes": {"time": "<f8"},
           "key": base64.b64encode(keys.tobytes()).decode(),
           "cols": {"time": base64.b64encode(t.tobytes()).decode()}}
    store = KeyStore.from_dict(old)
    assert store.evict_oldest(2, "time")["key"].tolist() == [2, 4]
    assert store.to_dict()["order"] == "arrival"


@settings(max_examples=30, deadline=None)
@given(keys=st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=3_000),
       drop=st.integers(0, 3_000))
def test_hash_index_maps_every_key_and_forgets_removed_ones(keys: list[int], drop: int):
    ix = HashIndex()
    k = np.array(keys, dtype=np.uint64)
    half = k.size // 2
    ix.insert(k[:half], np.arange(half))
    ix.insert(k[half:], np.arange(half, k.size))  # grows past its first table
    assert ix.lookup(k).tolist() == list(range(k.size))
    gone = k[: min(drop, k.size)]
    assert ix.remove(gone).tolist() == list(range(gone.size))
    assert (ix.lookup(gone) == -1).all() and len(ix) == k.size - gone.size
    assert ix.lookup(k[gone.size:]).tolist() == list(range(gone.size, k.size))
    ix.insert(gone, np.arange(gone.size) + 10**6)  # reuses tombstones
    assert ix.lookup(gone).tolist() == list(range(10**6, 10**6 + gone.size))


@pytest.mark.parametrize("holes", [False, True])
def test_a_restored_store_holds_the_same_rows_and_goes_on_like_the_original(tmp_path, holes):
    """Live rows in numbering order (oldest evicted: copied as one slice) or with holes
    (popped here and there: gathered)."""
    ks = KeyStore({"time": np.float64, "v": np.int32})
    keys = np.arange(1, 3001, dtype=np.uint64)
    ks.insert(keys, {"time": np.arange(3000.0), "v": keys.astype(np.int32)})
    ks.evict_oldest(500, "time")
    if holes:
        ks.pop(keys[1000:2000:3])
    store = CheckpointStore(tmp_path / "cp")
    store.save({"m": {"ks": ks.to_dict(store.capture("m"))}}, now=0.0)
    back = KeyStore.from_dict(CheckpointStore(tmp_path / "cp").load().models["m"]["ks"])
    assert back.to_dict() == ks.to_dict()
    for s in (ks, back):  # the same answers to the same calls from here on
        s.insert(np.arange(5000, 5100, dtype=np.uint64),
                 {"time": np.full(100, 10.0), "v": np.zeros(100, np.int32)})
    want, got = ks.get(keys), back.get(keys)
    assert np.array_equal(want[0], got[0]) and want[1]["v"].tolist() == got[1]["v"].tolist()
    assert ks.evict_oldest(700, "time")["key"].tolist() == \
        back.evict_oldest(700, "time")["key"].tolist()
    assert back.to_dict() == ks.to_dict()


@pytest.mark.parametrize("column", ["time", "v"])
def test_nothing_below_the_limit_leaves_the_index_alone(column: str) -> None:
    """An expiry that finds no row (the common case: a TTL checked every poll) returns
    empty typed columns without touching the index; one that finds rows removes them."""
    store = KeyStore({"time": np.float64, "v": np.int32})
    store.insert(np.array([7, 3, 9], dtype=np.uint64),
                 {"time": np.array([10.0, 20.0, 30.0]), "v": np.array([10, 20, 30])})
    calls: list[int] = []
    remove = store._index.remove
    store._index.remove = lambda keys: calls.append(keys.size) or remove(keys)  # type: ignore[method-assign]
    gone = store.pop_where_below(column, 10.0)
    assert calls == [] and len(store) == 3
    assert {k: (v.dtype, v.size) for k, v in gone.items()} == {
        "key": (np.dtype(np.uint64), 0), "time": (np.dtype(np.float64), 0),
        "v": (np.dtype(np.int32), 0)}
    gone = store.pop_where_below(column, 25.0)
    assert calls == [2] and gone["key"].tolist() == [7, 3] and len(store) == 1
    assert store.contains(np.array([7, 3, 9], dtype=np.uint64)).tolist() == [False, False, True]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), disorder=st.sampled_from([0.0, 0.05, 1.0]))
def test_a_compaction_leaves_the_running_maximum_and_late_rows_as_a_recount_finds_them(
        seed: int, disorder: float) -> None:
    """Rows kept in order reuse their times as the running maximum: only right when no
    row was late, which the recount of every kept row checks."""
    rng = np.random.default_rng(seed)
    s = KeyStore({"time": np.float64})
    next_key, clock = 0, 0.0
    for _ in range(30):
        n = int(rng.integers(1, 80))
        t = clock + np.sort(rng.uniform(0, 10, n))
        late = rng.uniform(size=n) < disorder
        t[late] -= rng.uniform(0, 50, int(late.sum()))
        clock = float(t.max())
        s.insert(np.arange(next_key, next_key + n, dtype=np.uint64), {"time": t})
        next_key += n
        s.pop(rng.integers(0, next_key, int(rng.integers(0, 60))).astype(np.uint64))
        if rng.uniform() < 0.3:
            s.compact()
            m = s._n
            t = s._cols["time"][:m]
            run = np.fmax.accumulate(np.concatenate(([-np.inf], t)))[1:]
            np.testing.assert_array_equal(s._cummax[:m], run)
            np.testing.assert_array_equal(s._late, np.flatnonzero(~(t >= run)))
