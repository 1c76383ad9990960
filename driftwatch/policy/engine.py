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
from driftwatch.policy.schema import DataQualityRule, Policy
from driftwatch.policy.severity import (
    Level,
    Rule,
    clear_level,
    combine,
    compile_rules,
    crosses,
    measured,
    resolve,
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
) -> tuple[Decision, EngineState]:
    """Decide what to do about one closed window; returns the decision and the new state.

    ``now`` is the decision time (the window's end time in replay); ``running_retrains``
    is how many retraining jobs are running now, for ``max_concurrent_retrains``.
    Pure: ``state`` is not changed.
    """
    reading = _read(policy, _rules_by_detector(policy), assessment.signals, state.active_tier)
    observed = max(reading.raw, min(state.active_tier, reading.hold))

    observed_streak = {str(t): (state.observed_streak.get(str(t), 0) + 1 if observed >= t else 0)
                       for t in ACTION_TIERS}
    confirmed = max((t for t in ACTION_TIERS
                     if observed_streak[str(t)] >= policy.persistence.get(t)), default=Tier.NONE)

    tier, escalated_from, esc_reasons = _escalate(policy, confirmed, state)
    decided_streak = {str(t): (state.decided_streak.get(str(t), 0) + 1 if tier >= t else 0)
                      for t in ACTION_TIERS}

    dq_now, dq_reasons = _data_quality(policy, assessment.signals)
    if dq_now:
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
        if action.type == "none":
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


def _rules_by_detector(policy: Policy) -> dict[str, tuple[Rule, ...]]:
    """The compiled rules grouped by the detector they read, each group in policy order;
    built once and cached on the policy, so a window's signal finds its rules directly."""
    cached = policy.cache.get("rules_by_detector")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    out: dict[str, list[Rule]] = {}
    for rule in compile_rules(policy):
        out.setdefault(rule.detector, []).append(rule)
    index = {k: tuple(v) for k, v in out.items()}
    policy.cache["rules_by_detector"] = index
    return index


def _dq_by_detector(policy: Policy) -> dict[str, tuple[tuple[int, DataQualityRule], ...]]:
    """The data-quality signals (with their position) grouped by detector, in order."""
    cached = policy.cache.get("dq_by_detector")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    out: dict[str, list[tuple[int, DataQualityRule]]] = {}
    for i, dq in enumerate(policy.data_quality.signals):
        out.setdefault(dq.detector, []).append((i, dq))
    index = {k: tuple(v) for k, v in out.items()}
    policy.cache["dq_by_detector"] = index
    return index


#: A level as the reading uses it: the level and its clear level when that is known
#: before the window (written in the policy, or a fixed threshold's hysteresis), else None.
_ReadLevel = tuple[Level, float | None]


def _read_levels(policy: Policy, factor: float
                 ) -> dict[tuple[int, str | None], tuple[_ReadLevel, ...]]:
    """Per (rule, feature), its levels with the clear levels fixed thresholds give, built
    as windows ask for them and kept on the policy (by the hysteresis factor): a fixed
    level's clear level is the same number every window."""
    by_factor = policy.cache.setdefault("read_levels", {})
    table = by_factor.get(factor)
    if table is None:
        table = by_factor[factor] = {}
    return table  # type: ignore[no-any-return]


def _levels_of(rule: Rule, feature: str | None, factor: float) -> tuple[_ReadLevel, ...]:
    out = []
    for lv in rule.levels_for(feature):
        clr = lv.clear
        if clr is None and lv.fixed is not None:
            clr = clear_level(lv.fixed, rule.direction, factor)
        out.append((lv, clr))
    return tuple(out)


