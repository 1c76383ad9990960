"""What a policy may name: detectors (with their group, level and default direction),
actions, online learners and shadow metrics.

The detector names are those :class:`driftwatch.detectors.base.SignalResult` documents.

>>> DETECTORS["auc"].direction
'below'
>>> DETECTORS["missing_rate"].group
'data_quality'
>>> sorted(n for n, d in DETECTORS.items() if d.group == "business")
['approval_rate', 'bad_rate', 'expected_loss', 'metric']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ACTION_TYPES",
    "DETECTORS",
    "DIRECTIONS",
    "LEARNER_ESTIMATORS",
    "LEARNER_TRANSFORMERS",
    "MEASURES",
    "SHADOW_METRICS",
    "DetectorInfo",
    "Direction",
    "Measure",
]

Direction = Literal["above", "below", "abs"]
DIRECTIONS: tuple[str, ...] = ("above", "below", "abs")

#: What a threshold is compared with: the result's ``value`` or a change the detector
#: reports in ``details`` against the reference (``change``, ``abs_change``,
#: ``rel_change``, ``increase``).
Measure = Literal["value", "change", "abs_change", "rel_change", "increase"]
MEASURES: tuple[str, ...] = ("value", "change", "abs_change", "rel_change", "increase")


@dataclass(frozen=True, slots=True)
class DetectorInfo:
    """``level``: ``feature`` (one result per feature), ``model`` (one per window) or
    ``metric`` (one per business metric, named in the result's ``feature``)."""

    group: str
    level: Literal["feature", "model", "metric"]
    direction: Direction = "above"
    measure: Measure = "value"
    #: The changes against the reference the detector reports in ``details``.
    changes: tuple[str, ...] = ()


_F, _M = "feature", "model"
_ABS_REL = ("abs_change", "rel_change")

DETECTORS: dict[str, DetectorInfo] = {
    # drift: distance between the reference and the current distribution of one feature
    "psi": DetectorInfo("drift", _F),
    "kl_cur_ref": DetectorInfo("drift", _F),
    "kl_ref_cur": DetectorInfo("drift", _F),
    "js": DetectorInfo("drift", _F),
    "hellinger": DetectorInfo("drift", _F),
    "chi2": DetectorInfo("drift", _F),
    "cramers_v": DetectorInfo("drift", _F),
    "ks": DetectorInfo("drift", _F),
    "wasserstein": DetectorInfo("drift", _F),
    # the worst feature's value, with the spread across features in ``details``
    **{f"{n}_aggregate": DetectorInfo("drift", _M)
       for n in ("psi", "js", "hellinger", "ks", "wasserstein", "cramers_v")},
    # data quality: a broken feed, not a population change
    # missing_rate's value is the current share; ``increase`` is over the reference's share
    "missing_rate": DetectorInfo("data_quality", _F, measure="increase", changes=("increase",)),
    "out_of_range": DetectorInfo("data_quality", _F),
    "new_category_rate": DetectorInfo("data_quality", _F),
    "bad_record_rate": DetectorInfo("data_quality", _M),
    # share of the run's first records without the feature's mapped path (a wrong path)
    "field_absent": DetectorInfo("data_quality", _F),
    # confidence: the model's own scores
    "score_psi": DetectorInfo("confidence", _M),
    "variance_ratio": DetectorInfo("confidence", _M),
    "mean_shift": DetectorInfo("confidence", _M, "abs"),
    "entropy": DetectorInfo("confidence", _M, changes=("change", "rel_change")),
    # business and performance: need outcomes (labels)
    "approval_rate": DetectorInfo("business", _M, "abs", "abs_change", _ABS_REL),
    "bad_rate": DetectorInfo("business", _M, changes=_ABS_REL),
    "expected_loss": DetectorInfo("business", _M, changes=("rel_change",)),
    "metric": DetectorInfo("business", "metric", "abs", "change", ("change",)),
    "auc": DetectorInfo("performance", _M, "below", changes=("change",)),
    "gini": DetectorInfo("performance", _M, "below", changes=("change",)),
    "ks_score": DetectorInfo("performance", _M, "below", changes=("change",)),
    "calibration_ratio": DetectorInfo("performance", _M, changes=("change",)),
}

ACTION_TYPES: tuple[str, ...] = ("alert", "none", "online_update", "retrain", "shadow")

#: river steps an online update may chain with ``|``; the last one must be an estimator.
LEARNER_TRANSFORMERS: tuple[str, ...] = (
    "MaxAbsScaler",
    "MinMaxScaler",
    "OneHotEncoder",
    "StandardScaler",
)
LEARNER_ESTIMATORS: tuple[str, ...] = (
    "ALMAClassifier",
    "HoeffdingTreeClassifier",
    "LogisticRegression",
    "PAClassifier",
    "Perceptron",
)

SHADOW_METRICS: tuple[str, ...] = ("auc", "brier", "gini", "ks_score", "log_loss")
