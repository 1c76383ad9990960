"""The poll's row lookup (:class:`~driftwatch.pipeline.intake._KeyRows`) finds the first
row of each key that is there, as the sorted lookup it replaced did, with or without the
compiled hash loops; a key that is not there gets a row in range."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.pipeline import intake
from driftwatch.pipeline.intake import _KeyRows


def _sorted_rows(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    order = np.argsort(keys, kind="stable")
    pos = np.searchsorted(keys[order], wanted)
    return order[np.minimum(pos, len(keys) - 1)]


@settings(max_examples=150, deadline=None)
@given(keys=st.lists(st.integers(0, 60), min_size=1, max_size=300),
       wanted=st.lists(st.integers(0, 80), max_size=200),
       scale=st.sampled_from([1, 2**40 + 7]), compiled=st.booleans())
def test_first_rows_of_present_keys_as_a_sort_finds_them(keys, wanted, scale,
                                                         compiled) -> None:
    with pytest.MonkeyPatch.context() as mp:
        if not compiled:
            mp.setattr(intake, "hash_compiled", lambda: None)
        _check(np.array(keys, dtype=np.uint64) * np.uint64(scale),
               np.array(wanted, dtype=np.uint64) * np.uint64(scale))


def _check(k: np.ndarray, w: np.ndarray) -> None:
    rows = _KeyRows(k)
    got = np.concatenate([rows(w[: len(w) // 2]), rows(w[len(w) // 2 :])])
    here = np.isin(w, k)
    assert got.dtype.kind == "i" and got.shape == w.shape
    assert ((got >= 0) & (got < k.size)).all()
    np.testing.assert_array_equal(got[here], _sorted_rows(k, w)[here])
    assert (k[got[here]] == w[here]).all()


@settings(max_examples=150, deadline=None)
@given(keys=st.lists(st.integers(0, 40), min_size=1, max_size=200),
       keep=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1))
def test_joined_rows_are_the_first_rows_of_the_joined_keys(keys, keep, seed) -> None:
    k = np.array(keys, dtype=np.uint64)
    rng = np.random.default_rng(seed)
    uniq = np.unique(k, return_index=True)[1]
    first = np.sort(uniq[rng.uniform(size=uniq.size) < keep])  # what the joiner may give back
    joined = k[first].copy()
    got = intake._joined_rows(k, joined)
    np.testing.assert_array_equal(got, _KeyRows(k)(joined))
    np.testing.assert_array_equal(got, first)


def test_joined_rows_of_every_outcome_in_order_build_no_index(monkeypatch) -> None:
    def no_index(*args: object) -> None:
        raise AssertionError("an index was built")

    monkeypatch.setattr(_KeyRows, "_build", no_index)
    k = np.array([11, 5, 2**63 + 1, 8], dtype=np.uint64)
    assert intake._joined_rows(k, k).tolist() == [0, 1, 2, 3]
    assert intake._joined_rows(k, k.copy()).tolist() == [0, 1, 2, 3]
