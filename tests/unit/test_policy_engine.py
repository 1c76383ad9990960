"""The policy engine on scripted assessment sequences: exact decisions, window by window."""

from __future__ import annotations

import json
import math

import pytest

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.detectors.registry import CALIBRATED_LEVELS, rate_key
from driftwatch.policy import Decision, EngineState, Tier, evaluate, load_policy_text

HOUR = 3600.0

HEAD = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: engine-test}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 500}
"""

PSI = """signals:
  - detector: psi
    thresholds:
      mild: 0.10
      moderate: 0.25
      severe: 0.50
"""

ACTIONS = """actions:
  mild: {type: alert, channels: [ops]}
  moderate: {type: shadow, min_labelled: 100}
  severe: {type: retrain, argv: [python, job.py]}
"""


def make(extra: str = "", signals: str = PSI, actions: str = ACTIONS):
    text = HEAD + signals + extra + actions
    return load_policy_text(text, file="engine.yaml"), text


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing ``needle``."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


def psi(value: float, feature: str = "income", **kw) -> SignalResult:
    return SignalResult("psi", "drift", value, feature, **kw)


def window(i: int, *signals: SignalResult) -> Assessment:
    return Assessment("credit", i, (i - 1) * HOUR, i * HOUR, 500, tuple(signals))


def run(policy, steps, *, times=None, running_retrains=0, state=None):
    """Evaluate windows in order; ``steps`` is a list of signal tuples (or one signal)."""
    state = state or EngineState()
    out = []
    for i, sigs in enumerate(steps, 1):
        sigs = sigs if isinstance(sigs, tuple) else (sigs,)
        now = times[i - 1] if times else i * HOUR
        d, state = evaluate(policy, window(i, *sigs), state, now,
                            running_retrains=running_retrains)
        out.append(d)
    return out, state


def tiers(decisions: list[Decision]) -> list[str]:
    return [str(d.tier) for d in decisions]


def actions(decisions: list[Decision]) -> list[str | None]:
    return [d.action for d in decisions]


# --- severity from thresholds ---------------------------------------------------------------

@pytest.mark.parametrize(("value", "tier"), [
    (0.05, "none"), (0.10, "mild"), (0.2499, "mild"), (0.25, "moderate"), (0.7, "severe"),
])
def test_a_value_reaches_the_highest_tier_whose_threshold_it_meets(value, tier):
    policy, _ = make()
    (d,), _ = run(policy, [psi(value)])
    assert str(d.tier) == tier
    assert str(d.raw_tier) == tier


def test_reasons_name_signal_feature_value_threshold_and_policy_line():
    policy, text = make()
    (d,), _ = run(policy, [(psi(0.31, "income"), psi(0.12, "age"), psi(0.01, "utilization"))])
    assert d.tier == Tier.MODERATE
    assert [(r.signal, r.feature, r.value, r.threshold, str(r.tier), r.direction, r.kind)
            for r in d.reasons] == [
        ("psi", "income", 0.31, 0.25, "moderate", "above", "trigger"),
        ("psi", "age", 0.12, 0.10, "mild", "above", "trigger"),
    ]
    assert d.reasons[0].source == f"engine.yaml:{line_of(text, 'moderate: 0.25')}"
    assert d.reasons[1].source == f"engine.yaml:{line_of(text, 'mild: 0.10')}"
    assert d.reasons[0].group == "drift"


def test_below_direction_gets_worse_as_the_value_falls():
    signals = """signals:
  - detector: auc
    thresholds: {mild: 0.75, moderate: 0.70, severe: 0.60}
"""
    policy, _ = make(signals=signals)
    assert policy.signals[0].direction == "below"  # the detector's default
    results = [SignalResult("auc", "performance", v) for v in (0.80, 0.75, 0.69, 0.55)]
    decisions, _ = run(policy, results)
    assert [str(d.raw_tier) for d in decisions] == ["none", "mild", "moderate", "severe"]
    assert decisions[2].reasons[0].direction == "below"


def test_abs_direction_is_two_sided():
    signals = """signals:
  - detector: mean_shift
    thresholds: {mild: 0.1, severe: 0.3}
