"""What a policy may name: detectors (with their group, level and default direction),
actions, online learners and shadow metrics.

The detector names come from :mod:`driftwatch.detectors.registry`, the one table the
detectors also read.

>>> DETECTORS["auc"].direction
'below'
>>> DETECTORS["missing_rate"].group
'data_quality'
>>> sorted(n for n, d in DETECTORS.items() if d.group == "business")
['approval_rate', 'bad_rate', 'change_point', 'expected_loss', 'metric']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from driftwatch.detectors.registry import SIGNALS as REGISTRY
from driftwatch.detectors.registry import (
    Direction,
    Measure,
    SignalSpec,
    measure_name,
    measures_of,
)

__all__ = [
    "ACTION_TYPES",
    "DETECTORS",
    "DIRECTIONS",
    "LEARNER_ESTIMATORS",
    "LEARNER_TRANSFORMERS",
    "MEASURES",
    "RANKING_METRICS",
    "RECALIBRATION_METRIC",
    "SHADOW_METRICS",
    "DetectorInfo",
    "Direction",
    "Measure",
    "measure_name",
    "measures_of",
]

DIRECTIONS: tuple[str, ...] = get_args(Direction)

#: What a threshold is compared with: the result's ``value``, a change the detector
#: reports in ``details`` against the reference (``change``, ``abs_change``,
#: ``rel_change``, ``increase``), or another form of the value it reports there
#: (``psi_without_missing``); :func:`measures_of` gives a detector's own.
MEASURES: tuple[str, ...] = get_args(Measure)

#: ``level``: ``feature`` (one result per feature), ``model`` (one per window) or
#: ``metric`` (one per business metric, named in the result's ``feature``).
DetectorInfo = SignalSpec

#: Generated from the detectors' registry: a policy names exactly what they emit.
DETECTORS: Mapping[str, DetectorInfo] = REGISTRY

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
#: Shadow metrics of the order of the scores alone: a recalibration of the champion (a
#: monotone map of its score) has the champion's value on them, so it is judged on
#: :data:`RECALIBRATION_METRIC` instead.
RANKING_METRICS: frozenset[str] = frozenset({"auc", "gini", "ks_score"})
RECALIBRATION_METRIC = "log_loss"
