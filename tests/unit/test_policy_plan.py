"""The engine reads a window through a per-policy plan (the rules and data-quality checks
of each detector and feature, found once): its reading is, reason for reason and note
for note, the one a plain pass over every rule gives for every signal."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.registry import CALIBRATED_LEVELS
from driftwatch.policy.decision import Reason
from driftwatch.policy.engine import _data_quality, _read
from driftwatch.policy.plan import plan_of
from driftwatch.policy.schema import Policy
from driftwatch.policy.severity import (
    clear_level,
    combine,
    compile_rules,
    crosses,
    measured,
    resolve,
)
from driftwatch.policy.tiers import ACTION_TIERS, Tier

FEATURES = ["a", "b", "c"]
RATES = [0.01, 0.05]


def plain_read(policy: Policy, signals: tuple[SignalResult, ...], active: Tier
               ) -> tuple[Tier, Tier, list[Reason], list[Reason], list[str]]:
    """Every rule against every signal, in policy order, each level's reason built as
    it is reached: the reading as written before the plan."""
    reasons: list[Reason] = []
    holds: list[Reason] = []
    notes: list[str] = []
    factor = policy.hysteresis.factor
    units: dict[tuple[str, str | None], list[Any]] = {}
    for r in signals:
        for rule in compile_rules(policy):
            if not rule.matches(r):
                continue
            value = rule.measured(r)
            if value is None:
                if rule.measure != "value" and math.isfinite(r.value):
                    notes.append(f"{r.signal}[{r.feature or '-'}]: no {rule.measure} "
                                 "in its details; skipped")
                continue
            trig = hold = Tier.NONE
            trig_reason = hold_reason = None
            for lv in rule.levels_for(r.feature):
                thr = resolve(lv, r)
                if thr is None:
                    notes.append(f"{r.signal}[{r.feature or '-'}]: no calibrated level for "
                                 f"false_alarm_rate {lv.rate:g}; tier {lv.tier} skipped")
                    continue
                if lv.tier > trig and crosses(value, thr, rule.direction):
                    trig = lv.tier
                    trig_reason = Reason(r.signal, r.group, r.feature, value, float(thr),
                                         lv.tier, rule.direction, lv.source, "trigger",
                                         rule.measure, lv.rate, r.segment)
                clr = lv.clear if lv.clear is not None else clear_level(thr, rule.direction,
                                                                        factor)
                if lv.tier > hold and crosses(value, clr, rule.direction):
                    hold = lv.tier
                    src = lv.clear_source or (policy.source(("hysteresis", "factor"))
                                              if factor < 1 else lv.source)
                    hold_reason = Reason(r.signal, r.group, r.feature, value, float(clr),
                                         lv.tier, rule.direction, src, "hold", rule.measure,
                                         lv.rate, r.segment)
            key = ("f", r.feature) if r.feature is not None else ("m", r.signal)
            unit = units.setdefault(key, [Tier.NONE, Tier.NONE, 0.0])
            unit[0], unit[1] = max(unit[0], trig), max(unit[1], hold)
            unit[2] = max(unit[2], rule.weight_for(r.feature))
            if trig_reason is not None:
                reasons.append(trig_reason)
            if hold_reason is not None and hold > trig and hold <= active:
                holds.append(hold_reason)
    c = policy.combine
    weights = [u[2] for u in units.values()]
    raw = combine([u[0] for u in units.values()], weights, c.method,
                  min_features=c.min_features, quorum=c.quorum)
    held = combine([u[1] for u in units.values()], weights, c.method,
                   min_features=c.min_features, quorum=c.quorum)
    return raw, held, reasons, holds, notes


def plain_data_quality(policy: Policy, signals: tuple[SignalResult, ...]) -> list[Reason]:
    out = []
    for r in signals:
        for i, dq in enumerate(policy.data_quality.signals):
            if r.signal != dq.detector or (dq.features != "all"
                                           and r.feature not in dq.features):
                continue
            value = measured(r, dq.measure)
            # an increase in missingness, or values out of range, count where significant
            if value is None or ((dq.measure == "increase" or r.signal == "out_of_range")
                                 and r.details.get("significant") is False):
                continue
            path: tuple[str | int, ...] = ("data_quality", "signals", i, "threshold")
            thr = dq.threshold
            if r.feature is not None and r.feature in dq.overrides:
                thr = dq.overrides[r.feature]
                path = ("data_quality", "signals", i, "overrides", r.feature)
            if value > thr:
                out.append(Reason(r.signal, r.group, r.feature, value, thr, Tier.NONE,
                                  "above", policy.source(path), "data_quality", dq.measure))
    return out


level = st.one_of(st.floats(-1.0, 1.0, allow_nan=False),
                  st.sampled_from(RATES).map(
                      lambda rate: {"calibrated": {"false_alarm_rate": rate}}))
tiers = st.fixed_dictionaries({}, optional={"mild": level, "moderate": level,
                                            "severe": level})
features = st.one_of(st.just("all"), st.lists(st.sampled_from(FEATURES), min_size=1,
                                              max_size=3, unique=True))
rule = st.fixed_dictionaries(
    {"detector": st.sampled_from(["psi", "ks", "gini"]), "thresholds": tiers},
    optional={
        "features": features,
        "direction": st.sampled_from(["above", "below", "abs"]),
        "measure": st.sampled_from(["value", "change"]),
        "clear": st.fixed_dictionaries({}, optional={
            "mild": st.floats(-1.0, 1.0), "severe": st.floats(-1.0, 1.0)}),
        "overrides": st.dictionaries(st.sampled_from(FEATURES), tiers, max_size=2),
        "weight": st.floats(0.5, 3.0),
        "weights": st.dictionaries(st.sampled_from(FEATURES), st.floats(0.5, 3.0),
                                   max_size=2),
    })
dq_rule = st.fixed_dictionaries(
    {"detector": st.sampled_from(["missing_rate", "out_of_range"]),
     "threshold": st.floats(0.0, 0.5)},
    optional={"features": features,
              "overrides": st.dictionaries(st.sampled_from(FEATURES), st.floats(0.0, 0.5),
                                           max_size=2)})
number = st.one_of(st.floats(-1.5, 1.5), st.sampled_from([math.nan, math.inf, -math.inf]))
detail = st.one_of(number, st.booleans(), st.integers(-2, 2), st.just("n/a"))
signal = st.builds(
    lambda name, feature, value, details, calibrated, segment: SignalResult(
        name, "drift", value, feature,
        details={**details, **({CALIBRATED_LEVELS: calibrated} if calibrated else {})},
        segment=segment),
    st.sampled_from(["psi", "ks", "gini", "wasserstein", "missing_rate", "out_of_range"]),
    st.sampled_from([None, *FEATURES, "d"]),
    number,
    st.dictionaries(st.sampled_from(["change", "increase", "significant"]), detail,
                    max_size=3),
    st.dictionaries(st.sampled_from(["0.01", "0.05"]), number, max_size=2),
    st.sampled_from([None, None, "s1"]),
)


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    doc = {
        "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
        "model": {"name": "credit", "reference": "ref.parquet"},
        "window": {"pane": 100},
        "signals": draw(st.lists(rule, min_size=1, max_size=4)),
        "hysteresis": {"factor": draw(st.sampled_from([1.0, 0.8, 0.5]))},
        "combine": draw(st.sampled_from([{"method": "worst"},
                                         {"method": "count", "min_features": 2},
                                         {"method": "weighted_vote", "quorum": 0.4}])),
        "data_quality": {"signals": draw(st.lists(dq_rule, max_size=3)),
                         "action": {"type": "alert", "channels": ["ops"]}},
        "actions": {"mild": {"type": "alert", "channels": ["ops"]}},
    }
    try:
        return Policy.model_validate(doc)
    except ValidationError:  # a level order or an override the schema refuses
        return draw(st.nothing())


@settings(max_examples=300, deadline=None)
@given(policy=policies(), windows=st.lists(st.lists(signal, max_size=12), min_size=1,
                                           max_size=3),
       active=st.sampled_from(list(Tier)))
def test_the_plan_reads_as_a_pass_over_every_rule(policy: Policy,
                                                 windows: list[list[SignalResult]],
                                                 active: Tier) -> None:
    for signals in windows:  # later windows read through the plan the first one built
        got = _read(plan_of(policy), tuple(signals), active)
        raw, held, reasons, holds, notes = plain_read(policy, tuple(signals), active)
        assert (got.raw, got.hold) == (raw, held)
        assert got.reasons == reasons
        assert got.holds == holds
        assert got.notes == notes
        fault, dq = _data_quality(plan_of(policy), policy, tuple(signals))
        assert dq == plain_data_quality(policy, tuple(signals))
        assert fault == bool(dq)


def test_the_plan_is_kept_on_the_policy() -> None:
    policy = Policy.model_validate({
        "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
        "model": {"name": "credit", "reference": "ref.parquet"}, "window": {"pane": 100},
        "signals": [{"detector": "psi", "thresholds": {"mild": 0.1}}],
    })
    plan = plan_of(policy)
    assert plan_of(policy) is plan
    _read(plan, (SignalResult("psi", "drift", 0.2, "a"),), Tier.NONE)
    assert list(plan.reads["psi"]) == ["a"]  # built for the feature a window showed


@pytest.mark.parametrize("tier", ACTION_TIERS)
def test_a_level_reached_gives_one_reason_with_its_threshold(tier: Tier) -> None:
    policy = Policy.model_validate({
        "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
        "model": {"name": "credit", "reference": "ref.parquet"}, "window": {"pane": 100},
        "signals": [{"detector": "psi",
                     "thresholds": {"mild": 0.1, "moderate": 0.2, "severe": 0.3}}],
    })
    value = {Tier.MILD: 0.15, Tier.MODERATE: 0.25, Tier.SEVERE: 0.35}[tier]
    got = _read(plan_of(policy), (SignalResult("psi", "drift", value, "a"),), Tier.NONE)
    assert [(r.tier, r.threshold) for r in got.reasons] == [
        (tier, {Tier.MILD: 0.1, Tier.MODERATE: 0.2, Tier.SEVERE: 0.3}[tier])]
