"""The bare-ufunc binomial and beta quantiles give scipy.stats' numbers exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from driftwatch.detectors import exact

SHARES = st.one_of(st.sampled_from([0.0, 1.0, 1e-12, 0.5, 1 - 1e-9]),
                   st.floats(1e-8, 1.0), st.floats(0.0, 0.05))
QS = st.sampled_from([0.01, 0.005, 0.05, 0.001, 0.5, 1e-6, 0.995])


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@settings(max_examples=80, deadline=None)
@given(q=QS, n=st.lists(st.integers(0, 3_000_000), min_size=1, max_size=30),
       p=st.lists(SHARES, min_size=1, max_size=30))
def test_binom_isf_equals_scipy_stats(q: float, n: list[int], p: list[float]) -> None:
    m = min(len(n), len(p))
    nn, pp = np.array(n[:m], dtype=float), np.array(p[:m])
    exact._memo.clear()
    assert _same(exact.binom_isf(q, nn, pp), stats.binom.isf(q, nn, pp))
    assert _same(exact.binom_isf(q, nn, pp), stats.binom.isf(q, nn, pp))  # from the memo


@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 3_000_000), p=SHARES, frac=st.floats(-0.1, 1.1))
def test_binom_sf_equals_scipy_stats(n: int, p: float, frac: float) -> None:
    k = np.floor(frac * n) + np.array([-1.0, 0.0, 1.0])
    assert _same(exact.binom_sf(k, n, p), stats.binom.sf(k, n, p))


ODD = [float("nan"), float("inf"), -float("inf")]


@given(k=st.one_of(st.floats(-5, 50), st.sampled_from(ODD)),
       n=st.one_of(st.integers(0, 40).map(float), st.sampled_from([*ODD, -1.0, 2.5])),
       p=st.one_of(SHARES, st.sampled_from([-0.1, 1.1, float("nan")])))
def test_binom_sf_of_odd_arguments_is_scipys(k: float, n: float, p: float) -> None:
    # a NaN count, or an infinite n, read 0.3 and 1.0 here where scipy gives NaN
    with np.errstate(all="ignore"):
        want = stats.binom.sf(k, n, p)
    assert _same(exact.binom_sf(k, n, p), want)
    assert _same(exact.binom_sf_one(k, n, p), float(want))


@settings(max_examples=80, deadline=None)
@given(q=QS, a=st.integers(1, 200_000), b=st.integers(1, 2_000_000))
def test_beta_ppf_equals_scipy_stats(q: float, a: int, b: int) -> None:
    assert _same(exact.beta_ppf(q, a, b), stats.beta.ppf(q, a, b))


def test_invalid_arguments_give_nan_like_scipy() -> None:
    n, p = np.array([10.0, -1.0, 10.0, 2.5]), np.array([0.5, 0.5, 1.5, 0.5])
    assert _same(exact.binom_isf(0.01, n, p), stats.binom.isf(0.01, n, p))
    assert _same(exact.binom_sf(3, n, p), stats.binom.sf(3, n, p))


@pytest.mark.timeout(60)
def test_quantile_of_an_infinite_count_is_nan_like_scipy() -> None:
    # it used to bisect forever: the upper end of an infinite n never comes down
    n, p = np.array([10.0, np.inf]), np.array([0.3, 0.3])
    exact._memo.clear()
    assert _same(exact.binom_isf(0.05, n, p), stats.binom.isf(0.05, n, p))
    exact._memo.clear()
    assert np.isnan(exact.binom_isf_one(0.05, np.inf, 0.3))


@settings(max_examples=150, deadline=None)
@given(n=st.one_of(st.integers(0, 3_000_000), st.sampled_from([-1, 0, 1, 2])),
       p=st.one_of(SHARES, st.sampled_from([-0.1, 1.1, float("nan")])),
       frac=st.one_of(st.floats(-0.1, 1.1), st.sampled_from([float("nan"), float("inf")])),
       q=QS)
def test_one_value_forms_equal_the_array_forms(n: int, p: float, frac: float, q: float
                                               ) -> None:
    # the model-level signals read the scalar forms: the very numbers the arrays give
    k = frac * n if frac == frac and abs(frac) != float("inf") else frac
    assert _same(exact.binom_sf_one(k, n, p), float(exact.binom_sf(k, n, p)))
    if n >= 0 and 0 <= p <= 1:
        exact._memo.clear()
        one = exact.binom_isf_one(q, n, p)
        exact._memo.clear()
        assert _same(one, float(exact.binom_isf(q, n, p)))
    kk = float(np.clip(np.floor(k), -1, n + 1)) if k == k else k
    lo, hi = exact.clopper_pearson(kk, n, q)
    assert _same(np.array(exact.clopper_pearson_one(kk, n, q)), np.array([lo, hi]))


def _bits(x: float) -> bytes:
    return np.float64(x).tobytes()  # -0.0 and 0.0 differ here, as they do in a timeline


@settings(max_examples=400, deadline=None)
@given(q=st.one_of(QS, st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 1e-300, -0.1])),
       n=st.one_of(st.integers(0, 3_000_000), st.integers(0, 40),
                   st.sampled_from([-1.0, 2.5, float("nan"), float("inf")])),
       p=st.one_of(SHARES, st.sampled_from([-0.1, 1.1, float("nan"), 0.999])))
def test_scalar_quantile_takes_the_array_steps_to_the_bit(q: float, n: float, p: float
                                                          ) -> None:
    # binom_isf_one's misses take a float path: it must land where the array path does,
    # signed zeros included (an n of 0 clips a start of -0.0 to +0.0)
    with np.errstate(all="ignore"):  # a start past float range takes the array form
        want = float(exact._isf(q, np.array([float(n)]), np.array([p]))[0])
        assert _bits(exact._isf_one(q, float(n), p)) == _bits(want)


def test_scalar_quantile_keeps_the_sign_of_a_zero() -> None:
    for n, p in ((0.0, 0.3), (0.0, 0.0), (5.0, 0.0), (3.0, 1e-9)):
        want = float(exact._isf(0.01, np.array([n]), np.array([p]))[0])
        assert _bits(exact._isf_one(0.01, n, p)) == _bits(want)