"""
    policy, _ = make(signals=signals)
    results = [SignalResult("mean_shift", "confidence", v) for v in (-0.05, -0.15, 0.35, -0.4)]
    decisions, _ = run(policy, results)
    assert [str(d.raw_tier) for d in decisions] == ["none", "mild", "severe", "severe"]


def test_measure_compares_a_change_from_the_details():
    signals = """signals:
  - detector: approval_rate
    thresholds: {mild: 0.03, severe: 0.10}
  - detector: gini
    measure: change
    thresholds: {moderate: -0.05}
"""
    policy, _ = make(signals=signals)
    assert (policy.signals[0].measure, policy.signals[0].direction) == ("abs_change", "abs")

    def approval(level: float, change: float) -> SignalResult:
        return SignalResult("approval_rate", "business", level, details={"abs_change": change})

    gini = SignalResult("gini", "performance", 0.41, details={"change": -0.06})
    decisions, _ = run(policy, [approval(0.62, 0.01), approval(0.58, -0.04),
                                (approval(0.50, -0.12), gini), gini,
                                SignalResult("gini", "performance", 0.41)])
    assert [str(d.raw_tier) for d in decisions] == ["none", "mild", "severe", "moderate", "none"]
    r = decisions[1].reasons[0]
    assert (r.signal, r.value, r.threshold, r.measure) == ("approval_rate", -0.04, 0.03,
                                                          "abs_change")
    assert decisions[4].notes == ("gini[-]: no change in its details; skipped",)


def test_per_feature_override_replaces_only_the_tiers_it_names():
    signals = """signals:
  - detector: psi
    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}
    overrides:
      income: {mild: 0.15}
"""
    policy, text = make(signals=signals)
    (d1, d2, d3), _ = run(policy, [psi(0.12, "income"), psi(0.12, "age"), psi(0.3, "income")])
    assert tiers([d1, d2, d3]) == ["none", "mild", "moderate"]
    (d,), _ = run(policy, [psi(0.16, "income")])
    assert d.reasons[0].source == f"engine.yaml:{line_of(text, 'income: {mild: 0.15}')}"
    # the inherited moderate level cites the signal's own line
    assert d3.reasons[0].source == f"engine.yaml:{line_of(text, 'thresholds:')}"


def test_feature_list_limits_which_results_count():
    signals = """signals:
  - detector: psi
    features: [age]
    thresholds: {mild: 0.10}
"""
    policy, _ = make(signals=signals)
    (d1, d2), _ = run(policy, [psi(0.9, "income"), psi(0.11, "age")])
    assert tiers([d1, d2]) == ["none", "mild"]


def test_non_finite_values_and_unknown_signals_are_ignored():
    policy, _ = make()
    (d,), _ = run(policy, [(psi(math.nan), SignalResult("ks", "drift", 0.9, "age"))])
    assert d.tier == Tier.NONE and d.reasons == ()


# --- combining features ---------------------------------------------------------------------

def test_count_needs_min_features_at_the_tier():
    policy, _ = make("combine: {method: count, min_features: 2}\n")
    decisions, _ = run(policy, [
        (psi(0.6, "income"), psi(0.01, "age")),
        (psi(0.6, "income"), psi(0.12, "age")),
        (psi(0.6, "income"), psi(0.3, "age")),
    ])
    assert [str(d.raw_tier) for d in decisions] == ["none", "mild", "moderate"]


def test_weighted_vote_uses_feature_weights():
    signals = """signals:
  - detector: psi
    thresholds: {mild: 0.10, moderate: 0.25}
    weights: {debt_to_income: 3.0}
"""
    policy, _ = make("combine: {method: weighted_vote, quorum: 0.5}\n", signals=signals)
    others = tuple(psi(0.0, f) for f in ("age", "income"))
    decisions, _ = run(policy, [
        (psi(0.3, "debt_to_income"), *others),  # 3 of 5 weight at moderate
        (psi(0.3, "age"), psi(0.3, "income"), psi(0.0, "debt_to_income")),  # 2 of 5
    ])
    assert [str(d.raw_tier) for d in decisions] == ["moderate", "none"]


def test_a_feature_counts_once_with_its_worst_signal():
    signals = PSI + """  - detector: ks
    thresholds: {mild: 0.05, moderate: 0.10}
