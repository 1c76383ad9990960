"""``Batch.build`` fills each column not given with its missing value, and makes nothing
for a column that is given (a decoder gives most: a poll's reader paid an n-row array
per column, at once thrown away)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from driftwatch.batch import DECISION_UNKNOWN, Batch


def test_columns_not_given_hold_their_missing_values() -> None:
    b = Batch.build("outcomes", n=3, n_numeric=2, n_categorical=1, ids=["a", "b", "c"],
                    label=[1.0, 0.0, np.nan])
    assert b.ids.tolist() == ["a", "b", "c"]
    assert np.isnan(b.label[2]) and b.label[:2].tolist() == [1.0, 0.0]
    assert b.position.tolist() == [0, 1, 2]
    for col in (b.event_time, b.score, b.exposure, b.numeric):
        assert np.isnan(col).all()
    assert b.numeric.shape == (3, 2) and b.categorical.tolist() == [[-1], [-1], [-1]]
    assert b.categorical.dtype == np.int32 and b.decision.dtype == np.int8
    assert b.decision.tolist() == [DECISION_UNKNOWN] * 3
    assert b.model_version.tolist() == b.segment.tolist() == ["", "", ""]
    assert b.keys.tolist() == Batch.build("x", n=3, ids=["a", "b", "c"]).keys.tolist()


def test_columns_given_are_taken_as_they_are_with_nothing_made_beside_them() -> None:
    n, f, g = 100_000, 8, 4
    rng = np.random.default_rng(3)
    given = dict(
        ids=np.array([f"id{i}" for i in range(n)]), keys=np.arange(n, dtype=np.uint64),
        event_time=rng.random(n), position=np.arange(n, dtype=np.int64),
        numeric=np.asfortranarray(rng.random((n, f))),
        categorical=np.asfortranarray(rng.integers(0, 5, (n, g)).astype(np.int32)),
        score=rng.random(n), model_version=np.full(n, "v1"),
        decision=np.ones(n, np.int8), segment=np.full(n, "s"), label=rng.random(n),
        exposure=rng.random(n),
    )
    tracemalloc.start()
    try:
        b = Batch.build("predictions", n=n, n_numeric=f, n_categorical=g, **given)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n  # bytes: less than one int8 column, let alone a float matrix
    for k, v in given.items():
        assert getattr(b, k) is v
