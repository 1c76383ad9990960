"""The engine reads each signal's rules through a per-detector index: the reasons, their
order and the combined tier are those of a pass over every rule, in policy order."""

from __future__ import annotations

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.policy import EngineState, Tier, evaluate, load_policy_text

POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: index-test}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 500}
signals:
  - detector: psi
    features: [age]
    thresholds: {mild: 0.05, moderate: 0.20}
  - detector: ks
    thresholds: {mild: 0.10}
  - detector: psi
    thresholds: {mild: 0.10, moderate: 0.25}
combine: {method: count, min_features: 2}
data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
    - detector: out_of_range
      threshold: 0.01
    - detector: missing_rate
      features: [age]
      threshold: 0.02
  action: {type: alert, channels: [data-oncall]}
actions:
  mild: {type: alert, channels: [ops]}
  moderate: {type: alert, channels: [ops]}
"""


def window(*signals: SignalResult) -> Assessment:
    return Assessment("credit", 1, 0.0, 3600.0, 500, signals)


def test_two_rules_on_one_detector_give_reasons_in_policy_order():
    policy = load_policy_text(POLICY, file="index.yaml")
    signals = (
        SignalResult("ks", "drift", 0.3, "income"),
        SignalResult("psi", "drift", 0.3, "age"),     # both psi rules: moderate twice
        SignalResult("psi", "drift", 0.3, "income"),  # only the second psi rule
        SignalResult("wasserstein", "drift", 9.0, "age"),  # no rule reads it
    )
    decision, _ = evaluate(policy, window(*signals), EngineState(), now=3600.0)
    got = [(r.signal, r.feature, r.threshold, str(r.tier), r.source) for r in decision.reasons]
    assert got == [
        # moderate first; among equals (psi, age) the first rule's reason comes first
        ("psi", "age", 0.20, "moderate", "index.yaml:9"),
        ("psi", "age", 0.25, "moderate", "index.yaml:13"),
        ("psi", "income", 0.25, "moderate", "index.yaml:13"),
        ("ks", "income", 0.10, "mild", "index.yaml:11"),
    ]
    # two features reach moderate (count, min_features 2)
    assert decision.raw_tier == Tier.MODERATE


def missing(increase: float, feature: str) -> SignalResult:
    """A missing share ``increase`` over the reference's (the measure missing_rate reads)."""
    return SignalResult("missing_rate", "data_quality", 0.1 + increase, feature,
                        details={"reference": 0.1, "increase": increase})


def test_data_quality_signals_are_read_per_detector_in_policy_order():
    policy = load_policy_text(POLICY, file="index.yaml")
    signals = (
        missing(0.03, "age"),  # the third rule only
        SignalResult("out_of_range", "data_quality", 0.02, "income"),  # the second rule
        missing(0.06, "age"),  # the first and the third
        missing(0.5, "income"),  # the first rule only
    )
    decision, _ = evaluate(policy, window(*signals), EngineState(), now=3600.0)
    assert decision.data_quality_fault
    got = [(r.signal, r.feature, r.value, r.threshold) for r in decision.reasons]
    assert got == [  # all tier none and kind data_quality: sorted by signal, feature
        ("missing_rate", "age", 0.03, 0.02),
        ("missing_rate", "age", 0.06, 0.05),
        ("missing_rate", "age", 0.06, 0.02),
        ("missing_rate", "income", 0.5, 0.05),
        ("out_of_range", "income", 0.02, 0.01),
    ]
