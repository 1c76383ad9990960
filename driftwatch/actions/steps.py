"""Steps that run at most once, and what a handler tells the executor when it returns.

A handler splits its action into named steps. :class:`StepRunner` logs each step as
``started`` before it runs and ``done`` with its result after; a step already ``done`` is
skipped and its recorded result returned. A step interrupted between the two (the process
died) runs again, so every step checks the outside world first (a model version tagged
with the action key, a pool job submitted under it) and returns what is already there.

Crash points (a test hook): ``DRIFTWATCH_CRASH_AT=<point>[,<point>...]`` makes the process
kill itself with SIGKILL when it reaches a point, as a power cut would. Points are
``recorded`` (the decision is durable, nothing ran), ``<step>:started`` (logged, not run),
``<step>:effect`` (ran, not yet logged as done), ``<step>:done`` and ``finish`` (the
outcome is about to be written). Integration tests use it to prove that a restart
completes each action exactly once.

>>> import tempfile
>>> from driftwatch.actions.outbox import Outbox
>>> from driftwatch.clock import ManualClock
>>> from driftwatch.policy.decision import Decision
>>> from driftwatch.policy.tiers import Tier
>>> box = Outbox(tempfile.mkdtemp(), clock=ManualClock(0.0))
>>> aid, _ = box.record(Decision("m", 1, 0.0, Tier.MILD, Tier.MILD, action="alert"))
>>> runs = []
>>> steps = StepRunner(box, aid)
>>> steps.run("notify", lambda: runs.append(1) or {"sent": True})
{'sent': True}
>>> steps.run("notify", lambda: runs.append(1) or {"sent": True})
{'sent': True}
>>> len(runs)
1
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from driftwatch.actions.outbox import Outbox

__all__ = [
    "CRASH_ENV",
    "CrashPoints",
    "Done",
    "NeedsApproval",
    "Result",
    "StepRunner",
    "Waiting",
]

CRASH_ENV = "DRIFTWATCH_CRASH_AT"


class CrashPoints:
    """Where to die on purpose (test hook, see module doc). Empty: never."""

    def __init__(self, points: Iterable[str] = ()) -> None:
        self.points = frozenset(p.strip() for p in points if p.strip())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CrashPoints:
        env = os.environ if environ is None else environ
        return cls(env.get(CRASH_ENV, "").split(","))

    def at(self, point: str) -> None:
        if point in self.points:
            os.kill(os.getpid(), signal.SIGKILL)


class StepRunner:
    """Runs the named steps of one action at most once each (see module doc)."""

    def __init__(self, outbox: Outbox, action_id: int, crash: CrashPoints | None = None):
        self.outbox = outbox
        self.action_id = action_id
        self.crash = crash or CrashPoints()

    def result(self, name: str) -> dict[str, Any] | None:
        """The recorded result of step ``name``, or None when it has not finished."""
        return self.outbox.step_result(self.action_id, name)

    def run(self, name: str, fn: Callable[[], Mapping[str, Any] | None]) -> dict[str, Any]:
        done = self.result(name)
        if done is not None:
            return done
        self.outbox.log_step(self.action_id, name, "started")
        self.crash.at(f"{name}:started")
        out = dict(fn() or {})
        self.crash.at(f"{name}:effect")
        self.outbox.log_step(self.action_id, name, "done", out)
        self.crash.at(f"{name}:done")
        return out

    def note(self, name: str, detail: Mapping[str, Any]) -> None:
        """Log something that happened without making it a step (a progress report)."""
        self.outbox.log_step(self.action_id, name, "note", detail)


@dataclass(frozen=True)
class Done:
    """The action finished; ``outcome`` is what the audit trail shows."""

    outcome: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Waiting:
    """Not finished: come back at ``retry_at`` (None: on the next ``run_pending``)."""

    note: str
    retry_at: float | None = None


@dataclass(frozen=True)
class NeedsApproval:
    """A person must approve before the action goes on."""

    note: str


@dataclass(frozen=True)
class HeldBack:
    """The action must not run (a limit of the policy holds it back): it ends cancelled,
    ``reason`` in its note and outcome."""

    reason: str


Result = Done | Waiting | NeedsApproval | HeldBack
