"""Held feature rows come back as they went in: the matrices :meth:`PendingFeatures.take`
returns hold the same values as stacking the popped columns did."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.labels.features import PendingFeatures
from driftwatch.schema import FeatureSchema


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_num=st.integers(0, 3), n_cat=st.integers(0, 2))
def test_taken_rows_are_the_rows_held(seed: int, n_num: int, n_cat: int) -> None:
    rng = np.random.default_rng(seed)
    schema = FeatureSchema(numeric=tuple(f"x{j}" for j in range(n_num)),
                           categorical=tuple(f"c{j}" for j in range(n_cat)),
                           levels=tuple(("a", "b") for _ in range(n_cat)))
    store = PendingFeatures(schema, capacity=10_000)
    n = int(rng.integers(0, 60))
    ids = [f"k{i}" for i in rng.permutation(200)[:n]]
    num = rng.normal(size=(n, n_num))
    num[rng.uniform(size=num.shape) < 0.1] = np.nan
    cat = rng.integers(-1, 2, size=(n, n_cat)).astype(np.int32)
    b = Batch.build("predictions", n=n, n_numeric=n_num, n_categorical=n_cat, ids=ids,
                    numeric=num, categorical=cat, event_time=np.arange(float(n)))
    store.add(b)
    want = rng.permutation(np.concatenate([b.keys, np.arange(5, dtype=np.uint64)]))
    found, got_num, got_cat = store.take(want)
    at = {int(k): i for i, k in enumerate(b.keys)}
    rows = [at[int(k)] for k in want[found]]
    assert found.sum() == n and len(store) == 0
    assert got_num.shape == (n, n_num) and got_num.dtype == np.float64
    assert got_cat.shape == (n, n_cat) and got_cat.dtype == np.int32
    np.testing.assert_array_equal(got_num, num[rows].reshape(n, n_num))
    np.testing.assert_array_equal(got_cat, cat[rows].reshape(n, n_cat))
