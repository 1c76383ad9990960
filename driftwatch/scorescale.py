"""The scale a model's score is written in, and its reading as a probability.

Every stage past decoding measures a probability (P(bad), or the score's class before the
policy's ``score_is`` flip). A connector's ``score:`` says how the stream writes it:

- ``probability`` (the default): read as it is, in [0, 1];
- ``percent``: 0 to 100, read divided by 100;
- ``log_odds``: the log-odds of the score's class, read as ``1 / (1 + exp(-x))``;
- ``points``: a credit scorecard's points, higher = safer: at ``base`` points the
  good:bad odds are ``odds``, and every ``pdo`` points double them, so
  ``P(bad) = 1 / (1 + odds * 2 ** ((points - base) / pdo))``.

The same reading applies to the stream (:mod:`driftwatch.connectors.decode`) and to the
reference table's score column (:mod:`driftwatch.windows.conventions`), so the score's
bins, calibration and AUC compare like with like.

>>> pts = ScoreScale.points(base=600, odds=50, pdo=20)
>>> [round(float(p), 6) for p in pts.to_probability(np.array([600.0, 620.0]))]
[0.019608, 0.009901]
>>> float(LOG_ODDS.to_probability(np.array([0.0]))[0])
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LOG_ODDS", "PERCENT", "PROBABILITY", "ScoreScale", "plain_number", "sigmoid"]


def sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow warnings: ``exp`` of a large ``|x|`` is
    ``inf`` or ``0``, which give the limits 0 and 1 exactly; NaN stays NaN."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        out: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return out


@dataclass(frozen=True)
class ScoreScale:
    """How a score is written (see the module docstring); ``base``, ``odds`` and ``pdo``
    are a scorecard's (``kind == "points"`` only)."""

    kind: str = "probability"  # probability | percent | log_odds | points
    base: float | None = None
    odds: float | None = None
    pdo: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("probability", "percent", "log_odds", "points"):
            raise ValueError(f"unknown score scale {self.kind!r}")
        numbers = (self.base, self.odds, self.pdo)
        if self.kind != "points" and numbers != (None, None, None):
            raise ValueError("base, odds and pdo are a scorecard's: kind must be 'points'")
        if self.kind == "points" and not (
                self.base is not None and self.odds is not None and self.pdo is not None
                and math.isfinite(self.base) and math.isfinite(self.odds)
                and math.isfinite(self.pdo) and self.odds > 0 and self.pdo > 0):
            raise ValueError("points need a finite base, odds > 0 and pdo > 0, found "
                             f"base={self.base}, odds={self.odds}, pdo={self.pdo}")

    @classmethod
    def points(cls, *, base: float, odds: float, pdo: float) -> ScoreScale:
        """A scorecard's scaling: ``odds`` (good:bad) at ``base`` points, doubling every
        ``pdo`` points."""
        return cls("points", float(base), float(odds), float(pdo))

    @property
    def is_probability(self) -> bool:
        return self.kind == "probability"

    def to_probability(self, x: np.ndarray) -> np.ndarray:
        """The score read as a probability; NaN stays NaN. ``points`` and ``log_odds`` map
        every finite value into [0, 1], monotonically (points: decreasing)."""
        x = np.asarray(x, dtype=np.float64)
        if self.kind == "percent":
            return x / 100.0
        if self.kind == "log_odds":
            return sigmoid(x)
        if self.kind == "points":
            assert self.base is not None and self.odds is not None and self.pdo is not None
            # log-odds of bad = -(ln odds + (points - base) / pdo * ln 2); points past
            # the float range give an infinite log-odds, read as its limit 0 or 1
            with np.errstate(over="ignore"):
                lo = math.log(self.odds) + (x - self.base) / self.pdo * math.log(2)
            return sigmoid(-lo)
        return x

    def expected(self) -> str:
        """What a value written in this scale must be (a bad record's message)."""
        return {"percent": "a percentage in [0, 100]", "log_odds": "a finite log-odds",
                "points": "finite scorecard points"}.get(self.kind, "a probability in [0, 1]")

    def describe(self) -> str:
        """One line for messages and ``policy explain``."""
        if self.kind == "points":
            assert self.base is not None and self.odds is not None and self.pdo is not None
            return (f"scorecard points, higher = safer (good:bad odds "
                    f"{plain_number(self.odds)}:1 at {plain_number(self.base)} points, "
                    f"doubling every {plain_number(self.pdo)} points), read as P(bad)")
        return {"percent": "a percentage, read divided by 100",
                "log_odds": "log-odds, read as 1 / (1 + exp(-x))"}.get(self.kind,
                                                                     "a probability")

    def written_in(self, values: np.ndarray) -> bool:
        """Whether a reference column of scores is written in this scale rather than as
        probabilities: any finite value outside [0, 1] says so (no scorecard writes its
        points there, and a model's log-odds or percentages do not all fall there); a
        column entirely in [0, 1] is read as probabilities already.

        >>> PERCENT.written_in(np.array([0.2, 35.0])), PERCENT.written_in(np.array([0.2]))
        (True, False)
        """
        if self.is_probability:
            return False
        v = np.asarray(values, dtype=np.float64)
        v = v[np.isfinite(v)]
        return bool(((v < 0) | (v > 1)).any())


def plain_number(v: float) -> str:
    """A scale's number as written: a whole one without its ``.0``.

    >>> plain_number(600.0), plain_number(0.5)
    ('600', '0.5')
    """
    return str(int(v)) if float(v).is_integer() else str(v)


PROBABILITY = ScoreScale()
PERCENT = ScoreScale("percent")
LOG_ODDS = ScoreScale("log_odds")
