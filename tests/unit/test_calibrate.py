"""Calibrated thresholds: the false-alarm rate holds at 100, 1k, 10k and 1M events."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats import false_discovery_control

from driftwatch.detectors.assess import assess
from driftwatch.detectors.calibrate import Calibrator, benjamini_hochberg
from driftwatch.detectors.config import DetectorConfig
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

ALPHA = 0.05
N_REF = 20_000
DISTS = [
    stats.norm(0, 1),
    stats.lognorm(0.6, scale=np.exp(10)),
    stats.poisson(3),
    stats.t(3),
    stats.norm(5, 2),
    stats.expon(),
    stats.gamma(2.0),
    stats.uniform(0, 1),
]
CAT_P = np.array([0.5, 0.3, 0.12, 0.05, 0.03])  # levels a..e; top 3 kept, d/e -> other
MISSING = 0.02  # in the first numeric feature


def _true_fine_mass(prof: ReferenceProfile) -> np.ndarray:
    """Population mass of every fine bin: CDF differences at the reference's edges."""
    lay = prof.layout.numeric
    out = np.zeros((len(DISTS), lay.fine_width))
    for j, (d, fe) in enumerate(zip(DISTS, lay.fine_edges, strict=True)):
        cdf = d.cdf(fe)
        m = np.diff(np.concatenate(([0.0], cdf, [1.0])))
        out[j, : len(m)] = m
    out[0, :-1] *= 1 - MISSING
    out[0, -1] = MISSING
    return out / out.sum(axis=1, keepdims=True)


def _true_cat_mass(prof: ReferenceProfile) -> np.ndarray:
    lay = prof.layout.categorical
    m = np.zeros((1, lay.width))
    m[0, :3] = CAT_P[:3]
    m[0, lay.other_col] = CAT_P[3:].sum()
    return m


@pytest.fixture(scope="module")
def setup() -> tuple[ReferenceProfile, Calibrator, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2024)
    cols = {f"x{j}": d.rvs(N_REF, random_state=rng).astype(float) for j, d in enumerate(DISTS)}
    cols["x0"][rng.uniform(size=N_REF) < MISSING] = np.nan
    cols["c"] = rng.choice(list("abcde"), N_REF, p=CAT_P)
    prof = ReferenceProfile.build(pd.DataFrame(cols), numeric=[f"x{j}" for j in range(8)],
                                  categorical=["c"], top_k=3)
    cal = Calibrator(prof, np.random.default_rng(11), rates=(ALPHA,), n_draws=1000)
    return prof, cal, _true_fine_mass(prof), _true_cat_mass(prof)


def _sketch(prof: ReferenceProfile, fine: np.ndarray, cat: np.ndarray, n: int) -> Sketch:
    s = Sketch.empty(prof.layout)
    s.num_fine, s.cat, s.n = fine, cat, n
    return s


STATS = ("psi", "js", "hellinger", "ks", "wasserstein", "kl_cur_ref", "cramers_v")


def _false_alarms(setup, n: int, windows: int, seed: int) -> dict[str, list[float]]:
    """Exceedances of the calibrated thresholds on windows drawn from the population.

    Each window pairs a fresh reference sample with a fresh current sample (both drawn
    as multinomial counts on the fine bins, not raw loops), as the null is defined.
    """
    prof, cal, p_num, p_cat = setup
    rng = np.random.default_rng(seed)
    cfg = DetectorConfig(detectors=("drift",), aggregate=())
    hits: dict[str, list[float]] = {s: [] for s in STATS}
    hits["psi_rule"] = []
    ref_f = rng.multinomial(N_REF, p_num, size=(windows, len(DISTS)))
    cur_f = rng.multinomial(n, p_num, size=(windows, len(DISTS)))
    ref_c = rng.multinomial(N_REF, p_cat, size=(windows, 1))
    cur_c = rng.multinomial(n, p_cat, size=(windows, 1))
    for t in range(windows):
        ref = ReferenceProfile(prof.schema, prof.layout, _sketch(prof, ref_f[t], ref_c[t], N_REF))
        a = assess(ref, _sketch(prof, cur_f[t], cur_c[t], n), model="m", window_id=t,
                   start_time=0.0, end_time=1.0, config=cfg, calibrator=cal)
        for s in a.signals:
            if s.signal in hits and s.feature != "c":
                hits[s.signal].append(s.value > s.details["threshold_calibrated"])
            if s.signal == "psi" and s.feature != "c":
                hits["psi_rule"].append(s.value > 0.1)
            if s.signal == "psi" and s.feature == "c":
                hits.setdefault("psi_categorical", []).append(
                    s.value > s.details["threshold_calibrated"]
                )
    return hits


