"""The daemon's side of the actions layer: outbox, executor, GPU pool, admin calls, audit.

Each model has its own actions folder, ``<state>/models/<model>/`` (outbox, executor lock,
per-action files), because an executor serves one model's labelled buffer and reference;
the MLflow store (``<state>/mlruns`` unless a tracking URI is set) and the GPU pool
(``<state>/pool``) are shared. The run loop hands each decision that names an action to
:meth:`ServiceActions.submit`, which writes it to the outbox (durable, idempotent by
``model:tier:window_id``) before anything runs (invariant 4): a decision made again after a
crash is a no-op. With ``actions.execute: false`` decisions are recorded and nothing runs.

Nothing here that may wait on MLflow runs in the loop's thread. :meth:`start` opens two
:class:`~driftwatch.service.lanes.Lane` threads: ``mlflow`` runs the actions that need the
registry (online updates, shadows, retrainings), drives the GPU pool and scores live
batches for shadows (handed over from the loop, never waited for: ``action_shadows.py``);
``alerts`` runs alerts and webhooks, so an MLflow outage never holds one back. Every MLflow
call is bounded (``actions.mlflow_timeout``, ``mlflow_http_retries``, ``mlflow_attempts``);
an action that finds MLflow down backs off (``retry_backoff`` doubling to
``retry_backoff_max``), so does the champion check (``action_champion.py``) and a new
champion's reference profile that did not reach the monitor (``action_adoption.py``), and
the ``mlflow`` dependency reads down. :meth:`stop` gives a call in flight ``shutdown_grace``,
then abandons it: its action stays open in the outbox. HTTP calls :meth:`admin` and
:meth:`audit` (``action_admin.py``). What is left for the lanes when a finite run drains
before it exits: ``action_drain.py``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from driftwatch.actions.backoff import Backoff
from driftwatch.actions.context import shadow_defaults
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.outcomes import metric_outcome
from driftwatch.actions.records import ActionState
from driftwatch.clock import Clock
from driftwatch.errors import DriftwatchError
from driftwatch.metrics import Metrics
from driftwatch.pipeline import WindowResult
from driftwatch.policy.decision import Decision
from driftwatch.scorescale import PROBABILITY
from driftwatch.service.action_admin import AdminCalls, retrain_settings
from driftwatch.service.action_adoption import ProfileAdoption
from driftwatch.service.action_champion import ChampionCheck
from driftwatch.service.action_drain import DrainHooks
from driftwatch.service.action_shadows import ShadowHooks
from driftwatch.service.config import ServiceConfig
from driftwatch.service.dependencies import Dependencies
from driftwatch.service.metrics_live import PoolSnapshot
from driftwatch.state import write_fault

__all__ = [
    "ModelActions",
    "ServiceActions",
    "labelled_buffer",
    "open_actions_note",
    "retrain_settings",
    "shadow_defaults",
]

log = logging.getLogger(__name__)

_FINAL = [ActionState.SUCCEEDED, ActionState.FAILED, ActionState.CANCELLED]
#: ``on_promote(model, version, profile)``: the service adopts the new champion's reference.
PromoteHook = Callable[[str, str, Any], None]


_OPEN = [ActionState.PENDING, ActionState.AWAITING_APPROVAL, ActionState.RUNNING]


def open_actions_note(records: list[Any], *, execute: bool, state_dir: str) -> str | None:
    """What to tell someone whose daemon stops with actions not finished (None: none).

    >>> from types import SimpleNamespace as R
    >>> print(open_actions_note([R(id=3, state="awaiting_approval"), R(id=4, state="running"),
    ...                          R(id=7, state="awaiting_approval")], execute=True,
    ...                         state_dir="state"))
    exiting with 3 actions not finished (2 awaiting approval, 1 running: ids 3, 4, 7); they \
