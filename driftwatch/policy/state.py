"""What the policy engine remembers between windows; goes into checkpoints as JSON.

>>> s = EngineState(active_tier=Tier.MILD, observed_streak={"mild": 2})
>>> EngineState.from_dict(s.to_dict()) == s
True
>>> list(s.to_dict())[:3]
['action_times', 'active_tier', 'cooldown_until']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from driftwatch.errors import StateError
from driftwatch.policy.tiers import Tier

__all__ = ["STATE_VERSION", "EngineState"]

STATE_VERSION = 1


@dataclass(frozen=True)
class EngineState:
    """Counters and clocks of one model's policy engine. Immutable: ``evaluate`` returns
    a new one.

    * ``active_tier``: the tier decided last window (hysteresis holds it);
    * ``observed_streak[tier]``: windows in a row whose signals reached ``tier`` (after
      hysteresis): persistence counts these;
    * ``decided_streak[tier]``: windows in a row decided at ``tier`` or above: pending
      escalations count these;
    * ``cooldown_until[tier or "data_quality"]``: epoch seconds before which that tier
      (and those below it) may not act again;
    * ``action_times[tier]``: when actions ran in the last 24 hours (blast radius);
    * ``dq_fault`` / ``dq_clean_windows``: the data-quality gate and its clean windows;
    * ``windows`` / ``last_window_id``: windows evaluated so far, and the latest id.
    """

    active_tier: Tier = Tier.NONE
    observed_streak: Mapping[str, int] = field(default_factory=dict)
    decided_streak: Mapping[str, int] = field(default_factory=dict)
    cooldown_until: Mapping[str, float] = field(default_factory=dict)
    action_times: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    dq_fault: bool = False
    dq_clean_windows: int = 0
    windows: int = 0
    last_window_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe with sorted keys at every level, so equal states dump byte-equal."""
        return {
            "action_times": {k: list(v) for k, v in sorted(self.action_times.items()) if v},
            "active_tier": str(self.active_tier),
            "cooldown_until": dict(sorted(self.cooldown_until.items())),
            "decided_streak": {k: v for k, v in sorted(self.decided_streak.items()) if v},
            "dq_clean_windows": self.dq_clean_windows,
            "dq_fault": self.dq_fault,
            "last_window_id": self.last_window_id,
            "observed_streak": {k: v for k, v in sorted(self.observed_streak.items()) if v},
            "version": STATE_VERSION,
            "windows": self.windows,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EngineState:
        version = d.get("version", STATE_VERSION)
        if version != STATE_VERSION:
            raise StateError(f"policy engine state version {version!r} is not supported "
                             f"(expected {STATE_VERSION})")
        try:
            return cls(
                active_tier=Tier.parse(d.get("active_tier", "none")),
                observed_streak={k: int(v) for k, v in d.get("observed_streak", {}).items()},
                decided_streak={k: int(v) for k, v in d.get("decided_streak", {}).items()},
                cooldown_until={k: float(v) for k, v in d.get("cooldown_until", {}).items()},
                action_times={k: tuple(float(t) for t in v)
                              for k, v in d.get("action_times", {}).items()},
                dq_fault=bool(d.get("dq_fault", False)),
                dq_clean_windows=int(d.get("dq_clean_windows", 0)),
                windows=int(d.get("windows", 0)),
                last_window_id=d.get("last_window_id"),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"unreadable policy engine state: {exc}") from exc

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EngineState):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))