@pytest.mark.parametrize("n", [100, 1_000, 10_000, 1_000_000])
def test_no_drift_windows_stay_below_calibrated_thresholds_at_alpha(setup, n) -> None:
    hits = _false_alarms(setup, n, windows=150, seed=n)
    for name in STATS:
        rate = float(np.mean(hits[name]))  # 1200 feature-windows per statistic
        assert 0.6 * ALPHA <= rate <= 1.4 * ALPHA, (name, rate)
    assert float(np.mean(hits["psi_categorical"])) <= ALPHA * 2.5  # 150 windows only
    if n == 100:  # the rule of thumb alarms on noise in small windows; calibration does not
        assert float(np.mean(hits["psi_rule"])) > 0.25


def test_thresholds_shrink_with_window_size_and_are_order_independent(setup) -> None:
    prof, cal, _, _ = setup
    t1k, t1m = cal.thresholds(1_000), cal.thresholds(1_000_000)
    assert np.all(t1k.numeric["psi"] > 5 * t1m.numeric["psi"])
    assert np.all(t1k.numeric["ks"] > t1m.numeric["ks"])
    other = Calibrator(prof, np.random.default_rng(11), rates=(ALPHA,), n_draws=1000)
    other.thresholds(1_000_000)  # other order, same seed: same values
    assert np.array_equal(other.thresholds(1_000).numeric["psi"], t1k.numeric["psi"])
    assert cal.thresholds(950).grid == t1k.grid == 939  # one grid size, resampled once
    assert Calibrator.grid_size(950) == Calibrator.grid_size(1_000) == 939


def test_psi_null_matches_its_chi_square_approximation(setup) -> None:
    """PSI ~ (1/n + 1/n_ref) chi2(k-1) under the null: a check on the resampling itself."""
    _, cal, _, _ = setup
    n = 5_000
    psi = cal.null_samples(n)["numeric"]["psi"][:, 1]  # lognormal income: 10 deciles + missing
    dof = 10 - 1  # the (empty) missing bin adds nothing
    scale = 1 / n + 1 / N_REF
    assert np.mean(psi) == pytest.approx(scale * dof, rel=0.1)


def test_benjamini_hochberg_matches_scipy_and_its_cut_reproduces_decisions() -> None:
    rng = np.random.default_rng(5)
    p = np.r_[rng.uniform(0, 0.002, 5), rng.uniform(0, 1, 40)]
    r = benjamini_hochberg(p, 0.05)
    assert np.allclose(r.adjusted, false_discovery_control(p), atol=1e-15)
    assert np.array_equal(r.rejected, r.adjusted <= 0.05)
    assert np.array_equal(r.rejected, p < r.p_cut)
    none = benjamini_hochberg(np.array([0.5, 0.9, np.nan]), 0.05)
    assert not none.rejected.any() and np.isnan(none.adjusted[2]) and none.p_cut == 0.025


def test_calibrator_rejects_too_few_draws_for_alpha(setup) -> None:
    from driftwatch.errors import ConfigError

    with pytest.raises(ConfigError):
        Calibrator(setup[0], np.random.default_rng(0), rates=(0.001,), n_draws=100)
