"""The running champion-versus-challenger comparison of one shadow deployment.

Both registered versions score the same rows: every live prediction as it arrives
(approval rate and expected loss at the policy's cut-off, and the PSI of the challenger's
score distribution against the champion's) and the same joined outcomes (Gini, AUC, KS,
bad rate of the approved, calibration, log loss, Brier). Once ``min_labelled`` outcomes are in,
the challenger wins if it beats the champion on ``metric`` by ``margin`` or more; a shadow
that has not gathered enough outcomes within ``max_duration`` is discarded.

>>> import numpy as np
>>> ev = ShadowEvaluation("credit", "1", "2", metric="auc", margin=0.01, min_labelled=4,
...                       max_duration=86400.0, started_at=0.0, cutoff=0.5)
>>> y = np.array([0, 0, 1, 1])
>>> ev.observe_labelled(np.array([0.3, 0.6, 0.4, 0.9]), np.array([0.1, 0.2, 0.8, 0.9]), y)
>>> ev.judge(now=10.0)
'promote'
>>> round(ev.improvement(), 2)
0.25
>>> ShadowEvaluation.from_dict(ev.to_dict()).to_dict() == ev.to_dict()
True

Live rows are counted once: ``live_through`` is the monitor's prediction index up to which
they were counted, stored with the counts; a restarted monitor re-reads the events after
its checkpoint with the same indices (and the same ``lineage``), and those already counted
are skipped. A monitor of another lineage (started afresh) counts from its own indices.

>>> ev.mark_live(0, 500, "run-a"); ev.live_through
500
>>> ev.unseen(400, 200, "run-a")  # a re-read batch of 200: its first 100 rows were counted
100
>>> ev.unseen(0, 200, "run-b")
0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.actions.scoring import HIGHER_IS_BETTER, ScoreStats, improvement, score_psi
from driftwatch.policy.catalog import RANKING_METRICS, RECALIBRATION_METRIC

__all__ = ["SHADOW_KEY", "ShadowEvaluation", "judged_on"]

#: Where a shadow action keeps its evaluation in the outbox record's artifacts.
SHADOW_KEY = "shadow"


def judged_on(metric: str, *, recalibration: bool) -> tuple[str, str | None]:
    """The metric a challenger is judged on, and the policy's when that is replaced: a
    recalibration of the champion ranks every row as the champion does, so on a ranking
    metric it could never win (its gain is 0 whatever the outcomes); it is judged on log
    loss, which a better calibration lowers.

    >>> judged_on("auc", recalibration=True), judged_on("auc", recalibration=False)
    (('log_loss', 'auc'), ('auc', None))
    >>> judged_on("brier", recalibration=True)
    ('brier', None)
    """
    if recalibration and metric in RANKING_METRICS:
        return RECALIBRATION_METRIC, metric
    return metric, None


@dataclass
class ShadowEvaluation:
    """Running comparison; ``verdict`` is ``promote`` or ``discard`` once judged."""

    model: str
    champion_version: str | None
    challenger_version: str
    metric: str
    margin: float
    min_labelled: int
    max_duration: float
    started_at: float
    cutoff: float | None = None
    last_seq: int = 0
    missed: int = 0
    champion: ScoreStats = field(default_factory=ScoreStats)
    challenger: ScoreStats = field(default_factory=ScoreStats)
    verdict: str | None = None
    decided_at: float | None = None
    reason: str = ""
    #: event times of the first and last live prediction scored
    first_live: float | None = None
    last_live: float | None = None
    #: the monitor's prediction index (exclusive) up to which live rows are counted
    live_through: int | None = None
    #: the monitor lineage those indices belong to
    live_lineage: str | None = None
    #: rows left out because a version gave no score (a strict signature refused them)
    unscored_live: int = 0
    unscored_labelled: int = 0
    #: the policy's metric when ``metric`` replaces it (:func:`judged_on`)
    metric_instead_of: str | None = None

    def __post_init__(self) -> None:
        if self.metric not in HIGHER_IS_BETTER:
            raise ValueError(
                f"unknown shadow metric {self.metric!r}; valid: {', '.join(HIGHER_IS_BETTER)}"
            )

    @property
    def labelled(self) -> int:
        return self.challenger.labelled

    def observe_labelled(
        self, champion_score: np.ndarray, challenger_score: np.ndarray, label: np.ndarray
    ) -> None:
        """Add joined outcomes; rows where either score is missing are left out."""
        c, s, y = (np.asarray(a, np.float64) for a in (champion_score, challenger_score, label))
        ok = np.isfinite(c) & np.isfinite(s) & np.isfinite(y)
        self.unscored_labelled += int((np.isfinite(y) & ~(np.isfinite(c) & np.isfinite(s))).sum())
        self.champion.add_labelled(c[ok], y[ok], cutoff=self.cutoff)
        self.challenger.add_labelled(s[ok], y[ok], cutoff=self.cutoff)

    def observe_live(
        self,
        champion_score: np.ndarray,
        challenger_score: np.ndarray,
        exposure: np.ndarray | None = None,
        event_time: np.ndarray | None = None,
    ) -> None:
        """Add live predictions (approval rate and expected loss need a cut-off)."""
        c, s = np.asarray(champion_score, np.float64), np.asarray(challenger_score, np.float64)
        ok = np.isfinite(c) & np.isfinite(s)
        self.unscored_live += int((~ok).sum())
        ex = None if exposure is None else np.asarray(exposure, np.float64)[ok]
        self.champion.add_live(c[ok], ex, cutoff=self.cutoff)
        self.challenger.add_live(s[ok], ex, cutoff=self.cutoff)
        if event_time is not None and len(event_time):
            t = np.asarray(event_time, np.float64)
            lo, hi = float(np.nanmin(t)), float(np.nanmax(t))
            self.first_live = lo if self.first_live is None else min(self.first_live, lo)
            self.last_live = hi if self.last_live is None else max(self.last_live, hi)

    def unseen(self, first_index: int | None, n: int, lineage: str | None = None) -> int:
        """How many leading rows of a batch of ``n`` live predictions starting at index
        ``first_index`` of monitor ``lineage`` were counted already (``n``: all of them)."""
        if first_index is None or self.live_through is None or lineage != self.live_lineage:
            return 0
        return min(n, max(0, self.live_through - first_index))

    def mark_live(self, first_index: int | None, n: int, lineage: str | None = None) -> None:
        """Rows ``first_index .. first_index + n - 1`` of monitor ``lineage`` are counted."""
        if first_index is None:
            return
        if lineage != self.live_lineage or self.live_through is None:
            self.live_through, self.live_lineage = first_index + n, lineage
        else:
            self.live_through = max(self.live_through, first_index + n)

    def metrics(self) -> dict[str, dict[str, float]]:
        return {"champion": self.champion.metrics(), "challenger": self.challenger.metrics()}

    def score_psi(self) -> float:
        """PSI of the challenger's live scores against the champion's, on the champion's
        live deciles (NaN before any live traffic)."""
        return score_psi(self.champion.live_hist, self.challenger.live_hist)

    def improvement(self) -> float:
        """Challenger minus champion on ``metric``, signed so that positive is better."""
        m = self.metrics()
        return improvement(self.metric, m["champion"][self.metric], m["challenger"][self.metric])

    def judge(self, now: float) -> str | None:
        """Set and return the verdict when one is due, else None (keep watching)."""
        if self.verdict is not None:
            return self.verdict
        if self.labelled >= self.min_labelled:
            gain = self.improvement()
            wins = math.isfinite(gain) and gain > 0 and gain >= self.margin
            self.verdict = "promote" if wins else "discard"
            self.reason = (
                f"challenger {self.metric} {'beats' if wins else 'does not beat'} the champion's "
                f"by the margin {self.margin:g} (gain {gain:+.4f} on {self.labelled} outcomes)"
            )
            if self.metric_instead_of is not None:
                self.reason += (f"; judged on {self.metric}, not {self.metric_instead_of}: a "
                                "recalibration ranks rows as the champion does")
            if self.unscored_labelled:
                self.reason += (f"; {self.unscored_labelled} more outcomes left out: a version "
                                "gave them no score")
        elif now - self.started_at >= self.max_duration:
            self.verdict = "discard"
            self.reason = (
                f"only {self.labelled} of {self.min_labelled} outcomes after "
                f"{(now - self.started_at) / 86400:.1f} days: shadow expired"
            )
        if self.verdict is not None:
            self.decided_at = now
        return self.verdict

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["champion"] = self.champion.to_dict()
        out["challenger"] = self.challenger.to_dict()
        out["metrics"] = _finite(self.metrics())
        psi = self.score_psi()
        out["score_psi"] = psi if math.isfinite(psi) else None
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShadowEvaluation:
        values = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        values["champion"] = ScoreStats.from_dict(d["champion"])
        values["challenger"] = ScoreStats.from_dict(d["challenger"])
        return cls(**values)


def _finite(m: dict[str, dict[str, float]]) -> dict[str, dict[str, float | None]]:
    return {k: {n: (v if math.isfinite(v) else None) for n, v in d.items()} for k, d in m.items()}