"""
    policy, _ = make("combine: {method: count, min_features: 2}\n", signals=signals)
    (d,), _ = run(policy, [(psi(0.3, "income"), SignalResult("ks", "drift", 0.2, "income"))])
    assert d.raw_tier == Tier.NONE  # one feature, however many signals
    assert len(d.reasons) == 2


# --- calibrated thresholds ------------------------------------------------------------------

CALIBRATED = """signals:
  - detector: ks
    thresholds:
      mild: {calibrated: {false_alarm_rate: 0.01}}
      severe: 0.5
"""


def test_calibrated_level_comes_from_the_detector():
    policy, _ = make(signals=CALIBRATED)
    table = SignalResult("ks", "drift", 0.06, "age",
                         details={CALIBRATED_LEVELS: {rate_key(0.01): 0.05}})
    # the detector's own threshold is not a calibrated level: the tier is skipped, said so
    own = SignalResult("ks", "drift", 0.06, "age", threshold=0.05)
    none = SignalResult("ks", "drift", 0.06, "age")
    (d1, d2, d3), _ = run(policy, [table, own, none])
    assert (str(d1.raw_tier), d1.reasons[0].threshold) == ("mild", 0.05)
    assert d1.reasons[0].false_alarm_rate == 0.01
    for d in (d2, d3):
        assert d.raw_tier == Tier.NONE
        assert d.notes == ("ks[age]: no calibrated level for false_alarm_rate 0.01; "
                           "tier mild skipped",)


# --- persistence ----------------------------------------------------------------------------

def test_persistence_waits_for_n_windows_in_a_row():
    policy, _ = make("persistence: {mild: 3, moderate: 2, severe: 1}\n")
    decisions, _ = run(policy, [psi(0.15), psi(0.15), psi(0.01), psi(0.15), psi(0.15),
                                psi(0.15), psi(0.15)])
    assert tiers(decisions) == ["none", "none", "none", "none", "none", "mild", "mild"]
    assert [d.suppressed_by for d in decisions[:2]] == [("persistence",), ("persistence",)]
    assert decisions[5].action == "alert"


def test_a_severe_window_counts_toward_lower_tiers():
    policy, _ = make("persistence: {mild: 2, moderate: 2, severe: 1}\n")
    decisions, _ = run(policy, [psi(0.3), psi(0.7), psi(0.3)])
    assert tiers(decisions) == ["none", "severe", "moderate"]
    assert decisions[0].suppressed_by == ("persistence",)


# --- hysteresis -----------------------------------------------------------------------------

def test_hysteresis_factor_holds_an_active_tier_until_it_clears():
    policy, text = make("hysteresis: {factor: 0.8}\ncooldown: {moderate: 1d}\n")
    decisions, _ = run(policy, [psi(0.30), psi(0.22), psi(0.21), psi(0.19), psi(0.22)])
    # moderate clears below 0.25 x 0.8 = 0.2; once cleared, 0.22 is only mild again
    assert tiers(decisions) == ["moderate", "moderate", "moderate", "mild", "mild"]
    assert [str(d.raw_tier) for d in decisions] == ["moderate", "mild", "mild", "mild", "mild"]
    hold = [r for r in decisions[1].reasons if r.kind == "hold"]
    assert [(r.value, r.threshold, str(r.tier)) for r in hold] == [(0.22, 0.2, "moderate")]
    assert hold[0].source == f"engine.yaml:{line_of(text, 'factor: 0.8')}"


def test_explicit_clear_levels():
    signals = """signals:
  - detector: psi
    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}
    clear: {severe: 0.40}
