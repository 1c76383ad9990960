"""Feature divergences against plain computations on raw data (same edges, same epsilon)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.spatial.distance import jensenshannon

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.bins import BinGeometry
from driftwatch.detectors.categorical import chi_square
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.distances import ks_fine, wasserstein_fine
from driftwatch.detectors.divergence import (
    DEFAULT_EPS,
    divergences,
    smoothed_shares,
)
from driftwatch.detectors.drift import aggregate_signals
from driftwatch.windows.layout import CategoricalLayout, NumericLayout


def _raw_data(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    """Income-like, normal, integer and heavy-tailed columns, some missing."""
    x = np.c_[
        rng.lognormal(10 + shift, 0.5, n),
        rng.normal(shift, 1, n),
        rng.poisson(2 + shift, n).astype(float),
        rng.standard_t(3, n) + shift,
    ]
    x[rng.uniform(size=n) < 0.03, 0] = np.nan
    x[rng.uniform(size=n) < 0.2 * (shift > 0), 3] = np.nan  # the current feed loses values
    return x


def _plain_shares(col: np.ndarray, inner_edges: np.ndarray, eps: float) -> np.ndarray:
    """What a validation analyst writes: deciles on reference edges + a missing bin."""
    fin = col[~np.isnan(col)]
    counts = np.bincount(np.searchsorted(inner_edges, fin, side="left"),
                         minlength=len(inner_edges) + 1).astype(float)
    counts = np.append(counts, np.isnan(col).sum())
    p = np.maximum(counts / counts.sum(), eps)
    return p / p.sum()


@pytest.fixture(scope="module")
def raw() -> tuple[np.ndarray, np.ndarray, NumericLayout]:
    rng = np.random.default_rng(42)
    ref, cur = _raw_data(rng, 50_000), _raw_data(rng, 20_000, shift=0.15)
    return ref, cur, NumericLayout.fit(("income", "z", "count", "t3"), ref)


@pytest.mark.parametrize("eps", [DEFAULT_EPS, 1e-3])
def test_psi_and_both_kls_equal_plain_numpy_on_same_edges(raw, eps) -> None:
    ref, cur, lay = raw
    geo = BinGeometry.of(lay)
    rc, cc = geo.coarse(lay.count(ref)[0]), geo.coarse(lay.count(cur)[0])
    d = divergences(rc, cc, lay.coarse_valid(), eps)
    for j, inner in enumerate(lay.coarse_edges):
        e = _plain_shares(ref[:, j], inner, eps)
        a = _plain_shares(cur[:, j], inner, eps)
        assert d.psi[j] == pytest.approx(np.sum((a - e) * np.log(a / e)), abs=1e-12)
        assert d.kl_cur_ref[j] == pytest.approx(np.sum(a * np.log(a / e)), abs=1e-12)
        assert d.kl_ref_cur[j] == pytest.approx(np.sum(e * np.log(e / a)), abs=1e-12)
        assert abs(d.psi[j] - d.kl_cur_ref[j] - d.kl_ref_cur[j]) < 1e-12


def test_js_and_hellinger_equal_scipy_and_formula_on_raw_shares(raw) -> None:
    ref, cur, lay = raw
    geo = BinGeometry.of(lay)
    rc, cc = geo.coarse(lay.count(ref)[0]), geo.coarse(lay.count(cur)[0])
    valid = lay.coarse_valid()
    d = divergences(rc, cc, valid)
    for j in range(len(lay.names)):
        e = rc[j][valid[j]] / rc[j].sum()
        a = cc[j][valid[j]] / cc[j].sum()
        assert d.js[j] == pytest.approx(jensenshannon(a, e, base=2), abs=1e-12)
        hel = np.sqrt(np.sum((np.sqrt(a) - np.sqrt(e)) ** 2) / 2)
        assert d.hellinger[j] == pytest.approx(hel, abs=1e-12)


def test_coarse_gather_equals_layout_coarse(raw) -> None:
    ref, _, lay = raw
    fine = lay.count(ref)[0]
    assert np.array_equal(BinGeometry.of(lay).coarse(fine), lay.coarse(fine))
    stacked = np.stack([fine, fine * 2])
    assert np.array_equal(BinGeometry.of(lay).coarse(stacked)[1], lay.coarse(fine * 2))


def test_empty_bin_gets_the_documented_floor_not_float_min() -> None:
    ref = np.array([[50, 50, 0]])
    cur = np.array([[0, 50, 50]])
    d = divergences(ref, cur, np.ones((1, 3), bool), eps=1e-4)
    e = np.array([0.5, 0.5, 1e-4]) / 1.0001
    a = np.array([1e-4, 0.5, 0.5]) / 1.0001
    assert d.psi[0] == pytest.approx(np.sum((a - e) * np.log(a / e)), abs=1e-12)
    assert 8 < d.psi[0] < 9  # bounded: float_info.min would give ~700
    assert smoothed_shares(ref, np.ones((1, 3), bool), 1e-4).sum() == pytest.approx(1.0)


def test_no_floor_no_change_textbook_value() -> None:
    ref, cur = np.array([[30, 40, 30]]), np.array([[20, 50, 30]])
    e, a = ref[0] / 100, cur[0] / 100
    d = divergences(ref, cur, np.ones((1, 3), bool))
    assert d.psi[0] == pytest.approx(np.sum((a - e) * np.log(a / e)), abs=1e-15)


def test_psi_is_symmetric_and_zero_on_identical() -> None:
    rng = np.random.default_rng(1)
    r, c = rng.integers(0, 100, (5, 11)), rng.integers(0, 100, (5, 11))
    v = np.ones((5, 11), bool)
    assert np.allclose(divergences(r, c, v).psi, divergences(c, r, v).psi, atol=1e-14)
    assert np.allclose(divergences(r, r, v).psi, 0.0, atol=1e-15)


def test_padding_is_masked() -> None:
    """A feature with 3 valid bins gives the same values padded to 6 columns."""
    r, c = np.array([[10, 20, 70]]), np.array([[30, 30, 40]])
    rp = np.array([[10, 20, 0, 0, 0, 70]])
    cp = np.array([[30, 30, 0, 0, 0, 40]])
    valid = np.array([[True, True, False, False, False, True]])
    a, b = divergences(r, c, np.ones((1, 3), bool)), divergences(rp, cp, valid)
    for name in ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger"):
        assert getattr(a, name)[0] == pytest.approx(getattr(b, name)[0], abs=1e-15)
    chi_a, chi_b = chi_square(r, c, np.ones((1, 3), bool)), chi_square(rp, cp, valid)
    assert chi_a.stat[0] == pytest.approx(chi_b.stat[0]) and chi_b.dof[0] == 2


def test_empty_window_gives_nan_not_zero() -> None:
    d = divergences(np.array([[5, 5]]), np.array([[0, 0]]), np.ones((1, 2), bool))
    assert np.isnan(d.psi[0]) and np.isnan(d.js[0])


def test_chi_square_equals_scipy_with_empty_columns_dropped() -> None:
    lay = CategoricalLayout(("purpose",), (("car", "home", "boat"),))
    ref = lay.count(np.repeat([0, 1, 2, -1], [500, 300, 150, 50])[:, None].astype(np.int32))
    cur = lay.count(np.repeat([0, 1, 2, 4, -1], [300, 300, 200, 40, 60])[:, None].astype(np.int32))
    res = chi_square(ref, cur, lay.valid())
    table = np.vstack([ref[0], cur[0]])
    table = table[:, table.sum(0) > 0]
    exp = stats.chi2_contingency(table, correction=False)
    assert res.stat[0] == pytest.approx(exp.statistic, rel=1e-12)
    assert res.p_value[0] == pytest.approx(exp.pvalue, rel=1e-9)
    assert res.dof[0] == exp.dof == 4
    assert res.cramers_v[0] == pytest.approx(np.sqrt(exp.statistic / table.sum()), rel=1e-12)


@pytest.mark.parametrize(
    "draw",
    [
        lambda r, n, s: r.normal(s, 1, n),
        lambda r, n, s: r.lognormal(s, 0.7, n),
        lambda r, n, s: r.poisson(3 + 3 * s, n).astype(float),
        lambda r, n, s: r.standard_t(2, n) * (1 + s),
    ],
    ids=["normal", "lognormal", "poisson", "t2-scale"],
)
@pytest.mark.parametrize("shift", [0.0, 0.3])
def test_ks_and_wasserstein_within_documented_bound_of_scipy(draw, shift) -> None:
    rng = np.random.default_rng(7)
    x, y = draw(rng, 20_000, 0.0), draw(rng, 8_000, shift)
    lay = NumericLayout.fit(("v",), x[:, None])
    geo = BinGeometry.of(lay)
    fx, fy = lay.count(x[:, None])[0], lay.count(y[:, None])[0]
    ks = ks_fine(fx, fy)
    exact = stats.ks_2samp(x, y).statistic
    assert ks.stat[0] <= exact + 1e-12
    assert exact <= ks.stat[0] + ks.bound[0] + 1e-12
    assert ks.bound[0] <= np.max(fx[0, :-1]) / x.size + 1e-12  # <= largest reference bin mass
    w = wasserstein_fine(fx, fy, geo.widths)
    y_in = np.clip(y, x.min(), x.max())  # documented: tails clipped to the reference range
    exact_w = stats.wasserstein_distance(x, y_in)
    assert abs(exact_w - w.stat[0]) <= w.bound[0] + 1e-12
    r = fx[0, :-1] / x.size
    c = fy[0, :-1] / y.size
    assert w.bound[0] <= np.sum(geo.widths[0] * (r + c)) + 1e-12


def test_ks_ignores_missing_values() -> None:
    x = np.r_[np.arange(100.0), [np.nan] * 50]
    lay = NumericLayout.fit(("v",), x[:, None], fine_bins=20, coarse_bins=10)
    f = lay.count(x[:, None])[0]
    assert ks_fine(f, f).stat[0] == 0.0


def test_aggregate_reports_max_weighted_mean_and_share_above() -> None:
    rs = [SignalResult("psi", "drift", v, f, 0.1) for f, v in (("a", 0.05), ("b", 0.3), ("c", 0.2))]
    cfg = DetectorConfig(aggregate=("psi",), weights={"b": 2.0})
    (agg,) = aggregate_signals(rs, cfg, 100, 50)
    assert agg.signal == "psi_aggregate" and agg.value == 0.3 and agg.feature is None
    assert agg.details["feature"] == "b"
    assert agg.details["share_above"] == pytest.approx(2 / 3)
    assert agg.details["above"] == ["b", "c"]
    assert agg.details["weighted_mean"] == pytest.approx((0.05 + 0.6 + 0.2) / 4)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.floats(0.0, 1e6), st.floats(1e-12, 1e-6)), min_size=1,
                       max_size=300))
def test_aggregate_mean_is_numpys_mean_to_the_last_bit(values: list[float]) -> None:
    """Up to 8 values numpy sums in order, past that pairwise: the mean is its own."""
    rs = [SignalResult("psi", "drift", v, f"f{i}") for i, v in enumerate(values)]
    (agg,) = aggregate_signals(rs, DetectorConfig(aggregate=("psi",)), 100, 50)
    assert agg.details["mean"] == float(np.mean(np.array(values)))
    assert agg.details["weighted_mean"] == agg.details["mean"]


def test_categorical_counts_match_pandas_value_counts() -> None:
    rng = np.random.default_rng(3)
    ref = pd.Series(rng.choice(["car", "home", "boat", None], 5000, p=[0.5, 0.3, 0.15, 0.05]))
    lay = CategoricalLayout(("p",), (("car", "home"),))
    codes = ref.map({"car": 0, "home": 1, "boat": 2}).fillna(-1).to_numpy(np.int32)[:, None]
    counts = lay.count(codes)[0]
    vc = ref.value_counts(dropna=False)
    assert counts[0] == vc["car"] and counts[1] == vc["home"]
    assert counts[lay.other_col] == vc["boat"] and counts[lay.missing_col] == ref.isna().sum()


def test_a_feature_without_a_valid_bin_has_no_divergence_and_no_warning() -> None:
    """A row whose mask holds no bin (a feature with no level) gives NaN for every
    divergence, quietly: numpy's 0/0 warning would reach the user's terminal."""
    ref = np.array([[5, 5, 0], [0, 0, 0]])
    cur = np.array([[3, 7, 0], [0, 0, 0]])
    valid = np.array([[True, True, False], [False, False, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        div = divergences(ref, cur, valid)
        smoothed = smoothed_shares(cur, valid)
    assert np.isfinite(div.psi[0]) and div.psi[0] > 0
    assert all(np.isnan(getattr(div, f)[1])
               for f in ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger"))
    assert np.isnan(smoothed[1]).all()
