"""What a monitor hands back: judged windows, and the errors of the stages that failed.

A :class:`WindowResult` is a closed window with what the detectors said and what the
policy decided; a stage that raised leaves a :class:`StageError` in it instead, and a poll
the monitor could not take in comes back as a :class:`PollError` with its events.

>>> StageError.of("policy", KeyError("tier")).to_dict()
{'stage': 'policy', 'message': "KeyError: 'tier'"}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftwatch.batch import Batch
from driftwatch.detectors.base import Assessment
from driftwatch.policy.decision import Decision
from driftwatch.windows.panes import ClosedWindow

__all__ = ["PollError", "StageError", "WindowResult"]


@dataclass(frozen=True, slots=True)
class StageError:
    """An exception one stage raised: ``stage`` is ``detectors``, ``policy`` or ``ingest``."""

    stage: str
    message: str

    @classmethod
    def of(cls, stage: str, exc: BaseException) -> StageError:
        return cls(stage, f"{type(exc).__name__}: {exc}"[:500])

    def to_dict(self) -> dict[str, str]:
        return {"stage": self.stage, "message": self.message}


@dataclass(frozen=True, slots=True)
class PollError:
    """A poll the monitor could not take in, with its events (for dead letters)."""

    error: StageError
    batches: tuple[Batch, ...]


@dataclass
class WindowResult:
    """A closed window with what the detectors said and what the policy decided.

    When a stage failed, ``error`` says which and why; the assessment then holds only the
    signals computed before it (none if the detectors failed) and there is no decision.
    """

    window: ClosedWindow
    assessment: Assessment
    decision: Decision | None = None
    labels: dict[str, Any] = field(default_factory=dict)
    error: StageError | None = None
    #: Set on a cohort's verdict (its window judged again on its own outcomes): the
    #: cohort's counts, completeness and rates.
    cohort: dict[str, Any] | None = None
    #: Set by a consumer group's decider when the decision's idempotency key was decided
    #: before (a cohort's verdict that repeats its window's tier, perhaps decided by
    #: another member whose outbox holds the action): the daemon does not submit it again.
    action_recorded: bool = False
