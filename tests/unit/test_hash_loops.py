"""The compiled hash loops answer every lookup and removal as the numpy rounds do, and
a batch's first copies of each key are found as a sort finds them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.hashindex import HashIndex, compiled, first_occurrences

pytestmark = pytest.mark.skipif(compiled() is None, reason="numba is not installed")


def _pair() -> tuple[HashIndex, HashIndex]:
    fast, slow = HashIndex(capacity=16), HashIndex(capacity=16)
    slow.use_compiled = False
    assert fast.use_compiled
    return fast, slow


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), universe=st.sampled_from([64, 5_000, 2**64 - 1]))
def test_compiled_and_numpy_indexes_agree_under_random_operations(seed: int,
                                                                  universe: int) -> None:
    rng = np.random.default_rng(seed)
    fast, slow = _pair()
    live: set[int] = set()
    next_row = 0
    for _ in range(60):
        op = rng.integers(0, 3)
        probe = rng.integers(0, universe, int(rng.integers(0, 300)), dtype=np.uint64,
                             endpoint=True)
        if live and rng.uniform() < 0.5:  # ask for present keys too, some of them twice
            have = np.array(sorted(live), dtype=np.uint64)
            probe = np.concatenate([probe, rng.choice(have, min(have.size, 200))])
        rng.shuffle(probe)
        if op == 0:  # insert new, unique keys
            new = np.unique(probe)
            new = new[~np.isin(new, np.array(sorted(live), dtype=np.uint64))]
            rng.shuffle(new)
            rows = np.arange(next_row, next_row + new.size)
            next_row += new.size
            fast.insert(new, rows)
            slow.insert(new, rows)
            live |= set(new.tolist())
        elif op == 1:
            np.testing.assert_array_equal(fast.remove(probe), slow.remove(probe))
            live -= set(probe.tolist())
        else:
            np.testing.assert_array_equal(fast.lookup(probe), slow.lookup(probe))
        assert len(fast) == len(slow) == len(live)
    everything = np.array(sorted(live), dtype=np.uint64)
    np.testing.assert_array_equal(fast.lookup(everything), slow.lookup(everything))
    assert (fast.lookup(everything) >= 0).all()


def test_renumbered_rows_read_alike() -> None:
    fast, slow = _pair()
    keys = np.arange(0, 3000, 3, dtype=np.uint64)
    for ix in (fast, slow):
        ix.insert(keys, np.arange(keys.size))
        ix.remove(keys[::2])
        ix.renumber(np.arange(keys.size)[::-1].copy())
    np.testing.assert_array_equal(fast.lookup(keys), slow.lookup(keys))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=200), st.sampled_from([1, 2**40 + 7]))
def test_first_occurrences_are_the_sorted_first_copies(values: list[int], scale: int) -> None:
    keys = np.array(values, dtype=np.uint64) * np.uint64(scale)
    _, want = np.unique(keys, return_index=True)
    want.sort()
    np.testing.assert_array_equal(first_occurrences(keys), want)
    np.testing.assert_array_equal(first_occurrences(keys, loops=None), want)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_compiled_rebuild_lays_out_the_table_as_reinserting_the_live_keys_does(seed: int):
    """The rebuild walks the old table in slot order, as gathering its live slots and
    inserting them did: the same table, slot for slot, and every key still found."""
    rng = np.random.default_rng(seed)
    ix = HashIndex(capacity=16)
    keys = np.unique(rng.integers(0, 2**64 - 1, 3000, dtype=np.uint64))
    rng.shuffle(keys)
    ix.insert(keys, np.arange(keys.size))
    gone = rng.choice(keys, keys.size // 3, replace=False)
    ix.remove(gone)
    used = ix._rows >= 0
    live_keys, live_rows = ix._keys[used], ix._rows[used]
    want = HashIndex(capacity=16)
    want._alloc(2 * (live_keys.size + 100))
    want.insert(live_keys, live_rows)
    ix._rebuild(100)
    assert ix.capacity == want.capacity and len(ix) == len(want) == live_keys.size
    assert ix._filled == want._filled
    np.testing.assert_array_equal(ix._rows, want._rows)
    np.testing.assert_array_equal(ix._keys[ix._rows >= 0], want._keys[want._rows >= 0])
    assert (ix.lookup(gone) == -1).all()
    np.testing.assert_array_equal(ix.lookup(live_keys), live_rows)
