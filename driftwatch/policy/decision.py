"""What the policy engine decided for one window, and why.

>>> r = Reason("psi", "drift", "income", 0.31, 0.25, Tier.MODERATE, "above", "p.yaml:12")
>>> d = Decision(model="credit", window_id=7, time=3600.0, tier=Tier.MODERATE,
...              raw_tier=Tier.MODERATE, action="shadow", reasons=(r,))
>>> d.to_dict()["reasons"][0]["tier"]
'moderate'
>>> Decision.from_dict(d.to_dict()) == d
True
>>> d.key
'credit:moderate:7'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftwatch.policy.tiers import Tier

__all__ = ["Decision", "Reason"]


@dataclass(frozen=True, slots=True)
class Reason:
    """One signal (or rule) behind a decision, with the policy line that set its level.

    ``kind`` is ``trigger`` (the value reached the tier's threshold), ``hold`` (an
    active tier held by hysteresis: ``threshold`` is the clear level), ``data_quality``
    (a data-quality signal over its level; ``tier`` is ``none``) or ``escalation``
    (``value`` is the windows in a row, ``threshold`` the rule's ``after``). ``value``
    is what was compared: the result's value, or the change named by ``measure``.
    """

    signal: str
    group: str
    feature: str | None
    value: float
    threshold: float
    tier: Tier
    direction: str
    source: str
    kind: str = "trigger"
    #: What ``value`` is: the result's ``value`` or a change from its details.
    measure: str = "value"
    #: Set when ``threshold`` is a calibrated level: the false-alarm rate it holds.
    false_alarm_rate: float | None = None
    #: The segment the signal was measured on (None: the whole window).
    segment: str | None = None

    def to_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.false_alarm_rate is None else {
            "false_alarm_rate": self.false_alarm_rate}
        if self.segment is not None:
            extra["segment"] = self.segment
        return {
            "signal": self.signal,
            "group": self.group,
            "feature": self.feature,
            "value": self.value,
            "threshold": self.threshold,
            "tier": str(self.tier),
            "direction": self.direction,
            "source": self.source,
            "kind": self.kind,
            "measure": self.measure,
            **extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reason:
        return cls(**{**d, "tier": Tier.parse(d["tier"])})


@dataclass(frozen=True, slots=True)
class Decision:
    """The engine's verdict on one window.

    ``raw_tier`` is what this window's signals reach on their own; ``tier`` is the tier
    after persistence, hysteresis and escalation. ``action`` is what to run now (None
    when nothing runs); ``suppressed_by`` names what held an action back
    (``persistence``, ``cooldown``, ``blast_radius``, ``max_concurrent_retrains``,
    ``data_quality_gate``). While ``data_quality_fault`` is set the action is the gate's
    (an alert) and the tier's action waits.
    """

    model: str
    window_id: int
    time: float
    tier: Tier
    raw_tier: Tier
    action: str | None = None
    action_settings: dict[str, Any] = field(default_factory=dict)
    suppressed_by: tuple[str, ...] = ()
    data_quality_fault: bool = False
    requires_approval: bool = False
    reasons: tuple[Reason, ...] = ()
    escalated_from: Tier | None = None
    policy: str = ""
    policy_digest: str = ""
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Idempotency key of the action: ``model:tier:window_id``."""
        return f"{self.model}:{self.tier}:{self.window_id}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, in a fixed key order."""
        return {
            "model": self.model,
            "window_id": self.window_id,
            "time": self.time,
            "tier": str(self.tier),
            "raw_tier": str(self.raw_tier),
            "action": self.action,
            "action_settings": self.action_settings,
            "suppressed_by": list(self.suppressed_by),
            "data_quality_fault": self.data_quality_fault,
            "requires_approval": self.requires_approval,
            "reasons": [r.to_dict() for r in self.reasons],
            "escalated_from": str(self.escalated_from) if self.escalated_from else None,
            "policy": self.policy,
            "policy_digest": self.policy_digest,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Decision:
        esc = d.get("escalated_from")
        return cls(
            model=d["model"],
            window_id=d["window_id"],
            time=d["time"],
            tier=Tier.parse(d["tier"]),
            raw_tier=Tier.parse(d["raw_tier"]),
            action=d.get("action"),
            action_settings=dict(d.get("action_settings") or {}),
            suppressed_by=tuple(d.get("suppressed_by", ())),
            data_quality_fault=bool(d.get("data_quality_fault", False)),
            requires_approval=bool(d.get("requires_approval", False)),
            reasons=tuple(Reason.from_dict(r) for r in d.get("reasons", ())),
            escalated_from=Tier.parse(esc) if esc else None,
            policy=d.get("policy", ""),
            policy_digest=d.get("policy_digest", ""),
            notes=tuple(d.get("notes", ())),
        )