resume on the next start (driftwatch actions list --state-dir state)
    """
    if not records:
        return None
    ids = ", ".join(str(r.id) for r in records[:10]) + (", ..." if len(records) > 10 else "")
    if not execute:
        return (f"exiting with {len(records)} actions recorded and not run (actions.execute "
                f"is false): ids {ids}")
    counts: dict[str, int] = {}
    for r in records:
        counts[str(r.state)] = counts.get(str(r.state), 0) + 1
    parts = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
    return (f"exiting with {len(records)} actions not finished ({parts}: ids {ids}); they "
            f"resume on the next start (driftwatch actions list --state-dir {state_dir})")


@dataclass
class ModelActions:
    """One model's outbox and (when actions execute) its executor."""

    model: str
    outbox: Outbox
    executor: Any = None  # driftwatch.actions.executor.ActionExecutor
    reference: str | None = None
    profile: Any = None  # the monitor's ReferenceProfile, logged with a bootstrap champion
    policy: Any = None  # the running policy (its retrain settings, for a manual retrain)
    has_champion: bool = False
    champion: Any = None  # the user's model (a ChampionRef); None: the demo's stand-in
    features: tuple[str, ...] = ()  # the connector's features, for the champion's columns
    #: (reference path, its rows the champion's trial scores): read once, not every retry
    trial_rows: tuple[str | None, Any] | None = None
    #: the connector's ``format: percent``/``money`` features, read so in the trial's rows
    text_formats: Mapping[str, str] = field(default_factory=dict)
    #: the scale the connector writes the score in: a reference score column written so
    #: is read as the probability by the champion's trial and the stand-in
    score_scale: Any = None
    #: the model's kept profiles and adopted champion (a ProfileStore; None: not kept)
    profiles: Any = None


