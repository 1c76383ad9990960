"""``driftwatch run``: the composition root that wires every layer into one daemon.

The consume loop runs in the main thread and is the only code that touches the monitors::

    drain hand-offs -> poll each source -> process -> record windows, submit decisions
                    -> (checkpoint due?) sync outputs, save checkpoint, THEN commit offsets

APScheduler jobs request checkpoints, watch for stale input, drive actions and the GPU
pool, reload policies and references; what they would change in a monitor is handed to the
loop (``daemon_jobs.py``). Actions run in their own threads
(:mod:`~driftwatch.service.lanes`), so no MLflow call is ever waited for here. HTTP reads
snapshots taken under the loop's lock (``daemon_views.py``); ``/readyz`` names each
dependency's state (:mod:`~driftwatch.service.dependencies`). SIGTERM/SIGINT: the batch in
hand is finished, a final checkpoint written, offsets committed, and an action still inside
an MLflow call after ``actions.shutdown_grace`` is abandoned (it stays open in the outbox);
exit 0. With ``exit_when_done``, once every source is consumed the loop drains
(:mod:`~driftwatch.service.drain`): it waits for the queued reports and the actions the
lanes can finish, for at most ``drain_timeout_s`` (None: no limit), then stops the same way;
exit 3 (:data:`~driftwatch.service.daemon_finish.EXIT_UNFINISHED`) when the limit passed
with work left.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

import orjson
from prometheus_client import CollectorRegistry

from driftwatch import __version__
from driftwatch.actions.reference import ReferenceReader
from driftwatch.clock import Clock, SystemClock
from driftwatch.errors import StateError
from driftwatch.metrics import Metrics, register_process_collectors
from driftwatch.pipeline import WindowResult
from driftwatch.replay.timeline import iso
from driftwatch.service.actions import (
    ServiceActions,
    labelled_buffer,
    shadow_defaults,
)
from driftwatch.service.champion_start import ChampionAtStart
from driftwatch.service.checkpoint import Checkpoints
from driftwatch.service.config import ServiceConfig
from driftwatch.service.daemon_finish import FinishingRun
from driftwatch.service.daemon_jobs import ScheduledJobs
from driftwatch.service.daemon_views import ServiceViews
from driftwatch.service.dependencies import Dependencies
from driftwatch.service.disk import StateDisk
from driftwatch.service.drain import Drain, DrainResult
from driftwatch.service.http import ADMIN_ACTIONS, HttpServer
from driftwatch.service.late_watch import LateWatch
from driftwatch.service.live_reports import LiveReports, report_job
from driftwatch.service.live_source import PacedSource
from driftwatch.service.metrics_live import LiveCollector
from driftwatch.service.model import ModelRuntime, resolved_champion
from driftwatch.service.resume import fault_site, rewind_runtimes, wait_for_disk
from driftwatch.service.scheduler import LoopInbox, ServiceScheduler
from driftwatch.service.view import last_record, restore_view
from driftwatch.state import CheckpointStore, StateDirLock

__all__ = ["Service"]

log = logging.getLogger(__name__)

JOBS = ("checkpoint", "staleness", "actions", "alerts", "policy_reload", "reference_refresh",
        "offpeak_dispatch", "reports")


class Service(ServiceViews, ScheduledJobs, FinishingRun, ChampionAtStart):
    """The daemon. ``run()`` blocks until :meth:`stop` (or, with ``exit_when_done``, until
    every finite source is consumed and what it started is finished: see the module doc)
    and returns the exit code."""

    def __init__(
        self,
        config: ServiceConfig,
        *,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        exit_when_done: bool = False,
        drain_timeout_s: float | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        self.registry = registry or CollectorRegistry()
        self.exit_when_done = exit_when_done
        self.drain_timeout_s = drain_timeout_s
        self.drain: Drain | None = None  # set once every source is consumed
        self.drained: DrainResult | None = None
        self._settled: dict[str, tuple[tuple[int, str], ...]] = {}
        self.environ = os.environ if environ is None else environ
        self.metrics = Metrics(self.registry, feature_cap=config.feature_cap,
                               version=__version__)
        register_process_collectors(self.registry)
        self.inbox = LoopInbox()
        self.deps = Dependencies(self.clock)  # what /readyz and driftwatch_dependency_up say
        self.runtimes: list[ModelRuntime] = []
        self.lock = threading.RLock()  # held by the loop while it changes a monitor
        self._stop = threading.Event()
        self._started = self.clock.monotonic()
        self._late_watch: dict[str, LateWatch] = {}  # per model: late events in numbers
        self._restore_s = 0.0
        self._running = False
        self._stale: set[str] = set()
        self._reported: dict[str, tuple[tuple[int, str], ...]] = {}  # model -> action states
        self._idle_logged = False
        self._lock_file = StateDirLock(config.state_dir)
        self.disk = StateDisk(config.state_dir, clock=self.clock, metrics=self.metrics,
                              max_retry_s=config.checkpoint.disk_retry_max_s)
        self.deps.declare("state_dir", probe=self._state_dir_up)
        self._rewind_due = False  # paused on a disk fault: go back to the checkpoint
        self.checkpoints: Checkpoints | None = None
        self.actions: ServiceActions | None = None
        self.http: HttpServer | None = None
        self.scheduler: ServiceScheduler | None = None
        self.reports: LiveReports | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to finish its batch, checkpoint, commit and return (signal-safe)."""
        self._stop.set()
        self.inbox.wake.set()
        for rt in self.runtimes:
            # from now on a broker that is down holds no wait for long, one under way
            # (a commit of the last checkpoint) included: see KafkaSource.stopping
            rt.stopping()
            if isinstance(rt.source, PacedSource):
                rt.source.interrupt()

    def run(self) -> int:
        clean = opened = False
        try:
            self._open()
            opened = True
            self._loop()
            clean = True
            return self._exit_code()
        finally:
            # after a failure the monitors may hold half a batch: the last checkpoint stays
            self._close(final_checkpoint=clean)
            if opened:  # a start that failed says why in its own error, not "stopped"
                log.info("stopped%s", "" if clean else
                         " after an error; the last checkpoint stays and a restart resumes "
                         "from it")

    def _open(self) -> None:
        cfg = self.config
        self._lock_file.acquire()
        state = cfg.state_dir
        self.actions = ServiceActions(cfg, clock=self.clock, metrics=self.metrics,
                                      dependencies=self.deps, disk=self.disk)
        for mc in cfg.models:
            rt = self._open_runtime(mc)
            if any(r.name == rt.name for r in self.runtimes):
                raise StateError(f"two configured models are called {rt.name!r}: give "
                                 "each a distinct `name`")
            self.runtimes.append(rt)
            self.metrics.register_model(rt.name, rt.monitor.profile.schema.names)
        if any(rt.connector.kind == "kafka" for rt in self.runtimes):
            self.deps.declare("kafka", probe=self._kafka_up)
        if any(rt.connector.kind == "kafka" and _reads_registry(rt) for rt in self.runtimes):
            # critical as Kafka is: a held partition is monitored no further until it answers
            self.deps.declare("schema_registry", probe=self._registry_up)
        self.metrics.declare_jobs(JOBS)
        self.metrics.declare_admin(ADMIN_ACTIONS)
        self.registry.register(LiveCollector(self.snapshot, self.clock))
        if cfg.http.enabled:  # serve /healthz while a long restore runs
            self.http = self._make_http()
            self.http.start()
            log.info("listening on %s", self.http.url)
        store = CheckpointStore(state / "checkpoints", keep=cfg.checkpoint.keep,
                                timer=self.clock.monotonic,
                                legacy=state / "checkpoint.sqlite3")
        self.checkpoints = Checkpoints(store, self.runtimes, self.lock, self.metrics, self.clock,
                                       on_fault=lambda exc: self.disk.failed(
                                           exc, where="checkpoint"))
        for rt in self.runtimes:
            self.actions.add_model(
                rt.name, reference=str(rt.reference_path) if rt.reference_path else None,
                cutoff=_cutoff(rt.monitor),
                shadow_defaults=shadow_defaults(rt.monitor.policy), buffer=None,
                on_promote=self._on_promote, profile=rt.monitor.profile,
                policy=rt.monitor.policy,
                champion=resolved_champion(rt.config, rt.connector, rt.monitor.policy),
                text_formats=rt.connector.text_formats(),
                score_scale=_score_scale(rt), reference_reader=_reference_reader(rt),
                profiles=rt.profiles)
            self.actions.attach(rt.name, rt.monitor)
        rc = cfg.reports
        self.reports = LiveReports(
            state / "out", self.clock, windows=rc.windows, keep=rc.keep,
            executed=self.actions.audit_entries if self.actions is not None else None)
        self._restore()
        for rt in self.runtimes:  # restored monitors hold restored buffers
            self.actions.set_buffer(rt.name, labelled_buffer(rt.monitor))
        self._write_service_file()
        self.scheduler = self._make_scheduler()
        self.scheduler.start()
        self.actions.start()
        self._running = True

    def _restore(self) -> None:
        assert self.checkpoints is not None
        t0 = self.clock.monotonic()
        cp = self.checkpoints.store.load()
        saved = cp.models if cp is not None else {}
        for name in sorted(set(saved) - {rt.name for rt in self.runtimes}):
            log.warning("checkpoint holds model %r, which is no longer configured", name)
        for rt in self.runtimes:
            part = saved.get(rt.name)  # read once: a part is decoded on each access
            with self.lock:
                results = rt.restore(part, self._champion_lookup(rt))
                del part
                if rt.name in saved:  # the gauges of the last window it covers
                    restore_view(self.metrics, rt.name, last_record(rt.timeline.path))
                self._handle(rt, results)
            self._champion_at_start(rt)  # moved while the daemon was down? MLflow down?
        self._restore_s = self.clock.monotonic() - t0
        if cp is not None:
            self.checkpoints.restored(cp)
            log.info("restored checkpoint %d in %.3fs", cp.seq, self._restore_s)

    def _close(self, *, final_checkpoint: bool) -> None:
        self._running = False
        if self.drain is not None and self.drained is None:  # stopped while finishing
            log.warning("stopped while finishing: %s left unfinished; they resume on the "
                        "next start", self._backlog())
        if self.actions is not None:  # no new action work; what runs ends meanwhile
            self.actions.request_stop()
        for rt in self.runtimes:  # a broker that is down must not hold the shutdown
            rt.stopping()
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True)
        if self.reports is not None:
            self.reports.close()
        if self.checkpoints is not None:
            self.checkpoints.on_fault = None  # stopping: a failure is just reported
            if final_checkpoint and self._rewind_due:
                log.warning("the state folder refused writes: no final checkpoint; the last "
                            "durable one stays and a restart resumes from it")
            elif final_checkpoint:
                self.inbox.drain()
                if not self.checkpoints.final():
                    log.error("the final checkpoint failed; the previous one stays")
            self.checkpoints.close()
        for rt in self.runtimes:
            try:
                rt.close()
            except Exception:
                log.exception("closing %s failed", rt.name)
        if self.actions is not None:
            self.actions.stop()  # bounded: a call still in flight is abandoned
            self.actions.close()
        if self.http is not None:
            self.http.stop()
        if self.checkpoints is not None:
            self.checkpoints.store.close()
        self._lock_file.release()

    # -- the loop -------------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.is_set():
            if self._rewind_due or not self.disk.writable:
                self._paused()
                continue
            try:
                if not self._once():
                    return
            except Exception as exc:
                if not self.disk.failed(exc, where=fault_site(exc)):
                    raise

    def _once(self) -> bool:
        """One pass of the loop; False when it is time to return."""
        self.inbox.drain()
        self.checkpoints.tick()  # type: ignore[union-attr]
        active = [rt for rt in self.runtimes if not rt.done]
        if not active:
            if self.exit_when_done:
                return self._finishing()
            if not self._idle_logged:
                self._idle_logged = True
                where = self.http.url if self.http else "(HTTP disabled)"
                log.info("every source is consumed; serving %s/metrics and /reports/ "
                         "until SIGTERM or Ctrl-C", where)
            self.inbox.wake.wait(0.5)
            self.inbox.wake.clear()
            return True
        timeout = 0.5 if len(active) == 1 else 0.1
        for rt in active:
            if self._stop.is_set() or not self.disk.writable:
                break
            self._step(rt, timeout)
        return True

    # -- a full or read-only state folder -------------------------------------------------------
    def _paused(self) -> None:
        """Consume and commit nothing; probe with backoff; resume from the checkpoint
        (:func:`~driftwatch.service.resume.wait_for_disk`)."""
        assert self.checkpoints is not None
        if not self._rewind_due:
            self._rewind_due = True
            self.checkpoints.abandon()
        if wait_for_disk(self.disk, self._stop, self._rewind):
            self._rewind_due = False

    def _open_runtime(self, mc: Any) -> ModelRuntime:
        """A model's runtime: a member of the consumer group (service/group/) when
        ``group.enabled``, else one process's own."""
        cfg = self.config
        if cfg.group.enabled:
            from driftwatch.service.group import GroupRuntime

            return GroupRuntime.open_group(mc, cfg.group, state_dir=cfg.state_dir,
                                           base_dir=cfg.base_dir, clock=self.clock,
                                           timeline=cfg.timeline)
        return ModelRuntime.open(mc, state_dir=cfg.state_dir, base_dir=cfg.base_dir,
                                 clock=self.clock, timeline=cfg.timeline)

    def _rewind(self) -> None:
        """Every model back to the newest durable checkpoint, with a fresh source."""
        assert self.checkpoints is not None
        for rt, results in rewind_runtimes(self.checkpoints, self.runtimes, self.lock,
                                           self.metrics, self._open_runtime):
            if self.actions is not None:
                self.actions.attach(rt.name, rt.monitor)
                self.actions.set_buffer(rt.name, labelled_buffer(rt.monitor))
            self._handle(rt, results)

    def _step(self, rt: ModelRuntime, timeout: float) -> None:
        polled = rt.source.poll(rt.batch_size, timeout)
        t0 = self.clock.monotonic()
        with self.lock:
            results = rt.process(polled)
        if polled is not None:
            preds = sum(len(b) for b in polled.batches if b.stream != "outcomes")
            self.metrics.record_poll(
                rt.name, predictions=preds, outcomes=polled.n_events - preds,
                bad_reasons=(b.reason for b in polled.bad), nbytes=polled.bytes_read,
                seconds=self.clock.monotonic() - t0)
            late = rt.late_delta()
            self.metrics.record_late(rt.name, late)
            said = self._late_watch.setdefault(rt.name, LateWatch()).see(
                predictions=preds, late=late, now=self.clock.monotonic())
            if said:
                log.warning("%s: %s", rt.name, said)
        for err in rt.take_errors():
            self.metrics.record_error(rt.name, err.stage)
        self._handle(rt, results)
        if rt.done:
            log.info("%s: recording consumed (%d events, %d windows)", rt.name,
                     rt.monitor.n_events, rt.windows)
            self._request_checkpoint()
            self._report(rt)

    def _handle(self, rt: ModelRuntime, results: list[WindowResult]) -> None:
        for res in results:
            self.metrics.record_window(rt.name, res)
            if res.error is not None:  # recorded in the timeline and the metric; go on
                log.error("%s: window %d: the %s stage failed (%s); recorded, the daemon "
                          "goes on", rt.name, res.window.window_id, res.error.stage,
                          res.error.message)
            d = res.decision
            if (d is not None and d.action and self.actions is not None
                    and not res.action_recorded):
                self.actions.submit(d, res)
            if self.reports is not None and self.config.reports.on_decision:
                self._submit_report(rt, res)

    # -- reports --------------------------------------------------------------------------------
    def _submit_report(self, rt: ModelRuntime, res: WindowResult | None = None, *,
                       page: bool = True) -> None:
        """A decision report (``res``) or the rolling one (``page`` False: only the decision
        reports whose action moved on), written by the reports thread."""
        try:
            job = report_job(rt, res, page=page)
        except OSError as exc:  # the timeline could not be synced: the checkpoint says so
            log.warning("%s: no report this time (%s)", rt.name, exc)
            return
        if job is not None and self.reports is not None:
            self.reports.submit(job)

    def _rolling_reports(self) -> None:
        """The scheduler's job: the loop takes what each rolling report needs."""
        for rt in self.runtimes:
            self.inbox.post(lambda rt=rt: self._submit_report(rt))

    def _report(self, rt: ModelRuntime) -> None:
        if not self.config.report_on_done or rt.name in self._reported:
            return
        self._reported[rt.name] = self.actions.states(rt.name) \
            if self.actions is not None else ()
        try:
            if self.actions is not None:  # what ran, from the outbox
                self.actions.export(rt.name, rt.out_dir / "actions.jsonl")
            path = rt.write_report(generated_at=iso(self.clock.now()),
                                   windows=self.config.reports.windows)
        except Exception:  # a report is a convenience; the daemon goes on
            log.exception("%s: writing the report failed", rt.name)
            return
        where = f" and {self.http.url}/reports/{rt.name}/" if self.http else ""
        log.info("%s: report at %s%s", rt.name, path, where)

    # -- wiring ---------------------------------------------------------------------------------

    def _write_service_file(self) -> None:
        """``<state>/service.json``: pid and URL of the running daemon (for tools, tests)."""
        path = self.config.state_dir / "service.json"
        path.with_suffix(".tmp").write_bytes(orjson.dumps(
            {"pid": os.getpid(), "version": __version__, "models": [r.name for r in self.runtimes],
             "url": self.http.url if self.http else None}, option=orjson.OPT_INDENT_2))
        path.with_suffix(".tmp").replace(path)


def _reads_registry(rt: ModelRuntime) -> bool:
    """Whether a stream of ``rt`` reads Avro values with a schema registry."""
    return any(s.avro is not None and s.avro.registry is not None
               for s in rt.connector.streams)


def _cutoff(monitor: Any) -> float | None:
    """The approval cut-off shadows compare at: the policy's, else the detectors'."""
    policy = monitor.policy
    cut = getattr(getattr(policy, "model", None), "approval_cutoff", None)
    return cut if cut is not None else monitor.detectors.approval_cutoff


def _reference_reader(rt: Any) -> ReferenceReader:
    """Reads ``rt``'s reference as its monitor's profile was read (the policy's columns,
    the connector's types, missing values, text formats and score scale): the profile an
    action registers is the one the monitor adopts on a promotion."""
    return ReferenceReader.of(rt.monitor.policy, rt.connector)


def _score_scale(rt: Any) -> Any:
    """The scale ``rt``'s connector writes the score in (the reference's score column
    written so is read as the probability by the champion's trial and the stand-in)."""
    policy = rt.monitor.policy
    return rt.connector.score_scale(policy.reference.score_is if policy else "p_bad")
