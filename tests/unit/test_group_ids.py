"""Counting finds a batch's distinct ids, each row's place and their counts as np.unique
does, near ids or far."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.grouping import group_ids

_I64 = np.iinfo(np.int64)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-50, 50), max_size=300),
       base=st.sampled_from([0, -(10**12), 10**15, int(_I64.min) + 60, int(_I64.max) - 60]),
       far=st.lists(st.integers(int(_I64.min), int(_I64.max)), max_size=3))
def test_group_ids_equal_np_unique(values: list[int], base: int, far: list[int]) -> None:
    ids = np.array([base + v for v in values] + far, dtype=np.int64)
    keys, inverse, counts = group_ids(ids)
    want = np.unique(ids, return_inverse=True, return_counts=True)
    for got, exp in zip((keys, inverse, counts), want, strict=True):
        assert got.dtype == exp.dtype and got.shape == exp.reshape(-1).shape
        np.testing.assert_array_equal(got, exp.reshape(-1))
