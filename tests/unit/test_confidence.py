"""Confidence signals against numpy on the raw scores, and their intervals' coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.detectors.confidence import confidence_signals, log_variance_se
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.prepared import prepare
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

N_REF = 50_000


def _scores(rng: np.random.Generator, n: int, spread: float = 1.0) -> np.ndarray:
    """Scorecard-like PDs: logistic of a normal score, mean PD about 0.1."""
    z = rng.normal(-2.4, 0.8, n)
    return 1 / (1 + np.exp(-(z.mean() + spread * (z - z.mean()))))


@pytest.fixture(scope="module")
def ref_scores() -> np.ndarray:
    return _scores(np.random.default_rng(0), N_REF)


@pytest.fixture(scope="module")
def prof(ref_scores) -> ReferenceProfile:
    return ReferenceProfile.build(pd.DataFrame({"x": ref_scores, "score": ref_scores}),
                                  numeric=["x"])


def _sketch(prof: ReferenceProfile, s: np.ndarray) -> Sketch:
    sk = Sketch.empty(prof.layout)
    sk.add_batch(Batch.build("predictions", n=len(s), n_numeric=1, numeric=s[:, None], score=s))
    return sk


def _by(res):
    return {r.signal: r for r in res}


def test_values_equal_numpy_on_raw_scores(prof, ref_scores) -> None:
    cur = _scores(np.random.default_rng(1), 8_000, spread=1.3)
    res = _by(confidence_signals(prepare(prof), _sketch(prof, cur), DetectorConfig()))
    assert res["variance_ratio"].value == pytest.approx(
        np.var(cur, ddof=1) / np.var(ref_scores, ddof=1), rel=1e-9)
    assert res["mean_shift"].value == pytest.approx(
        (cur.mean() - ref_scores.mean()) / np.std(ref_scores, ddof=1), rel=1e-9)
    h = -(cur * np.log(cur) + (1 - cur) * np.log1p(-cur))
    assert res["entropy"].value == pytest.approx(h.mean(), rel=1e-12)
    h_ref = -(ref_scores * np.log(ref_scores) + (1 - ref_scores) * np.log1p(-ref_scores))
    assert res["entropy"].details["reference"] == pytest.approx(h_ref.mean(), rel=1e-12)
    assert all(r.group == "confidence" and r.feature is None for r in res.values())


def test_score_psi_equals_plain_numpy_on_reference_deciles(prof, ref_scores) -> None:
    cur = _scores(np.random.default_rng(2), 8_000, spread=1.3)
    res = _by(confidence_signals(prepare(prof), _sketch(prof, cur), DetectorConfig()))
    inner = prof.layout.score.coarse_edges[0]

    def shares(x):
        c = np.bincount(np.searchsorted(inner, x, side="left"), minlength=len(inner) + 1)
        p = np.maximum(np.append(c, 0) / len(x), 1e-4)
        return p / p.sum()

    e, a = shares(ref_scores), shares(cur)
    assert res["score_psi"].value == pytest.approx(np.sum((a - e) * np.log(a / e)), abs=1e-12)
    assert res["score_psi"].details["top_bins"][0]["bin"] in (
        prepare(prof).score_geo.coarse_labels[0][0], prepare(prof).score_geo.coarse_labels[0][9])


def test_variance_doubling_is_flagged_with_interval_above_one() -> None:
    rng = np.random.default_rng(3)
    ref = rng.normal(0.4, 0.07, N_REF)
    prof = ReferenceProfile.build(pd.DataFrame({"x": ref, "score": ref}), numeric=["x"])
    cur = rng.normal(0.4, 0.07 * np.sqrt(2.0), 5_000)  # same mean, twice the variance
    res = _by(confidence_signals(prepare(prof), _sketch(prof, cur), DetectorConfig()))
    vr = res["variance_ratio"]
    assert vr.exceeds and vr.details["ci_low"] > 1.5 and vr.p_value < 1e-12
    assert vr.details["ci_low"] < vr.value < vr.details["ci_high"]
    assert vr.value == pytest.approx(2.0, rel=0.1)
    assert not res["mean_shift"].exceeds


def test_variance_ratio_interval_covers_one_at_its_level_on_stable_windows(prof) -> None:
    """Non-normal scores: the kurtosis-aware interval keeps its coverage."""
    cfg = DetectorConfig(alpha=0.1)
    rng = np.random.default_rng(4)
    covered = flagged = 0
    windows = 300
    for _ in range(windows):
        res = _by(confidence_signals(prepare(prof), _sketch(prof, _scores(rng, 2_000)), cfg))
        vr = res["variance_ratio"]
        covered += vr.details["ci_low"] <= 1.0 <= vr.details["ci_high"]
        flagged += vr.exceeds or res["mean_shift"].exceeds
    assert 0.85 <= covered / windows <= 0.95  # nominal 0.90
    assert flagged == 0


def test_log_variance_se_is_the_f_distribution_width_for_normal_scores() -> None:
    from scipy import stats

    n = 5_000
    se = log_variance_se(3.0, n, n)
    lo, hi = stats.f.ppf([0.025, 0.975], n - 1, n - 1)
    assert np.log(hi) / 1.959964 == pytest.approx(se, rel=0.01)
    assert np.log(lo) / -1.959964 == pytest.approx(se, rel=0.01)


def test_tiny_windows_return_no_moment_signals(prof) -> None:
    res = _by(confidence_signals(prepare(prof), _sketch(prof, np.array([0.2])), DetectorConfig()))
    assert set(res) == {"score_psi"}
