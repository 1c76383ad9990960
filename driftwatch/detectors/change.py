"""Streaming change detection on a per-window metric series (two-sided CUSUM).

One value per window (a bad rate, an AUC, an approval rate) goes in; the tracker says
when the series has left its level. Each value is standardised, ``z = (x - target) / s``,
by the per-window standard error when the caller knows it (``se=``, e.g. binomial for a
rate: windows of different sizes then weigh correctly) or else by the spread learnt in a
warm-up. Two one-sided sums ``S+ = max(0, S+ + z - k)`` and ``S- = max(0, S- - z - k)``
accumulate evidence; a change is declared when either exceeds ``h`` (defaults ``k=0.5``,
``h=5``: about 465 windows between false alarms on a stable N(0,1) series, about 10
windows to detect a one-sd shift). After a change both sums restart and, when the target
was learnt, the tracker learns the new level (a change is reported once, not every window).

The state is a handful of numbers: :meth:`to_dict` / :meth:`from_dict` carry it through
checkpoints (JSON-safe).

>>> import numpy as np
>>> rng = np.random.default_rng(3)
>>> series = np.r_[rng.normal(0.10, 0.01, 40), rng.normal(0.13, 0.01, 20)]
>>> t = MetricChangeTracker(warmup=10)
>>> [i for i, x in enumerate(series) if t.update(float(x))]
[44]
>>> t.last_direction, MetricChangeTracker.from_dict(t.to_dict()).to_dict() == t.to_dict()
('up', True)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MetricChangeTracker"]


class MetricChangeTracker:
    """Two-sided CUSUM with an optional warm-up (see the module docstring)."""

    def __init__(
        self,
        *,
        k: float = 0.5,
        h: float = 5.0,
        warmup: int = 10,
        target: float | None = None,
        scale: float | None = None,
    ) -> None:
        if k < 0 or h <= 0 or warmup < 2:
            raise ValueError("need k >= 0, h > 0 and warmup >= 2")
        self.k, self.h, self.warmup = k, h, warmup
        self.fixed_target = target is not None
        self.target = target
        self.scale = scale
        self.n = 0  # values seen (finite ones)
        self.s_hi = 0.0
        self.s_lo = 0.0
        self.drift_detected = False
        self.n_changes = 0
        self.last_change: int | None = None  # index (0-based, among finite values)
        self.last_direction: str | None = None
        self._wn = 0  # warm-up (Welford)
        self._wmean = 0.0
        self._wm2 = 0.0

    def __repr__(self) -> str:
        return (
            f"MetricChangeTracker(k={self.k}, h={self.h}, target={self.target}, "
            f"scale={self.scale}, n={self.n}, changes={self.n_changes})"
        )

    @property
    def learning(self) -> bool:
        return self.target is None or self.scale is None

    def update(self, x: float, se: float | None = None) -> bool:
        """Add one window's value; True when a change is detected at this value."""
        self.drift_detected = False
        if not math.isfinite(x):
            return False
        idx = self.n
        self.n += 1
        if self.learning:
            self._wn += 1
            d = x - self._wmean
            self._wmean += d / self._wn
            self._wm2 += d * (x - self._wmean)
            if self._wn >= self.warmup:
                if self.target is None:
                    self.target = self._wmean
                if self.scale is None:
                    sd = math.sqrt(self._wm2 / (self._wn - 1))
                    self.scale = sd if sd > 0 else max(abs(self._wmean), 1.0) * 1e-9
            if se is None or self.target is None:
                return False
        s = se if se is not None and se > 0 else self.scale
        if s is None or self.target is None:
            return False
        z = (x - self.target) / s
        self.s_hi = max(0.0, self.s_hi + z - self.k)
        self.s_lo = max(0.0, self.s_lo - z - self.k)
        if self.s_hi > self.h or self.s_lo > self.h:
            self.drift_detected = True
            self.last_direction = "up" if self.s_hi > self.h else "down"
            self.last_change = idx
            self.n_changes += 1
            self.s_hi = self.s_lo = 0.0
            if not self.fixed_target:
                self.target = None
                self._wn, self._wmean, self._wm2 = 0, 0.0, 0.0
        return self.drift_detected

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "h": self.h, "warmup": self.warmup, "fixed_target": self.fixed_target,
            "target": self.target, "scale": self.scale, "n": self.n, "s_hi": self.s_hi,
            "s_lo": self.s_lo, "drift_detected": self.drift_detected,
            "n_changes": self.n_changes, "last_change": self.last_change,
            "last_direction": self.last_direction, "warm": [self._wn, self._wmean, self._wm2],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MetricChangeTracker:
        t = cls(k=d["k"], h=d["h"], warmup=d["warmup"], target=d["target"], scale=d["scale"])
        t.fixed_target = bool(d["fixed_target"])
        for name in ("n", "s_hi", "s_lo", "drift_detected", "n_changes", "last_change",
                     "last_direction"):
            setattr(t, name, d[name])
        t._wn, t._wmean, t._wm2 = int(d["warm"][0]), float(d["warm"][1]), float(d["warm"][2])
        return t
