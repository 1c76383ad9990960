"""The out-of-range count's null: against exact integer sums, and against what happens
when both samples are drawn alike."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.detectors.range_null import outside_isf, outside_sf


def _exact_sf(k: int, n: int, m: int) -> Fraction:
    """P(X >= k), summed term by term: (t + 1) C(n + m - 2 - t, m - 2) / C(n + m, m)."""
    if k <= 0:
        return Fraction(1)
    total = math.comb(n + m, m)
    return Fraction(sum((t + 1) * math.comb(n + m - 2 - t, m - 2) for t in range(k, n + 1)),
                    total)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 400), m=st.integers(2, 3_000), at=st.floats(0.0, 1.2))
def test_the_tail_is_the_exact_sum(n: int, m: int, at: float) -> None:
    k = int(at * n) + (at > 1.1)
    want = float(_exact_sf(k, n, m)) if k <= n else 0.0
    got = float(outside_sf(k, n, m))
    assert math.isclose(got, want, rel_tol=1e-8, abs_tol=1e-300), (k, n, m, got, want)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 3_000), m=st.integers(0, 100_000),
       q=st.sampled_from([0.05, 0.01, 0.001, 1e-6]))
def test_the_quantile_is_where_the_tail_falls_under_q(n: int, m: int, q: float) -> None:
    k = float(outside_isf(q, n, m))
    assert k == int(k) and 0 <= k <= n
    assert float(outside_sf(k + 1, n, m)) <= q  # P(X > k) <= q
    if k > 0:
        assert float(outside_sf(k, n, m)) > q  # and not so one lower


def test_a_range_of_fewer_than_two_values_says_nothing() -> None:
    assert outside_sf(np.array([0, 1, 5]), 5, 1).tolist() == [1.0, 1.0, 1.0]
    assert outside_sf(6, 5, 0).tolist() == 0.0
    assert float(outside_isf(0.01, 5, 1)) == 5
    assert np.isnan(outside_sf(1, -1, 10)) and np.isnan(outside_isf(0.01, 10, np.nan))


def test_samples_drawn_alike_leave_the_range_as_the_null_says() -> None:
    """Whatever the distribution: only ranks matter (the reference's range is a draw)."""
    rng = np.random.default_rng(3)
    n, m, runs = 40, 30, 20_000
    for draw in (rng.normal, rng.lognormal):
        ref, win = draw(size=(runs, m)), draw(size=(runs, n))
        lo, hi = ref.min(axis=1, keepdims=True), ref.max(axis=1, keepdims=True)
        out = ((win < lo) | (win > hi)).sum(axis=1)
        for k in (1, 3, 6, 10):
            p = float(outside_sf(k, n, m))
            seen = float((out >= k).mean())
            # four binomial standard errors of the simulated share
            assert abs(seen - p) <= 4 * math.sqrt(p * (1 - p) / runs) + 1e-4, (k, seen, p)


def _first_under(q: float, n: float, m: float) -> float:
    """The quantile by a scan of every ``k`` (no bisection, no bracket): the first whole
    ``k`` whose closed-form tail ``P(X > k)`` is at most ``q``."""
    if not (n >= 0 and m >= 0):
        return math.nan
    ks = np.arange(int(n) + 1, dtype=np.float64)
    return float(ks[np.flatnonzero(outside_sf(ks + 1, n, m) <= q)[0]])


@settings(max_examples=150, deadline=None)
@given(cells=st.lists(st.tuples(st.integers(-1, 2_000), st.integers(-1, 50_000)),
                      min_size=1, max_size=12),
       q=st.sampled_from([0.2, 0.05, 0.01, 0.001, 1e-6]))
def test_the_quantile_of_each_cell_is_the_first_k_a_scan_finds(
        cells: list[tuple[int, int]], q: float) -> None:
    """Arrays of windows' counts and references' sizes at once (as the quality detector
    asks), mixed with the cells that have no answer (negative sizes) and ranges that say
    nothing (fewer than two values): each the first k under q, found by a plain scan."""
    n = np.array([c[0] for c in cells], dtype=np.float64)
    m = np.array([c[1] for c in cells], dtype=np.float64)
    got = outside_isf(q, n, m)
    want = [_first_under(q, a, b) for a, b in cells]
    assert np.array_equal(got, np.array(want), equal_nan=True), (cells, got, want)
