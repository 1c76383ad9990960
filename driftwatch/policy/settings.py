"""Policy sections that tune the detectors and the label join (every value has a default,
and ``policy explain`` prints them all).

>>> d = DetectorSettings()
>>> d.fdr, d.eps, d.min_labelled, d.calibration.draws, d.calibration.reference_noise
(0.01, 0.0001, 500, 2000, True)
>>> LabelSettings().ttl / 86400, LabelSettings().max_pending
(120.0, 1000000)
>>> CohortSettings().min_completeness, CohortSettings().max_cohorts
(0.8, 400)
>>> from pydantic import ValidationError
>>> try:
...     DetectorSettings(calibration={"draws": 50})
... except ValidationError as exc:
...     print(exc.errors()[0]["loc"], exc.errors()[0]["type"])
('calibration', 'draws') greater_than_equal
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from driftwatch.detectors.divergence import DEFAULT_EPS
from driftwatch.policy.base import StrictModel
from driftwatch.policy.fields import PositiveDuration

__all__ = [
    "CalibrationSettings",
    "ChangeSettings",
    "CohortSettings",
    "DetectorSettings",
    "LabelSettings",
]


class CalibrationSettings(StrictModel):
    """How calibrated levels are resampled (see :mod:`driftwatch.detectors.calibrate`)."""

    #: Null windows resampled per window size; the smallest false-alarm rate times this
    #: must be at least 2 (2000 draws: the level's own error is about ±0.002 at 0.01).
    draws: int = Field(default=2000, ge=100, le=100_000)
    #: True: the reference is a sample of the population, so its own sampling noise is
    #: part of the null (windows much larger than the reference then do not alarm on it).
    #: False: the reference is the population; windows are resampled from it alone.
    reference_noise: bool = True


class ChangeSettings(StrictModel):
    """The ``change_point`` signal: river's detector on each metric series (approval
    rate, bad rate), standardised by its binomial standard error per window."""

    method: Literal["adwin", "page_hinkley"] = "adwin"
    #: ADWIN: confidence; Page-Hinkley: tolerated drift per window (standard errors).
    delta: float = Field(default=0.002, gt=0, lt=1)
    #: Page-Hinkley: the cumulative deviation (standard errors) that declares a change
    #: (ADWIN has none: another value with method adwin is an error).
    threshold: float = Field(default=20.0, gt=0)
    #: Windows a series needs before a change can be declared.
    min_windows: int = Field(default=10, ge=1)


class DetectorSettings(StrictModel):
    """Settings of the detectors (the signals' statistics, not the policy's tiers)."""

    #: Coarse (decile) bins and fine (KS/Wasserstein) bins per numeric feature, and
    #: categorical levels kept (then ``other``), when the reference is a dataset; a saved
    #: profile keeps its own bins, and naming other ones here is an error.
    bins: int = Field(default=10, ge=2, le=100)
    fine_bins: int = Field(default=200, ge=10, le=2000)
    top_k: int = Field(default=20, ge=1, le=1000)
    #: Share floor of an empty bin in PSI and the KLs.
    eps: float = Field(default=DEFAULT_EPS, gt=0, lt=0.1)
    #: False-alarm rate of the detectors' own thresholds (moment and rate statistics).
    alpha: float = Field(default=0.01, gt=0, lt=1)
    #: Benjamini-Hochberg false-discovery level across features (chi2 and ks p-values).
    fdr: float = Field(default=0.01, gt=0, lt=1)
    #: Joined outcomes a window needs before its label-based signals are reported.
    min_labelled: int = Field(default=500, ge=1)
    calibration: CalibrationSettings = Field(default_factory=CalibrationSettings)
    change: ChangeSettings = Field(default_factory=ChangeSettings)


class LabelSettings(StrictModel):
    """How long predictions wait for their outcome, and how many are held."""

    #: A prediction waits this long (event time) for its outcome, then counts as expired.
    ttl: PositiveDuration = 120 * 86400.0
    #: Predictions held at most; beyond it the oldest are evicted (and counted).
    max_pending: int = Field(default=1_000_000, ge=1)
    #: Feature rows kept for predictions awaiting outcomes (for online updates).
    pending_feature_rows: int = Field(default=200_000, ge=1)
    #: Recent labelled rows kept for online updates and shadow evaluation.
    labelled_rows: int = Field(default=20_000, ge=1)


class CohortSettings(StrictModel):
    """Labelled statistics per prediction window (the ``cohort_*`` signals)."""

    #: A cohort's signals are judged once, when this share of its (approved) predictions
    #: has an outcome, or when none is pending any more (the rest expired or were
    #: evicted); it also needs ``detectors.min_labelled`` outcomes.
    min_completeness: float = Field(default=0.8, gt=0, le=1)
    #: Cohorts kept at most (one per pane of the window); the oldest are dropped first,
    #: and outcomes that arrive later for them are counted, not attributed.
    max_cohorts: int = Field(default=400, ge=1, le=100_000)
