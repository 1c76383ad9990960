"""Prediction-confidence signals: the model's own scores against the reference's.

All model-level, group ``confidence``:

* ``variance_ratio``: ``var_cur / var_ref`` of the score. Its interval is asymptotic and
  does not assume normal scores: ``Var(ln s²) ≈ (κ - (n-3)/(n-1)) / n`` with ``κ`` the
  kurtosis (``m4 / m2²``) of the reference score, read from its fine histogram; for normal
  scores (``κ = 3``) this is the F-distribution's asymptotic width. Details:
  ``ci_low``, ``ci_high`` (level ``1 - alpha``), the two variances.
* ``mean_shift``: ``(mean_cur - mean_ref) / sd_ref``, signed (a policy compares ``|value|``),
  with a two-sided z p-value.
* ``entropy``: mean binary predictive entropy (nats) of the score; details: reference
  value and change. Its sampling spread is taken from the reference score histogram.
* ``score_psi``: PSI of the score on its reference deciles plus a missing bin (the
  "system stability index"), same epsilon convention as feature PSI.

Thresholds are ``max(effect, null quantile)`` as everywhere (see
:class:`~driftwatch.detectors.config.DetectorConfig`).

>>> import numpy as np, pandas as pd
>>> from driftwatch.batch import Batch
>>> from driftwatch.detectors.prepared import prepare
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(0)
>>> ref = pd.DataFrame({"x": np.zeros(5000), "score": rng.normal(0.4, 0.05, 5000)})
>>> prof = ReferenceProfile.build(ref, numeric=["x"])
>>> cur = Sketch.empty(prof.layout)
>>> cur.add_batch(Batch.build("predictions", n=2000, n_numeric=1,
...                           score=rng.normal(0.4, 0.1, 2000)))
>>> r = {s.signal: s for s in confidence_signals(prepare(prof), cur, DetectorConfig())}
>>> round(r["variance_ratio"].value, 1), r["variance_ratio"].exceeds, r["mean_shift"].exceeds
(4.1, True, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.calibrate import NullThresholds, model_levels
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.prepared import PreparedReference
from driftwatch.detectors.registry import THRESHOLD_EFFECT
from driftwatch.detectors.stacked import WindowStats, score_stats
from driftwatch.windows.sketch import Sketch

__all__ = ["confidence_signals", "log_variance_se"]


def _z(p: float) -> float:
    """Standard normal quantile."""
    return float(special.ndtri(p))


def log_variance_se(kurtosis: float, n_cur: int, n_ref: int) -> float:
    """Standard error of ``ln(var_cur / var_ref)`` for scores of the given kurtosis.

    >>> round(log_variance_se(3.0, 10_000, 100_000), 4)
    0.0148
    """
    k = kurtosis if math.isfinite(kurtosis) else 3.0

    def one(n: int) -> float:
        return max(k - (n - 3) / (n - 1), 1e-12) / n if n > 1 else math.inf

    return math.sqrt(one(n_cur) + one(n_ref))


def confidence_signals(
    prep: PreparedReference,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    null: NullThresholds | None = None,
    levels: Mapping[str, NullThresholds] | None = None,
    stats: WindowStats | None = None,
) -> list[SignalResult]:
    """``score_psi``, ``variance_ratio``, ``mean_shift`` and ``entropy`` for one window.

    ``null`` (levels at the detector's ``alpha``) raises ``score_psi``'s and
    ``variance_ratio``'s thresholds; ``levels`` (by rate) go into their details.
    ``stats``: the score's divergences of this window, computed with other windows'
    (:func:`~driftwatch.detectors.stacked.window_stats`).
    """
    levels = levels or {}
    out: list[SignalResult] = []
    n_ref, n_cur = prep.n_score, cur.n_score
    alpha = cfg.alpha
    if cfg.wants("score_psi") and cur.n > 0 and prep.n_score > 0:
        geo = prep.score_geo
        valid = prep.score_coarse_valid
        if stats is not None and stats.score_top is not None and stats.fits(prep, cur, cfg):
            cc, d, contrib = stats.score_coarse, stats.score_div, stats.score_terms
            top = stats.score_top
        else:
            cc, d, contrib, tops = score_stats(prep, cur.score_fine, cfg)
            top = tops[0].tolist()
        er = prep.score_coarse_shares  # the reference's: the same every window
        ar = (cc[0] / max(cc[0].sum(), 1)).tolist()
        terms = contrib[0].tolist()
        eff = cfg.threshold("score_psi")
        details: dict[str, object] = {
            "eps": cfg.eps,
            "kl_cur_ref": float(d.kl_cur_ref[0]),
            "kl_ref_cur": float(d.kl_ref_cur[0]),
            THRESHOLD_EFFECT: eff,
            "top_bins": [
                {"bin": geo.coarse_labels[0][b], "ref": er[b], "cur": ar[b],
                 "psi": terms[b]}
                for b in top if valid[0, b]
            ],
        }
        own = model_levels(details, "score_psi", null, levels)
        thr = eff if own is None else max(eff, own)
        out.append(SignalResult("score_psi", "confidence", float(d.psi[0]), None, thr,
                                prep.n, cur.n, None, details))
    if n_cur < 2 or n_ref < 2:
        return out
    v_ref, v_cur = prep.score_var, cur.score_var
    if cfg.wants("variance_ratio") and v_ref > 0:
        ratio = v_cur / v_ref
        se = log_variance_se(prep.score_kurtosis, n_cur, n_ref)
        z2 = _z(1 - alpha / 2)
        lr = math.log(ratio) if ratio > 0 else -math.inf
        p = float(2 * special.ndtr(-abs(lr) / se)) if math.isfinite(lr) else 0.0
        vd: dict[str, object] = {
            "ci_low": ratio * math.exp(-z2 * se), "ci_high": ratio * math.exp(z2 * se),
            "var_ref": v_ref, "var_cur": v_cur, "kurtosis_ref": prep.score_kurtosis,
            "level": 1 - alpha, THRESHOLD_EFFECT: cfg.threshold("variance_ratio")}
        own = model_levels(vd, "variance_ratio", null, levels)
        sig = math.exp(_z(1 - alpha) * se) if own is None else own
        thr = max(cfg.threshold("variance_ratio"), sig)
        out.append(SignalResult(
            "variance_ratio", "confidence", ratio, None, thr, n_ref, n_cur, p, vd,
        ))
    if cfg.wants("mean_shift") and v_ref > 0:
        sd = math.sqrt(v_ref)
        shift = (cur.score_mean - prep.score_mean) / sd
        se = math.sqrt(1 / n_cur + 1 / n_ref)
        thr = max(cfg.threshold("mean_shift"), _z(1 - alpha / 2) * se)
        p = float(2 * special.ndtr(-abs(shift) / se))
        out.append(SignalResult(
            "mean_shift", "confidence", shift, None, thr, n_ref, n_cur, p,
            {"mean_ref": prep.score_mean, "mean_cur": cur.score_mean, "sd_ref": sd},
        ))
    if cfg.wants("entropy") and math.isfinite(prep.entropy_mean):
        h_cur = cur.entropy_sum / n_cur
        h_ref = prep.entropy_mean
        se = math.sqrt(prep.entropy_var * (1 / n_cur + 1 / n_ref))
        thr = h_ref + max(cfg.threshold("entropy") * h_ref, _z(1 - alpha) * se)
        p = float(special.ndtr(-(h_cur - h_ref) / se)) if se > 0 else math.nan
        out.append(SignalResult(
            "entropy", "confidence", h_cur, None, thr, n_ref, n_cur, p,
            {"reference": h_ref, "change": h_cur - h_ref,
             "rel_change": (h_cur - h_ref) / h_ref if h_ref else math.nan},
        ))
    return out
