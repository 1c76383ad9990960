"""The key filter never says "no" for a key added, says it for most others, sets the same
bits compiled or not; the label joiner that asks it first finds the same duplicates as
one that probes its stores for every key."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.labels import joiner as joiner_module
from driftwatch.labels.hashindex import compiled
from driftwatch.labels.joiner import LabelJoiner
from driftwatch.labels.keyfilter import KeyFilter
from driftwatch.labels.store import KeyStore


@settings(max_examples=80, deadline=None)
@given(keys=st.lists(st.integers(0, 2**64 - 1), max_size=300),
       small=st.lists(st.integers(0, 500), max_size=300), use_compiled=st.booleans())
def test_every_key_added_answers_maybe(keys, small, use_compiled) -> None:
    f = KeyFilter(capacity=64)
    f.use_compiled = use_compiled and compiled() is not None
    k = np.array(keys + small, dtype=np.uint64)
    f.add(k[: k.size // 2])
    f.add(k[k.size // 2 :])
    assert f.maybe(k).all()
    assert f.added == k.size


@pytest.mark.skipif(compiled() is None, reason="numba is not installed")
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000))
def test_compiled_and_numpy_filters_set_and_read_the_same_bits(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    fast, slow = KeyFilter(capacity=n), KeyFilter(capacity=n)
    slow.use_compiled = False
    fast.add(keys)
    slow.add(keys)
    np.testing.assert_array_equal(fast._words, slow._words)
    ask = np.concatenate([keys, rng.integers(0, 2**64 - 1, 2000, dtype=np.uint64)])
    np.testing.assert_array_equal(fast.maybe(ask), slow.maybe(ask))


@pytest.mark.parametrize("keys", [np.arange(20_000, dtype=np.uint64),
                                  np.arange(20_000, dtype=np.uint64) << np.uint64(20)])
def test_a_full_filter_turns_most_absent_keys_away(keys: np.ndarray) -> None:
    f = KeyFilter(capacity=keys.size)
    f.add(keys)
    assert not f.has_room(f.capacity - keys.size + 1)
    absent = keys + np.uint64(10**12)
    assert f.maybe(absent).mean() < 0.06  # 8 bits a key, two of them set


def _preds(ids, times) -> Batch:
    n = len(ids)
    return Batch.build("predictions", n=n, ids=[str(i) for i in ids], event_time=times,
                       score=np.linspace(0.01, 0.99, n), decision=np.ones(n, np.int8),
                       exposure=np.full(n, np.nan))


def _outs(ids, times) -> Batch:
    return Batch.build("outcomes", n=len(ids), ids=[str(i) for i in ids], event_time=times,
                       label=(np.arange(len(ids)) % 2).astype(float))


def _run(seed: int, restore_at: int) -> list[str]:
    rng = np.random.default_rng(seed)
    j = LabelJoiner(ttl_seconds=40.0, max_pending=60, remember_joined=50, max_orphans=30)
    seen: list[str] = []
    t = 0.0
    for step in range(40):
        if step == restore_at:  # a restart: the filter is built from the stores held
            j = LabelJoiner.from_dict(json.loads(json.dumps(j.to_dict())))
        t += 1.0
        ids = rng.integers(0, 150, int(rng.integers(0, 40)))
        if rng.uniform() < 0.6:
            got = j.add_predictions(_preds(ids, t + rng.uniform(-3, 0, ids.size)))
        else:
            got = j.add_outcomes(_outs(ids, t + rng.uniform(-3, 0, ids.size)))
        seen.append(json.dumps([got.keys.tolist(), got.label.tolist(), j.stats()]))
        j.expire(t)
    seen.append(json.dumps(j.to_dict(), sort_keys=True))
    return seen


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), restore_at=st.integers(0, 45))
def test_the_joiner_finds_the_duplicates_it_found_by_probing_every_key(seed, restore_at):
    fast = _run(seed, restore_at)
    with pytest.MonkeyPatch.context() as mp:  # a filter that lets every key through
        mp.setattr(joiner_module.KeyFilter, "maybe",
                   lambda self, keys: np.ones(np.asarray(keys).size, dtype=bool))
        slow = _run(seed, restore_at)
    assert fast == slow


def test_new_predictions_are_not_looked_up_in_the_stores(monkeypatch) -> None:
    j = LabelJoiner(ttl_seconds=1e9, max_pending=100_000)
    j.add_predictions(_preds(range(5000), np.arange(5000.0)))
    j.add_outcomes(_outs(range(2500), np.arange(2500.0) + 10))
    asked = []
    real = KeyStore.contains

    def counted(self, keys):
        asked.append(np.asarray(keys).size)
        return real(self, keys)

    monkeypatch.setattr(KeyStore, "contains", counted)
    j.add_predictions(_preds(range(4000, 9000), np.arange(4000.0, 9000.0)))
    assert j.duplicate_predictions == 1000  # 4000..4999, still pending
    assert j.backlog == 2500 + 4000
    assert sum(asked) < 2 * (1000 + 400)  # the 1000 held, and a few of the 4000 new
