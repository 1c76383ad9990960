"""Business and performance signals, their bounds against exact computations, and the
metric change tracker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from driftwatch.batch import Batch
from driftwatch.detectors.business import business_signals
from driftwatch.detectors.config import DetectorConfig, alarm
from driftwatch.detectors.performance import (
    Discrimination,
    calibration,
    discrimination,
    discrimination_rows,
    performance_signals,
)
from driftwatch.detectors.prepared import prepare
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

N_REF = 40_000


def _population(rng: np.random.Generator, n: int, default_mult: float = 1.0):
    z = rng.normal(-2.2, 0.9, n)
    pd_ = 1 / (1 + np.exp(-z))
    label = (rng.uniform(size=n) < np.clip(pd_ * default_mult, 0, 1)).astype(float)
    decision = np.where(pd_ < 0.25, 1, 0)
    exposure = rng.lognormal(9, 0.6, n)
    return pd_, label, decision, exposure


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    s, y, d, e = _population(np.random.default_rng(0), N_REF)
    df = pd.DataFrame({"x": s, "score": s, "label": y,
                       "decision": np.where(d == 1, "approve", "decline"), "exposure": e})
    return ReferenceProfile.build(df, numeric=["x"], exposure="exposure")


def _window(prof, n: int, seed: int, default_mult: float = 1.0, metrics=None) -> Sketch:
    s, y, d, e = _population(np.random.default_rng(seed), n, default_mult)
    sk = Sketch.empty(prof.layout)
    sk.add_batch(Batch.build("predictions", n=n, n_numeric=1, numeric=s[:, None], score=s,
                             decision=d, exposure=e, metrics=metrics or {}))
    ok = d == 1  # only approved applications get outcomes
    sk.add_labelled(s[ok], y[ok], e[ok])
    return sk


def _by(res):
    return {r.signal: r for r in res}


# -- discrimination from histograms vs exact ----------------------------------------------
@pytest.mark.parametrize("n,shape", [(3_000, 1.0), (20_000, 2.0), (500, 0.5)])
def test_auc_within_documented_bound_of_exact_rank_auc(prof, n, shape) -> None:
    rng = np.random.default_rng(n)
    s = 1 / (1 + np.exp(-rng.normal(-2.2, 0.9 * shape, n)))
    y = rng.uniform(size=n) < s
    fine = [prof.layout.score.count(s[y == c][:, None])[0][0] for c in (False, True)]
    d = discrimination(fine[0], fine[1])
    exact = stats.mannwhitneyu(s[y], s[~y]).statistic / (y.sum() * (~y).sum())
    assert abs(d.auc - exact) <= d.auc_bound + 1e-12
    assert d.auc_bound < 0.01
    assert d.gini == pytest.approx(2 * d.auc - 1)
    ks_exact = stats.ks_2samp(s[y], s[~y]).statistic
    assert d.ks <= ks_exact + 1e-12 <= d.ks + d.ks_bound + 2e-12


def _one_window_discrimination(good: np.ndarray, bad: np.ndarray) -> Discrimination:
    """``discrimination`` as it was written for one window (frozen copy)."""
    g = np.asarray(good[:-1], dtype=np.float64)
    b = np.asarray(bad[:-1], dtype=np.float64)
    ng, nb = g.sum(), b.sum()
    if ng == 0 or nb == 0:
        return Discrimination(np.nan, np.nan, np.nan, np.nan, int(ng), int(nb))
    g_below = g.cumsum() - g
    pairs = ng * nb
    auc = float((b * (g_below + g / 2)).sum() / pairs)
    bound = float((b * g).sum() / (2 * pairs))
    gs, bs = g / ng, b / nb
    ks = float(np.abs(gs.cumsum() - bs.cumsum()).max())
    ks_bound = float(np.minimum(gs, bs).max())
    return Discrimination(auc, bound, ks, ks_bound, int(ng), int(nb))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 6), width=st.sampled_from([2, 3, 17, 201]),
       seed=st.integers(0, 10_000), expected=st.booleans(),
       empty=st.sampled_from([None, "good", "bad"]))
def test_rows_of_stacked_windows_have_the_bits_of_one_window(k, width, seed, expected,
                                                             empty) -> None:
    """Counts, or expected counts (fractions, as the label-free estimate passes them):
    each row of one stacked pass, and ``discrimination`` itself, give the one-window
    code's bits."""
    rng = np.random.default_rng(seed)
    good = rng.integers(0, 400, (k, width)).astype(np.int64)
    bad = rng.integers(0, 40, (k, width)).astype(np.int64)
    if expected:
        good, bad = good * rng.uniform(size=(k, width)), bad * rng.uniform(size=(k, width))
    if empty is not None:
        (good if empty == "good" else bad)[0, :-1] = 0  # one window without that class
    rows = discrimination_rows(good, bad)
    for j in range(k):
        want = repr(_one_window_discrimination(good[j], bad[j]))
        assert repr(rows[j]) == want  # repr spells every float to its last bit
        assert repr(discrimination(good[j], bad[j])) == want


