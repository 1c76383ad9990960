"""Label maturity: how complete each prediction cohort's outcomes are, and label delays.

Outcomes arrive days to months after the prediction, so a label-based metric must say
which cohorts it covers and how complete they are. A *cohort* is the set of held
predictions whose event time falls in one period (a day by default). For each cohort
the tracker counts predictions held, outcomes joined (and how many were bad), and
predictions that left without an outcome (expired after the TTL, or evicted when memory
was full); ``completeness = labelled / predicted``.

Label delays (outcome time minus prediction time) go into a fixed log-spaced histogram
(8 bins per decade from 1 s to about 300 years): mergeable, serialisable, and its
quantiles are within one bin (a factor ``10 ** (1/8)``, 33%) of the exact ones.

>>> import numpy as np
>>> c = CohortTracker(period=86400.0)
>>> c.add("predicted", np.array([10.0, 20.0, 86500.0]))
>>> c.add("labelled", np.array([10.0]), bad=np.array([True]))
>>> [(s.start, s.predicted, s.labelled, round(s.completeness, 2)) for s in c.stats()]
[(0.0, 2, 1, 0.5), (86400.0, 1, 0, 0.0)]
>>> h = DelayHistogram(); h.add(np.array([3600.0, 7200.0, 86400.0 * 30]))
>>> h.count, round(h.quantile(0.5) / 3600, 1)
(3, 1.8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.labels.grouping import group_ids

__all__ = ["CohortStats", "CohortTracker", "DelayHistogram"]

_KINDS = ("predicted", "labelled", "bad", "expired", "evicted")


@dataclass(frozen=True, slots=True)
class CohortStats:
    start: float  # cohort period start (event time, seconds)
    predicted: int
    labelled: int
    bad: int
    expired: int
    evicted: int

    @property
    def pending(self) -> int:
        return self.predicted - self.labelled - self.expired - self.evicted

    @property
    def completeness(self) -> float:
        return self.labelled / self.predicted if self.predicted else math.nan

    @property
    def bad_rate(self) -> float:
        """Bad share among outcomes joined so far (biased while the cohort matures)."""
        return self.bad / self.labelled if self.labelled else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "predicted": self.predicted, "labelled": self.labelled,
                "bad": self.bad, "expired": self.expired, "evicted": self.evicted,
                "pending": self.pending, "completeness": self.completeness}


class CohortTracker:
    """Per-period counts, at most ``max_cohorts`` periods (the oldest are dropped)."""

    def __init__(self, period: float = 86400.0, max_cohorts: int = 400) -> None:
        if period <= 0 or max_cohorts < 1:
            raise ValueError("period must be positive and max_cohorts at least 1")
        self.period = period
        self.max_cohorts = max_cohorts
        self._counts: dict[int, np.ndarray] = {}
        self.dropped = 0  # cohorts dropped for space

    def add(self, kind: str, pred_time: np.ndarray, bad: np.ndarray | None = None) -> None:
        """Count rows of ``kind`` by the cohort of their prediction time."""
        if pred_time.size == 0:
            return
        col = _KINDS.index(kind)
        ids = np.floor(pred_time / self.period).astype(np.int64)
        uniq, inverse, counts = group_ids(ids)
        bad_counts = None
        if bad is not None:
            bad_counts = np.bincount(inverse[bad], minlength=uniq.size)
        for i, (u, c) in enumerate(zip(uniq.tolist(), counts.tolist(), strict=True)):
            row = self._counts.get(u)
            if row is None:
                row = self._counts[u] = np.zeros(len(_KINDS), dtype=np.int64)
            row[col] += c
            if bad_counts is not None:
                row[_KINDS.index("bad")] += int(bad_counts[i])
        if len(self._counts) > self.max_cohorts:
            for u in sorted(self._counts)[: len(self._counts) - self.max_cohorts]:
                del self._counts[u]
                self.dropped += 1

    def stats(self) -> list[CohortStats]:
        return [
            CohortStats(u * self.period, *(int(x) for x in self._counts[u]))
            for u in sorted(self._counts)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {"period": self.period, "max_cohorts": self.max_cohorts, "dropped": self.dropped,
                "counts": {str(u): self._counts[u].tolist() for u in sorted(self._counts)}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CohortTracker:
        c = cls(float(d["period"]), int(d["max_cohorts"]))
        c.dropped = int(d["dropped"])
        c._counts = {int(u): np.asarray(v, dtype=np.int64) for u, v in d["counts"].items()}
        return c


class DelayHistogram:
    """Label delays (seconds) on log-spaced bins; bin 0 holds delays under one second."""

    PER_DECADE = 8
    DECADES = 10

    def __init__(self) -> None:
        self.counts = np.zeros(self.PER_DECADE * self.DECADES + 2, dtype=np.int64)
        self.count = 0
        self.total = 0.0
        self.max = -math.inf
        self.negative = 0  # outcome stamped before its prediction (clock skew)

    def add(self, delay: np.ndarray) -> None:
        d = delay[np.isfinite(delay)]
        if d.size == 0:
            return
        self.negative += int(np.count_nonzero(d < 0))
        idx = np.where(
            d < 1.0, 0,
            1 + np.minimum(np.floor(np.log10(np.maximum(d, 1.0)) * self.PER_DECADE),
                           self.counts.size - 2).astype(np.int64),
        )
        self.counts += np.bincount(idx, minlength=self.counts.size)
        self.count += int(d.size)
        self.total += float(d.sum())
        self.max = max(self.max, float(d.max()))

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else math.nan

    def quantile(self, q: float) -> float:
        """Approximate quantile: geometric interpolation inside the bin, never past the
        longest delay seen (a bin spans a third of its lower edge: interpolated, a p99
        could read 20% longer than the max)."""
        if self.count == 0:
            return math.nan
        cum = np.cumsum(self.counts)
        target = q * self.count
        b = int(np.searchsorted(cum, target, side="left"))
        if b == 0:
            return 0.0
        before = cum[b - 1]
        frac = (target - before) / self.counts[b] if self.counts[b] else 0.0
        lo = (b - 1) / self.PER_DECADE
        return float(min(10 ** (lo + frac / self.PER_DECADE), self.max))

    def summary(self) -> dict[str, float]:
        return {"count": self.count, "mean": self.mean, "p50": self.quantile(0.5),
                "p90": self.quantile(0.9), "p99": self.quantile(0.99),
                "max": self.max if self.count else math.nan, "negative": self.negative}

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts.tolist(), "count": self.count, "total": self.total,
                "max": None if self.count == 0 else self.max, "negative": self.negative}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DelayHistogram:
        h = cls()
        h.counts = np.asarray(d["counts"], dtype=np.int64)
        h.count, h.total, h.negative = int(d["count"]), float(d["total"]), int(d["negative"])
        h.max = -math.inf if d["max"] is None else float(d["max"])
        return h
