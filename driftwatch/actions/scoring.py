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

__all__ = ["BINS", "HIGHER_IS_BETTER", "ScoreStats", "auc_exact", "improvement"]

BINS = 1000
_EPS = 1e-12
#: Metrics a shadow comparison may judge by, and which way is better.
HIGHER_IS_BETTER: dict[str, bool] = {
    "auc": True,
    "gini": True,
    "ks_score": True,
    "brier": False,
    "log_loss": False,
}


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


def _bin(score: np.ndarray) -> np.ndarray:
    return np.clip((np.asarray(score) * BINS).astype(np.int64), 0, BINS - 1)


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

    @property
    def labelled(self) -> int:
        return int(self.bad.sum() + self.good.sum())

    def add_labelled(self, score: np.ndarray, label: np.ndarray, *, cutoff: float | None) -> None:
        p = np.clip(np.asarray(score, np.float64), 0.0, 1.0)
        y = np.asarray(label, np.float64) > 0.5
        bins = _bin(p)
        self.bad += np.bincount(bins[y], minlength=BINS)
        self.good += np.bincount(bins[~y], minlength=BINS)
        q = np.clip(p, _EPS, 1 - _EPS)
        self.log_loss_sum += float(-(y * np.log(q) + (~y) * np.log(1 - q)).sum())
        self.brier_sum += float(((p - y) ** 2).sum())
        if cutoff is not None:
            ok = p <= cutoff
            self.approved_labelled += int(ok.sum())
            self.approved_bad += int((ok & y).sum())

    def add_live(self, score: np.ndarray, exposure: np.ndarray | None, *, cutoff: float) -> None:
        p = np.clip(np.asarray(score, np.float64), 0.0, 1.0)
        ex = np.ones(len(p)) if exposure is None else np.asarray(exposure, np.float64)
        ex = np.where(np.isfinite(ex), ex, 1.0)
        ok = p <= cutoff
        self.live += len(p)
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
        if self.live:
            out["approval_rate"] = self.approved_live / self.live
            out["expected_loss"] = self.expected_loss_sum / self.live
        elif self.approved_labelled or n:
            out["approval_rate"] = self.approved_labelled / n if n else math.nan
        if self.approved_labelled:
            out["bad_rate_approved"] = self.approved_bad / self.approved_labelled
        return out

    def to_dict(self) -> dict[str, Any]:
        def sparse(a: np.ndarray) -> dict[str, int]:
            return {str(i): int(a[i]) for i in np.flatnonzero(a)}

        return {
            "bad": sparse(self.bad),
            "good": sparse(self.good),
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
        def dense(m: dict[str, int]) -> np.ndarray:
            a = np.zeros(BINS, np.int64)
            for k, v in m.items():
                a[int(k)] = v
            return a

        scalars = {k: v for k, v in d.items() if k not in ("bad", "good")}
        return cls(bad=dense(d["bad"]), good=dense(d["good"]), **scalars)
