"""Business signals ops watch: approval rate, bad rate, expected loss and user metrics.

Model-level, group ``business``:

* ``approval_rate``: the current approval share (from the decision field, or from the
  policy's score cut-off, ``model.approval_cutoff``, when no decision is mapped; when only
  the window or only the reference has decisions, both are read at the cut-off). It moves
  both ways, so its ``threshold`` is None;
  details give the reference share, the absolute and relative change and the band
  ``reference ± max(effect, z · se)`` with ``outside_band``.
* ``bad_rate``: observed bad share among labelled (joined) events. Only approved
  applications get outcomes, and the reference bad rate is taken on approved rows too
  (see :mod:`driftwatch.windows.profile`), so like is compared with like. Threshold:
  ``ref + max(effect · ref, binomial margin)``; one-sided binomial p-value; Clopper–Pearson
  interval in details.
* ``expected_loss``: predicted loss per unit of exposure ``Σ PD·exposure / Σ exposure``
  of the window (when exposure is mapped), against the reference's; details add the totals
  and, on labelled events, the observed loss rate.
* ``metric``: the mean of each user metric field (``feature`` = the field's name), with
  the reference mean when the reference carries it. No threshold: a policy sets one.

>>> import numpy as np, pandas as pd
>>> from driftwatch.batch import Batch
>>> from driftwatch.detectors.prepared import prepare
>>> from driftwatch.windows.profile import ReferenceProfile
>>> ref = pd.DataFrame({"x": np.zeros(1000), "score": np.linspace(0, 1, 1000),
...                     "decision": ["approve"] * 700 + ["decline"] * 300})
>>> prof = ReferenceProfile.build(ref, numeric=["x"])
>>> cur = Sketch.empty(prof.layout)
>>> cur.add_batch(Batch.build("predictions", n=1000, n_numeric=1, score=np.linspace(0, 1, 1000),
...                           decision=[1] * 550 + [0] * 450))
>>> (a,) = business_signals(prepare(prof), cur, DetectorConfig())
>>> a.signal, a.value, round(a.details["abs_change"], 2), a.details["outside_band"]
('approval_rate', 0.55, -0.15, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.calibrate import NullThresholds, model_levels
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import binom_isf_one, binom_sf_one, clopper_pearson_one
from driftwatch.detectors.prepared import PreparedReference, approval_share
from driftwatch.detectors.registry import THRESHOLD_EFFECT
from driftwatch.windows.sketch import Sketch

__all__ = ["business_signals"]


def _rel(cur: float, ref: float) -> float:
    return (cur - ref) / ref if ref and math.isfinite(ref) else math.nan


def business_signals(
    prep: PreparedReference,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    null: NullThresholds | None = None,
    levels: Mapping[str, NullThresholds] | None = None,
) -> list[SignalResult]:
    """``approval_rate``, ``bad_rate``, ``expected_loss`` and ``metric`` results.

    ``null``/``levels``: calibrated levels of ``|abs_change|`` of the approval share (the
    detector's own band uses ``null`` in place of its binomial margin)."""
    out: list[SignalResult] = []
    alpha = cfg.alpha
    if cfg.wants("approval_rate"):
        cut = cfg.approval_cutoff
        a_cur, n_cur, src = approval_share(cur, prep.score_geo, cut)
        a_ref, n_ref, ref_src = prep.approval(cut)
        if cut is not None and {src, ref_src} == {"decision", "cutoff"}:
            # decisions on one side only: both sides are read at the cut-off, so a
            # window is measured against a reference of the same kind
            a_cur, n_cur, src = approval_share(cur, prep.score_geo, cut, decisions=False)
            a_ref, n_ref, _ = approval_share(prep.sketch, prep.score_geo, cut,
                                             decisions=False)
        if math.isfinite(a_cur):
            ad: dict[str, object] = {THRESHOLD_EFFECT: cfg.threshold("approval_rate")}
            own = model_levels(ad, "approval_rate", null, levels or {})
            band = cfg.threshold("approval_rate")
            if own is not None:
                band = max(band, own)
            elif math.isfinite(a_ref) and n_ref > 0:
                se = math.sqrt(a_ref * (1 - a_ref) * (1 / n_cur + 1 / n_ref))
                band = max(band, float(special.ndtri(1 - alpha / 2)) * se)
            lo, hi = a_ref - band, a_ref + band
            ad.update({
                "reference": a_ref, "abs_change": a_cur - a_ref,
                "rel_change": _rel(a_cur, a_ref), "band_low": lo, "band_high": hi,
                "outside_band": bool(math.isfinite(a_ref) and not lo <= a_cur <= hi),
                "source": src})
            out.append(SignalResult(
                "approval_rate", "business", a_cur, None, None, n_ref, n_cur, None, ad,
            ))
    n_lab = int(cur.lab_n.sum())
    if cfg.wants("bad_rate") and n_lab > 0 and n_lab >= cfg.min_labelled:
        k = int(cur.lab_n[1])
        rate = k / n_lab
        ref = prep.bad_rate
        thr: float | None = None
        p: float | None = None
        if math.isfinite(ref):
            p0 = min(max(ref, 0.5 / max(prep.n_labelled, 1)), 1.0)
            margin = binom_isf_one(alpha, n_lab, p0) / n_lab - p0
            thr = ref + max(cfg.threshold("bad_rate") * ref, margin)
            p = binom_sf_one(k - 1, n_lab, p0)
        lo, hi = clopper_pearson_one(k, n_lab, alpha)
        out.append(SignalResult(
            "bad_rate", "business", rate, None, thr, prep.n_labelled, n_lab, p,
            {"reference": ref, "abs_change": rate - ref, "rel_change": _rel(rate, ref),
             "n_bad": k, "ci_low": lo, "ci_high": hi},
        ))
    if cfg.wants("expected_loss") and cur.exposure_sum > 0:
        rate = cur.el_pred / cur.exposure_sum
        ref = prep.el_rate
        thr = ref * (1 + cfg.threshold("expected_loss")) if math.isfinite(ref) else None
        details: dict[str, object] = {
            "reference": ref, "rel_change": _rel(rate, ref), "expected_loss": cur.el_pred,
            "exposure": cur.exposure_sum, "n_exposure": cur.exposure_n,
        }
        if cur.lab_exposure > 0:
            details["observed_loss_rate"] = cur.lab_el_obs / cur.lab_exposure
            details["predicted_loss_rate_labelled"] = cur.lab_el_pred / cur.lab_exposure
        out.append(SignalResult("expected_loss", "business", rate, None, thr,
                                prep.sketch.exposure_n, cur.exposure_n, None, details))
    if cfg.wants("metric"):
        for name, (s, c) in sorted(cur.metrics.items()):
            if c <= 0:
                continue
            mean = s / c
            ref = prep.metrics.get(name, math.nan)
            out.append(SignalResult(
                "metric", "business", mean, name, None, 0, int(c), None,
                {"reference": ref, "change": mean - ref if np.isfinite(ref) else math.nan},
            ))
    return out
