"""The fast bin counter agrees exactly with ``np.searchsorted`` binning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.windows.layout import CategoricalLayout, NumericLayout


def _expected(edges: np.ndarray, x: np.ndarray, width: int) -> np.ndarray:
    idx = np.searchsorted(edges, x, side="left")
    idx[np.isnan(x)] = width - 1
    return np.bincount(idx, minlength=width)


def _check(lay: NumericLayout, cur: np.ndarray) -> None:
    got, under, over = lay.count(cur)
    for j, e in enumerate(lay.fine_edges):
        x = cur[:, j]
        assert got[j].tolist() == _expected(e, x, lay.fine_width).tolist()
        assert under[j] == int((x < e[0]).sum())
        assert over[j] == int((x > e[-1]).sum())


@pytest.mark.parametrize("fine_bins", [10, 20, 50, 200])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("draws", [5_000, 40_000])  # small and large batches take two paths
def test_counts_equal_searchsorted_on_awkward_columns(
    fine_bins: int, seed: int, draws: int
) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    ref = np.column_stack(
        [
            rng.lognormal(10, 2, n),  # heavily skewed
            rng.normal(0, 1, n),
            rng.integers(0, 4, n).astype(float),  # discrete: values sit on edges
            np.r_[rng.normal(0, 1, n - 1), 1e9],  # one huge outlier sets the maximum
            rng.choice([0.0, 1.0, 2.5], n),
            np.full(n, 3.0),  # constant
        ]
    )
    lay = NumericLayout.fit(tuple("abcdef"), ref, fine_bins=fine_bins, coarse_bins=10)
    cur = np.concatenate(
        [
            ref[rng.integers(0, n, draws)],
            rng.normal(0, 1e5, (500, 6)),
            ref[:50] * (1 + 1e-16),
            np.full((3, 6), np.inf),
            np.full((3, 6), -np.inf),
        ]
    )
    cur[rng.random(cur.shape) < 0.05] = np.nan
    _check(lay, cur)


@settings(max_examples=40, deadline=None)
@given(
    ref=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60),
    cur=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e6, 1e6)),
        min_size=1,
        max_size=80,
    ),
)
def test_counts_equal_searchsorted_for_any_values(ref: list[float], cur: list[float]) -> None:
    lay = NumericLayout.fit(("x",), np.array(ref)[:, None], fine_bins=20, coarse_bins=10)
    _check(lay, np.array(cur)[:, None])


def test_coarse_edges_are_fine_edges() -> None:
    rng = np.random.default_rng(3)
    lay = NumericLayout.fit(("x",), rng.lognormal(0, 1, (10_000, 1)))
    assert set(lay.coarse_edges[0].tolist()) <= set(lay.fine_edges[0].tolist())
    assert len(lay.coarse_edges[0]) == 9  # deciles


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), columns=st.integers(1, 4), n=st.integers(0, 300),
       coarse_bins=st.sampled_from([2, 4, 10]))
def test_coarse_counts_are_the_values_counted_on_the_coarse_edges(
    seed: int, columns: int, n: int, coarse_bins: int
) -> None:
    """Coarse counts (one pass over every column at once) are what binning the values on
    each column's own coarse edges gives, and a stack of windows coarsens row by row."""
    rng = np.random.default_rng(seed)
    # columns of different spread and ties, so they get different numbers of bins
    ref = np.column_stack([rng.integers(0, 3 + 5 * j, 500).astype(float)
                           for j in range(columns)])
    lay = NumericLayout.fit(tuple(f"x{j}" for j in range(columns)), ref,
                            coarse_bins=coarse_bins, fine_bins=4 * coarse_bins)
    cur = rng.normal(5, 6, (n, columns))
    cur[rng.random((n, columns)) < 0.1] = np.nan
    fine, _, _ = lay.count(cur)
    got = lay.coarse(fine)
    assert got.shape == (columns, lay.coarse_width)
    for j, e in enumerate(lay.coarse_edges):
        want = _expected(e, cur[:, j], len(e) + 2)  # the bins, then missing
        assert got[j, : len(e) + 1].tolist() == want[:-1].tolist()
        assert got[j, -1] == want[-1]
        assert not got[j, len(e) + 1 : -1].any()  # padding
    stacked = lay.coarse(np.stack([fine, 3 * fine]))
    assert np.array_equal(stacked, np.stack([got, 3 * got]))
    assert lay.coarse(np.zeros((0, *fine.shape), dtype=np.int64)).shape == (
        0, columns, lay.coarse_width)


class _CountedLevels(tuple):  # type: ignore[type-arg]
    """Levels that count how often they are walked."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).walks += 1
        return super().__iter__()


def test_categorical_columns_walk_the_levels_once() -> None:
    # the quality detectors read other/unseen/missing columns several times a window
    levels = _CountedLevels((("a", "b"), ("x", "y", "z")))
    lay = CategoricalLayout(("p", "q"), levels)
    walks = _CountedLevels.walks
    cols = [(lay.other_col, lay.unseen_col, lay.missing_col, lay.width) for _ in range(3)]
    assert cols == [(3, 4, 5, 6)] * 3
    assert _CountedLevels.walks - walks == 1