"""
    policy, text = make(signals=signals)
    decisions, _ = run(policy, [psi(0.6), psi(0.45), psi(0.39)])
    assert tiers(decisions) == ["severe", "severe", "moderate"]
    assert decisions[1].reasons[0].source == f"engine.yaml:{line_of(text, 'clear:')}"


def test_no_hysteresis_by_default():
    policy, _ = make()
    decisions, _ = run(policy, [psi(0.30), psi(0.24)])
    assert tiers(decisions) == ["moderate", "mild"]


# --- escalation -----------------------------------------------------------------------------

def test_mild_persisting_escalates_to_moderate():
    policy, text = make("escalation:\n  - {from: mild, to: moderate, after: 3}\n")
    decisions, _ = run(policy, [psi(0.15)] * 4 + [psi(0.01), psi(0.15)])
    assert tiers(decisions) == ["mild", "mild", "moderate", "moderate", "none", "mild"]
    assert actions(decisions) == ["alert", "alert", "shadow", "shadow", None, "alert"]
    d = decisions[2]
    assert d.escalated_from == Tier.MILD and d.raw_tier == Tier.MILD
    esc = [r for r in d.reasons if r.kind == "escalation"]
    assert [(r.value, r.threshold, str(r.tier)) for r in esc] == [(3.0, 3.0, "moderate")]
    assert esc[0].source == f"engine.yaml:{line_of(text, '{from: mild')}"


def test_escalations_chain_through_the_tiers():
    extra = ("escalation:\n  - {from: mild, to: moderate, after: 2}\n"
             "  - {from: moderate, to: severe, after: 4}\n")
    policy, _ = make(extra)
    decisions, _ = run(policy, [psi(0.15)] * 5)
    assert tiers(decisions) == ["mild", "moderate", "moderate", "moderate", "severe"]


# --- cooldown -------------------------------------------------------------------------------

def test_cooldown_holds_back_the_same_tier_and_those_below():
    policy, _ = make("cooldown: {mild: 0s, moderate: 3h, severe: 1d}\n")
    decisions, state = run(policy, [psi(0.3), psi(0.3), psi(0.15), psi(0.3), psi(0.6)])
    assert actions(decisions) == ["shadow", None, None, "shadow", "retrain"]
    assert [d.suppressed_by for d in decisions] == [(), ("cooldown",), ("cooldown",), (), ()]
    # windows end hourly: moderate acted at 1h, so it may act again from 4h on
    assert state.cooldown_until == {"moderate": 7 * HOUR, "severe": 5 * HOUR + 86400}


# --- blast radius ---------------------------------------------------------------------------

def test_actions_per_tier_per_rolling_day():
    policy, _ = make("limits: {max_actions_per_day: {mild: 2}}\n")
    times = [0.0, HOUR, 2 * HOUR, 86400.0, 86400.0 + HOUR, 86400.0 + 2 * HOUR]
    decisions, state = run(policy, [psi(0.15)] * 6, times=times)
    assert actions(decisions) == ["alert", "alert", None, "alert", "alert", None]
    assert decisions[2].suppressed_by == ("blast_radius",)
    assert state.action_times == {"mild": (86400.0, 86400.0 + HOUR)}


def test_max_concurrent_retrains_uses_the_running_count():
    policy, _ = make("limits: {max_concurrent_retrains: 1}\n")
    (d,), _ = run(policy, [psi(0.7)], running_retrains=1)
    assert (d.tier, d.action, d.suppressed_by) == (Tier.SEVERE, None, ("max_concurrent_retrains",))
    (d,), _ = run(policy, [psi(0.7)], running_retrains=0)
    assert d.action == "retrain"
    assert d.action_settings["argv"] == ["python", "job.py"]


# --- data-quality gate ----------------------------------------------------------------------

DQ = """data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
      overrides: {employment_type: 0.20}
  action: {type: alert, channels: [data-oncall]}
  clear_after: 2
  cooldown: 2h
