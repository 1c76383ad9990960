"""Change points in per-window metric series (approval rate, bad rate) with river's
ADWIN or Page-Hinkley detectors.

Each window's value is first standardised against the reference, ``z = (x - ref) / se``
with the binomial standard error at the window's size (``sqrt(p (1 - p) / n)``, ``p`` the
reference share), so windows of any size weigh alike and one setting fits every metric.
The detector sees the ``z`` series (ADWIN checks for a cut at every window: one value is
a whole window here, not one event). The ``change_point`` signal is 1 in the window where
the detector fires and 0 otherwise, for the metric named in ``feature``, with the
detector's own estimate in ``details``.

A detector restarts after each change, so its state is the ``z`` series since then (at
most the last ``max_history`` values): :meth:`MetricChange.to_dict` keeps it as numbers
and :meth:`MetricChange.from_dict` replays it into a fresh river detector. A checkpoint is
JSON, no pickles, and restores the same detector.

>>> import numpy as np
>>> rng = np.random.default_rng(3)
>>> t = MetricChange("page_hinkley", threshold=20.0, delta=0.05, min_windows=10)
>>> z = np.r_[rng.normal(0, 1, 60), rng.normal(3, 1, 20)]
>>> [i for i, x in enumerate(z) if t.update(float(x))]
[67]
>>> MetricChange.from_dict(t.to_dict()).to_dict() == t.to_dict()
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from driftwatch.detectors.base import SignalResult

__all__ = ["CHANGE_METHODS", "CHANGE_SERIES", "MetricChange", "change_signals", "z_score"]

CHANGE_METHODS = ("adwin", "page_hinkley")
#: Metric series a change detector may follow: a signal whose value is a share.
CHANGE_SERIES = ("approval_rate", "bad_rate")


class MetricChange:
    """One river detector on one standardised series (see the module docstring).

    ``adwin``: ``delta`` is ADWIN's confidence (river's default 0.002); ``page_hinkley``:
    ``delta`` the tolerated drift per window and ``threshold`` the cumulative deviation
    (in standard errors) that declares a change. ``min_windows``: values before the
    detector may fire.
    """

    def __init__(self, method: str = "adwin", *, delta: float = 0.002, threshold: float = 20.0,
                 min_windows: int = 10, max_history: int = 2000) -> None:
        if method not in CHANGE_METHODS:
            raise ValueError(f"method must be one of {CHANGE_METHODS}, found {method!r}")
        self.method, self.delta, self.threshold = method, float(delta), float(threshold)
        self.min_windows, self.max_history = int(min_windows), int(max_history)
        self.history: list[float] = []
        self.n_changes = 0
        self._det = self._fresh()

    def _fresh(self) -> Any:
        from river.drift import ADWIN, PageHinkley

        if self.method == "adwin":
            return ADWIN(delta=self.delta, grace_period=self.min_windows, clock=1)
        return PageHinkley(min_instances=self.min_windows, delta=self.delta,
                           threshold=self.threshold)

    def __repr__(self) -> str:
        return (f"MetricChange({self.method!r}, delta={self.delta}, threshold={self.threshold}, "
                f"n={len(self.history)}, changes={self.n_changes})")

    @property
    def estimate(self) -> float | None:
        """The detector's current mean of the series (ADWIN), when it has one."""
        v = getattr(self._det, "estimation", None)
        return float(v) if isinstance(v, int | float) and math.isfinite(v) else None

    def update(self, z: float) -> bool:
        """Add one window's standardised value; True when a change is declared now."""
        if not math.isfinite(z):
            return False
        self._det.update(z)
        if self._det.drift_detected:  # restart at a change: the state is what came after
            self.n_changes += 1
            self.history = []
            self._det = self._fresh()
            return True
        self.history.append(z)
        if len(self.history) > self.max_history:  # bounded state: forget the oldest
            self.history = self.history[-self.max_history:]
            self._det = self._fresh()
            for x in self.history:
                self._det.update(x)
        return False

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "delta": self.delta, "threshold": self.threshold,
                "min_windows": self.min_windows, "max_history": self.max_history,
                "history": list(self.history), "n_changes": self.n_changes}

    @property
    def settings(self) -> tuple[str, float, float, int]:
        """``(method, delta, threshold, min_windows)``: what a policy sets."""
        return self.method, self.delta, self.threshold, self.min_windows

    def retuned(self, method: str, *, delta: float, threshold: float,
                min_windows: int) -> MetricChange:
        """This series under other settings: a fresh detector of those settings fed the
        values seen since the last change (a reloaded policy or a restored checkpoint
        must not keep judging with the settings the tracker was built with).

        >>> t = MetricChange("adwin")
        >>> _ = [t.update(0.1 * i) for i in range(5)]
        >>> u = t.retuned("page_hinkley", delta=0.05, threshold=10.0, min_windows=5)
        >>> u.settings, u.history == t.history
        (('page_hinkley', 0.05, 10.0, 5), True)
        """
        return MetricChange.from_dict({**self.to_dict(), "method": method, "delta": delta,
                                       "threshold": threshold, "min_windows": min_windows})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MetricChange:
        t = cls(d["method"], delta=d["delta"], threshold=d["threshold"],
                min_windows=d["min_windows"], max_history=d["max_history"])
        for x in d["history"]:
            t._det.update(float(x))
        t.history = [float(x) for x in d["history"]]
        t.n_changes = int(d["n_changes"])
        return t


def z_score(r: SignalResult) -> float:
    """A share signal's distance from its reference in binomial standard errors."""
    ref = r.details.get("reference")
    n = r.n_cur
    if not isinstance(ref, int | float) or not math.isfinite(ref) or n <= 0:
        return math.nan
    p = min(max(float(ref), 1e-6), 1 - 1e-6)
    return (r.value - p) / math.sqrt(p * (1 - p) / n)


def change_signals(trackers: dict[str, MetricChange], signals: Iterable[SignalResult],
                   make: Any) -> list[SignalResult]:
    """Feed each followed series' value of this window to its tracker (``make(name)``
    builds one on first sight); one ``change_point`` result per series seen."""
    out = []
    for r in signals:
        if r.signal not in CHANGE_SERIES or r.feature is not None:
            continue
        t = trackers.get(r.signal)
        if t is None:
            t = trackers[r.signal] = make(r.signal)
        z = z_score(r)
        fired = t.update(z)
        out.append(SignalResult(
            "change_point", "business", 1.0 if fired else 0.0, r.signal, None, r.n_ref,
            r.n_cur, None,
            {"method": t.method, "series_value": r.value, "z": z, "estimate": t.estimate,
             "windows_since_change": len(t.history), "changes": t.n_changes},
        ))
    return out
