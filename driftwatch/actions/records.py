"""What the outbox hands out: actions, their steps and the admin calls on them.

>>> ActionState("running").is_final, ActionState.CANCELLED.is_final
(False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["ActionRecord", "ActionState", "AdminCall", "StepRecord"]


class ActionState(StrEnum):
    PENDING = "pending"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_final(self) -> bool:
        return self in (ActionState.SUCCEEDED, ActionState.FAILED, ActionState.CANCELLED)

    @property
    def label(self) -> str:
        """The state in plain English: ``awaiting approval``, ``waiting to run``."""
        return _LABELS[self]

    @property
    def sentence(self) -> str:
        """What an action in this state is: ``has already succeeded``, ``is running``.

        >>> f"action 3 {ActionState.SUCCEEDED.sentence}"
        'action 3 has already succeeded'
        """
        return _SENTENCES[self]


_LABELS = {
    ActionState.PENDING: "waiting to run",
    ActionState.AWAITING_APPROVAL: "awaiting approval",
    ActionState.RUNNING: "running",
    ActionState.SUCCEEDED: "succeeded",
    ActionState.FAILED: "failed",
    ActionState.CANCELLED: "cancelled",
}
_SENTENCES = {
    ActionState.PENDING: "is waiting to run",
    ActionState.AWAITING_APPROVAL: "is awaiting approval",
    ActionState.RUNNING: "is running",
    ActionState.SUCCEEDED: "has already succeeded",
    ActionState.FAILED: "has failed",
    ActionState.CANCELLED: "was cancelled",
}


@dataclass(frozen=True)
class ActionRecord:
    """One action as the outbox holds it."""

    id: int
    key: str
    model: str
    tier: str
    window_id: int
    action: str
    state: ActionState
    decision: dict[str, Any]
    context: dict[str, Any]
    policy: str
    policy_digest: str
    requires_approval: bool
    decided_at: float
    created_at: float
    updated_at: float
    attempts: int
    next_attempt_at: float | None
    approver: str | None
    approved_at: float | None
    outcome: dict[str, Any]
    artifacts: dict[str, Any]
    error: str | None
    note: str | None
    parent_id: int | None

    @property
    def settings(self) -> dict[str, Any]:
        """The policy's settings for this action (``action_settings`` of the decision)."""
        return dict(self.decision.get("action_settings") or {})

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["state"] = self.state.value
        return out


@dataclass(frozen=True)
class StepRecord:
    action_id: int
    step: str
    status: str
    at: float
    detail: dict[str, Any]


@dataclass(frozen=True)
class AdminCall:
    action_id: int | None
    command: str
    actor: str
    at: float
    detail: dict[str, Any]