"""


def missing(increase: float, feature: str = "income") -> SignalResult:
    """A missing share ``increase`` over a reference share of 0.10."""
    return SignalResult("missing_rate", "data_quality", 0.10 + increase, feature,
                        details={"reference": 0.10, "increase": increase})


def test_a_data_quality_fault_alerts_and_blocks_the_tier_action_until_clean():
    policy, text = make(DQ)
    decisions, _ = run(policy, [
        (psi(0.7), missing(0.3)),   # fault: alert instead of retrain
        (psi(0.7), missing(0.3)),   # still faulty: alert is cooling down
        (psi(0.7), missing(0.0)),   # first clean window: gate still closed
        (psi(0.7), missing(0.0)),   # second clean window: gate lifts
    ])
    assert tiers(decisions) == ["severe"] * 4
    assert actions(decisions) == ["alert", None, "alert", "retrain"]
    assert [d.data_quality_fault for d in decisions] == [True, True, True, False]
    assert [d.suppressed_by for d in decisions] == [
        ("data_quality_gate",), ("data_quality_gate", "cooldown"), ("data_quality_gate",), ()]
    assert decisions[0].action_settings["channels"] == ["data-oncall"]
    dq = [r for r in decisions[0].reasons if r.kind == "data_quality"]
    assert [(r.signal, r.feature, r.value, r.threshold, r.measure) for r in dq] == [
        ("missing_rate", "income", 0.3, 0.05, "increase")]
    assert dq[0].source == f"engine.yaml:{line_of(text, 'threshold: 0.05')}"


def test_data_quality_override_and_strict_above():
    policy, _ = make(DQ)
    decisions, _ = run(policy, [missing(0.15, "employment_type"), missing(0.05)],
                       times=[0.0, 86400.0])
    assert [d.data_quality_fault for d in decisions] == [False, False]


def test_fault_with_no_drift_still_alerts():
    policy, _ = make(DQ)
    (d,), _ = run(policy, [missing(0.5)])
    assert (d.tier, d.action, d.suppressed_by, d.data_quality_fault) == (
        Tier.NONE, "alert", (), True)


# --- approval, identity, purity and state ---------------------------------------------------

def test_shadow_requires_approval_by_default():
    policy, _ = make()
    (d,), _ = run(policy, [psi(0.3)])
    assert (d.action, d.requires_approval) == ("shadow", True)
    assert d.policy == "engine-test" and len(d.policy_digest) == 64
    assert d.key == "credit:moderate:1"


def test_evaluate_does_not_change_the_state_it_is_given():
    policy, _ = make("persistence: 2\n")
    state = EngineState()
    before = state.to_dict()
    evaluate(policy, window(1, psi(0.3)), state, HOUR)
    assert state.to_dict() == before


def test_state_round_trips_through_json_without_changing_decisions():
    policy, _ = make(DQ + "persistence: 2\nhysteresis: {factor: 0.8}\ncooldown: {mild: 1h}\n"
                     "escalation: [{from: mild, to: moderate, after: 3}]\n"
                     "limits: {max_actions_per_day: {mild: 3}}\n")
    seq = [psi(0.15), psi(0.3), (psi(0.3), missing(0.2)), psi(0.22), psi(0.15), psi(0.6),
           psi(0.01), psi(0.15), psi(0.15), psi(0.15)]
    straight, final = run(policy, seq)
    state, restored = EngineState(), []
    for i, sigs in enumerate(seq, 1):
        sigs = sigs if isinstance(sigs, tuple) else (sigs,)
        dumped = json.dumps(state.to_dict())
        state = EngineState.from_dict(json.loads(dumped))
        d, state = evaluate(policy, window(i, *sigs), state, i * HOUR)
        restored.append(d)
    assert restored == straight
    assert json.dumps(state.to_dict()) == json.dumps(final.to_dict())
    assert list(final.to_dict()) == sorted(final.to_dict())


def test_decision_round_trips_through_json():
    policy, _ = make(DQ)
    (d,), _ = run(policy, [(psi(0.7), missing(0.3))])
    again = Decision.from_dict(json.loads(json.dumps(d.to_dict())))
    assert again == d


def test_count_combine_counts_a_weighted_signal_as_that_many_witnesses() -> None:
    from driftwatch.policy.severity import combine
    from driftwatch.policy.tiers import Tier

    # two witnesses needed: one unit of weight 2 is enough, one of weight 1 is not
    assert combine([Tier.MODERATE], [2.0], "count", min_features=2, quorum=0.5) == Tier.MODERATE
    assert combine([Tier.MODERATE], [1.0], "count", min_features=2, quorum=0.5) == Tier.NONE
    assert combine([Tier.MILD, Tier.SEVERE], [1.0, 1.0], "count", min_features=2,
                   quorum=0.5) == Tier.MILD
