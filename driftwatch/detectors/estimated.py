"""Before the labels arrive: bad rate and Gini a window should show if the champion's
calibration still holds (the idea of NannyML's CBPE), and the gap once labels come.

If the score ``p`` is a calibrated P(bad), a prediction is bad with probability ``p``, so
on a histogram of scores (counts ``n_k`` and summed P(bad) ``s_k`` per bin) the expected
bads of bin ``k`` are ``s_k`` and the expected goods ``n_k - s_k``:

* expected bad rate ``= Σ s_k / Σ n_k`` (the mean P(bad));
* expected AUC: the same pairs formula as the realised AUC
  (:func:`~driftwatch.detectors.performance.discrimination`) on those expected class
  histograms; Gini ``= 2 AUC - 1``.

A covariate shift moves both at once, in the window of the shift, with no label. Once the
cohort's outcomes arrive, the realised values on the same rows test the assumption:

* bad rate gap ``= realised - expected``; under calibration the bad count is
  Poisson-binomial with variance ``Σ p (1 - p)``, so ``se = sqrt(Σ p(1-p)) / n`` and the
  interval is ``gap ± z se`` (normal approximation, ``z`` at ``1 - alpha/2``);
* Gini gap ``= realised - expected``; ``se`` is the spread of the realised Gini of those
  rows under calibration, by a parametric bootstrap on the score bins
  (:func:`gini_null_sd`: each draw labels every bin's rows binomially at its mean P(bad);
  seeded, so the same cohort gives the same ``se``). Hanley–McNeil's formula lets the
  scores vary too; on ``benchmarks/cohort_estimates.py``'s calibrated cohorts it is 7–17%
  wider.

>>> import numpy as np
>>> n = np.array([100, 100, 0]); s = np.array([10.0, 50.0, 0.0])   # last column: missing
>>> e = expected_discrimination(n, s)
>>> round(expected_rate(n, s), 2), round(e.auc, 3), round(e.gini, 3)
(0.3, 0.738, 0.476)
>>> g = bad_rate_gap(n_bad=40, n=200, pd_sum=60.0, pq_sum=34.0, alpha=0.05)
>>> round(g.gap, 2), round(g.se, 4), g.ci_low < 0 < g.ci_high
(-0.1, 0.0292, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.identity_cache import IdentityCache
from driftwatch.detectors.performance import Discrimination, auc_se, discrimination
from driftwatch.detectors.prepared import PreparedReference

__all__ = [
    "Gap",
    "bad_rate_gap",
    "estimated_signals",
    "expected_discrimination",
    "expected_rate",
    "gini_gap",
    "gini_null_sd",
    "reference_expected",
]


def expected_rate(n: np.ndarray, pd_sum: np.ndarray) -> float:
    """Mean P(bad) of a score histogram (counts and summed P(bad) per bin; the last
    column is the missing score and is left out)."""
    k = float(np.sum(n[:-1]))
    return float(np.sum(pd_sum[:-1])) / k if k > 0 else math.nan


def expected_discrimination(n: np.ndarray, pd_sum: np.ndarray) -> Discrimination:
    """AUC and KS the histogram would show under calibration (expected class counts)."""
    n = np.asarray(n, dtype=np.float64)
    bad = np.asarray(pd_sum, dtype=np.float64)
    good = np.maximum(n - bad, 0.0)
    return discrimination(good, bad)


@dataclass(frozen=True, slots=True)
class Gap:
    """``realised - expected`` with its standard error, interval and two-sided p-value."""

    realised: float
    expected: float
    gap: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    z: float

    def details(self) -> dict[str, float]:
        return {"realised": self.realised, "expected": self.expected, "se": self.se,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "z": self.z}


def _gap(realised: float, expected: float, se: float, alpha: float) -> Gap:
    gap = realised - expected
    z = float(special.ndtri(1 - alpha / 2))
    if not (math.isfinite(gap) and se > 0):
        nan = math.nan
        return Gap(realised, expected, gap, se, nan, nan, nan, z)
    p = float(2 * special.ndtr(-abs(gap) / se))
    return Gap(realised, expected, gap, se, gap - z * se, gap + z * se, p, z)


def bad_rate_gap(*, n_bad: int, n: int, pd_sum: float, pq_sum: float, alpha: float) -> Gap:
    """Realised minus expected bad rate on the same ``n`` labelled rows."""
    if n <= 0:
        return _gap(math.nan, math.nan, math.nan, alpha)
    return _gap(n_bad / n, pd_sum / n, math.sqrt(max(pq_sum, 0.0)) / n, alpha)


def gini_null_sd(n: np.ndarray, pd_sum: np.ndarray, *, draws: int = 400, seed: int = 0) -> float:
    """Standard deviation of the Gini of rows with these scores if their labels follow
    the scores (each bin's rows bad with its mean P(bad)): a seeded parametric bootstrap.

    >>> n = np.array([500, 500, 0]); s = np.array([50.0, 150.0, 0.0])
    >>> sd = gini_null_sd(n, s)
    >>> sd == gini_null_sd(n, s), 0.01 < sd < 0.1  # seeded; a few Gini points
    (True, True)
    """
    k = np.asarray(n[:-1], dtype=np.int64)
    p = np.divide(np.asarray(pd_sum[:-1], dtype=np.float64), k, out=np.zeros(k.size),
                  where=k > 0)
    rng = np.random.default_rng(seed)
    bad = rng.binomial(k[None, :], np.clip(p, 0.0, 1.0)[None, :], size=(draws, k.size))
    good = k[None, :] - bad
    pairs = good.sum(axis=1) * bad.sum(axis=1)
    below = np.cumsum(good, axis=1) - good
    ok = pairs > 0
    if ok.sum() < 2:
        return math.nan
    auc = (bad * (below + good / 2)).sum(axis=1)[ok] / pairs[ok]
    return float(np.std(2 * auc - 1, ddof=1))


def gini_gap(realised: Discrimination, expected: Discrimination, alpha: float,
             se: float | None = None) -> Gap:
    """Realised minus expected Gini on the same labelled rows; ``se`` from
    :func:`gini_null_sd` (else twice Hanley–McNeil's, conservative)."""
    if se is None:
        se = 2 * auc_se(expected.auc, realised.n_good, realised.n_bad)
    return _gap(realised.gini, expected.gini, se, alpha)


def reference_expected(prep: PreparedReference) -> tuple[float, float]:
    """Expected bad rate and Gini of the reference's approved, labelled rows (its score
    histogram at the fine bins' midpoints), else of all its rows."""
    sk = prep.sketch
    counts = (sk.lab_score[0] + sk.lab_score[1]).astype(np.float64)
    if counts[:-1].sum() <= 0:
        counts = sk.score_fine[0].astype(np.float64)
    mid = np.asarray(prep.score_geo.mid[0], dtype=np.float64)
    k = min(mid.size, counts.size - 1)
    n = np.r_[counts[:k], 0.0]
    pd = np.r_[counts[:k] * np.clip(mid[:k], 0.0, 1.0), 0.0]
    return expected_rate(n, pd), expected_discrimination(n, pd).gini


#: :func:`reference_expected` by prepared reference (a few: references change rarely).
_REFERENCE = IdentityCache(capacity=4)


def _num(x: float) -> float:
    """``x``, or the one ``math.nan`` (details compare equal across runs)."""
    return float(x) if math.isfinite(x) else math.nan


def estimated_signals(
    prep: PreparedReference,
    n: np.ndarray,
    pd_sum: np.ndarray,
    cfg: DetectorConfig,
) -> list[SignalResult]:
    """``expected_bad_rate`` and ``expected_gini`` of a window's held (approved)
    predictions, against the reference's own expected values (details carry the
    reference's realised ones too). Nothing when the window has no scored prediction."""
    out: list[SignalResult] = []
    k = int(np.sum(n[:-1]))
    if k == 0:
        return out
    # the reference's side is the same for every window: computed once per reference
    ref_rate, ref_gini = _REFERENCE.get((prep,), "expected", lambda: reference_expected(prep))
    n_ref = prep.n_labelled
    if cfg.wants("expected_bad_rate"):
        rate = expected_rate(n, pd_sum)
        thr = ref_rate * (1 + cfg.threshold("expected_bad_rate")) \
            if math.isfinite(ref_rate) else None
        out.append(SignalResult(
            "expected_bad_rate", "estimated", rate, None, thr, n_ref, k, None,
            {"reference": _num(ref_rate), "reference_realised": _num(prep.bad_rate),
             "abs_change": _num(rate - ref_rate),
             "rel_change": _num((rate - ref_rate) / ref_rate) if ref_rate else math.nan}))
    if cfg.wants("expected_gini"):
        e = expected_discrimination(n, pd_sum)
        if math.isfinite(e.gini):
            thr = ref_gini - cfg.threshold("expected_gini") if math.isfinite(ref_gini) else None
            out.append(SignalResult(
                "expected_gini", "estimated", e.gini, None, thr, n_ref, k, None,
                {"reference": _num(ref_gini), "reference_realised": _num(prep.disc.gini),
                 "change": _num(e.gini - ref_gini), "bound": _num(2 * e.auc_bound)}))
    return out
