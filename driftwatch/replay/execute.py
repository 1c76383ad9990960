"""``driftwatch replay --execute``: run the decided actions while replaying.

Embedded defaults, as in the daemon: the outbox and a local MLflow store under the state
folder (or the tracking server ``tracking_uri``), and a local GPU pool (``gpus`` logical
devices, 20% reserved for retraining; a CPU-only job still leases one). Time is the
replay's event time for decisions and shadow deadlines, and the wall clock for the pool's
real subprocesses.

The champion is the user's registered model when ``champion`` names it
(``models:/<name>@champion``; its signature's columns are checked against the connector's
features first, and it scores a sample of the reference: :mod:`driftwatch.registry.trial`,
whose notes go to ``note``; a policy whose online update asks for ``method: learner`` is
refused for a champion that is no river model);
without one, an empty registry gets the demo's river stand-in. Every prediction batch
reaches the executor as it is read, so a challenger in shadow scores all live traffic, and
the policy's ``limits.max_concurrent_retrains`` counts the pool's real jobs.

The actions step where each window closed in the stream (the replay takes a poll in
window by window: :mod:`driftwatch.pipeline.closecuts`), not where a poll happens to end,
so they come to the same whatever the batch size: a shadow counts the outcomes that
joined after the window that started it, and a learner the rows joined by then.

Retraining jobs run in wall time while the replay reads as fast as the CPU allows, so the
replay *waits* where a job was queued: in event time a job takes no time, its model goes
to shadow at the event time of the decision (or of the next window), and the shadow is
judged on the outcomes that follow. A shadow still open when the recording ends is
reported undecided, with the reason.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from driftwatch.clock import EventTimeClock, SystemClock
from driftwatch.pipeline import ModelMonitor, WindowResult
from driftwatch.registry.reading import scale_name
from driftwatch.scorescale import PROBABILITY

__all__ = ["ReplayActions"]

log = logging.getLogger(__name__)

#: Logical GPUs of the embedded local pool (20% reserved: 2 for retraining).
DEFAULT_GPUS = 10
#: Longest wall time the replay waits for one step's retraining jobs.
MAX_JOB_WAIT_S = 3600.0
#: Per MLflow HTTP request, as the daemon's ``actions.mlflow_timeout`` default.
REPLAY_MLFLOW_TIMEOUT_S = 10.0
#: How long the start waits for a tracking server's first answer (unless
#: ``MLFLOW_HTTP_REQUEST_TIMEOUT`` says otherwise).
REPLAY_MLFLOW_ANSWER_S = 5.0


class ReplayActions:
    """Submits each decision's action to the outbox and runs what is pending."""

    def __init__(
        self,
        state_dir: str | Path,
        monitor: ModelMonitor,
        *,
        reference: str | Path,
        gpus: int = DEFAULT_GPUS,
        tracking_uri: str | None = None,
        champion: Any = None,
        note: Callable[[str], None] | None = None,
        text_formats: Mapping[str, str] | None = None,
        score_scale: Any = None,
        reference_reader: Any = None,
    ) -> None:
        #: the user's own request timeout, if any, read before the replay bounds it
        self._answer_wait = _answer_wait(tracking_uri) if tracking_uri else 0.0
        self._restore_env = _bounded_mlflow()
        #: the connector's ``format: percent``/``money`` features: the champion's trial
        #: reads those reference columns as numbers, as it sees them live
        self.text_formats = dict(text_formats or {})
        self.score_scale = score_scale
        #: reads the reference as the monitor's profile was read (a ReferenceReader)
        self.reference_reader = reference_reader
        try:
            self._open(state_dir, monitor, reference=reference, gpus=gpus,
                       tracking_uri=tracking_uri, champion=champion, note=note)
        except BaseException:
            self._restore_env()
            raise

    def _open(self, state_dir: str | Path, monitor: ModelMonitor, *, reference: str | Path,
              gpus: int, tracking_uri: str | None, champion: Any,
              note: Callable[[str], None] | None) -> None:
        from driftwatch.actions.context import shadow_defaults
        from driftwatch.actions.executor import ActionExecutor
        from driftwatch.actions.retrain_limits import RetrainLimits
        from driftwatch.gpupool import GpuPool
        from driftwatch.registry.bootstrap import ensure_champion, require_champion

        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.monitor = monitor
        self.clock = EventTimeClock()
        self.reference = str(reference)
        self.pool = GpuPool(self.state_dir / "pool", clock=SystemClock(), gpus=gpus)
        policy = monitor.policy
        self.executor = ActionExecutor.open(
            self.state_dir,
            clock=self.clock,
            tracking_uri=tracking_uri,
            pool=self.pool,
            buffer=monitor.labelled_buffer,
            reference_path=self.reference,
            cutoff=policy.model.approval_cutoff if policy is not None else None,
            shadow_defaults=shadow_defaults(policy),
            on_promote=self._adopt,
            columns=dict(champion.columns) if champion is not None else None,
            score_is=champion.score_is if champion is not None else "p_bad",
            score_scale=champion.scale if champion is not None else PROBABILITY,
            bad_labels=policy.reference.conventions().bad if policy is not None else None,
            max_concurrent_retrains=(
                policy.limits.max_concurrent_retrains if policy is not None else None
            ),
            retrain_limits=RetrainLimits.from_policy(policy) if policy is not None else None,
            text_formats=self.text_formats,
            policy_actions=getattr(policy, "actions", None),
            reference_reader=self.reference_reader,
        )
        registry = self.executor.env.registry
        if tracking_uri:  # a server that never answers fails the start in seconds, clearly
            registry.check_answers(self._answer_wait)
        if champion is not None:
            from driftwatch.actions.online_update import learner_on_foreign
            from driftwatch.errors import ActionError
            from driftwatch.registry.trial import reference_sample

            scorers = self.executor.env.scorers()
            info = require_champion(
                registry, champion, monitor.profile.schema.names, scorers,
                reference_sample(self.reference, policy.reference.conventions()
                                 if policy is not None else None,
                                 formats=self.text_formats, score_scale=self.score_scale),
                note=note, profile=monitor.profile,
            )
            said = learner_on_foreign(getattr(policy, "actions", None), champion.uri,
                                      scorers.get(champion.name, info.version).flavor)
            if said is not None:  # each online update would fail: say it before the replay
                raise ActionError(said)
        else:
            from driftwatch.registry.trial import reference_rows

            # the stand-in reads columns score, label, decision, and the numbers live rows hold
            df = reference_rows(self.reference, monitor.policy.reference.conventions()
                                if monitor.policy is not None else None,
                                formats=self.text_formats, score_scale=self.score_scale)
            ensure_champion(registry, monitor.model, df, at=0.0, profile=monitor.profile)
        monitor.retrains_running = lambda: self.executor.active_retrains(monitor.model)
        monitor.on_predictions = self._observe
        from driftwatch.actions.handoff import write_replay_state

        write_replay_state(self.state_dir, model=monitor.model, tracking_uri=tracking_uri,
                           columns=dict(champion.columns) if champion is not None else {},
                           score_is=champion.score_is if champion is not None else "p_bad",
                           score_scale=scale_name(champion.scale) if champion is not None
                           else "probability",
                           bad_labels=policy.reference.conventions().bad
                           if policy is not None else None)

    def _observe(self, batch: Any) -> None:
        """Live predictions to the challengers in shadow (the monitor's hook)."""
        m = self.monitor
        self.executor.observe_batch(m.model, m.profile.schema, batch, m.n_events - len(batch),
                                    m.lineage)

    def _adopt(self, model: str, version: str, profile: Any) -> None:
        self.monitor.set_profile(profile)
        self.executor.set_buffer(self.monitor.labelled_buffer)

    def on_window(self, res: WindowResult) -> None:
        self.clock.observe(res.window.end_time)
        d = res.decision
        if d is None or not d.action:
            return
        from driftwatch.actions.context import ActionContext

        ctx = ActionContext(
            window_start=res.window.start_time,
            window_end=res.window.end_time,
            reference=self.reference,
            extra={"first_index": res.window.first_index, "last_index": res.window.last_index},
        )
        self.executor.submit(d, ctx)

    def step(
        self,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """After a window closed: move pending actions on (training, pool jobs, shadows),
        waiting for the pool's retraining jobs to end (see the module doc)."""
        self.executor.set_buffer(self.monitor.labelled_buffer)
        self.executor.run_pending()
        deadline = monotonic() + MAX_JOB_WAIT_S
        while self._jobs_running():
            if monotonic() >= deadline:
                log.warning("retraining jobs still running after %.0f s; replay goes on",
                            MAX_JOB_WAIT_S)
                return
            sleep(0.25)
            self.executor.run_pending()

    def _jobs_running(self) -> bool:
        from driftwatch.actions.records import ActionState

        for rec in self.executor.outbox.list(states=[ActionState.RUNNING]):
            job_id = rec.artifacts.get("job_id") if rec.action == "retrain" else None
            if job_id and not self.pool.get(str(job_id)).state.is_final:
                return True
        return False

    def finish(self, timeout_s: float = 900.0) -> list[Any]:
        """At the end of the recording: wait for pool jobs; returns actions still open.
        Event time stops here, so one waiting for MLflow gets one more try, not a wait."""
        return self.executor.drain(timeout_s, clock_stopped=True)

    def export(self, path: str | Path) -> list[dict[str, Any]]:
        """Writes the audit trail, one action a line (what the report reads); returns it."""
        import orjson

        from driftwatch.actions.audit import AuditTrail

        entries = AuditTrail(self.executor.outbox, self.pool).entries()
        with Path(path).open("wb") as fh:
            for entry in entries:
                fh.write(
                    orjson.dumps(
                        entry,
                        option=orjson.OPT_SORT_KEYS
                        | orjson.OPT_APPEND_NEWLINE
                        | orjson.OPT_NON_STR_KEYS,
                    )
                )
        return entries

    def close(self) -> None:
        self.executor.close()
        self.pool.close()
        self._restore_env()


def _bounded_mlflow() -> Callable[[], None]:
    """MLflow's HTTP client bounded as the daemon's defaults bound it (10 s a request, no
    retries of its own: driftwatch's retry backs off), unless the environment already says:
    with MLflow's own defaults a wrong ``--tracking-uri`` held the replay for many minutes
    before a word. Returns what puts the environment back."""
    import os

    from driftwatch.registry.retry import HTTP_RETRIES_ENV, HTTP_TIMEOUT_ENV, bound_http_client

    if HTTP_TIMEOUT_ENV in os.environ or HTTP_RETRIES_ENV in os.environ:
        return lambda: None
    return bound_http_client(REPLAY_MLFLOW_TIMEOUT_S, 0)


def _answer_wait(tracking_uri: str) -> float:
    """Seconds the start gives the tracking server to answer its first question:
    :data:`REPLAY_MLFLOW_ANSWER_S`, or the user's own ``MLFLOW_HTTP_REQUEST_TIMEOUT``; a
    longer wait than the default is said on stderr at once, not after it."""
    import os
    import sys

    from driftwatch.registry.retry import HTTP_TIMEOUT_ENV

    try:
        wait = float(os.environ[HTTP_TIMEOUT_ENV])
    except (KeyError, ValueError):
        return REPLAY_MLFLOW_ANSWER_S
    if wait > REPLAY_MLFLOW_ANSWER_S:
        print(f"waiting up to {wait:g} s ({HTTP_TIMEOUT_ENV}) for MLflow at {tracking_uri} "
              "to answer", file=sys.stderr, flush=True)
    return max(1.0, wait)

