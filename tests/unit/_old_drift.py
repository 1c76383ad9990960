"""The drift statistics' per-window path as it was before it was vectorised (frozen copy).

Tests check that the faster path gives these numbers to the last bit; nothing in the
package imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.categorical import chi2_threshold
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.distances import Distance
from driftwatch.detectors.divergence import DEFAULT_EPS, Divergences
from driftwatch.detectors.drift import DRIFT_STATS, BlockStats
from driftwatch.detectors.registry import CALIBRATED_LEVELS, THRESHOLD_CALIBRATED, THRESHOLD_EFFECT

__all__ = [
    "aggregate_signals",
    "coarse",
    "divergences",
    "drift_signals",
    "ks_fine",
    "psi_contributions",
    "top_bins",
    "wasserstein_fine",
]


def _shares(counts: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.where(valid, counts, 0).astype(np.float64)
    n = c.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = c / n[..., None]
    return p, n


def smoothed_shares(counts: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS) -> np.ndarray:
    p, _ = _shares(counts, valid)
    p = np.where(valid, np.maximum(p, eps), 0.0)
    return p / p.sum(axis=-1, keepdims=True)


def _xlog(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        t = p * np.log(p / q)
    return np.where(p > 0, t, 0.0)


def divergences(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
) -> Divergences:
    e_raw, n_ref = _shares(ref, valid)
    a_raw, n_cur = _shares(cur, valid)
    e = np.where(valid, np.maximum(e_raw, eps), 0.0)
    e /= e.sum(axis=-1, keepdims=True)
    a = np.where(valid, np.maximum(a_raw, eps), 0.0)
    a /= a.sum(axis=-1, keepdims=True)
    safe_e = np.where(valid, e, 1.0)
    safe_a = np.where(valid, a, 1.0)
    log_ratio = np.log(safe_a) - np.log(safe_e)  # 0 on padding
    kl_ce = (a * log_ratio).sum(axis=-1)
    kl_ec = (e * -log_ratio).sum(axis=-1)
    psi = ((a - e) * log_ratio).sum(axis=-1)
    m = (a_raw + e_raw) / 2
    jsd = (_xlog(a_raw, m) + _xlog(e_raw, m)).sum(axis=-1) / (2 * np.log(2))
    js = np.sqrt(np.clip(jsd, 0.0, 1.0))
    bc = np.sqrt(a_raw * e_raw).sum(axis=-1)
    hel = np.sqrt(np.clip(1.0 - bc, 0.0, 1.0))
    bad = (n_ref == 0) | (n_cur == 0)
    if np.any(bad):
        psi, kl_ce, kl_ec, js, hel = (
            np.where(bad, np.nan, x) for x in (psi, kl_ce, kl_ec, js, hel)
        )
    return Divergences(psi, kl_ce, kl_ec, js, hel)


def psi_contributions(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    e = smoothed_shares(ref, valid, eps)
    a = smoothed_shares(cur, valid, eps)
    log_ratio = np.log(np.where(valid, a, 1.0)) - np.log(np.where(valid, e, 1.0))
    return (a - e) * log_ratio, e, a


def top_bins(contrib: np.ndarray, k: int) -> np.ndarray:
    k = min(k, contrib.shape[-1])
    part = np.argpartition(-contrib, k - 1, axis=-1)[..., :k]
    order = np.argsort(-np.take_along_axis(contrib, part, axis=-1), axis=-1, kind="stable")
    return np.take_along_axis(part, order, axis=-1)


def _thresholds(
    name: str, cfg: DetectorConfig, calibrated: Mapping[str, np.ndarray] | None, f: int
) -> tuple[np.ndarray, np.ndarray | None]:
    eff = np.full(f, cfg.threshold(name))
    cal = None if calibrated is None else calibrated.get(name)
    if cal is None:
        return eff, None
    return np.fmax(eff, cal), cal


def drift_signals(
    names: Sequence[str],
    stats: BlockStats,
    *,
    ref_coarse: np.ndarray,
    cur_coarse: np.ndarray,
    valid: np.ndarray,
    labels: Sequence[Sequence[str]],
    n_ref: int,
    n_cur: int,
    cfg: DetectorConfig,
    calibrated: Mapping[str, np.ndarray] | None,
    report: np.ndarray,
    quality_flag: np.ndarray,
    chi_adjusted: np.ndarray,
    chi_p_cut: float,
    ks_adjusted: np.ndarray | None = None,
    ks_p_cut: float | None = None,
    fine_hi: np.ndarray | None = None,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
    levels: Mapping[str, Mapping[str, np.ndarray]] | None = None,
    segment: str | None = None,
) -> list[SignalResult]:
    f = len(names)
    out: list[SignalResult] = []
    contrib, _, _ = psi_contributions(ref_coarse, cur_coarse, valid, cfg.eps)
    top = top_bins(np.where(valid, contrib, -np.inf), cfg.top_bins).tolist()
    e_raw = (ref_coarse / np.maximum(ref_coarse.sum(-1, keepdims=True), 1)).tolist()
    a_raw = (cur_coarse / np.maximum(cur_coarse.sum(-1, keepdims=True), 1)).tolist()
    contrib_l = contrib.tolist()
    nomiss = valid.copy()
    nomiss[:, -1] = False
    psi_obs = divergences(ref_coarse, cur_coarse, nomiss, cfg.eps).psi.tolist()
    dof = stats.chi.dof
    chi_thr = chi2_threshold(chi_p_cut, dof).tolist()
    thr = {}
    for name in DRIFT_STATS:
        if stats.get(name) is not None and cfg.wants(name, "drift"):
            thr[name] = _thresholds(name, cfg, calibrated, f)
    vals = {name: stats.get(name).tolist() for name in thr}  # type: ignore[union-attr]
    qf = quality_flag.tolist()

    def edge(x: float) -> float | None:
        return x if np.isfinite(x) else None

    lo_l = hi_l = None
    if bounds is not None:
        lo_l, hi_l = bounds[0].tolist(), bounds[1].tolist()
    rep = report.tolist()
    lv = {k: {st: a.tolist() for st, a in d.items()} for k, d in (levels or {}).items()}

    def calibrated_levels(details: dict[str, object], name: str, j: int) -> None:
        table = {k: float(d[name][j]) for k, d in lv.items() if name in d}
        if table:
            details[CALIBRATED_LEVELS] = table

    for j, feat in enumerate(names):
        if not rep[j]:
            continue
        common = {"data_quality_flag": qf[j]}
        for name, (t, cal) in thr.items():
            details: dict[str, object] = dict(common)
            details[THRESHOLD_EFFECT] = cfg.threshold(name)
            if cal is not None:
                details[THRESHOLD_CALIBRATED] = float(cal[j])
            calibrated_levels(details, name, j)
            p_value = None
            if name == "psi":
                details["eps"] = cfg.eps
                details["psi_without_missing"] = psi_obs[j]
                tops = []
                for b in top[j]:
                    if not valid[j, b]:
                        continue
                    row = {"bin": labels[j][b], "ref": e_raw[j][b], "cur": a_raw[j][b],
                           "psi": contrib_l[j][b]}
                    if lo_l is not None and hi_l is not None:
                        last = b == valid.shape[1] - 1  # the missing bin
                        row["lo"] = None if last else edge(lo_l[j][b])
                        row["hi"] = None if last else edge(hi_l[j][b])
                    tops.append(row)
                details["top_bins"] = tops
            elif name == "ks" and stats.ks is not None:
                p_value = float(stats.ks.p_value[j])  # type: ignore[index]
                details["bound"] = float(stats.ks.bound[j])
                if fine_hi is not None:
                    details["at"] = float(fine_hi[j, int(stats.ks.argmax[j])])  # type: ignore[index]
                if ks_adjusted is not None:
                    details["p_adjusted"] = float(ks_adjusted[j])
                    details["significant"] = bool(p_value <= (ks_p_cut or 0.0))
            elif name == "wasserstein" and stats.wasserstein is not None:
                details["raw"] = float(stats.wasserstein.stat[j])
                details["bound_raw"] = float(stats.wasserstein.bound[j])
            out.append(
                SignalResult(name, "drift", vals[name][j], feat, float(t[j]), n_ref, n_cur,
                             p_value, details, segment)
            )
        if cfg.wants("chi2", "drift"):
            chi_details: dict[str, object] = {
                "dof": int(dof[j]), "p_adjusted": float(chi_adjusted[j]), "fdr": cfg.fdr,
                **common}
            chi_cal = None if calibrated is None else calibrated.get("chi2")
            if chi_cal is not None:
                chi_details[THRESHOLD_CALIBRATED] = float(chi_cal[j])
            calibrated_levels(chi_details, "chi2", j)
            out.append(
                SignalResult(
                    "chi2", "drift", float(stats.chi.stat[j]), feat, chi_thr[j], n_ref, n_cur,
                    float(stats.chi.p_value[j]), chi_details, segment,
                )
            )
    return out


def aggregate_signals(
    per_feature: Sequence[SignalResult], cfg: DetectorConfig, n_ref: int, n_cur: int
) -> list[SignalResult]:
    out = []
    for name in cfg.aggregate:
        rs = [r for r in per_feature if r.signal == name and np.isfinite(r.value)]
        if not rs:
            continue
        v = np.array([r.value for r in rs])
        w = np.array([float(cfg.weights.get(r.feature or "", 1.0)) for r in rs])
        above = [r.feature for r in rs if r.exceeds]
        i = int(np.argmax(v))
        details = {
            "max": float(v[i]),
            "feature": rs[i].feature,
            "mean": float(v.mean()),
            "weighted_mean": float((v * w).sum() / w.sum()) if w.sum() > 0 else float("nan"),
            "n_features": len(rs),
            "n_above": len(above),
            "share_above": len(above) / len(rs),
            "above": above,
        }
        out.append(SignalResult(f"{name}_aggregate", "drift", float(v[i]), None, None, n_ref,
                                n_cur, None, details))
    return out


def coarse(geo: object, fine: np.ndarray) -> np.ndarray:
    fine = np.asarray(fine)
    cs = np.cumsum(fine[..., :-1], axis=-1)
    cs = np.concatenate([np.zeros_like(cs[..., :1]), cs], axis=-1)
    ends = geo.coarse_end[:, :-1]  # type: ignore[attr-defined]
    idx = np.broadcast_to(ends, (*fine.shape[:-1], ends.shape[1]))
    at = np.take_along_axis(cs, idx, axis=-1)
    out = np.empty((*fine.shape[:-1], geo.coarse_end.shape[1]), dtype=fine.dtype)  # type: ignore[attr-defined]
    out[..., 0] = at[..., 0]
    out[..., 1:-1] = np.diff(at, axis=-1)
    out[..., -1] = fine[..., -1]
    return out


def _fine_shares(fine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(fine[..., :-1], dtype=np.float64)
    n = x.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / n[..., None], n


def ks_fine(ref: np.ndarray, cur: np.ndarray, *, p_values: bool = True) -> Distance:
    """Two-sample KS statistic at the fine edges, its bound and asymptotic p-value."""
    r, nr = _fine_shares(ref)
    c, nc = _fine_shares(cur)
    d = np.abs(np.cumsum(r, axis=-1) - np.cumsum(c, axis=-1))
    arg = np.argmax(d, axis=-1)
    stat = np.take_along_axis(d, arg[..., None], axis=-1)[..., 0]
    bound = np.minimum(r, c).max(axis=-1)
    p = None
    if p_values:
        with np.errstate(invalid="ignore", divide="ignore"):
            ne = nr * nc / (nr + nc)
        p = special.kolmogorov(np.sqrt(ne) * stat)
    return Distance(stat, bound, p, arg)


def wasserstein_fine(ref: np.ndarray, cur: np.ndarray, widths: np.ndarray) -> Distance:
    """W1 from fine histograms with linear interpolation inside bins, and its bound.

    ``widths[F, Wf-1]`` are the fine bin widths clipped to the reference range
    (:attr:`~driftwatch.detectors.bins.BinGeometry.widths`).
    """
    r, _ = _fine_shares(ref)
    c, _ = _fine_shares(cur)
    d_hi = np.cumsum(r, axis=-1) - np.cumsum(c, axis=-1)  # D at each bin's upper edge
    d_lo = d_hi - r + c  # D at its lower edge
    a, b = np.abs(d_lo), np.abs(d_hi)
    same = d_lo * d_hi >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = np.where(a + b > 0, (a * a + b * b) / (2 * (a + b)), 0.0)
    est = np.where(same, (a + b) / 2, cross)  # mean |D| over the bin, linear D
    end1, end2 = d_lo - c, d_lo + r  # D stays in [end1, end2] inside the bin
    hi = np.maximum(np.abs(end1), np.abs(end2))
    lo = np.where((end1 <= 0) & (end2 >= 0), 0.0, np.minimum(np.abs(end1), np.abs(end2)))
    stat = (widths * est).sum(axis=-1)
    bound = (widths * np.maximum(hi - est, est - lo)).sum(axis=-1)
    return Distance(stat, bound)
