"""Signals of one prediction cohort (a window's own predictions) once its outcomes are in.

A window's ``bad_rate`` or ``gini`` is measured on the outcomes that *arrive* in it, for
applications scored weeks earlier. The cohort signals measure the outcomes of the
predictions *made* in one window, whenever they arrive, and are judged once the cohort is
complete enough (the policy's ``cohorts.min_completeness``). Each result names its cohort
in ``feature`` (``window <id>``) and carries its completeness in ``details``.

* ``cohort_bad_rate``: realised bad share, against the reference's (approved rows), with
  the ``bad_rate`` detector's threshold ``ref + max(effect · ref, binomial margin)``;
* ``cohort_gini``: realised Gini, against the reference's (lower is worse);
* ``cohort_bad_rate_gap``: realised minus expected bad rate on the same rows (see
  :mod:`~driftwatch.detectors.estimated`), threshold ``z · se``;
* ``cohort_gini_gap``: realised minus expected Gini (lower is worse), threshold ``-z · se``
  (``se`` by a seeded parametric bootstrap under calibration).

Inputs are plain arrays on the cohort book's score bins (last column: missing score):
``lab_n[2, W]`` labelled rows by class (good, bad) and ``lab_pd[2, W]`` their summed P(bad).

>>> import numpy as np
>>> lab_n = np.array([[800, 100, 0], [40, 60, 0]]); lab_pd = np.array([[40.0, 30, 0], [4, 20, 0]])
>>> c = CohortInput("window 3", lab_n, lab_pd, pq_sum=80.0, extra={"completeness": 0.9})
>>> rs = {r.signal: r for r in cohort_signals(c, ref_bad_rate=0.1, ref_gini=0.5,
...       n_ref=10_000, cfg=DetectorConfig(min_labelled=100))}
>>> r = rs["cohort_bad_rate_gap"]
>>> r.feature, round(r.value, 3), r.value > r.threshold
('window 3', 0.006, False)
>>> round(rs["cohort_bad_rate"].value, 2), rs["cohort_bad_rate"].details["completeness"]
(0.1, 0.9)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.estimated import (
    bad_rate_gap,
    expected_discrimination,
    gini_gap,
    gini_null_sd,
)
from driftwatch.detectors.exact import binom_isf_one, binom_sf_one
from driftwatch.detectors.performance import discrimination

__all__ = ["CohortInput", "cohort_signals"]

_GROUP = "cohort"


@dataclass(frozen=True)
class CohortInput:
    """One cohort's labelled sums; ``extra`` goes into every result's details."""

    name: str
    lab_n: np.ndarray
    lab_pd: np.ndarray
    pq_sum: float
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Seeds the Gini gap's bootstrap (the cohort's key: the same cohort, the same se).
    seed: int = 0


def cohort_signals(
    c: CohortInput, *, ref_bad_rate: float, ref_gini: float, n_ref: int, cfg: DetectorConfig
) -> list[SignalResult]:
    """The four cohort signals (those ``cfg`` selects); none below ``cfg.min_labelled``."""
    lab_n = np.asarray(c.lab_n, dtype=np.float64)
    n_lab = int(lab_n.sum())
    out: list[SignalResult] = []
    if n_lab == 0 or n_lab < cfg.min_labelled:
        return out
    k = int(lab_n[1].sum())
    base = {"n_labelled": n_lab, "n_bad": k, **c.extra}
    if cfg.wants("cohort_bad_rate"):
        rate = k / n_lab
        thr: float | None = None
        p: float | None = None
        if math.isfinite(ref_bad_rate):
            p0 = min(max(ref_bad_rate, 0.5 / max(n_ref, 1)), 1.0)
            margin = binom_isf_one(cfg.alpha, n_lab, p0) / n_lab - p0
            thr = ref_bad_rate + max(cfg.threshold("cohort_bad_rate") * ref_bad_rate, margin)
            p = binom_sf_one(k - 1, n_lab, p0)
        out.append(SignalResult(
            "cohort_bad_rate", _GROUP, rate, c.name, thr, n_ref, n_lab, p,
            {**base, "reference": ref_bad_rate, "abs_change": rate - ref_bad_rate,
             "rel_change": (rate - ref_bad_rate) / ref_bad_rate if ref_bad_rate else math.nan}))
    scored = lab_n[:, :-1].sum()
    pd = np.asarray(c.lab_pd, dtype=np.float64)
    if cfg.wants("cohort_bad_rate_gap") and scored > 0:
        g = bad_rate_gap(n_bad=int(lab_n[1, :-1].sum()), n=int(scored),
                         pd_sum=float(pd[:, :-1].sum()), pq_sum=c.pq_sum, alpha=cfg.alpha)
        if math.isfinite(g.gap):
            out.append(SignalResult(
                "cohort_bad_rate_gap", _GROUP, g.gap, c.name,
                g.z * g.se if math.isfinite(g.se) else None, n_ref, int(scored), g.p_value,
                {**base, **g.details()}))
    want_gini = cfg.wants("cohort_gini") or cfg.wants("cohort_gini_gap")
    real = discrimination(lab_n[0], lab_n[1]) if want_gini else None
    if real is not None and math.isfinite(real.gini):
        exp = expected_discrimination(lab_n.sum(axis=0), pd.sum(axis=0))
        if cfg.wants("cohort_gini"):
            thr = ref_gini - cfg.threshold("cohort_gini") if math.isfinite(ref_gini) else None
            out.append(SignalResult(
                "cohort_gini", _GROUP, real.gini, c.name, thr, n_ref, n_lab, None,
                {**base, "reference": ref_gini, "change": real.gini - ref_gini,
                 "expected": exp.gini, "bound": 2 * real.auc_bound}))
        if cfg.wants("cohort_gini_gap"):
            counts = lab_n.sum(axis=0)
            sd = gini_null_sd(counts, pd.sum(axis=0), seed=c.seed)
            g = gini_gap(real, exp, cfg.alpha, se=sd)
            if math.isfinite(g.gap):
                out.append(SignalResult(
                    "cohort_gini_gap", _GROUP, g.gap, c.name,
                    -g.z * g.se if math.isfinite(g.se) else None, n_ref, n_lab, g.p_value,
                    {**base, **g.details()}))
    for r in out:  # one NaN object: details compare equal across runs
        for k, v in r.details.items():
            if isinstance(v, float) and not math.isfinite(v):
                r.details[k] = math.nan
    return out
