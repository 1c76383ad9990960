"""``SignalResult.exceeds`` reads a threshold in the signal's direction, as the policy does.

It said ``value > threshold`` for every signal, so an AUC that fell through its floor
(``auc`` 0.60 under 0.72) read ``exceeds: False`` in the Python API's signal table, and
an AUC that held up read ``True``; a score mean that fell (``mean_shift`` -0.3) never
exceeded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.business import business_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.performance import performance_signals
from driftwatch.detectors.prepared import prepare
from driftwatch.policy.catalog import DETECTORS
from driftwatch.policy.severity import crosses
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

_THRESHOLDED = sorted(n for n in DETECTORS if n != "approval_rate")
_finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(st.sampled_from(_THRESHOLDED), _finite, _finite)
def test_exceeds_agrees_with_the_policy_direction(signal: str, value: float, thr: float):
    if value == thr or (DETECTORS[signal].direction == "abs" and abs(value) == thr):
        return  # the policy's "at or past" and the detector's "past" differ only there
    r = SignalResult(signal, DETECTORS[signal].group, value, threshold=thr)
    assert r.exceeds == crosses(value, thr, DETECTORS[signal].direction)


def test_a_floor_is_crossed_from_above():
    assert SignalResult("auc", "performance", 0.60, threshold=0.72).exceeds
    assert not SignalResult("auc", "performance", 0.80, threshold=0.72).exceeds
    assert SignalResult("gini", "performance", 0.20, threshold=0.44).exceeds
    assert SignalResult("mean_shift", "confidence", -0.3, threshold=0.1).exceeds
    assert not SignalResult("psi", "drift", 0.05, threshold=0.25).exceeds


def test_no_threshold_or_no_value_never_exceeds():
    assert not SignalResult("auc", "performance", 0.1).exceeds
    assert not SignalResult("auc", "performance", float("nan"), threshold=0.7).exceeds


N_REF = 40_000


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    s = 1 / (1 + np.exp(-rng.normal(-2.2, 0.9, N_REF)))
    y = (rng.uniform(size=N_REF) < s).astype(float)
    df = pd.DataFrame({"x": s, "score": s, "label": y,
                       "decision": np.where(s < 0.25, "approve", "decline")})
    return ReferenceProfile.build(df, numeric=["x"])


def _window(prof, n: int, seed: int, *, informative: bool, approve_below: float = 0.25):
    rng = np.random.default_rng(seed)
    s = 1 / (1 + np.exp(-rng.normal(-2.2, 0.9, n)))
    # an uninformative score: outcomes drawn at the same rate whatever the score
    y = (rng.uniform(size=n) < (s if informative else np.full(n, s.mean()))).astype(float)
    d = (s < approve_below).astype(float)
    sk = Sketch.empty(prof.layout)
    sk.add_batch(Batch.build("predictions", n=n, n_numeric=1, numeric=s[:, None], score=s,
                             decision=d))
    sk.add_labelled(s, y, np.ones(n))
    return sk


def _by(res):
    return {r.signal: r for r in res}


def test_a_model_that_stopped_ranking_exceeds_its_auc_floor(prof):
    p = prepare(prof)

    def perf(sk):
        return _by(performance_signals(p.disc, p.calibration_ratio, sk, DetectorConfig(),
                                       n_ref=N_REF))

    good = perf(_window(prof, 20_000, 1, informative=True))
    lost = perf(_window(prof, 20_000, 2, informative=False))
    assert good["auc"].value > good["auc"].threshold and not good["auc"].exceeds
    assert lost["auc"].value < lost["auc"].threshold and lost["auc"].exceeds
    assert lost["gini"].exceeds and not good["gini"].exceeds


def test_approval_rate_exceeds_outside_its_band_both_ways(prof):
    cfg = DetectorConfig()
    same = _by(business_signals(prepare(prof), _window(prof, 20_000, 3, informative=True), cfg))
    for cut in (0.05, 0.9):  # approving far fewer, then far more, than the reference
        moved = _by(business_signals(prepare(prof),
                                     _window(prof, 20_000, 4, informative=True,
                                             approve_below=cut), cfg))
        assert moved["approval_rate"].exceeds
    assert not same["approval_rate"].exceeds
