"""Model performance on labelled (joined) events: AUC, Gini, KS and calibration.

Discrimination comes from the per-class fine score histograms of the sketch
(``lab_score[2, Ws]``: good, bad; the score is the probability of *bad*), so it merges
across panes and keeps no raw scores. Pairs in different bins are ordered exactly; pairs
in the same bin are counted as ties (half), hence

    |auc - auc_exact|  <=  bound = ½ Σ_k g_k b_k / (n_g n_b)

(the within-bin pair mass; about ``1 / (2 · 200)`` on 200 reference-quantile bins, less
where the classes separate). Gini ``= 2 auc - 1`` (bound doubled). ``ks_score`` is the
largest gap between the two classes' score CDFs at the fine edges, low by at most
``max_k min(g_k, b_k)`` shares. Missing scores are left out.

Calibration compares the observed number of bads ``k`` among ``n`` labelled events with
the expected ``E = Σ PD``: ``ratio = k / E``. Under a calibrated model ``k`` is
Poisson-binomial with variance ``Σ p(1-p) <= n p̄ (1 - p̄)``, so a binomial with
``p̄ = E / n`` is a conservative reference distribution; its exact (Clopper–Pearson)
interval and tail give evidence at any sample size, including partially matured cohorts.

>>> import numpy as np
>>> good = np.array([40, 30, 20, 10, 0])   # last column: missing score
>>> bad = np.array([0, 10, 20, 30, 0])
>>> d = discrimination(good, bad)
>>> round(float(d.auc), 4), round(float(d.auc_bound), 4), round(float(d.ks), 2)
(0.8333, 0.0833, 0.53)
>>> c = calibration(n_bad=30, n=1000, pd_sum=20.0, alpha=0.05)
>>> round(c.ratio, 2), c.p_value < 0.05, round(c.ci_low, 2)
(1.5, True, 1.02)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import binom_isf_one, binom_sf_one, clopper_pearson_one
from driftwatch.windows.sketch import Sketch

__all__ = [
    "Calibration",
    "Discrimination",
    "auc_se",
    "calibration",
    "discrimination",
    "discrimination_rows",
    "performance_signals",
]


@dataclass(frozen=True, slots=True)
class Discrimination:
    auc: float
    auc_bound: float
    ks: float
    ks_bound: float
    n_good: int
    n_bad: int

    @property
    def gini(self) -> float:
        return 2 * self.auc - 1


def discrimination(good: np.ndarray, bad: np.ndarray) -> Discrimination:
    """AUC (bad scored above good) and KS from per-class fine histograms ``[Ws]``."""
    g = np.asarray(good[:-1], dtype=np.float64)
    b = np.asarray(bad[:-1], dtype=np.float64)
    ng, nb = g.sum(), b.sum()
    if ng == 0 or nb == 0:
        return Discrimination(math.nan, math.nan, math.nan, math.nan, int(ng), int(nb))
    auc, bound, ks, ks_bound = _measures(g, b, ng, nb)
    return Discrimination(float(auc), float(bound), float(ks), float(ks_bound), int(ng),
                          int(nb))


def discrimination_rows(good: np.ndarray, bad: np.ndarray) -> list[Discrimination]:
    """:func:`discrimination` of each row of histograms stacked as ``[K, Ws]`` (the
    windows one poll closes), each step one numpy call for all rows. Sums and running
    sums run along each row's own last axis, so a row has the bits it has alone."""
    g = np.asarray(good[:, :-1], dtype=np.float64)
    b = np.asarray(bad[:, :-1], dtype=np.float64)
    ng, nb = g.sum(axis=1), b.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # a row without a class: NaN
        measures = [m.tolist() for m in _measures(g, b, ng, nb)]
    nan = math.nan
    return [
        Discrimination(a, w, k, kw, int(n_g), int(n_b)) if n_g and n_b
        else Discrimination(nan, nan, nan, nan, int(n_g), int(n_b))
        for a, w, k, kw, n_g, n_b in zip(*measures, ng.tolist(), nb.tolist(), strict=True)
    ]


