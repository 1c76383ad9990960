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
