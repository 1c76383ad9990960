"""The action executor: records decisions durably, then runs them, step by step, exactly once.

``submit(decision, context)`` writes the decision to the outbox (and, for actions that
learn, the labelled window it will learn from) before anything else happens; a decision
already recorded is a no-op. ``run_pending()`` moves every unfinished action as far as it
can go without waiting: an online update runs to the end, a shadow deployment scores the
outcomes that arrived since the last call, a retraining checks its pool job. The service's
scheduler calls it every few seconds, the replay loop after each window. ``resume()``
after a restart just runs the same: finished steps are skipped, interrupted ones check
the outside world before they act again.

An MLflow outage leaves the action where it was, with a note and a retry time (backoff);
a person's ``approve`` / ``cancel`` (CLI or HTTP) goes through the outbox, and the next
``run_pending`` carries it out.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from driftwatch.actions.alert import run_alert
from driftwatch.actions.backoff import Backoff
from driftwatch.actions.context import ActionContext, ActionEnv, PromoteHook
from driftwatch.actions.export import ROWS_KEY, ExportPending, ensure_export, window_rows
from driftwatch.actions.labelled_buffer import LabelledBuffer, features_frame
from driftwatch.actions.online_update import adopt_profile, run_online_update
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionRecord, ActionState
from driftwatch.actions.reference import ReferenceReader
from driftwatch.actions.retrain import cancel_retrain, run_retrain
from driftwatch.actions.retrain_limits import RetrainLimits
from driftwatch.actions.shadow import cancel_shadow, observe_live, run_shadow
from driftwatch.actions.shadow_eval import SHADOW_KEY
from driftwatch.actions.steps import (
    CrashPoints,
    Done,
    HeldBack,
    NeedsApproval,
    StepRunner,
    Waiting,
)
from driftwatch.clock import Clock
from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.errors import ActionError, DriftwatchError, StateError
from driftwatch.policy.decision import Decision
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.promotion import rollback
from driftwatch.registry.retry import RegistryUnavailableError
from driftwatch.registry.versions import CHAMPION
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.state import write_fault

if TYPE_CHECKING:
    from driftwatch.gpupool import GpuPool

__all__ = ["ACTIONS", "NEEDS_MLFLOW", "ActionExecutor", "waits_for_data"]

log = logging.getLogger("driftwatch.actions")

Handler = Callable[[ActionRecord, StepRunner, ActionEnv, Outbox], Any]
ACTIONS: dict[str, Handler] = {
    "online_update": lambda a, s, e, o: run_online_update(a, s, e),
    "shadow": run_shadow,
    "retrain": run_retrain,
    "alert": lambda a, s, e, o: run_alert(a, s, e),
}
_LEARNS = ("online_update", "shadow", "retrain")
#: the actions that talk to the MLflow registry; alerts and webhooks do not, and run
#: whatever state MLflow is in
NEEDS_MLFLOW = frozenset(_LEARNS)
_APPROVE_FIRST = ("online_update", "retrain")  # shadow: approval gates the promotion
_OPEN = [ActionState.PENDING, ActionState.RUNNING]


class ActionExecutor:
    """Runs the outbox's actions against the registry and the GPU pool (see module doc).

    ``buffer`` is the monitor's :class:`LabelledBuffer`; ``cutoff`` the approval cut-off
    for shadow comparisons (the policy's ``model.approval_cutoff``); ``columns`` maps the
    champion's input columns to connector features, ``score_is`` and ``score_scale`` are
    what it declares of its output (applied to the user's own versions only, see
    :mod:`~driftwatch.registry.scorers`); ``max_concurrent_retrains`` holds a
    retraining's pool job back while that many of the model's jobs are active, and
    ``retrain_limits`` (:mod:`~driftwatch.actions.retrain_limits`) while the pool's job
    records show the policy's per-day limit or a cooldown reached;
    ``shadow_defaults`` the policy's shadow settings (for the
    shadow that follows a retraining); ``on_promote(model, version, profile)`` is called
    when a version becomes champion; ``policy_actions`` (the policy's ``actions:``) lets a
    promotion warn that its ``method: learner`` online updates cannot run on the new
    champion. ``reference_reader`` reads the reference file as the monitor does (built
    where the monitor's profile is; without one, ``text_formats`` and the default columns).
    ``crash_points`` default to ``$DRIFTWATCH_CRASH_AT``
    (a test hook, see :mod:`~driftwatch.actions.steps`).
    """

    def __init__(
        self,
        outbox: Outbox,
        registry: MlflowRegistry,
        pool: GpuPool | None,
        clock: Clock,
        *,
        buffer: LabelledBuffer | None = None,
        reference_path: str | None = None,
        cutoff: float | None = None,
        shadow_defaults: Mapping[str, Any] | None = None,
        on_promote: PromoteHook | None = None,
        crash_points: CrashPoints | None = None,
        drive_pool: bool = True,
        backoff_s: float = 30.0,
        max_backoff_s: float = 600.0,
        webhook_timeout: float = 3.0,
        lock: bool = True,
        columns: Mapping[str, str] | None = None,
        max_concurrent_retrains: int | None = None,
        retrain_limits: RetrainLimits | None = None,
        bad_labels: Sequence[Any] | None = None,
        score_is: str = "p_bad",
        score_scale: ScoreScale = PROBABILITY,
        text_formats: Mapping[str, str] | None = None,
        policy_actions: Any = None,
        reference_reader: ReferenceReader | None = None,
    ) -> None:
        self.outbox = outbox
        self.clock = clock
        self.env = ActionEnv(
            registry=registry,
            clock=clock,
            state_dir=outbox.state_dir,
            pool=pool,
            buffer=buffer,
            reference_path=reference_path,
            cutoff=cutoff,
            shadow_defaults=dict(shadow_defaults or {}),
            on_promote=on_promote,
            webhook_timeout=webhook_timeout,
            columns=dict(columns or {}),
            bad_labels=tuple(bad_labels) if bad_labels else DEFAULT_BAD,
            score_is=score_is,
            score_scale=score_scale,
            max_concurrent_retrains=max_concurrent_retrains,
            retrain_limits=retrain_limits,
            reader=reference_reader or ReferenceReader(formats=dict(text_formats or {})),
            policy_actions=policy_actions,
        )
        self.crash = crash_points if crash_points is not None else CrashPoints.from_env()
        self.drive_pool = drive_pool
        self.backoff = Backoff(backoff_s, max(backoff_s, max_backoff_s))
        self._lock_fd = _lock(outbox.state_dir / "executor.lock") if lock else -1

    @classmethod
    def open(
        cls,
        state_dir: str | Path,
        *,
        clock: Clock,
        tracking_uri: str | None = None,
        pool: GpuPool | None = None,
        **kwargs: Any,
    ) -> ActionExecutor:
        """The embedded defaults: outbox and MLflow store in ``state_dir`` (or a tracking
        server at ``tracking_uri``)."""
        outbox = Outbox(state_dir, clock=clock)
        registry = MlflowRegistry.from_uri(tracking_uri, state_dir)
        return cls(outbox, registry, pool, clock, **kwargs)

    @property
    def registry(self) -> MlflowRegistry:
        return self.env.registry

    def set_buffer(self, buffer: LabelledBuffer | None) -> None:
        """Point the executor at the monitor's (restored) labelled buffer."""
        self.env.buffer = buffer

    def close(self) -> None:
        self.close_lock()
        self.outbox.close()

    def close_lock(self) -> None:
        """Release the state folder's executor lock, leaving the outbox open."""
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    # -- submitting ------------------------------------------------------------------
    def submit(
        self, decision: Decision, context: ActionContext | Mapping[str, Any] | None = None
    ) -> int | None:
        """Record ``decision`` durably and return its action id (None: nothing to do).

        A decision already recorded returns the existing id and changes nothing.
        """
        kind = decision.action
        if not kind or kind == "none":
            return None
        if kind not in ACTIONS:
            raise ActionError(f"unknown action {kind!r}; valid: {', '.join(ACTIONS)}")
        ctx = context.to_dict() if isinstance(context, ActionContext) else dict(context or {})
        if kind in _LEARNS and self.env.buffer is not None:  # the rows it learns from
            ctx[ROWS_KEY] = window_rows(self.env.buffer)
        state = (
            ActionState.AWAITING_APPROVAL
            if decision.requires_approval and kind in _APPROVE_FIRST
            else ActionState.PENDING
        )
        action_id, created = self.outbox.record(decision, ctx, state=state)
        self.crash.at("recorded")
        if created:
            log.info("action %d recorded: %s %s", action_id, kind, decision.key)
        if kind in _LEARNS:  # fix the data it learns from now, not when it runs
            self.export_recorded(self.outbox.get(action_id))
        return action_id

    def export_recorded(self, rec: ActionRecord) -> None:
        """Write the window of an action that learns if it is not written yet: at submit,
        or when the same decision is made again after a restart (the buffer then holds
        the action's rows again). Waits quietly while the buffer is not that far."""
        if rec.action not in _LEARNS or rec.state.is_final:
            return
        steps = StepRunner(self.outbox, rec.id, self.crash)
        if steps.result("export") is not None:
            return
        with contextlib.suppress(ExportPending):
            ensure_export(rec, steps, self.env)

    # -- running ---------------------------------------------------------------------
    def run_pending(self, kinds: Collection[str] | None = None) -> list[ActionRecord]:
        """Move every unfinished action as far as it goes now; returns those it touched.

        ``kinds`` limits the pass to those action types (the daemon runs alerts apart
        from the actions that need MLflow, so an outage never holds an alert back); the
        pool and the clean-up of cancelled actions are driven only by a pass that
        includes an action that needs MLflow."""
        registry_work = kinds is None or bool(NEEDS_MLFLOW.intersection(kinds))
        pool = self.env.pool
        if registry_work and pool is not None and self.drive_pool:
            pool.poll()
            pool.dispatch()
        if registry_work:
            self._clean_up_cancelled()
            self.close_stale_approvals()
        now = self.clock.now()
        touched = []
        for rec in self.outbox.unfinished():
            if kinds is not None and rec.action not in kinds:
                continue
            if rec.next_attempt_at is not None and rec.next_attempt_at > now:
                continue
            touched.append(self._run_one(rec))
        return touched

    def run_one(self, action_id: int) -> ActionRecord:
        """Move one action as far as it goes now (a person's approval carried out)."""
        rec = self.outbox.get(action_id)
        if rec.state not in _OPEN:
            return rec
        return self._run_one(rec)

    def resume(self) -> list[int]:
        """After a restart: run what was left unfinished; returns the ids found."""
        ids = [r.id for r in self.outbox.unfinished()]
        if ids:
            log.info("resuming %d unfinished actions: %s", len(ids), ids)
        self.run_pending()
        return ids

    def _run_one(self, rec: ActionRecord) -> ActionRecord:
        steps = StepRunner(self.outbox, rec.id, self.crash)
        try:
            result = ACTIONS[rec.action](rec, steps, self.env, self.outbox)
        except ExportPending as exc:  # after a restart: the rows are read again soon
            if rec.note != str(exc):
                return self.outbox.update(rec.id, note=str(exc))
            return rec
        except RegistryUnavailableError as exc:
            attempts = rec.attempts + 1
            retry_at = self.backoff.retry_at(self.clock.now(), attempts)
            # an outage already known (the registry said so once) is not said again for
            # every action at every try
            say = log.debug if exc.known else log.warning
            say("action %d waits for MLflow (attempt %d, next in %.0fs): %s", rec.id,
                attempts, retry_at - self.clock.now(), exc)
            if not exc.known:
                steps.note("mlflow_unavailable", {"error": str(exc), "attempt": attempts})
            return self.outbox.update(
                rec.id, attempts=attempts, note=str(exc), next_attempt_at=retry_at
            )
        except Exception as exc:  # one broken action must not stop the others
            if write_fault(exc) is not None:  # the disk, not the action: it waits as it is
                raise
            if not isinstance(exc, DriftwatchError):
                log.exception("action %d (%s) crashed", rec.id, rec.key)
            message = (
                str(exc) if isinstance(exc, DriftwatchError) else f"{type(exc).__name__}: {exc}"
            )
            log.error("action %d (%s) failed: %s", rec.id, rec.key, message)
            return self._finish(rec.id, ActionState.FAILED, error=message)
        if isinstance(result, Done):
            self.crash.at("finish")
            if result.outcome.get("verdict") == "skipped":
                log.info("action %d (%s) skipped: %s", rec.id, rec.key,
                         result.outcome.get("reason"))
            else:
                log.info("action %d (%s) succeeded: %s", rec.id, rec.key, result.outcome)
            return self._finish(rec.id, ActionState.SUCCEEDED, outcome=result.outcome, note="")
        if isinstance(result, NeedsApproval):
            return self._move(rec.id, ActionState.AWAITING_APPROVAL, note=result.note)
        if isinstance(result, HeldBack):
            log.warning("action %d (%s) held back: %s", rec.id, rec.key, result.reason)
            return self._finish(rec.id, ActionState.CANCELLED, note=result.reason,
                                outcome={"held_back": result.reason})
        assert isinstance(result, Waiting)
        return self._move(
            rec.id, ActionState.RUNNING, note=result.note, next_attempt_at=result.retry_at
        )

    def _move(self, action_id: int, state: ActionState, **changes: Any) -> ActionRecord:
        try:
            return self.outbox.update(action_id, state=state, expect=_OPEN, **changes)
        except ActionError:  # cancelled meanwhile: the clean-up pass takes over
            return self.outbox.get(action_id)

    def _finish(self, action_id: int, state: ActionState, **changes: Any) -> ActionRecord:
        return self._move(action_id, state, **changes)

    def _clean_up_cancelled(self) -> None:
        for rec in self.outbox.list(states=[ActionState.CANCELLED]):
            steps = StepRunner(self.outbox, rec.id, self.crash)
            if steps.result("cancel_cleanup") is not None:
                continue
            with contextlib.suppress(RegistryUnavailableError):  # tried again next time
                steps.run("cancel_cleanup", lambda r=rec: self._cancel_effects(r))

    def close_stale_approvals(self) -> list[ActionRecord]:
        """A shadow (running, or awaiting approval) whose comparison no longer holds is
        closed: its challenger became champion by another action (two shadows of one
        retrained version), or the champion it is compared against was replaced. Its
        verdict would promote against a champion it never met. Returns the actions closed."""
        closed: list[ActionRecord] = []
        open_states = [ActionState.AWAITING_APPROVAL, ActionState.RUNNING]
        # one that promoted its challenger itself and has steps left (a crash after the
        # promotion) is not stale: it carries on
        waiting = [r for r in self.outbox.list(states=open_states)
                   if r.action == "shadow" and SHADOW_KEY in r.artifacts
                   and self.outbox.step_result(r.id, "promote") is None]
        champions: dict[str, str | None] = {}
        for rec in waiting:
            ev = rec.artifacts[SHADOW_KEY]
            if rec.model not in champions:
                try:
                    info = self.registry.by_alias(rec.model, CHAMPION)
                except RegistryUnavailableError:
                    return closed  # looked at again on the next pass
                champions[rec.model] = info.version if info is not None else None
            now_champion = champions[rec.model]
            was = ev.get("champion_version")
            version = ev.get("challenger_version")
            if now_champion is None or was is None or now_champion == was:
                continue
            reason = (f"challenger v{version} is the champion already" if now_champion == version
                      else f"the champion changed from v{was} to v{now_champion} since the "
                      f"comparison began: it compared v{version} against v{was}")
            with contextlib.suppress(ActionError):  # approved or cancelled meanwhile
                closed.append(self.outbox.update(
                    rec.id, state=ActionState.SUCCEEDED, expect=[rec.state],
                    note="", outcome={"verdict": "superseded", "version": version,
                                      "reason": reason}))
                log.info("action %d (%s) superseded: %s", rec.id, rec.key, reason)
        return closed

    def _cancel_effects(self, rec: ActionRecord) -> dict[str, Any]:
        if rec.action == "shadow":
            return cancel_shadow(rec, self.env, self.outbox)
        if rec.action == "retrain":
            return cancel_retrain(rec, self.env, self.outbox)
        return {}

    # -- people ----------------------------------------------------------------------
    def approve(self, action_id: int, approver: str) -> ActionRecord:
        return self.outbox.approve(action_id, approver)

    def cancel(self, action_id: int, actor: str, reason: str = "") -> ActionRecord:
        rec = self.outbox.cancel(action_id, actor, reason)
        self._clean_up_cancelled()
        return rec

    def rollback(self, model: str, actor: str, *, adopt: bool = True) -> str:
        """Restore the previous champion (and, with ``adopt``, hand its reference profile
        to the monitor); returns its version. ``adopt=False``: the caller adopts it, and
        keeps the adoption pending should MLflow fail at that load."""
        restored = rollback(self.registry, model, at=self.clock.now(), by=actor)
        self.outbox.log_admin(None, "rollback", actor, {"model": model, "restored": restored})
        if adopt:
            adopt_profile(self.env, model, restored)
        return restored

    # -- live traffic for shadows ----------------------------------------------------
    def observe_predictions(
        self,
        model: str,
        frame: pd.DataFrame,
        champion_score: np.ndarray | None = None,
        exposure: np.ndarray | None = None,
        event_time: np.ndarray | None = None,
        first_index: int | None = None,
        lineage: str | None = None,
    ) -> int:
        """Score one batch of live predictions (connector features) with the champion and
        every challenger in shadow for ``model``; returns the shadows that scored it.
        ``first_index``: the index of the batch's first prediction in monitor ``lineage``
        (checkpointed with the consumed offsets), so a batch re-read after a restart counts
        once."""
        scored = 0
        if first_index is not None:
            self.env.live_position = (lineage, first_index + len(frame))
        for rec in self.outbox.list(states=[ActionState.RUNNING], model=model):
            if rec.action != "shadow":
                continue
            try:
                observe_live(rec, self.env, self.outbox, frame, champion_score, exposure,
                             event_time, first_index, lineage)
                scored += 1
            except RegistryUnavailableError as exc:  # these rows go unscored, and say so
                say = log.debug if exc.known else log.warning
                say("shadow %d: %d live rows not scored: %s", rec.id, len(frame), exc)
            except DriftwatchError as exc:
                log.error("shadow %d: live rows not scored: %s", rec.id, exc)
        return scored

    def observe_batch(
        self, model: str, schema: Any, batch: Any, first_index: int | None = None,
        lineage: str | None = None,
    ) -> int:
        """:meth:`observe_predictions` for a prediction :class:`~driftwatch.batch.Batch`
        decoded on ``schema``; nothing is decoded while no shadow runs."""
        if first_index is not None:
            self.env.live_position = (lineage, first_index + len(batch))
        if not len(batch) or not self.shadows_running(model):
            return 0
        frame = features_frame(schema, batch)
        return self.observe_predictions(
            model, frame, batch.score, batch.exposure, batch.event_time, first_index, lineage
        )

    def shadows_running(self, model: str) -> bool:
        """Whether a shadow of ``model`` scores live traffic now (an outbox read)."""
        return any(
            r.action == "shadow"
            for r in self.outbox.list(states=[ActionState.RUNNING], model=model)
        )

    def active_retrains(self, model: str) -> int:
        """Retrainings of ``model`` that hold or may soon hold a pool job: the pool's
        queued and running jobs of the model, and its retrain actions not yet finished
        (recorded, awaiting approval, or about to submit). Read from the pool's and the
        outbox's durable records, so a restarted daemon counts the jobs it left running."""
        open_actions = {
            r.key for r in self.outbox.list(
                states=[ActionState.PENDING, ActionState.RUNNING, ActionState.AWAITING_APPROVAL],
                model=model)
            if r.action == "retrain"
        }
        pool = self.env.pool
        jobs: set[str] = set()
        if pool is not None:
            for job in pool.active():  # never waits on the pool's lock (a slow backend)
                if not job.state.is_final and (job.key or "").startswith(f"{model}:"):
                    jobs.add(job.key or job.job_id)
        return len(open_actions | jobs)

    def drain(
        self,
        timeout_s: float,
        *,
        interval_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        clock_stopped: bool = False,
    ) -> list[ActionRecord]:
        """Run until no action could still finish without new data (pool jobs done), or
        ``timeout_s`` passed; returns what is still open. For replay's end and tests.

        ``clock_stopped``: the executor's clock moves no more (a replay's event time at the
        end of the recording), so an action backing off from an unreachable MLflow would
        never reach its retry time: it is tried once more at once and, if MLflow still does
        not answer, left open (its note says why) instead of held until ``timeout_s``."""
        deadline = monotonic() + timeout_s
        if clock_stopped:
            self.registry.probe_next()  # a real try, not a refusal on the breaker
            for rec in self.outbox.unfinished():
                if rec.next_attempt_at is not None:
                    self.outbox.update(rec.id)  # due now: one more try
        while True:
            self.run_pending()
            now = self.clock.now()
            busy = [r for r in self.outbox.unfinished() if not waits_for_data(r)
                    and not (clock_stopped and (r.next_attempt_at or now) > now)]
            if not busy or monotonic() >= deadline:
                return self.outbox.unfinished()
            sleep(interval_s)


def waits_for_data(rec: ActionRecord) -> bool:
    """Whether an unfinished action can end only on new data: a shadow in progress
    scores live traffic and compares on labels still to come."""
    return rec.action == "shadow" and rec.state is ActionState.RUNNING


def _lock(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StateError(f"{path.parent}: another executor runs on this state directory") from None
    return fd
