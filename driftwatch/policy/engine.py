"""The policy engine: a pure function from (policy, assessment, state, now) to a decision.

Per window, in order:

1. each signal the policy names gets a severity from its thresholds (direction,
   per-feature overrides, calibrated levels); a feature's severity is the worst of its
   signals, on the whole window and in every segment;
   :func:`~driftwatch.policy.severity.combine` makes one ``raw_tier``;
2. hysteresis: an active tier stays while the signals still reach its clear levels;
3. persistence: a tier counts only after ``persistence[tier]`` windows in a row;
4. escalation: a tier held ``after`` windows in a row becomes the rule's ``to`` tier;
5. gates on the tier's action: the data-quality gate (a fault runs the gate's alert
   instead), cooldown (per tier, also holding lower tiers), blast radius (actions per
   tier in the last 24 hours of ``now``) and ``max_concurrent_retrains``.

Time is only ``now`` (the window's end in replay), so a replay gives the same decisions.

>>> from driftwatch.detectors.base import Assessment, SignalResult
>>> from driftwatch.policy.schema import Policy
>>> policy = Policy.model_validate({
...     "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
...     "model": {"name": "credit", "reference": "ref.parquet"},
...     "window": {"pane": 100},
...     "signals": [{"detector": "psi", "thresholds": {"mild": 0.1, "moderate": 0.25}}],
...     "actions": {"moderate": {"type": "retrain", "argv": ["python", "job.py"]}},
... })
>>> a = Assessment("credit", 1, 0.0, 60.0, 100, (SignalResult("psi", "drift", 0.3, "age"),))
>>> decision, state = evaluate(policy, a, EngineState(), now=60.0)
>>> str(decision.tier), decision.action, decision.reasons[0].threshold
('moderate', 'retrain', 0.25)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.plan import TIERS, ReadPlan, UnitKey, plan_of
from driftwatch.policy.schema import Policy
from driftwatch.policy.severity import (
    Level,
    Rule,
    calibrated_level,
    clear_level,
    combine,
    crosses,
    measured,
)
from driftwatch.policy.state import EngineState
from driftwatch.policy.tiers import ACTION_TIERS, Tier

__all__ = ["DAY_SECONDS", "evaluate"]

DAY_SECONDS = 86400.0
_DQ = "data_quality"


@dataclass
class _Unit:
    """A feature (or a model-level signal): its worst trigger and hold tiers, its weight."""

    trig: Tier = Tier.NONE
    hold: Tier = Tier.NONE
    weight: float = 0.0


@dataclass
class _Reading:
    raw: Tier = Tier.NONE
    hold: Tier = Tier.NONE
    reasons: list[Reason] = field(default_factory=list)
    holds: list[Reason] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def evaluate(
    policy: Policy,
    assessment: Assessment,
    state: EngineState,
    now: float,
    *,
    running_retrains: int = 0,
    reads_feed: bool = True,
) -> tuple[Decision, EngineState]:
    """Decide what to do about one closed window; returns the decision and the new state.

    ``now`` is the decision time (the window's end time in replay); ``running_retrains``
    is how many retraining jobs are running now, for ``max_concurrent_retrains``.
    ``reads_feed=False``: the assessment says nothing about the feed (a cohort's verdict,
    judged between windows): the data-quality gate stays as ``state`` has it, a closed
    gate holds the tier's action without running its own again, and the judgement is
    not one of the clean windows that open it.
    Pure: ``state`` is not changed.
    """
    plan = plan_of(policy)
    reading = _read(plan, assessment.signals, state.active_tier)
    observed = max(reading.raw, min(state.active_tier, reading.hold))

    observed_streak = {name: (state.observed_streak.get(name, 0) + 1 if observed >= t else 0)
                       for t, name in TIERS}
    confirmed = max((t for (t, name), need in zip(TIERS, plan.persistence, strict=True)
                     if observed_streak[name] >= need), default=Tier.NONE)

    tier, escalated_from, esc_reasons = _escalate(plan, confirmed, state)
    decided_streak = {name: (state.decided_streak.get(name, 0) + 1 if tier >= t else 0)
                      for t, name in TIERS}

    dq_now, dq_reasons = _data_quality(plan, policy, assessment.signals)
    if not reads_feed:
        dq_fault, clean = state.dq_fault, state.dq_clean_windows
    elif dq_now:
        dq_fault, clean = True, 0
    elif state.dq_fault:
        clean = state.dq_clean_windows + 1
        dq_fault = clean < policy.data_quality.clear_after
        clean = clean if dq_fault else 0
    else:
        dq_fault, clean = False, 0

    suppressed: list[str] = []
    if observed > tier:  # the signals show more than persistence has confirmed yet
        suppressed.append("persistence")
    gate = _Gate(policy, state, now, running_retrains)
    action = None if tier == Tier.NONE else policy.actions.get(tier)
    slot = str(tier)
    if action is not None and action.type == "none":
        action = None
    if dq_fault:
        if action is not None:
            suppressed.append("data_quality_gate")
        action, slot = policy.data_quality.action, _DQ
        if action.type == "none" or not reads_feed:
            action = None
        elif gate.cooling(_DQ):
            suppressed.append("cooldown")
            action = None
    elif action is not None:
        why = gate.block(tier, action.type)
        if why:
            suppressed.append(why)
            action = None

    cooldown_until = {k: v for k, v in state.cooldown_until.items() if v > now}
    action_times = {k: tuple(t for t in v if t > now - DAY_SECONDS)
                    for k, v in state.action_times.items()}
    if action is not None:
        action_times[slot] = (*action_times.get(slot, ()), now)
        pause = policy.data_quality.cooldown if slot == _DQ else policy.cooldown.get(tier)
        if pause > 0:
            cooldown_until[slot] = now + pause

    reasons = reading.reasons + (reading.holds if observed > reading.raw else [])
    reasons += esc_reasons + dq_reasons
    reasons.sort(key=lambda r: (-int(r.tier), r.kind, r.signal, r.feature or "",
                                r.segment or ""))
    decision = Decision(
        model=assessment.model,
        window_id=assessment.window_id,
        time=now,
        tier=tier,
        raw_tier=reading.raw,
        action=action.type if action is not None else None,
        action_settings=(action.model_dump(mode="json", by_alias=True)
                         if action is not None else {}),
        suppressed_by=tuple(suppressed),
        data_quality_fault=dq_fault,
        requires_approval=bool(action is not None and action.require_approval),
        reasons=tuple(reasons),
        escalated_from=escalated_from,
        policy=policy.metadata.name,
        policy_digest=policy.digest,
        notes=tuple(dict.fromkeys(reading.notes)),
    )
    new_state = EngineState(
        active_tier=tier,
        observed_streak=observed_streak,
        decided_streak=decided_streak,
        cooldown_until=cooldown_until,
        action_times=action_times,
        dq_fault=dq_fault,
        dq_clean_windows=clean,
        windows=state.windows + 1,
        last_window_id=assessment.window_id,
    )
    return decision, new_state


@dataclass(frozen=True)
class _Gate:
    policy: Policy
    state: EngineState
    now: float
    running_retrains: int

    def cooling(self, slot: str) -> bool:
        return self.state.cooldown_until.get(slot, -math.inf) > self.now

    def block(self, tier: Tier, action_type: str) -> str | None:
        """Why the tier's action may not run now, or None."""
        if any(self.cooling(str(t)) for t in ACTION_TIERS if t >= tier):
            return "cooldown"
        limit = self.policy.limits.max_actions_per_day.get(tier)
        if limit is not None:
            recent = [t for t in self.state.action_times.get(str(tier), ())
                      if t > self.now - DAY_SECONDS]
            if len(recent) >= limit:
                return "blast_radius"
        if action_type == "retrain" and (
            self.running_retrains >= self.policy.limits.max_concurrent_retrains
        ):
            return "max_concurrent_retrains"
        return None


def _read(plan: ReadPlan, signals: tuple[SignalResult, ...], active: Tier) -> _Reading:
    out = _Reading()
    factor, reads = plan.factor, plan.reads
    units: dict[UnitKey, _Unit] = {}
    for r in signals:
        by_feature = reads.get(r.signal)
        if by_feature is None:
            continue
        found = by_feature.get(r.feature)
        if found is None:
            found = plan.reads_of(r.signal, r.feature)
        unit_key, matches = found
        # the rules that read the signal, in policy order (the order of reasons and
        # notes is the same as a pass over every rule's match would give)
        for m in matches:
            rule = m.rule
            measure = rule.measure
            v = r.value if measure == "value" else r.details.get(measure)
            if type(v) is float and math.isfinite(v):
                value: float | None = v  # what measured() gives a finite float
            else:
                value = measured(r, measure)
                if value is None:
                    if measure != "value" and math.isfinite(r.value):
                        out.notes.append(f"{r.signal}[{r.feature or '-'}]: no {measure} "
                                         "in its details; skipped")
                    continue
            direction = rule.direction
            trig = hold = Tier.NONE
            # the highest level reached and its threshold; its reason is built once
            trig_at: tuple[Level, float] | None = None
            hold_at: tuple[Level, float] | None = None
            for tier, fixed, known_clear, rate, lv in m.levels:
                thr = fixed if rate is None else calibrated_level(r, rate)
                if thr is None:
                    out.notes.append(f"{r.signal}[{r.feature or '-'}]: no calibrated level for "
                                     f"false_alarm_rate {lv.rate:g}; tier {lv.tier} skipped")
                    continue
                if tier > trig and crosses(value, thr, direction):
                    trig, trig_at = tier, (lv, thr)
                clr = known_clear if known_clear is not None else clear_level(
                    thr, direction, factor)
                if tier > hold and crosses(value, clr, direction):
                    hold, hold_at = tier, (lv, clr)
            unit = units.get(unit_key)
            if unit is None:
                unit = units[unit_key] = _Unit()
            if trig > unit.trig:
                unit.trig = trig
            if hold > unit.hold:
                unit.hold = hold
            if m.weight > unit.weight:
                unit.weight = m.weight
            if trig_at is not None:
                lv, thr = trig_at
                out.reasons.append(_reason(r, rule, value, thr, lv.tier, lv.source, "trigger",
                                           lv.rate))
            if hold_at is not None and hold > trig and hold <= active:
                lv, clr = hold_at
                src = lv.clear_source or (plan.factor_source if factor < 1 else lv.source)
                out.holds.append(_reason(r, rule, value, clr, lv.tier, src, "hold", lv.rate))
    c = plan.combine
    weights = [u.weight for u in units.values()]
    out.raw = combine([u.trig for u in units.values()], weights, c.method,
                      min_features=c.min_features, quorum=c.quorum)
    out.hold = combine([u.hold for u in units.values()], weights, c.method,
                       min_features=c.min_features, quorum=c.quorum)
    return out


def _reason(r: SignalResult, rule: Rule, value: float, threshold: float, tier: Tier,
            source: str, kind: str, rate: float | None = None) -> Reason:
    return Reason(r.signal, r.group, r.feature, value, float(threshold), tier,
                  rule.direction, source, kind, rule.measure, rate, r.segment)


def _escalate(plan: ReadPlan, tier: Tier, state: EngineState
              ) -> tuple[Tier, Tier | None, list[Reason]]:
    start, reasons = tier, []
    for esc in plan.escalations:
        run = state.decided_streak.get(esc.lower_name, 0) + 1
        if esc.lower <= tier < esc.upper and run >= esc.after:
            tier = esc.upper
            reasons.append(Reason("escalation", "policy", None, float(run), float(esc.after),
                                  esc.upper, "above", esc.source, "escalation"))
    return tier, (start if tier != start else None), reasons


def _data_quality(plan: ReadPlan, policy: Policy, signals: tuple[SignalResult, ...]
                  ) -> tuple[bool, list[Reason]]:
    reasons = []
    by_detector = plan.dq
    for r in signals:
        by_feature = by_detector.get(r.signal)
        if by_feature is None:
            continue
        checks = by_feature.get(r.feature)
        if checks is None:
            checks = plan.dq_of(policy, r.signal, r.feature)
        for c in checks:
            value = measured(r, c.measure)
            if value is None:
                continue
            if (c.measure == "increase" or r.signal == "out_of_range") and \
                    r.details.get("significant") is False:
                continue  # within sampling noise, once the window's features are counted
            if value > c.threshold:
                reasons.append(Reason(r.signal, r.group, r.feature, value, c.threshold,
                                      Tier.NONE, "above", c.source, "data_quality",
                                      c.measure))
    return bool(reasons), reasons