def _read(policy: Policy, by_detector: dict[str, tuple[Rule, ...]],
          signals: tuple[SignalResult, ...], active: Tier) -> _Reading:
    out = _Reading()
    factor = policy.hysteresis.factor
    factor_src = policy.source(("hysteresis", "factor"))
    read_levels = _read_levels(policy, factor)
    units: dict[tuple[str, str], _Unit] = {}
    for r in signals:
        # the rules of the signal's detector, in policy order (the order of reasons and
        # notes is the same as a pass over every rule's match would give)
        rules = by_detector.get(r.signal)
        if rules is None:
            continue
        for rule in rules:
            if rule.features is not None and r.feature not in rule.features:
                continue
            value = rule.measured(r)
            if value is None:
                if rule.measure != "value" and math.isfinite(r.value):
                    out.notes.append(f"{r.signal}[{r.feature or '-'}]: no {rule.measure} "
                                     "in its details; skipped")
                continue
            trig = hold = Tier.NONE
            trig_reason = hold_reason = None
            direction = rule.direction
            at = (id(rule), r.feature)
            levels = read_levels.get(at)
            if levels is None:
                levels = read_levels[at] = _levels_of(rule, r.feature, factor)
            for lv, known_clear in levels:
                thr = lv.fixed if lv.fixed is not None else resolve(lv, r)
                if thr is None:
                    out.notes.append(f"{r.signal}[{r.feature or '-'}]: no calibrated level for "
                                     f"false_alarm_rate {lv.rate:g}; tier {lv.tier} skipped")
                    continue
                if lv.tier > trig and crosses(value, thr, direction):
                    trig = lv.tier
                    trig_reason = _reason(r, rule, value, thr, lv.tier, lv.source, "trigger",
                                          lv.rate)
                clr = known_clear if known_clear is not None else clear_level(
                    thr, direction, factor)
                if lv.tier > hold and crosses(value, clr, direction):
                    hold = lv.tier
                    src = lv.clear_source or (factor_src if factor < 1 else lv.source)
                    hold_reason = _reason(r, rule, value, clr, lv.tier, src, "hold", lv.rate)
            key = ("f", r.feature) if r.feature is not None else ("m", r.signal)
            unit = units.get(key)
            if unit is None:
                unit = units[key] = _Unit()
            unit.trig = max(unit.trig, trig)
            unit.hold = max(unit.hold, hold)
            unit.weight = max(unit.weight, rule.weight_for(r.feature))
            if trig_reason is not None:
                out.reasons.append(trig_reason)
            if hold_reason is not None and hold > trig and hold <= active:
                out.holds.append(hold_reason)
    c = policy.combine
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


def _escalate(policy: Policy, tier: Tier, state: EngineState
              ) -> tuple[Tier, Tier | None, list[Reason]]:
    start, reasons = tier, []
    for i, esc in sorted(enumerate(policy.escalation), key=lambda e: Tier.parse(e[1].from_)):
        lo, hi = Tier.parse(esc.from_), Tier.parse(esc.to)
        run = state.decided_streak.get(str(lo), 0) + 1
        if lo <= tier < hi and run >= esc.after:
            tier = hi
            reasons.append(Reason("escalation", "policy", None, float(run), float(esc.after),
                                  hi, "above", policy.source(("escalation", i)), "escalation"))
    return tier, (start if tier != start else None), reasons


def _data_quality(policy: Policy, signals: tuple[SignalResult, ...]
                  ) -> tuple[bool, list[Reason]]:
    reasons = []
    by_detector = _dq_by_detector(policy)
    for r in signals:
        for i, dq in by_detector.get(r.signal, ()):
            if dq.features != "all" and r.feature not in dq.features:
                continue
            value = measured(r, dq.measure)
            if value is None:
                continue
            if dq.measure == "increase" and r.details.get("significant") is False:
                continue  # within sampling noise, once the window's features are counted
            path: tuple[str | int, ...] = ("data_quality", "signals", i, "threshold")
            thr = dq.threshold
            if r.feature is not None and r.feature in dq.overrides:
                thr = dq.overrides[r.feature]
                path = ("data_quality", "signals", i, "overrides", r.feature)
            if value > thr:
                reasons.append(Reason(r.signal, r.group, r.feature, value, thr, Tier.NONE,
                                      "above", policy.source(path), "data_quality", dq.measure))
    return bool(reasons), reasons
