"""The label join's shortcuts for the common batch give what the general path gives: a
poll's few dense cohort ids, every row valid, one or two cohorts per batch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.cohort_sums import _kept, _time_spans
from driftwatch.labels.grouping import group_ids
from driftwatch.labels.hashindex import HashIndex, compiled
from driftwatch.labels.joiner import _Rows


@settings(max_examples=150, deadline=None)
@given(lo=st.integers(-(10**12), 10**12), span=st.integers(0, 4),
       size=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_dense_ids_group_as_np_unique_does(lo: int, span: int, size: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = lo + rng.integers(0, span + 1, size)
    ids[: min(span + 1, size)] = lo + np.arange(min(span + 1, size))  # every id, mostly
    keys, inverse, counts = group_ids(ids)
    want = np.unique(ids, return_inverse=True, return_counts=True)
    for got, exp in zip((keys, inverse, counts), want, strict=True):
        assert got.dtype == exp.dtype
        np.testing.assert_array_equal(got, exp.reshape(-1))


def _at(g: np.ndarray, t: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.full(groups, math.inf), np.full(groups, -math.inf)
    ok = np.isfinite(t)
    np.minimum.at(lo, g[ok], t[ok])
    np.maximum.at(hi, g[ok], t[ok])
    return lo, hi


@settings(max_examples=150, deadline=None)
@given(groups=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), size=st.integers(0, 60),
       holes=st.sampled_from([0.0, 0.3, 1.0]))
def test_time_spans_per_group_are_ufunc_at_min_and_max(groups: int, seed: int, size: int,
                                                       holes: float) -> None:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, size)
    t = np.round(rng.normal(1e9, 1e5, size))
    odd = rng.uniform(size=size) < holes
    t[odd] = rng.choice([np.nan, np.inf, -np.inf], int(odd.sum()))
    for got, want in zip(_time_spans(g, t, groups), _at(g, t, groups), strict=True):
        np.testing.assert_array_equal(got, want)


def test_rows_kept_whole_are_the_columns_themselves() -> None:
    col = np.arange(5.0)
    g = np.array([0, 1, 0, 1, 1])
    s, gg = _kept(g, col)
    assert s is col and gg is g
    s, gg = _kept(np.array([0, -1, 1, -1, 0]), col)
    assert s.tolist() == [0.0, 2.0, 4.0] and gg.tolist() == [0, 1, 0]


@settings(max_examples=100, deadline=None)
@given(mask=st.lists(st.booleans(), max_size=40), seed=st.integers(0, 2**32 - 1))
def test_picked_rows_take_what_nonzero_takes(mask: list[bool], seed: int) -> None:
    m = np.array(mask, dtype=bool)
    col = np.random.default_rng(seed).normal(size=m.size)
    rows = _Rows.where(m)
    np.testing.assert_array_equal(rows.take(col), col[np.nonzero(m)[0]])
    if m.all():
        assert rows.take(col) is col  # no copy of a column every row of which is valid
    pick = np.random.default_rng(seed).uniform(size=rows.size) < 0.5
    np.testing.assert_array_equal(rows.sub(pick).take(col), col[np.nonzero(m)[0][pick]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 300), unique=True, max_size=80), st.integers(0, 80))
def test_contains_is_a_lookup_that_finds_a_row(keys: list[int], drop: int) -> None:
    ix = HashIndex(capacity=16)
    k = np.array(keys, dtype=np.uint64)
    ix.insert(k, np.arange(k.size))
    ix.remove(k[:drop])
    ask = np.arange(0, 320, dtype=np.uint64)
    np.testing.assert_array_equal(ix.contains(ask), ix.lookup(ask) >= 0)


@pytest.mark.parametrize("use_compiled", [False, True])
def test_an_empty_table_answers_without_probing(monkeypatch, use_compiled: bool) -> None:
    ix = HashIndex(capacity=16)
    ix.use_compiled = use_compiled and compiled() is not None
    k = np.arange(1, 41, dtype=np.uint64)
    ix.insert(k, np.arange(k.size))
    ix.remove(k)  # every key gone: tombstones only

    def no_probe(*args: object) -> None:
        raise AssertionError("an empty table was probed")

    monkeypatch.setattr(HashIndex, "_slot", no_probe)
    if compiled() is not None:
        monkeypatch.setattr(compiled(), "probe", no_probe)
    ask = np.arange(0, 64, dtype=np.uint64)
    assert ix.lookup(ask).tolist() == [-1] * 64
    assert not ix.contains(ask).any()
    assert ix.remove(ask).tolist() == [-1] * 64 and len(ix) == 0
    assert ix.lookup(np.zeros(0, np.uint64)).size == 0
