"""Running statistics of one model's scores against outcomes, in fixed memory.

Scores land in 1000 bins on [0, 1] per class, so AUC, Gini and KS come from the two
histograms (pairs within one bin count as ties) while log loss and Brier score are exact
running sums. Approval is ``score <= cutoff`` (the detectors' convention); expected loss is
PD × exposure summed over the applications the model would approve (unit exposure when
none is mapped).

>>> import numpy as np
>>> s = ScoreStats()
>>> s.add_labelled(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1]), cutoff=0.5)
>>> m = s.metrics()
>>> m["auc"], m["gini"], m["ks_score"], round(m["brier"], 3)
(1.0, 1.0, 1.0, 0.025)
>>> ScoreStats.from_dict(s.to_dict()).metrics() == m
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["BINS", "HIGHER_IS_BETTER", "LIVE_BINS", "ScoreStats", "auc_exact", "improvement",
           "log_loss_sum",
           "score_psi"]

BINS = 1000
#: Bins of the live score histogram a shadow compares the two models' distributions on.
LIVE_BINS = 100
_EPS = 1e-12
#: Metrics a shadow comparison may judge by, and which way is better.
HIGHER_IS_BETTER: dict[str, bool] = {
    "auc": True,
    "gini": True,
    "ks_score": True,
    "brier": False,
    "log_loss": False,
}


def log_loss_sum(score: np.ndarray, label: np.ndarray) -> float:
    """``-Σ [y ln p + (1 - y) ln(1 - p)]`` with ``p`` clipped away from 0 and 1.

    >>> round(log_loss_sum(np.array([0.5, 0.5]), np.array([1, 0])), 4)
    1.3863
    """
    q = np.clip(np.asarray(score, np.float64), _EPS, 1 - _EPS)
    y = np.asarray(label, np.float64) > 0.5
    return float(-(y * np.log(q) + (~y) * np.log(1 - q)).sum())


def improvement(metric: str, champion: float, challenger: float) -> float:
    """How much better the challenger is on ``metric`` (negative: worse).

    >>> improvement("auc", 0.70, 0.72) > 0, improvement("log_loss", 0.40, 0.45) < 0
    (True, True)
    """
    if metric not in HIGHER_IS_BETTER:
        raise ValueError(f"unknown metric {metric!r}; valid: {', '.join(HIGHER_IS_BETTER)}")
    diff = challenger - champion
    return diff if HIGHER_IS_BETTER[metric] else -diff


def auc_exact(score: np.ndarray, label: np.ndarray) -> float:
    """ROC AUC by ranks (ties count half); NaN when one class is absent.

    >>> auc_exact(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
    0.75
    """
    score = np.asarray(score, np.float64)
    label = np.asarray(label, np.float64) > 0.5
    n_bad, n_good = int(label.sum()), int((~label).sum())
    if n_bad == 0 or n_good == 0:
        return math.nan
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[label].sum() - n_bad * (n_bad + 1) / 2) / (n_bad * n_good))


def _bin(score: np.ndarray, bins: int = BINS) -> np.ndarray:
    return np.clip((np.asarray(score) * bins).astype(np.int64), 0, bins - 1)


def score_psi(expected: np.ndarray, actual: np.ndarray, *, groups: int = 10) -> float:
    """PSI of ``actual`` against ``expected`` (fine histograms on the same bins), on about
    ``groups`` bins cut at the deciles of ``expected``; shares floored at 1e-4.

    >>> e = np.array([10, 10, 10, 10]); round(score_psi(e, e, groups=2), 6)
    0.0
    >>> round(score_psi(np.array([50, 50]), np.array([80, 20]), groups=2), 4)
    0.4159
    """
    e, a = np.asarray(expected, np.float64), np.asarray(actual, np.float64)
    if e.sum() <= 0 or a.sum() <= 0:
        return math.nan
    cum = np.cumsum(e) / e.sum()
    group = np.minimum((cum * groups - 1e-9).astype(np.int64), groups - 1)
    ge = np.bincount(group, weights=e, minlength=groups) / e.sum()
    ga = np.bincount(group, weights=a, minlength=groups) / a.sum()
    keep = (ge > 0) | (ga > 0)
    ge, ga = np.maximum(ge[keep], 1e-4), np.maximum(ga[keep], 1e-4)
    ge, ga = ge / ge.sum(), ga / ga.sum()
    return float(((ga - ge) * np.log(ga / ge)).sum())


@dataclass
class ScoreStats:
    """Labelled (and optionally live) statistics of one model's scores."""

    bad: np.ndarray = field(default_factory=lambda: np.zeros(BINS, np.int64))
    good: np.ndarray = field(default_factory=lambda: np.zeros(BINS, np.int64))
    log_loss_sum: float = 0.0
    brier_sum: float = 0.0
    approved_labelled: int = 0
    approved_bad: int = 0
    live: int = 0
    approved_live: int = 0
    expected_loss_sum: float = 0.0
    live_hist: np.ndarray = field(default_factory=lambda: np.zeros(LIVE_BINS, np.int64))
    has_cutoff: bool = False

    @property
    def labelled(self) -> int:
        return int(self.bad.sum() + self.good.sum())

    def add_labelled(self, score: np.ndarray, label: np.ndarray, *, cutoff: float | None) -> None:
        p = np.clip(np.asarray(score, np.float64), 0.0, 1.0)
        y = np.asarray(label, np.float64) > 0.5
        bins = _bin(p)
        self.bad += np.bincount(bins[y], minlength=BINS)
        self.good += np.bincount(bins[~y], minlength=BINS)
        self.log_loss_sum += log_loss_sum(p, y)
        self.brier_sum += float(((p - y) ** 2).sum())
        if cutoff is not None:
            ok = p <= cutoff
            self.approved_labelled += int(ok.sum())
            self.approved_bad += int((ok & y).sum())

    def add_live(
        self, score: np.ndarray, exposure: np.ndarray | None, *, cutoff: float | None
    ) -> None:
        p = np.clip(np.asarray(score, np.float64), 0.0, 1.0)
        self.live += len(p)
        self.live_hist += np.bincount(_bin(p, LIVE_BINS), minlength=LIVE_BINS)
        if cutoff is None:
            return
        self.has_cutoff = True
        ex = np.ones(len(p)) if exposure is None else np.asarray(exposure, np.float64)
        ex = np.where(np.isfinite(ex), ex, 1.0)
        ok = p <= cutoff
        self.approved_live += int(ok.sum())
        self.expected_loss_sum += float((p * ex)[ok].sum())

    def metrics(self) -> dict[str, float]:
        n_bad, n_good = float(self.bad.sum()), float(self.good.sum())
        n = n_bad + n_good
        out: dict[str, float] = {"labelled": n}
        if n_bad and n_good:
            cum_good_below = np.concatenate([[0], np.cumsum(self.good)[:-1]])
            auc = float((self.bad * (cum_good_below + 0.5 * self.good)).sum() / (n_bad * n_good))
            ks = float(np.abs(np.cumsum(self.bad) / n_bad - np.cumsum(self.good) / n_good).max())
        else:
            auc = ks = math.nan
        out.update(auc=auc, gini=2 * auc - 1, ks_score=ks)
        out["log_loss"] = self.log_loss_sum / n if n else math.nan
        out["brier"] = self.brier_sum / n if n else math.nan
        out["live"] = float(self.live)
        if self.live and self.has_cutoff:
            out["approval_rate"] = self.approved_live / self.live
            out["expected_loss"] = self.expected_loss_sum / self.live
        elif self.approved_labelled:
            out["approval_rate"] = self.approved_labelled / n if n else math.nan
        if self.approved_labelled:
            out["bad_rate_approved"] = self.approved_bad / self.approved_labelled
        if n:
            # calibration: observed over expected bad rate on the labelled rows
            expected = float(((np.arange(BINS) + 0.5) / BINS * (self.bad + self.good)).sum())
            out["calibration_ratio"] = n_bad / expected if expected > 0 else math.nan
        return out

    def to_dict(self) -> dict[str, Any]:
        def sparse(a: np.ndarray) -> dict[str, int]:
            return {str(i): int(a[i]) for i in np.flatnonzero(a)}

        return {
            "bad": sparse(self.bad),
            "good": sparse(self.good),
            "live_hist": sparse(self.live_hist),
            "has_cutoff": self.has_cutoff,
            "log_loss_sum": self.log_loss_sum,
            "brier_sum": self.brier_sum,
            "approved_labelled": self.approved_labelled,
            "approved_bad": self.approved_bad,
            "live": self.live,
            "approved_live": self.approved_live,
            "expected_loss_sum": self.expected_loss_sum,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScoreStats:
        def dense(m: dict[str, int], size: int = BINS) -> np.ndarray:
            a = np.zeros(size, np.int64)
            for k, v in m.items():
                a[int(k)] = v
            return a

        scalars = {k: v for k, v in d.items() if k not in ("bad", "good", "live_hist")}
        return cls(bad=dense(d["bad"]), good=dense(d["good"]),
                   live_hist=dense(d.get("live_hist", {}), LIVE_BINS), **scalars)