def _measures(g: np.ndarray, b: np.ndarray, ng: np.ndarray, nb: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """AUC, its bound, KS and its bound of histograms ``[..., W]`` (missing column left
    out) with class totals ``ng``, ``nb`` of the leading shape."""
    pairs = ng * nb
    auc = (b * (g.cumsum(axis=-1) - g + g / 2)).sum(axis=-1) / pairs
    bound = (b * g).sum(axis=-1) / (2 * pairs)
    gs, bs = g / ng[..., None], b / nb[..., None]
    ks = np.abs(gs.cumsum(axis=-1) - bs.cumsum(axis=-1)).max(axis=-1)
    return auc, bound, ks, np.minimum(gs, bs).max(axis=-1)


def auc_se(auc: float, n_good: int, n_bad: int) -> float:
    """Hanley–McNeil standard error of an AUC.

    >>> round(auc_se(0.75, 900, 100), 4)
    0.0291
    """
    if n_good < 1 or n_bad < 1 or not math.isfinite(auc):
        return math.nan
    q1 = auc / (2 - auc)
    q2 = 2 * auc * auc / (1 + auc)
    var = (
        auc * (1 - auc) + (n_bad - 1) * (q1 - auc * auc) + (n_good - 1) * (q2 - auc * auc)
    ) / (n_good * n_bad)
    return math.sqrt(max(var, 0.0))


@dataclass(frozen=True, slots=True)
class Calibration:
    """``ratio = observed / expected`` bads with its interval and one-sided p-value
    (more bads than ``baseline × expected``), and the ratio above which the excess is
    significant at ``alpha`` (``crit``)."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    crit: float
    observed: int
    expected: float
    n: int


def calibration(
    *, n_bad: int, n: int, pd_sum: float, alpha: float = 0.01, baseline: float = 1.0
) -> Calibration:
    """Observed / expected bads with an exact binomial interval and test."""
    if n <= 0 or not pd_sum > 0:
        nan = math.nan
        return Calibration(nan, nan, nan, nan, nan, n_bad, pd_sum, n)
    p_bar = pd_sum / n
    ratio = n_bad / pd_sum
    lo, hi = clopper_pearson_one(n_bad, n, alpha)
    p0 = min(p_bar * baseline, 1.0)
    p_value = binom_sf_one(n_bad - 1, n, p0)
    crit = binom_isf_one(alpha, n, p0) / pd_sum
    return Calibration(ratio, lo / p_bar, hi / p_bar, p_value, crit, n_bad, pd_sum, n)


def performance_signals(
    ref_disc: Discrimination,
    ref_ratio: float,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    n_ref: int,
    disc: Discrimination | None = None,
) -> list[SignalResult]:
    """``auc``, ``gini``, ``ks_score`` (lower is worse: ``threshold`` is a floor) and
    ``calibration_ratio`` (against the reference's own ratio, 1 when it has none).
    ``disc``: the window's discrimination when it was computed with other windows'
    (:func:`discrimination_rows`)."""
    out: list[SignalResult] = []
    n_lab = int(cur.lab_n.sum())
    if n_lab == 0 or n_lab < cfg.min_labelled:
        return out
    d = discrimination(cur.lab_score[0], cur.lab_score[1]) if disc is None else disc
    z = float(special.ndtri(1 - cfg.alpha))
    if math.isfinite(d.auc):
        se = math.hypot(
            auc_se(ref_disc.auc, d.n_good, d.n_bad),
            auc_se(ref_disc.auc, ref_disc.n_good, ref_disc.n_bad),
        )
        ks_w = math.sqrt(-math.log(cfg.alpha / 2) / 2) * math.sqrt(
            (d.n_good + d.n_bad) / (d.n_good * d.n_bad)
        )
        rows = (
            ("auc", d.auc, ref_disc.auc, d.auc_bound, se),
            ("gini", d.gini, ref_disc.gini, 2 * d.auc_bound, 2 * se),
            ("ks_score", d.ks, ref_disc.ks, d.ks_bound, ks_w / z),
        )
        for name, v, ref, bound, s in rows:
            if not cfg.wants(name):
                continue
            thr = ref - max(cfg.threshold(name), z * s) if math.isfinite(ref) else None
            out.append(SignalResult(
                name, "performance", v, None, thr, n_ref, n_lab, None,
                {"reference": ref, "change": v - ref, "bound": bound, "se": s,
                 "n_good": d.n_good, "n_bad": d.n_bad},
            ))
    if cfg.wants("calibration_ratio") and cur.lab_pd_sum > 0:
        base = ref_ratio if math.isfinite(ref_ratio) and ref_ratio > 0 else 1.0
        c = calibration(n_bad=int(cur.lab_n[1]), n=n_lab, pd_sum=cur.lab_pd_sum,
                        alpha=cfg.alpha, baseline=base)
        thr = max(base * (1 + cfg.threshold("calibration_ratio")), c.crit)
        out.append(SignalResult(
            "calibration_ratio", "performance", c.ratio, None, thr, n_ref, n_lab, c.p_value,
            {"ci_low": c.ci_low, "ci_high": c.ci_high, "observed": c.observed,
             "expected": c.expected, "reference": ref_ratio, "baseline": base,
             "change": c.ratio - base},
        ))
    return out