class ServiceActions(AdminCalls, ChampionCheck, ShadowHooks, DrainHooks, ProfileAdoption):
    """Outboxes, executors and the pool behind the few calls the service makes."""

    def __init__(self, config: ServiceConfig, *, clock: Clock, metrics: Metrics,
                 dependencies: Dependencies | None = None, disk: Any = None) -> None:
        self.config = config
        self.disk = disk  # a StateDisk: actions wait while the state folder refuses writes
        self.clock = clock
        self.metrics = metrics
        self.deps = dependencies if dependencies is not None else Dependencies(clock)
        self._stop_asked_at: float | None = None
        self.execute = config.execute_actions
        self.models: dict[str, ModelActions] = {}
        self._seen_final: set[tuple[str, int]] = set()
        self._seen_jobs: set[str] = set()
        # the mlflow lane vs. HTTP admin calls; never taken in the loop's thread
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()  # both lanes count what finished
        self.registry: Any = None
        self.pool: Any = None
        self.lanes: dict[str, Any] = {}  # name -> driftwatch.service.lanes.Lane
        self.abandoned = False  # a lane was still in a call at stop
        self._restore_env: Any = None
        lim = config.mlflow
        self.backoff = Backoff(lim.backoff_s, lim.backoff_max_s)
        self._champion_wait: dict[str, tuple[int, float]] = {}  # model -> (failures, at)
        self._adoptions: dict[str, Any] = {}  # model -> PendingAdoption (action_adoption.py)
        self._dropped = 0
        if self.execute:
            self._open_registry_and_pool()

    def _open_registry_and_pool(self) -> None:
        from driftwatch.gpupool import GpuPool, OffPeakWindows, create_backend
        from driftwatch.registry.mlflow_registry import MlflowRegistry
        from driftwatch.registry.retry import Retry, bound_http_client

        cfg, state = self.config, self.config.state_dir
        uri = cfg.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or None
        lim = cfg.mlflow
        self._restore_env = bound_http_client(lim.timeout_s, lim.http_retries)
        self.deps.declare("mlflow", critical=False)
        self.registry = MlflowRegistry.from_uri(
            uri, state, retry=Retry(attempts=lim.attempts, observer=self._observe_mlflow))
        # the embedded store is created whole (or repaired) now: local, a second at most;
        # a broken store that holds data stops the start with what to do
        self.registry.ensure_store()
        p = cfg.pool
        offpeak = OffPeakWindows(p.offpeak, weekends=p.offpeak_weekends, tz=p.offpeak_tz) \
            if p.offpeak else None
        backend = create_backend(p.backend, **p.backend_options())
        self.pool = GpuPool(state / "pool", clock=self.clock, backend=backend,
                            gpus=p.gpus, reserve_fraction=p.reserve_fraction, offpeak=offpeak)

    def add_model(self, model: str, *, reference: str | None, cutoff: float | None,
                  shadow_defaults: Mapping[str, Any], buffer: Any,
                  on_promote: PromoteHook | None, profile: Any = None,
                  policy: Any = None, champion: Any = None,
                  text_formats: Mapping[str, str] | None = None,
                  score_scale: Any = None,
                  reference_reader: Any = None, profiles: Any = None) -> ModelActions:
        folder = self.config.state_dir / "models" / model
        outbox = Outbox(folder, clock=self.clock)
        executor = None
        limits = getattr(policy, "limits", None)
        if self.execute:
            from driftwatch.actions.executor import ActionExecutor

            executor = ActionExecutor(
                outbox, self.registry, self.pool, self.clock, buffer=buffer,
                reference_path=reference, cutoff=cutoff, shadow_defaults=shadow_defaults,
                on_promote=self._adopting(on_promote), drive_pool=False,
                columns=dict(champion.columns) if champion is not None else None,
                score_is=champion.score_is if champion is not None else "p_bad",
                score_scale=champion.scale if champion is not None else PROBABILITY,
                bad_labels=(policy.reference.conventions().bad
                            if getattr(policy, "reference", None) is not None else None),
                max_concurrent_retrains=getattr(limits, "max_concurrent_retrains", None),
                backoff_s=self.backoff.initial_s, max_backoff_s=self.backoff.max_s,
                retrain_limits=_retrain_limits(policy), text_formats=text_formats,
                policy_actions=getattr(policy, "actions", None),
                reference_reader=reference_reader)
        ma = ModelActions(model, outbox, executor, reference, profile, policy,
                          champion=champion,
                          features=tuple(profile.schema.names) if profile is not None else (),
                          text_formats=dict(text_formats or {}), score_scale=score_scale,
                          profiles=profiles)
        self.models[model] = ma
        return ma

    def _adopting(self, on_promote: PromoteHook | None) -> PromoteHook:
        """``on_promote`` that also ends a pending adoption of the model (a shadow's own
        promotion, or a retried one, handed the monitor its champion's profile)."""
        def hook(model: str, version: str, profile: Any) -> None:
            if on_promote is not None:
                on_promote(model, version, profile)
            self.adoption_done(model, version)
        return hook

    def set_policy(self, model: str, policy: Any, reference: str | None = None) -> None:
        """A reloaded policy: its retrain settings, limits and shadow settings (those of
        the shadow a retraining's challenger goes to) apply from now on, and the
        reference file it names (``reference``) is the one actions read."""
        ma = self.models[model]
        ma.policy = policy
        if reference is not None and reference != ma.reference:
            ma.reference = reference
            if ma.executor is not None:
                ma.executor.env.reference_path = reference
        limits = getattr(policy, "limits", None)
        if ma.executor is not None:
            ma.executor.env.policy_actions = getattr(policy, "actions", None)
            ma.executor.env.shadow_defaults = shadow_defaults(policy)
            # the monitor reads a changed reference with the reloaded policy: so do actions
            ma.executor.env.reader = replace(ma.executor.env.reader, policy=policy)
        if ma.executor is not None and limits is not None:
            ma.executor.env.max_concurrent_retrains = limits.max_concurrent_retrains
            ma.executor.env.retrain_limits = _retrain_limits(policy)
            cut = getattr(getattr(policy, "model", None), "approval_cutoff", None)
            if cut is not None:
                ma.executor.env.cutoff = cut

    def set_buffer(self, model: str, buffer: Any) -> None:
        ma = self.models[model]
        if ma.executor is not None:
            ma.executor.set_buffer(buffer)

    # -- the loop's side ------------------------------------------------------------------------
    def submit(self, decision: Decision, result: WindowResult) -> bool:
        """Record the decision's action durably; False when its key was already recorded."""
        ma = self.models[decision.model]
        cw = result.window
        context = {"window_start": cw.start_time, "window_end": cw.end_time,
                   "reference": ma.reference,
                   "extra": {"window_id": cw.window_id, "n_events": cw.n_events,
                             "partial": cw.partial}}
        # no lock the mlflow lane holds: the outbox is idempotent by key and thread-safe,
        # and an export runs once (its own lock) even when the lane resumes the action
        existing = ma.outbox.by_key(decision.key)
        if existing is not None:  # made again after a restart: its window, if unwritten
            if ma.executor is not None:
                ma.executor.export_recorded(existing)
            return False
        if ma.executor is not None:
            ma.executor.submit(decision, context)
            if str(decision.action) == "alert" and "alerts" in self.lanes:
                self.lanes["alerts"].kick("alerts")
        else:
            ma.outbox.record(decision, context)
        self.metrics.record_action(decision.model, str(decision.action), "submitted")
        log.info("%s: %s decided at window %d (tier %s)%s", decision.model, decision.action,
                 decision.window_id, decision.tier,
                 ", awaiting approval" if decision.requires_approval else "")
        return True

    # -- the lanes' side -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the ``mlflow`` and ``alerts`` lanes (nothing runs without actions.execute)."""
        if not self.execute or self.lanes:
            return
        from driftwatch.service.lanes import Lane

        s = self.config.scheduler
        report = self.metrics.record_job
        self.lanes = {
            "mlflow": Lane("mlflow", [("actions", s.actions_s, self.run_registry_actions),
                                      ("offpeak_dispatch", s.offpeak_dispatch_s,
                                       self.dispatch)], clock=self.clock, report=report),
            "alerts": Lane("alerts", [("alerts", s.actions_s, self.run_alerts)],
                           clock=self.clock, report=report),
        }
        for lane in self.lanes.values():
            lane.start()

    def request_stop(self) -> None:
        if self._stop_asked_at is None:
            self._stop_asked_at = self.clock.monotonic()
        for lane in self.lanes.values():
            lane.request_stop()

    def stop(self, timeout_s: float | None = None) -> bool:
        """Stop the lanes within ``timeout_s`` (default ``actions.shutdown_grace``) of the
        first stop request, so the grace runs while the rest of shutdown does; False when
        one was abandoned inside a call."""
        grace = self.config.mlflow.shutdown_grace_s if timeout_s is None else timeout_s
        self.request_stop()
        assert self._stop_asked_at is not None
        deadline = self._stop_asked_at + grace
        for lane in self.lanes.values():
            if not lane.stop(max(0.0, deadline - self.clock.monotonic())):
                self.abandoned = True
        return not self.abandoned

    def run_pending(self) -> None:
        """Alerts, then the actions that need MLflow (both lanes' work, in the caller's
        thread: tests and tools). After a restart this is also the resume."""
        self.run_alerts()
        self.run_registry_actions()

    def _while_writable(self, where: str, work: Callable[[], None]) -> None:
        """Run ``work`` unless the state folder refuses writes; a write it refuses pauses
        the actions (the loop probes the folder, actions go on once it resumes)."""
        if self.disk is not None and not self.disk.writable:
            return
        try:
            work()
        except Exception as exc:  # a full or read-only state folder: wait, then go on
            if self.disk is None or not self.disk.failed(exc, where=where):
                raise

    def run_alerts(self) -> None:
        """Advance every model's alerts and webhooks; MLflow's state does not matter."""
        self._while_writable("actions", self._run_alerts)

    def _run_alerts(self) -> None:
        for ma in self.models.values():
            if ma.executor is not None:
                try:
                    ma.executor.run_pending(kinds=("alert",))
                except DriftwatchError as exc:  # logged; the next run tries again
                    if write_fault(exc) is not None:
                        raise
                    log.error("%s: alerts: %s", ma.model, exc)
        self._count_finished()

    def run_registry_actions(self) -> None:
        """Drive the pool, advance every model's actions that need MLflow, count what
        finished. An outage backs the model's actions off; it never raises."""
        with self._lock:
            self._while_writable("actions", self._run_registry_actions)

    def _run_registry_actions(self) -> None:
        from driftwatch.actions.executor import NEEDS_MLFLOW

        if self.pool is not None:
            self.pool.poll()
            self.pool.dispatch()
        self.retry_adoptions()  # the monitor's reference first: drift is judged against it
        for ma in self.models.values():
            if ma.executor is not None:
                try:
                    if self._champion_ready(ma):
                        ma.executor.run_pending(kinds=NEEDS_MLFLOW)
                except DriftwatchError as exc:  # logged; the next run tries again
                    if write_fault(exc) is not None:
                        raise
                    log.error("%s: actions: %s", ma.model, exc)
        self._count_finished()

    def _observe_mlflow(self, error: BaseException | None) -> None:
        self.deps.mark("mlflow", error is None, str(error) if error is not None else "")

    def dispatch(self) -> None:
        """Start deferrable pool jobs once an off-peak window opens."""
        if self.pool is not None:
            with self._lock:
                self.pool.dispatch()

    def _count_finished(self) -> None:
        with self._count_lock:
            self._count_finished_locked()

    def _count_finished_locked(self) -> None:
        for ma in self.models.values():
            for rec in ma.outbox.list(states=_FINAL):
                if (ma.model, rec.id) not in self._seen_final:
                    self._seen_final.add((ma.model, rec.id))
                    self.metrics.record_action(rec.model, rec.action,
                                               metric_outcome(rec.state.value, rec.outcome))
        if self.pool is None:
            return
        for job in self.pool.status().jobs:
            if job.state.is_final and job.job_id not in self._seen_jobs:
                self._seen_jobs.add(job.job_id)
                if job.started_at is not None and job.ended_at is not None:
                    self.metrics["pool_job_duration_seconds"].labels(outcome=job.state.value).observe(
                        max(0.0, job.ended_at - job.started_at))

    def open_actions(self) -> list[Any]:
        """Every model's actions that are pending, awaiting approval or running."""
        return [r for ma in self.models.values() for r in ma.outbox.list(states=_OPEN)]

    def status(self) -> dict[str, Any]:
        return {
            "execute": self.execute,
            "recent": {m: [r.to_dict() for r in ma.outbox.list()[-10:]]
                       for m, ma in self.models.items()},
            "pool": self.pool.status().to_dict() if self.pool is not None else None,
            "profile_adoption": self.adoptions_status(),
        }

    def pool_snapshot(self) -> PoolSnapshot | None:
        if self.pool is None:
            return None
        s = self.pool.status()
        return PoolSnapshot(capacity=s.capacity, reserved=s.reserved, in_use=s.in_use,
                            queued=s.queued + s.deferred, running=s.running)

    def close(self) -> None:
        if self.abandoned:  # a lane may still write: the process exit closes the files
            log.info("outboxes left open for the abandoned action thread; the next start "
                     "resumes its action")
        else:
            for ma in self.models.values():
                (ma.executor or ma.outbox).close()
            if self.pool is not None:
                self.pool.close()
        if self._restore_env is not None:
            self._restore_env()
            self._restore_env = None


def labelled_buffer(monitor: Any) -> Any:
    """The monitor's buffer of recent labelled rows (what online updates and shadows learn
    from), when the pipeline keeps one."""
    for name in ("labelled_buffer", "labelled", "buffer"):
        buf = getattr(monitor, name, None)
        if buf is not None:
            return buf
    return None


def _retrain_limits(policy: Any) -> Any:
    """The policy's per-day limits and cooldowns, for the pool's job records."""
    if policy is None or getattr(policy, "limits", None) is None:
        return None
    from driftwatch.actions.retrain_limits import RetrainLimits

    return RetrainLimits.from_policy(policy)
