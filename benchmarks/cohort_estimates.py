"""Label-free estimates and their gap intervals on cohorts of a known calibrated model.

The model is ``P(bad | x) = sigmoid(-2.2 + x)`` with ``x ~ N(0, 1)`` in development.
Each trial is one cohort of ``--size`` approved predictions put through the real
:class:`~driftwatch.labels.cohort_book.CohortBook` and the real cohort signals
(:func:`~driftwatch.detectors.cohort.cohort_signals`), in three scenarios:

* **stationary**: nothing moves;
* **covariate**: ``x ~ N(0.8, 0.5)``: riskier applicants, closer together (the Gini falls),
  ``P(bad | x)`` unchanged, so the champion stays calibrated;
* **concept**: ``x`` as in development, the true log-odds up by 0.8 at the same scores.

Per scenario: how far the expected bad rate and expected Gini (from the book's score bins)
are from the realised ones, the share of cohorts whose realised-minus-expected interval
holds 0 (the configured ``1 - alpha`` under calibration; the power against the concept
drift where it does not), and the binning error of the expected Gini against the same
CBPE pairs formula on the raw scores (what a per-row estimator, such as NannyML's CBPE,
computes), and how much wider Hanley–McNeil's standard error of the Gini would be than the
bootstrap one the gap uses. Timings are the book's update and the signals per cohort,
against the raw-score formula in the same run.

    python benchmarks/cohort_estimates.py [--cohorts 400] [--size 5000] [--alpha 0.01]

Exit status 1 when a calibrated scenario's coverage falls outside the binomial 99% interval
of ``1 - alpha``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np
from scipy import stats

from driftwatch.detectors.cohort import CohortInput, cohort_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.performance import auc_se
from driftwatch.labels.cohort_book import SCALE, CohortBook

A, B = -2.2, 1.0


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _raw_expected_gini(p: np.ndarray) -> float:
    """The CBPE pairs formula on raw scores: E[bad above good] with ties counted half."""
    order = np.argsort(p, kind="stable")
    s = p[order]
    bad, good = s, 1.0 - s
    below = np.cumsum(good) - good
    auc = float((bad * (below + good / 2)).sum() / (bad.sum() * good.sum()))
    return 2 * auc - 1


SCENARIOS = {
    "stationary": (lambda rng, n: rng.normal(size=n), 0.0),
    "covariate": (lambda rng, n: rng.normal(0.8, 0.5, n), 0.0),
    "concept": (lambda rng, n: rng.normal(size=n), 0.8),
}


def run(cohorts: int, size: int, alpha: float, seed: int) -> dict[str, dict[str, float]]:
    cfg = DetectorConfig(alpha=alpha, min_labelled=1)
    out: dict[str, dict[str, float]] = {}
    for name, (draw, shift) in SCENARIOS.items():
        rng = np.random.default_rng(seed)
        held_rate = held_gini = 0
        err_rate, err_gini, bin_err, se_ratio = [], [], [], []
        t_book = t_raw = 0.0
        for i in range(cohorts):
            x = draw(rng, size)
            p = _sigmoid(A + B * x)
            y = (rng.uniform(size=size) < _sigmoid(A + B * x + shift)) * 1.0
            t0 = time.perf_counter()
            book = CohortBook()
            k = np.zeros(size, dtype=np.int64)
            book.add_predictions(k, p, np.zeros(size))
            book.add_labelled(k, p, y)
            c = book.get(0)
            assert c is not None
            rs = {r.signal: r for r in cohort_signals(
                CohortInput("c", c.lab_n, c.lab_pd / SCALE, c.lab_pq / SCALE, seed=i),
                ref_bad_rate=0.13, ref_gini=0.5, n_ref=40_000, cfg=cfg)}
            t_book += time.perf_counter() - t0
            t0 = time.perf_counter()
            raw = _raw_expected_gini(p)
            t_raw += time.perf_counter() - t0
            g, gg = rs["cohort_bad_rate_gap"].details, rs["cohort_gini_gap"].details
            held_rate += g["ci_low"] <= 0 <= g["ci_high"]
            held_gini += gg["ci_low"] <= 0 <= gg["ci_high"]
            err_rate.append(g["realised"] - g["expected"])
            err_gini.append(gg["realised"] - gg["expected"])
            bin_err.append(abs(gg["expected"] - raw))
            n_bad = int(c.lab_n[1].sum())
            hm = 2 * auc_se((gg["expected"] + 1) / 2, size - n_bad, n_bad)
            se_ratio.append(hm / gg["se"])
        out[name] = {
            "coverage_bad_rate_gap": held_rate / cohorts,
            "coverage_gini_gap": held_gini / cohorts,
            "mean_realised_minus_expected_bad_rate": float(np.mean(err_rate)),
            "mean_realised_minus_expected_gini": float(np.mean(err_gini)),
            "max_binning_error_expected_gini": float(np.max(bin_err)),
            "gini_se_hanley_mcneil_over_bootstrap": float(np.mean(se_ratio)),
            "book_seconds_per_cohort": t_book / cohorts,
            "raw_formula_seconds_per_cohort": t_raw / cohorts,
        }
    return out


def _interval(n: int, rate: float) -> tuple[float, float]:
    lo, hi = stats.binom.interval(0.99, n, rate)
    return lo / n, hi / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cohorts", type=int, default=400)
    ap.add_argument("--size", type=int, default=5000)
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    res = run(args.cohorts, args.size, args.alpha, args.seed)
    lo, hi = _interval(args.cohorts, 1 - args.alpha)
    ok = True
    for name in ("stationary", "covariate"):
        for key in ("coverage_bad_rate_gap", "coverage_gini_gap"):
            v = res[name][key]
            if not lo <= v <= hi:
                ok = False
                print(f"FAIL {name} {key} {v:.3f} outside [{lo:.3f}, {hi:.3f}]",
                      file=sys.stderr)
    print(json.dumps({"config": vars(args), "expected_coverage": [lo, hi], "results": res},
                     indent=2, default=lambda v: v if math.isfinite(v) else None))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