def test_auc_from_histograms_is_exact_without_ties_inside_bins() -> None:
    good = np.array([5, 3, 0, 0, 0])
    bad = np.array([0, 0, 2, 4, 0])
    assert discrimination(good, bad).auc == 1.0
    assert discrimination(good, bad).auc_bound == 0.0


def test_calibration_interval_and_test_match_scipy_binomial() -> None:
    c = calibration(n_bad=18, n=300, pd_sum=9.0, alpha=0.05)
    assert c.ratio == 2.0
    ci = stats.binomtest(18, 300).proportion_ci(0.95, method="exact")
    assert c.ci_low == pytest.approx(ci.low / 0.03) and c.ci_high == pytest.approx(ci.high / 0.03)
    assert c.p_value == pytest.approx(stats.binomtest(18, 300, 0.03, alternative="greater").pvalue)


# -- window-level signals ------------------------------------------------------------------
def test_stable_window_flags_nothing(prof) -> None:
    cur = _window(prof, 20_000, 1)
    res = business_signals(prepare(prof), cur, DetectorConfig()) + performance_signals(
        prepare(prof).disc, prepare(prof).calibration_ratio, cur, DetectorConfig(), n_ref=1)
    by = _by(res)
    assert [r.signal for r in res if alarm(r)] == []
    assert by["approval_rate"].details["outside_band"] is False
    for name in ("auc", "gini", "ks_score"):
        assert by[name].value > by[name].threshold  # a floor: not below it
        assert by[name].details["bound"] < 0.02


def test_values_equal_direct_computations(prof) -> None:
    s, y, d, e = _population(np.random.default_rng(2), 10_000)
    cur = _window(prof, 10_000, 2, metrics={"latency_ms": np.arange(10_000.0)})
    by = _by(business_signals(prepare(prof), cur, DetectorConfig()))
    assert by["approval_rate"].value == np.mean(d == 1)
    ok = d == 1
    assert by["bad_rate"].value == np.mean(y[ok])
    assert by["bad_rate"].n_cur == ok.sum()
    assert by["expected_loss"].value == pytest.approx(np.sum(s * e) / np.sum(e), rel=1e-12)
    assert by["expected_loss"].details["observed_loss_rate"] == pytest.approx(
        np.sum(e[ok] * y[ok]) / np.sum(e[ok]), rel=1e-12)
    assert by["metric"].feature == "latency_ms" and by["metric"].value == 4999.5
    _, y_ref, d_ref, _ = _population(np.random.default_rng(0), N_REF)
    assert by["bad_rate"].details["reference"] == np.mean(y_ref[d_ref == 1])  # approved only


def test_concept_drift_breaks_calibration_early_not_discrimination(prof) -> None:
    """Same applicants default 1.6x more: a partially matured cohort of 1,500 outcomes
    already shows it in calibration and bad rate, while AUC stays."""
    cur = _window(prof, 2_000, 3, default_mult=1.6)
    by = _by(performance_signals(prepare(prof).disc, prepare(prof).calibration_ratio, cur,
                                 DetectorConfig(), n_ref=1))
    cal = by["calibration_ratio"]
    assert cal.exceeds and cal.p_value < 1e-3 and cal.details["ci_low"] > 1.0
    assert not alarm(by["auc"]) and not alarm(by["gini"])
    assert _by(business_signals(prepare(prof), cur, DetectorConfig()))["bad_rate"].exceeds


def test_approval_rate_from_score_cutoff_when_no_decision(prof) -> None:
    s = np.random.default_rng(4).uniform(0, 0.5, 5_000)
    sk = Sketch.empty(prof.layout)
    sk.add_batch(Batch.build("predictions", n=len(s), n_numeric=1, numeric=s[:, None], score=s))
    cut = float(prof.layout.score.fine_edges[0][100])  # a fine edge: exact
    by = _by(business_signals(prepare(prof), sk, DetectorConfig(approval_cutoff=cut)))
    assert by["approval_rate"].value == pytest.approx(np.mean(s <= cut), abs=1e-12)
    assert by["approval_rate"].details["source"] == "cutoff"
    assert "approval_rate" not in _by(business_signals(prepare(prof), sk, DetectorConfig()))
