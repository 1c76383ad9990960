"""Data-quality, bad-rate and calibration signals as they were computed before they were
vectorised (frozen copy, one scipy.special call per question).

Tests check that the faster path gives these numbers to the last bit; nothing in the
package imports this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.calibrate import NullThresholds, model_levels
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import beta_ppf, binom_isf, binom_sf
from driftwatch.detectors.performance import Calibration
from driftwatch.detectors.prepared import PreparedReference, approval_share
from driftwatch.detectors.quality import SPIKE_RATIO, QualityFlags
from driftwatch.detectors.range_null import outside_isf, outside_sf
from driftwatch.detectors.registry import THRESHOLD_EFFECT
from driftwatch.windows.sketch import Sketch

__all__ = ["business_signals", "calibration", "quality_signals"]


def _margin(n: int | np.ndarray, p0: np.ndarray, alpha: float) -> np.ndarray:
    n = np.asarray(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.maximum(binom_isf(alpha, n, p0) / n - p0, 0.0)
    return np.where(n > 0, m, np.nan)


def _pvalue(k: np.ndarray, n: int, p0: np.ndarray) -> np.ndarray:
    return binom_sf(k - 1, n, p0) if n > 0 else np.full(p0.shape, np.nan)


def _missing(
    names: tuple[str, ...], cur_missing: np.ndarray, ref_missing: np.ndarray,
    n_ref: int, n_cur: int, cfg: DetectorConfig,
) -> tuple[list[SignalResult], np.ndarray]:
    ref_p = ref_missing / max(n_ref, 1)
    p0 = np.maximum(ref_p, 0.5 / max(n_ref, 1))  # a share never seen is still possible
    cur_p = cur_missing / max(n_cur, 1)
    thr = ref_p + np.fmax(cfg.threshold("missing_rate"), _margin(n_cur, p0, cfg.alpha))
    pv = _pvalue(cur_missing, n_cur, p0)
    flag = cur_p > thr
    n_flag = int(flag.sum())
    out = [
        SignalResult(
            "missing_rate", "data_quality", float(cur_p[j]), f, float(thr[j]), n_ref, n_cur,
            float(pv[j]),
            {"reference": float(ref_p[j]), "increase": float(cur_p[j] - ref_p[j]),
             "count": int(cur_missing[j]), "features_flagged": n_flag},
        )
        for j, f in enumerate(names)
    ]
    return out, flag


def quality_signals(
    prep: PreparedReference,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    bad_records: Mapping[str, int] | None = None,
    absent_fields: Mapping[str, tuple[int, int, str]] | None = None,
) -> tuple[list[SignalResult], QualityFlags]:
    n_ref, n_cur = prep.n, cur.n
    out: list[SignalResult] = []
    f_flag = np.zeros(len(prep.num_names), dtype=bool)
    g_flag = np.zeros(len(prep.cat_names), dtype=bool)
    if prep.num_names:
        res, flag = _missing(prep.num_names, cur.num_fine[:, -1], prep.num_fine[:, -1],
                             n_ref, n_cur, cfg)
        if cfg.wants("missing_rate"):
            out += res
        f_flag |= flag
        present = cur.num_fine[:, :-1].sum(axis=1)
        outside = cur.num_under + cur.num_over
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(present > 0, outside / present, np.nan)
            ref_f = prep.num_fine[:, :-1]
            ref_sh = ref_f / np.maximum(ref_f.sum(1, keepdims=True), 1)
            cur_sh = cur.num_fine[:, :-1] / np.maximum(present[:, None], 1)
        # the null share at the reference's non-missing count of each feature (not its
        # rows), on top of which the effect or margin counts
        m = ref_f.sum(1).astype(np.float64)
        p0 = np.minimum(2.0 / (m + 1.0), 1.0)
        # a share of the non-missing values: the margin is taken at that size, on the
        # count's exact null (the reference's range is a draw itself)
        with np.errstate(invalid="ignore", divide="ignore"):
            margin = np.maximum(outside_isf(cfg.alpha, present, m) / present - p0, 0.0)
        margin = np.where(present > 0, margin, np.nan)
        thr = p0 + np.fmax(cfg.threshold("out_of_range"), margin)
        pv = np.where(present > 0, outside_sf(outside, present, m), np.nan)
        excess = cur_sh - ref_sh
        spike_at = np.argmax(excess, axis=1)
        rows = np.arange(len(share))
        sp_ex = excess[rows, spike_at]
        spike = (sp_ex > cfg.spike_excess) & (
            cur_sh[rows, spike_at] >= SPIKE_RATIO * ref_sh[rows, spike_at]
        )
        flag = (share > thr) | spike
        n_flag = int((share > thr).sum())
        f_flag |= flag
        geo = prep.num_geo
        if cfg.wants("out_of_range"):
            for j, f in enumerate(prep.num_names):
                k = int(spike_at[j])
                lo = geo.fine_hi[j, k - 1] if k > 0 else -np.inf
                out.append(SignalResult(
                    "out_of_range", "data_quality", float(share[j]), f, float(thr[j]),
                    n_ref, n_cur, float(pv[j]),
                    {"under": int(cur.num_under[j]), "over": int(cur.num_over[j]),
                     "ref_min": float(geo.lo[j]), "ref_max": float(geo.hi[j]),
                     "spike": bool(spike[j]), "spike_excess": float(sp_ex[j]),
                     "spike_bin": f"({lo:.6g}, {geo.fine_hi[j, k]:.6g}]",
                     "features_flagged": n_flag},
                ))
    if prep.cat_names:
        lay = cur.layout.categorical
        res, flag = _missing(prep.cat_names, cur.cat[:, lay.missing_col],
                             prep.cat[:, lay.missing_col], n_ref, n_cur, cfg)
        if cfg.wants("missing_rate"):
            out += res
        g_flag |= flag
        unseen = cur.cat[:, lay.unseen_col]
        share = unseen / max(n_cur, 1)
        p0 = np.full(len(share), 1.0 / (n_ref + 1))
        thr = np.fmax(cfg.threshold("new_category_rate"), _margin(n_cur, p0, cfg.alpha))
        flag = share > thr
        g_flag |= flag
        n_flag = int(flag.sum())
        if cfg.wants("new_category_rate"):
            for j, f in enumerate(prep.cat_names):
                out.append(SignalResult(
                    "new_category_rate", "data_quality", float(share[j]), f, float(thr[j]),
                    n_ref, n_cur, None,
                    {"unseen": int(unseen[j]), "other": int(cur.cat[j, lay.other_col]),
                     "missing": int(cur.cat[j, lay.missing_col]),
                     "ref_other_share": float(prep.cat[j, lay.other_col] / max(n_ref, 1)),
                     "features_flagged": n_flag},
                ))
    if absent_fields:
        thr_a = cfg.threshold("field_absent")
        for names, flags in ((prep.num_names, f_flag), (prep.cat_names, g_flag)):
            for j, f in enumerate(names):
                if f not in absent_fields:
                    continue
                k, n, path = absent_fields[f]
                share = k / n if n else 0.0
                flags[j] |= share > thr_a
                if cfg.wants("field_absent"):
                    out.append(SignalResult(
                        "field_absent", "data_quality", share, f, thr_a, n_ref, n_cur, None,
                        {"absent": k, "records": n, "path": path,
                         "measured_on": "the first records of the run"},
                    ))
    if bad_records is not None and cfg.wants("bad_record_rate"):
        # not a vectorised question: kept as the package defines it now (the outcome
        # records read count in the share, and the details say how many records)
        bad = int(sum(bad_records.values()))
        total = bad + n_cur + int(cur.n_outcome_records)
        out.append(SignalResult(
            "bad_record_rate", "data_quality", bad / total if total else 0.0, None,
            cfg.threshold("bad_record_rate"), n_ref, n_cur, None,
            {"count": bad, "records": total, "by_reason": dict(sorted(bad_records.items()))},
        ))
    return out, QualityFlags(f_flag, g_flag)


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
    out: list[SignalResult] = []
    alpha = cfg.alpha
    if cfg.wants("approval_rate"):
        a_cur, n_cur, src = approval_share(cur, prep.score_geo, cfg.approval_cutoff)
        a_ref, n_ref, _ = prep.approval(cfg.approval_cutoff)
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
            p0 = min(max(ref, 0.5 / max(int(prep.lab_n.sum()), 1)), 1.0)
            margin = float(binom_isf(alpha, n_lab, p0)) / n_lab - p0
            thr = ref + max(cfg.threshold("bad_rate") * ref, margin)
            p = float(binom_sf(k - 1, n_lab, p0))
        lo = float(beta_ppf(alpha / 2, k, n_lab - k + 1)) if k > 0 else 0.0
        hi = float(beta_ppf(1 - alpha / 2, k + 1, n_lab - k)) if k < n_lab else 1.0
        out.append(SignalResult(
            "bad_rate", "business", rate, None, thr, int(prep.lab_n.sum()), n_lab, p,
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


def calibration(
    *, n_bad: int, n: int, pd_sum: float, alpha: float = 0.01, baseline: float = 1.0
) -> Calibration:
    if n <= 0 or not pd_sum > 0:
        nan = math.nan
        return Calibration(nan, nan, nan, nan, nan, n_bad, pd_sum, n)
    p_bar = pd_sum / n
    ratio = n_bad / pd_sum
    lo = beta_ppf(alpha / 2, n_bad, n - n_bad + 1) if n_bad > 0 else 0.0
    hi = beta_ppf(1 - alpha / 2, n_bad + 1, n - n_bad) if n_bad < n else 1.0
    p0 = min(p_bar * baseline, 1.0)
    p_value = float(binom_sf(n_bad - 1, n, p0))
    crit = float(binom_isf(alpha, n, p0)) / pd_sum
    return Calibration(
        ratio, float(lo) / p_bar, float(hi) / p_bar, p_value, crit, n_bad, pd_sum, n
    )
