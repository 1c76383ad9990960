"""What evaluating a window needs of a policy, worked out once and kept on the policy.

A window brings some hundred signals; the rules read a few of them. The plan finds, per
detector and feature, the rules that read it (their levels with the clear levels a fixed
threshold gives, and the feature's weight) and the data-quality checks that apply, all in
policy order, the first time a window shows that feature; so a window's signal finds
what reads it in two lookups, and a signal no rule reads costs one.

>>> from driftwatch.policy.schema import Policy
>>> policy = Policy.model_validate({
...     "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
...     "model": {"name": "credit", "reference": "ref.parquet"}, "window": {"pane": 100},
...     "signals": [{"detector": "psi", "features": ["age"],
...                  "thresholds": {"mild": 0.1, "moderate": 0.25}}],
... })
>>> plan = plan_of(policy)
>>> plan_of(policy) is plan
True
>>> unit, (match,) = plan.reads_of("psi", "age")
>>> unit, [(str(tier), fixed) for tier, fixed, *_ in match.levels]
(('f', 'age'), [('mild', 0.1), ('moderate', 0.25)])
>>> plan.reads_of("psi", "income")[1], "ks" in plan.reads
((), False)
"""

from __future__ import annotations

from dataclasses import dataclass

from driftwatch.detectors.registry import rate_key
from driftwatch.policy.schema import DataQualityRule, Policy
from driftwatch.policy.severity import Level, Rule, clear_level, compile_rules
from driftwatch.policy.tiers import ACTION_TIERS, Tier

__all__ = ["TIERS", "DqCheck", "Escalation", "Match", "ReadLevel", "ReadPlan", "UnitKey",
           "levels_of", "plan_of"]


#: The action tiers with their names, as the engine state keys its streaks and slots.
TIERS: tuple[tuple[Tier, str], ...] = tuple((t, str(t)) for t in ACTION_TIERS)

#: A level as the reading uses it: its tier, its fixed threshold, its clear level when
#: that is known before the window (written in the policy, or a fixed threshold's
#: hysteresis), the key of its calibrated level (:func:`rate_key`; None when fixed),
#: and the level.
ReadLevel = tuple[Tier, float | None, float | None, str | None, Level]

#: The unit a signal counts for: ``("f", feature)``, or ``("m", signal)`` model-level.
UnitKey = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class Match:
    """One rule as it reads one feature (or the model) of its detector: its levels with
    the clear levels known before the window, and the feature's weight."""

    rule: Rule
    levels: tuple[ReadLevel, ...]
    weight: float


@dataclass(frozen=True, slots=True)
class DqCheck:
    """One data-quality rule as it reads one feature of its detector."""

    measure: str
    threshold: float
    source: str


@dataclass(frozen=True, slots=True)
class Escalation:
    """An escalation rule with its tiers parsed and its policy line."""

    lower: Tier
    lower_name: str
    upper: Tier
    after: int
    source: str


class ReadPlan:
    """One policy's plan (a policy is frozen, so it holds): the rules and data-quality
    checks of each detector and feature, each tier's persistence, the hysteresis factor
    and its line, and the escalations in the order they apply."""

    __slots__ = (
        "_dq_rules",
        "_rules",
        "combine",
        "dq",
        "escalations",
        "factor",
        "factor_source",
        "persistence",
        "reads",
    )

    def __init__(self, policy: Policy) -> None:
        self.factor = policy.hysteresis.factor
        self.factor_source = policy.source(("hysteresis", "factor"))
        self.combine = policy.combine
        self.persistence = tuple(policy.persistence.get(t) for t in ACTION_TIERS)
        ordered = sorted(enumerate(policy.escalation), key=lambda e: Tier.parse(e[1].from_))
        self.escalations = tuple(
            Escalation(Tier.parse(esc.from_), str(Tier.parse(esc.from_)), Tier.parse(esc.to),
                        esc.after, policy.source(("escalation", i)))
            for i, esc in ordered)
        rules: dict[str, list[Rule]] = {}
        for rule in compile_rules(policy):
            rules.setdefault(rule.detector, []).append(rule)
        self._rules = {k: tuple(v) for k, v in rules.items()}
        dq_rules: dict[str, list[tuple[int, DataQualityRule]]] = {}
        for i, dq in enumerate(policy.data_quality.signals):
            dq_rules.setdefault(dq.detector, []).append((i, dq))
        self._dq_rules = {k: tuple(v) for k, v in dq_rules.items()}
        #: detector -> feature -> (unit, matches); a detector no rule reads is absent
        self.reads: dict[str, dict[str | None, tuple[UnitKey, tuple[Match, ...]]]] = {
            k: {} for k in self._rules}
        #: detector -> feature -> checks; a detector no data-quality rule reads is absent
        self.dq: dict[str, dict[str | None, tuple[DqCheck, ...]]] = {
            k: {} for k in self._dq_rules}

    def reads_of(self, detector: str, feature: str | None
                 ) -> tuple[UnitKey, tuple[Match, ...]]:
        """The unit and the rules of ``detector`` that read ``feature`` (kept)."""
        matches = tuple(
            Match(rule, levels_of(rule, feature, self.factor), rule.weight_for(feature))
            for rule in self._rules[detector]
            if rule.features is None or feature in rule.features)
        key: UnitKey = ("f", feature) if feature is not None else ("m", detector)
        found = self.reads[detector][feature] = (key, matches)
        return found

    def dq_of(self, policy: Policy, detector: str, feature: str | None
              ) -> tuple[DqCheck, ...]:
        """The data-quality checks of ``detector`` that apply to ``feature`` (kept)."""
        out = []
        for i, dq in self._dq_rules[detector]:
            if dq.features != "all" and feature not in dq.features:
                continue
            path: tuple[str | int, ...] = ("data_quality", "signals", i, "threshold")
            thr = dq.threshold
            if feature is not None and feature in dq.overrides:
                thr = dq.overrides[feature]
                path = ("data_quality", "signals", i, "overrides", feature)
            out.append(DqCheck(dq.measure, thr, policy.source(path)))
        checks = self.dq[detector][feature] = tuple(out)
        return checks


def plan_of(policy: Policy) -> ReadPlan:
    """The policy's plan, built on first use and kept in ``policy.cache``."""
    plan = policy.cache.get("plan")
    if plan is None:
        plan = policy.cache["plan"] = ReadPlan(policy)
    return plan  # type: ignore[no-any-return]


def levels_of(rule: Rule, feature: str | None, factor: float) -> tuple[ReadLevel, ...]:
    """The rule's levels for ``feature`` as the reading uses them (:data:`ReadLevel`)."""
    out = []
    for lv in rule.levels_for(feature):
        clr = lv.clear
        if clr is None and lv.fixed is not None:
            clr = clear_level(lv.fixed, rule.direction, factor)
        key = rate_key(lv.rate or 0.0) if lv.fixed is None else None
        out.append((lv.tier, lv.fixed, clr, key, lv))
    return tuple(out)
