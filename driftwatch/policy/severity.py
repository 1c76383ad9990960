"""From signal values to one tier: thresholds per tier, direction, hysteresis, combination.

A value reaches a tier when it is at or past that tier's threshold in the signal's
direction: ``above`` means ``value >= threshold``, ``below`` means ``value <= threshold``
and ``abs`` means ``|value| >= threshold``. Its severity is the highest tier it reaches.

>>> crosses(0.25, 0.25, "above"), crosses(0.71, 0.70, "below"), crosses(-0.2, 0.1, "abs")
(True, False, True)
>>> clear_level(0.25, "above", 0.8), clear_level(0.70, "below", 0.9)
(0.2, 0.77)
>>> combine([Tier.MILD, Tier.SEVERE], [1.0, 1.0], "count", min_features=2, quorum=0.5)
<Tier.MILD: 1>
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.registry import CALIBRATED_LEVELS, rate_key
from driftwatch.policy.schema import Policy, SignalRule, TierThresholds
from driftwatch.policy.tiers import ACTION_TIERS, Tier

__all__ = [
    "Level",
    "Rule",
    "calibrated_level",
    "clear_level",
    "combine",
    "compile_rules",
    "crosses",
    "measured",
    "resolve",
]


def crosses(value: float, threshold: float, direction: str) -> bool:
    """Whether ``value`` is at or past ``threshold`` in ``direction``."""
    if direction == "below":
        return value <= threshold
    if direction == "abs":
        return abs(value) >= threshold
    return value >= threshold


def clear_level(trigger: float, direction: str, factor: float) -> float:
    """Where an active tier clears: ``trigger`` moved toward "better" by ``(1-factor)|trigger|``."""
    step = (1.0 - factor) * abs(trigger)
    return round(trigger + step if direction == "below" else trigger - step, 12)


def measured(r: SignalResult, measure: str) -> float | None:
    """The number a threshold compares with: ``value`` or ``details[measure]`` (finite)."""
    v = r.value if measure == "value" else r.details.get(measure)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


@dataclass(frozen=True, slots=True)
class Level:
    """One tier's threshold for one signal rule (and feature), and where it was written."""

    tier: Tier
    fixed: float | None
    rate: float | None
    source: str
    clear: float | None = None
    clear_source: str | None = None


@dataclass(frozen=True)
class Rule:
    """A :class:`SignalRule` ready to evaluate."""

    detector: str
    direction: str
    measure: str
    features: frozenset[str] | None
    weight: float
    weights: dict[str, float]
    levels: tuple[Level, ...]
    overrides: dict[str, tuple[Level, ...]] = field(default_factory=dict)

    def matches(self, r: SignalResult) -> bool:
        return r.signal == self.detector and (
            self.features is None or r.feature in self.features
        )

    def measured(self, r: SignalResult) -> float | None:
        return measured(r, self.measure)

    def levels_for(self, feature: str | None) -> tuple[Level, ...]:
        return self.overrides.get(feature, self.levels) if feature is not None else self.levels

    def weight_for(self, feature: str | None) -> float:
        return self.weights.get(feature, self.weight) if feature is not None else self.weight


def _levels(policy: Policy, rule: SignalRule, th: TierThresholds, path: tuple[str | int, ...],
            base: TierThresholds | None, rule_path: tuple[str | int, ...]) -> tuple[Level, ...]:
    out = []
    for t in ACTION_TIERS:
        name = str(t)
        value, vpath = th.get(t), (*path, name)
        if value is None and base is not None:  # an override inherits the signal's level
            value, vpath = base.get(t), (*rule_path, "thresholds", name)
        if value is None:
            continue
        clear = clear_src = None
        own = base is None or th.get(t) is None  # explicit clear only for the rule's level
        if own and rule.clear is not None and rule.clear.get(t) is not None:
            clear = rule.clear.get(t)
            clear_src = policy.source((*rule_path, "clear", name))
        if isinstance(value, float):
            out.append(Level(t, value, None, policy.source(vpath), clear, clear_src))
        else:
            out.append(Level(t, None, value.calibrated.false_alarm_rate,
                             policy.source(vpath), clear, clear_src))
    return tuple(out)


def compile_rules(policy: Policy) -> tuple[Rule, ...]:
    """The policy's signal rules, compiled once and cached on the policy."""
    cached = policy.cache.get("rules")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    rules = []
    for i, r in enumerate(policy.signals):
        path: tuple[str | int, ...] = ("signals", i)
        rules.append(Rule(
            detector=r.detector,
            direction=r.direction,
            measure=r.measure,
            features=None if r.features == "all" else frozenset(r.features),
            weight=r.weight,
            weights=dict(r.weights),
            levels=_levels(policy, r, r.thresholds, (*path, "thresholds"), None, path),
            overrides={f: _levels(policy, r, ov, (*path, "overrides", f), r.thresholds, path)
                       for f, ov in r.overrides.items()},
        ))
    out = tuple(rules)
    policy.cache["rules"] = out
    return out


def resolve(level: Level, result: SignalResult) -> float | None:
    """The threshold in force: fixed, or the detector's calibrated level for the rate.

    A detector reports calibrated levels in ``details[CALIBRATED_LEVELS]`` keyed by
    :func:`~driftwatch.detectors.registry.rate_key` (``"0.01"``). With no level for the
    rate there is none (None): never the detector's rule-of-thumb threshold in disguise.
    """
    if level.fixed is not None:
        return level.fixed
    return calibrated_level(result, rate_key(level.rate or 0.0))


def calibrated_level(result: SignalResult, key: str) -> float | None:
    """The level ``result`` reports for the rate keyed ``key`` (:func:`rate_key`), if
    finite: :func:`resolve` for a level whose rate's key is known already."""
    table = result.details.get(CALIBRATED_LEVELS) or {}
    value = table.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def combine(severities: Sequence[Tier], weights: Sequence[float], method: str, *,
            min_features: int, quorum: float) -> Tier:
    """One tier from per-unit severities (a unit is a feature or a model-level signal).

    ``worst``: the highest; ``count``: the highest tier that at least ``min_features``
    units reach, a unit of weight ``w`` counting as ``w`` witnesses; ``weighted_vote``:
    the highest tier reached by units holding at least ``quorum`` of the total weight.
    """
    if not severities:
        return Tier.NONE
    if method == "worst":
        return max(severities)
    total = sum(weights)
    for t in reversed(ACTION_TIERS):
        hit = [w for s, w in zip(severities, weights, strict=True) if s >= t]
        if method == "count" and sum(hit) >= min_features - 1e-12:
            return t
        if method == "weighted_vote" and total > 0 and sum(hit) / total >= quorum - 1e-12:
            return t
    return Tier.NONE
