"""What a detector says about one window, in a shape the policy engine and reports share.

>>> r = SignalResult("psi", "drift", 0.31, feature="income", threshold=0.25, n_ref=1000, n_cur=500)
>>> r.exceeds
True
>>> a = Assessment(model="credit", window_id=3, start_time=0.0, end_time=60.0, n_events=500,
...                signals=(r,))
>>> [s.feature for s in a.select(signal="psi")]
['income']
>>> Assessment.from_dict(a.to_dict()) == a
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from driftwatch.detectors.registry import SIGNALS

__all__ = ["BELOW", "GROUPS", "TWO_SIDED", "Assessment", "SignalResult"]

#: Signal groups. ``data_quality`` is kept apart from ``drift`` on purpose: a broken feed
#: must never be mistaken for a population change (it alerts and blocks retraining).
GROUPS = ("drift", "data_quality", "confidence", "business", "performance", "estimated",
          "cohort")


#: Signals whose ``threshold`` is a floor (worse when lower), and those compared by
#: absolute value; every other threshold is a ceiling (as in the policy catalog).
BELOW = frozenset(n for n, s in SIGNALS.items() if s.direction == "below")
TWO_SIDED = frozenset(n for n, s in SIGNALS.items() if s.direction == "abs")


#: ``details`` not given (its default is a new empty dict, as the field's factory gives).
_NO_DETAILS: Any = object()


@dataclass(frozen=True, slots=True, init=False)
class SignalResult:
    """One statistic on one feature (or on the model when ``feature`` is None).

    ``signal`` names the statistic (``psi``, ``kl_cur_ref``, ``kl_ref_cur``, ``js``,
    ``hellinger``, ``chi2``, ``cramers_v``, ``ks``, ``wasserstein``, ``missing_rate``,
    ``out_of_range``, ``new_category_rate``, ``bad_record_rate``, ``field_absent``, ``score_psi``,
    ``variance_ratio``, ``mean_shift``, ``entropy``, ``approval_rate``, ``bad_rate``,
    ``auc``, ``gini``, ``ks_score``, ``calibration_ratio``, ``expected_loss`` ...).
    ``threshold`` is the detector's own (fixed or calibrated) alarm level, when it has one;
    the policy engine applies the policy's tiers. ``p_value`` only for tests that have one.
    ``details`` holds what a person needs to act (bins that moved most, interval bounds).
    ``segment`` names the segment the statistic was measured on (None: the whole window).
    """

    signal: str
    group: str
    value: float
    feature: str | None = None
    threshold: float | None = None
    n_ref: int = 0
    n_cur: int = 0
    p_value: float | None = None
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    segment: str | None = None

    def __init__(self, signal: str, group: str, value: float, feature: str | None = None,
                 threshold: float | None = None, n_ref: int = 0, n_cur: int = 0,
                 p_value: float | None = None, details: dict[str, Any] = _NO_DETAILS,
                 segment: str | None = None) -> None:
        # the generated __init__ of a frozen dataclass sets each field through
        # object.__setattr__; a window builds over a hundred of these, so the slots'
        # own setters set the same fields at about half the cost
        _put_signal(self, signal)
        _put_group(self, group)
        _put_value(self, value)
        _put_feature(self, feature)
        _put_threshold(self, threshold)
        _put_n_ref(self, n_ref)
        _put_n_cur(self, n_cur)
        _put_p_value(self, p_value)
        _put_details(self, {} if details is _NO_DETAILS else details)
        _put_segment(self, segment)

    @property
    def exceeds(self) -> bool:
        """The detector's own verdict, by the signal's direction: above a ceiling, below
        a floor (``auc``, ``gini``, ...), beyond a two-sided level (``mean_shift``), or,
        for ``approval_rate`` (no single threshold: it moves both ways), outside its band.

        >>> SignalResult("auc", "performance", 0.70, threshold=0.72).exceeds
        True
        >>> SignalResult("mean_shift", "confidence", -0.3, threshold=0.1).exceeds
        True
        """
        if self.signal == "approval_rate":
            return bool(self.details.get("outside_band", False))
        t, v = self.threshold, self.value
        if t is None or not math.isfinite(v):
            return False
        if self.signal in BELOW:
            return v < t
        if self.signal in TWO_SIDED:
            return abs(v) > t
        return v > t

    def to_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies every detail, and this runs per signal
        # (every signal of every window goes to the timeline once); ``segment`` only when
        # set, so whole-window records read as they always did
        d = {
            "signal": self.signal,
            "group": self.group,
            "value": self.value,
            "feature": self.feature,
            "threshold": self.threshold,
            "n_ref": self.n_ref,
            "n_cur": self.n_cur,
            "p_value": self.p_value,
            "details": self.details.copy(),
        }
        return d if self.segment is None else {"segment": self.segment, **d}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SignalResult:
        return cls(**d)


# the slots' setters SignalResult.__init__ calls (the slots exist once the class is made)
(_put_signal, _put_group, _put_value, _put_feature, _put_threshold, _put_n_ref, _put_n_cur,
 _put_p_value, _put_details, _put_segment) = (
    getattr(SignalResult, n).__set__ for n in (
        "signal", "group", "value", "feature", "threshold", "n_ref", "n_cur", "p_value",
        "details", "segment"))


@dataclass(frozen=True, slots=True)
class Assessment:
    """Every signal computed for one closed window of one model."""

    model: str
    window_id: int
    start_time: float
    end_time: float
    n_events: int
    signals: tuple[SignalResult, ...] = ()
    n_labelled: int = 0

    def select(
        self, *, signal: str | None = None, group: str | None = None, feature: str | None = None,
        segment: str | bool | None = False,
    ) -> Iterator[SignalResult]:
        """Signals by name, group and feature; ``segment`` a name for that segment's,
        None for the whole window's, and False (the default) for both."""
        for s in self.signals:
            if segment is not False and s.segment != segment:
                continue
            if signal is not None and s.signal != signal:
                continue
            if group is not None and s.group != group:
                continue
            if feature is not None and s.feature != feature:
                continue
            yield s

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "window_id": self.window_id,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "n_events": self.n_events,
            "signals": [s.to_dict() for s in self.signals],
            "n_labelled": self.n_labelled,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Assessment:
        d = dict(d)
        d["signals"] = tuple(SignalResult.from_dict(s) for s in d.get("signals", ()))
        return cls(**d)
