"""One monitored model inside the daemon: its source, monitor, outputs and checkpoint state.

The run loop owns every :class:`ModelRuntime` and is the only thread that calls into one.
A runtime reads with the same :class:`~driftwatch.pipeline.ModelMonitor` as ``replay``
(invariant 1) and writes the same ``timeline.jsonl`` into ``<state>/out/<model>/``; its
length is part of each checkpoint, so after a crash the file is cut back to what the
checkpoint covers and the re-read events write their lines once more, never twice.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from driftwatch.actions.reference import ReferenceReader
from driftwatch.clock import Clock
from driftwatch.connectors.base import Polled, Source
from driftwatch.connectors.config import Connector, load_connector
from driftwatch.connectors.deadletter import DeadLetterWriter
from driftwatch.errors import ConfigError, StateError
from driftwatch.onboard.consistency import check_reference
from driftwatch.outputlog import OutputLog, iter_lines
from driftwatch.pipeline import ModelMonitor, StageError, WindowResult, window_spec_from_policy
from driftwatch.policy.level_store import LevelStore
from driftwatch.policy.levels import reference_settings
from driftwatch.policy.schema import Policy
from driftwatch.policy.watcher import PolicyWatcher
from driftwatch.replay import build_monitor, slim_record, summarise
from driftwatch.replay.isolation import PROCESSING_ERROR, poison_records, timeline_record
from driftwatch.service.config import ModelConfig, TimelineConfig
from driftwatch.service.live_source import PacedSource
from driftwatch.service.metrics_live import ModelSnapshot
from driftwatch.service.profile_store import ProfileStore
from driftwatch.statetree import Capture
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["DELAY_BUCKET_BINS", "ModelRuntime", "ProfileLookup", "check_pacing",
           "model_connector", "open_timeline", "reference_path", "resolved_champion"]

log = logging.getLogger(__name__)

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY
_RECENT = 20
#: Bins of the joiner's label-delay histogram (8 per decade) whose upper edges become the
#: ``le`` buckets of ``driftwatch_label_join_delay_seconds``: about 1 h, 1 d, 9 d, 37 d,
#: 65 d, 116 d and 206 d.
DELAY_BUCKET_BINS = (29, 40, 47, 52, 54, 56, 58)
#: ``fingerprint -> profile``: where else a checkpoint's profile may be found (None: not there)
ProfileLookup = Callable[[str], ReferenceProfile | None]


def _spec_dict(spec: WindowSpec) -> dict[str, Any]:
    return {"kind": spec.kind, "pane_size": spec.pane_size, "panes": spec.panes,
            "mode": spec.mode, "allowed_lateness": spec.allowed_lateness}


def open_source(
    connector: Connector, monitor: ModelMonitor, cfg: ModelConfig, out_dir: Path, clock: Clock
) -> tuple[Source, DeadLetterWriter | None]:
    """The model's source: Kafka for ``kind: kafka``, else its files, paced when asked."""
    schema = connector.schema_for(monitor.profile.schema)
    if connector.kind == "kafka":
        from driftwatch.connectors.decode import Decoder
        from driftwatch.connectors.kafka import KafkaSource
        from driftwatch.connectors.kafka_settings import KafkaSourceSettings

        settings = KafkaSourceSettings.from_connector(connector, out_dir=out_dir)
        decoders = {s.name: Decoder(s, schema) for s in connector.streams}
        return KafkaSource(settings, decoders, clock=clock), None
    from driftwatch.connectors.file import FileSource, discover_inputs, separator_notes
    from driftwatch.connectors.probe import probe_inputs

    inputs = discover_inputs(connector)
    for text in separator_notes(inputs):
        log.info("model %s: %s", monitor.model, text)
    # as in replay: nested paths for `features: infer`, a word on fields that match nothing
    probe = probe_inputs(connector, monitor.profile.schema, inputs,
                         missing=monitor.profile.missing_shares())
    for text in probe.warnings():
        log.warning("model %s: %s", monitor.model, text)
    monitor.absent_fields = probe.absent_features()
    connector = probe.connector
    schema = connector.schema_for(monitor.profile.schema)
    dl_path = connector.dead_letter_path(out_dir)
    dead = DeadLetterWriter(dl_path) if dl_path is not None else None
    size = cfg.batch_size or (500 if cfg.live_speed > 0 else 10_000)
    files = FileSource(connector, schema, batch_size=size, dead_letter=dead, inputs=inputs)
    if cfg.live_speed > 0:
        return PacedSource(files, speed=cfg.live_speed, clock=clock,
                           count_records=connector.numbers_records()), dead
    return files, dead


def open_timeline(out_dir: Path, cfg: TimelineConfig | None = None) -> OutputLog:
    """The model's ``timeline.jsonl`` in ``out_dir``, rotated as ``cfg`` says (the
    defaults when None)."""
    cfg = cfg or TimelineConfig()
    return OutputLog(out_dir / "timeline.jsonl", max_bytes=cfg.max_bytes, keep=cfg.segments)


def reference_path(cfg: ModelConfig, policy: Policy, base_dir: Path) -> Path | None:
    """The reference file the model reads: the config's ``reference:``, else the policy's
    ``model.reference`` (from the working directory when there, else from ``base_dir``)."""
    ref = cfg.reference or (Path(policy.model.reference) if policy.model.reference else None)
    if ref is not None and not ref.is_absolute() and not ref.exists():
        ref = base_dir / ref
    return ref


def model_connector(cfg: ModelConfig) -> Connector:
    """The model's connector. Its file (``connector:``) was found from the config file's
    folder; the globs in it start at the working directory, as the connector docs say
    and as ``replay`` reads the same connector."""
    connector = load_connector(cfg.connector)
    check_pacing(cfg, connector)
    return connector


def check_pacing(cfg: ModelConfig, connector: Connector) -> None:
    """Refuse a ``live.speed`` the file wrote for a Kafka model: only a file source is
    paced (a topic delivers at its own pace), so it would be read and never acted on."""
    if connector.kind != "kafka" or cfg.live_speed_at is None:
        return
    file, line, col, path = cfg.live_speed_at
    raise ConfigError(
        f"live.speed paces a file source; connector {connector.name!r} reads Kafka topics, "
        "which deliver at their own pace", file=file, line=line, col=col,
        path=path, found=f"{cfg.live_speed:g}",
        hint="remove live.speed from this model (or write 0)")


def resolved_champion(cfg: ModelConfig, connector: Connector, policy: Policy | None) -> Any:
    """The model's champion with ``score_scale: stream`` read as the connector's score
    scale (None: no champion); a connector that maps no score, or points with the
    champion's ``score_is: p_good``, is an error at the config's ``score_scale``."""
    if cfg.champion is None:
        return None
    score_is = policy.reference.score_is if policy is not None else "p_bad"
    try:
        return cfg.champion.resolved(connector.stream_score_scale(score_is),
                                     connector=f"connector {connector.name!r}")
    except ConfigError as exc:
        if cfg.champion_scale_at is None or exc.file is not None:
            raise
        file, line, col, path = cfg.champion_scale_at
        raise exc.recast(ConfigError, file=file, line=line, col=col, path=path) from None


@dataclass
class ModelRuntime:
    """Source + monitor + outputs of one model (see the module docstring)."""

    name: str
    config: ModelConfig
    connector: Connector
    watcher: PolicyWatcher
    monitor: ModelMonitor
    source: Source
    out_dir: Path
    timeline: OutputLog
    clock: Clock
    dead_letter: DeadLetterWriter | None = None
    positions: dict[str, int] = field(default_factory=dict)
    done: bool = False
    last_event_monotonic: float | None = None
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_RECENT))
    tier: str = "none"
    windows: int = 0
    reference_path: Path | None = None
    base_dir: Path | None = None
    _late_seen: int = 0
    _ready: bool = False
    not_ready_reason: str = ""  # the source's own words, when it has them
    #: the source's schema registry: False while it holds partitions for it (why in
    #: ``registry_fault``), True once it answered, None when not asked (or none is read)
    registry_up: bool | None = None
    registry_fault: str = ""
    _lag: int = 0
    _held: int = 0
    _ref_stamp: tuple[int, int] | None = None
    errors: list[StageError] = field(default_factory=list)
    #: the profiles this model was judged on, and the champion adopted from the registry
    profiles: ProfileStore | None = None
    #: the champion version whose profile the monitor judges on (None: the reference file's)
    champion: str | None = None

    @classmethod
    def open(cls, cfg: ModelConfig, *, state_dir: Path, base_dir: Path,
             clock: Clock, timeline: TimelineConfig | None = None) -> ModelRuntime:
        watcher = PolicyWatcher(_shown(cfg.policy))
        policy = watcher.policy
        connector = model_connector(cfg)
        check_reference(policy, connector=connector, reference=cfg.reference, base_dir=base_dir)
        monitor = build_monitor(policy, reference=cfg.reference, base_dir=base_dir,
                                connector=connector)
        name = cfg.name or monitor.model
        monitor.model = name
        profiles = ProfileStore(state_dir / "profiles" / name)
        profiles.save(monitor.profile)  # a checkpoint may name it after the file changes
        champion = _adopted_champion(name, profiles)
        if champion is not None:  # judged on the champion's profile before the restart
            monitor.set_profile(champion[1])
        # calibrated levels before the HTTP listener starts; a restart reads them back
        monitor.calibrators.store = LevelStore(state_dir / "levels")
        monitor.warm_up()
        out_dir = state_dir / "out" / name
        out_dir.mkdir(parents=True, exist_ok=True)
        source, dead = open_source(connector, monitor, cfg, out_dir, clock)
        ref = reference_path(cfg, policy, base_dir)
        return cls(name=name, config=cfg, connector=connector, watcher=watcher,
                   monitor=monitor, source=source, out_dir=out_dir,
                   timeline=open_timeline(out_dir, timeline), clock=clock,
                   dead_letter=dead, reference_path=ref, base_dir=base_dir,
                   _ref_stamp=_stamp(ref), profiles=profiles,
                   champion=champion[0] if champion is not None else None)

    # -- reading -------------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        """Events per poll: small for a paced recording (smooth pacing), large otherwise."""
        if self.config.batch_size is not None:
            return self.config.batch_size
        return 500 if isinstance(self.source, PacedSource) else 10_000

    def process(self, polled: Polled | None) -> list[WindowResult]:
        """One polled micro-batch through the monitor; ``None`` (a finite source is done)
        flushes the last, partial window."""
        # read the source's state here, in the loop's thread: a Kafka consumer is not
        # thread-safe, and scrapes read these cached values instead
        self._ready = bool(getattr(self.source, "ready", True))
        self.not_ready_reason = "" if self._ready else str(
            getattr(self.source, "not_ready_reason", "") or "")
        self.read_registry_state()
        stats = getattr(self.source, "stats", None)
        self._lag = int(getattr(stats, "lag_total", 0) or 0)
        self._held = int(getattr(stats, "held", 0) or 0)
        self._probe_first()
        if polled is None:
            self.done = True
            return self._record(self.monitor.flush())
        if polled.n_events or polled.bad:
            self.last_event_monotonic = self.clock.monotonic()
        results = self.monitor.process(polled)
        self._poisoned()
        self.positions.update(polled.positions)
        return self._record(results)

    def read_registry_state(self) -> None:
        """Cache the source's schema-registry state (read in the loop's thread, like the
        rest: the daemon's dependency probe reads these copies)."""
        self.registry_up = getattr(self.source, "registry_up", None)
        self.registry_fault = str(getattr(self.source, "registry_fault", "") or "")

    def _probe_first(self) -> None:
        """A Kafka stream's first messages checked against the connector's paths, as a
        replay checks its files' first records: a mapped field absent from most of them is
        logged and becomes the ``field_absent`` signal of every window."""
        take = getattr(self.source, "take_samples", None)
        samples = take() if callable(take) else None
        if not samples:
            return
        from driftwatch.connectors.probe import flat_key_warnings, probe_records

        schema = self.connector.schema_for(self.monitor.profile.schema)
        conn = replace(self.connector, streams=tuple(s.resolve(schema)
                                                     for s in self.connector.streams))
        # the decoders are built: a flat dotted key is absent to them, and said so
        probe = probe_records(conn, None, samples, flat=False,
                              missing=self.monitor.profile.missing_shares())
        for text in [*flat_key_warnings(conn, samples), *probe.warnings()]:
            log.warning("model %s: %s", self.name, text)
        self.monitor.absent_fields.update(probe.absent_features())

    def _poisoned(self) -> None:
        """Dead-letter the events of polls the monitor could not take in, and say so."""
        for err in self.monitor.take_poll_errors():
            records = poison_records(err)
            if self.dead_letter is not None:
                self.dead_letter.write(records)
            elif callable(getattr(self.source, "dead_letter", None)):
                self.source.dead_letter(records)  # type: ignore[attr-defined]
            self.errors.append(err.error)
            log.error("%s: a poll of %d events could not be processed (%s: %s); they are "
                      "dead-lettered as %s and the daemon goes on", self.name, len(records),
                      err.error.stage, err.error.message, PROCESSING_ERROR)

    def take_errors(self) -> list[StageError]:
        """Poll errors since the last call (for metrics)."""
        out, self.errors = self.errors, []
        return out

    def commit(self, positions: Mapping[str, int]) -> tuple[str, int]:
        """Commit checkpointed positions to the source; ``(outcome, n)`` for metrics."""
        stats = getattr(self.source, "stats", None)
        before = (getattr(stats, "commits_total", 0), getattr(stats, "commit_failures_total", 0),
                  getattr(stats, "commits_deferred_total", 0))
        self.source.commit(positions)
        if stats is None:
            return "ok", 1
        after = (stats.commits_total, stats.commit_failures_total, stats.commits_deferred_total)
        for outcome, b, a in zip(("ok", "failed", "deferred"), before, after, strict=True):
            if a > b:
                return outcome, a - b
        return "ok", 0

    def _record(self, results: list[WindowResult],
                records: list[dict[str, Any]] | None = None) -> list[WindowResult]:
        """Timeline lines of ``results`` (their ``records`` when made already)."""
        for i, res in enumerate(results):
            rec = timeline_record(res) if records is None else records[i]
            self.timeline.write(orjson.dumps(rec, option=_OPTS))
            if res.cohort is None:  # a cohort's verdict judges an earlier window
                self.windows += 1
                self.tier = rec["tier"]
            if rec["decision"] is not None and (rec["tier"] != "none"
                                                or rec["decision"].get("action")):
                self.recent.append({"window_id": rec["window_id"], "end": rec["end"],
                                    "tier": rec["tier"], "decision": rec["decision"]})
        return results

    def late_delta(self) -> int:
        n = int(self.monitor.window.n_late)
        d, self._late_seen = n - self._late_seen, n
        return max(0, d)

    # -- policy --------------------------------------------------------------------------------
    def apply_policy(self, policy: Policy) -> list[WindowResult]:
        """Use ``policy`` from the next window on. New window settings close the current
        window (partial) and start panes of the new shape; window ids continue."""
        spec = window_spec_from_policy(policy)
        self.set_reference_path(policy)
        self.monitor.policy = policy
        self.monitor.apply_label_settings()
        self.monitor.apply_change_settings()
        if spec == self.monitor.spec:
            return []
        return self._respec(spec)

    def _respec(self, spec: WindowSpec) -> list[WindowResult]:
        closed = self.monitor.flush()
        self.monitor.spec = spec
        self.monitor.window = self.monitor.window.reshaped(spec)
        log.info("%s: window settings changed; new windows from id %s", self.name,
                 self.monitor.window.next_id)
        return self._record(closed)

    # -- reference ---------------------------------------------------------------------------
    def reference_for_policy(self, policy: Policy) -> ReferenceProfile | None:
        """The reference profile as ``policy`` reads the reference, when it reads it
        otherwise than the running policy (another ``model.reference`` file, or its
        ``reference:`` block or bins changed) into another profile; else None, and None
        while a champion's profile adopted from the registry is judged on (the file is
        still read: an edit it cannot be read with is refused). Called from the
        scheduler's thread: it only reads the file. Raises the reader's error (a column
        the edit names that the table lacks, a file that is not there)."""
        path = self._path_for(policy)
        if path is None or (path == self.reference_path and reference_settings(policy)
                            == reference_settings(self.monitor.policy)):
            return None
        profile = ReferenceReader.of(policy, self.connector).profile(path)
        if self.champion is not None:
            log.info("%s: the reloaded policy reads the reference otherwise; champion v%s's "
                     "profile stays (a champion adopted from the registry overrides the "
                     "reference file)", self.name, self.champion)
            return None
        if profile.fingerprint == self.monitor.profile.fingerprint:
            return None
        return profile

    def _path_for(self, policy: Policy) -> Path | None:
        return reference_path(self.config, policy, self.base_dir or Path.cwd())

    def changed_reference(self) -> ReferenceProfile | None:
        """The reference profile if its file changed to a different profile, else None
        (and None while a champion's profile adopted from the registry is judged on).
        Called from the scheduler's thread: it only reads the file."""
        stamp = _stamp(self.reference_path)
        if stamp is None or stamp == self._ref_stamp or self.reference_path is None:
            return None
        self._ref_stamp = stamp
        if self.champion is not None:
            log.info("%s: the reference file changed; champion v%s's profile stays (a "
                     "champion adopted from the registry overrides the reference file)",
                     self.name, self.champion)
            return None
        policy = self.watcher.policy
        # read as at the start and as the actions read it (ReferenceReader.of)
        profile = ReferenceReader.of(policy, self.connector).profile(self.reference_path)
        if profile.fingerprint == self.monitor.profile.fingerprint:
            return None
        return profile

    def adopt_reference(self, profile: ReferenceProfile, *,
                        champion: str | None = None) -> list[WindowResult]:
        """Measure against ``profile`` from now on (``champion``: the version of the
        registry's champion it belongs to, which then overrides the reference file). The
        open window is closed first (a partial window, so its events are judged against
        the bins they were sketched on); label joins, engine state and window ids carry
        over. A different decoding schema (features, levels) reopens the source at the
        same positions. The same profile again changes nothing."""
        if champion is not None:
            self.champion = champion
        if profile.fingerprint == self.monitor.profile.fingerprint:
            return []
        if self.profiles is not None:  # before a checkpoint can name it
            self.profiles.save(profile)
        results = self._record(self.monitor.flush())
        self._use_profile(profile)
        return results

    def _use_profile(self, profile: ReferenceProfile) -> None:
        old_schema = self.connector.schema_for(self.monitor.profile.schema)
        self.monitor.set_profile(profile)
        if self.connector.schema_for(profile.schema) != old_schema:
            self.source.close()
            if self.dead_letter is not None:
                self.dead_letter.close()
            self.source, self.dead_letter = open_source(
                self.connector, self.monitor, self.config, self.out_dir, self.clock)
            if self.positions:
                self.source.seek(self.positions)

    def set_reference_path(self, policy: Policy) -> None:
        """A reloaded policy that names another ``model.reference``: watch that file now
        (in the loop, once the policy applies)."""
        path = self._path_for(policy)
        if path != self.reference_path:
            log.info("%s: the reference file is now %s", self.name, path)
            self.reference_path, self._ref_stamp = path, _stamp(path)

    # -- checkpoints ---------------------------------------------------------------------------
    def state(self, capture: Capture | None = None) -> dict[str, Any]:
        """This model's part of a checkpoint; rotates and syncs the timeline first.
        ``capture`` is what the checkpoint store holds already (a binary checkpoint)."""
        self.timeline.rotate()
        return {
            "monitor": self.monitor.state_dict(capture),
            "window_spec": _spec_dict(self.monitor.spec),
            "positions": dict(self.positions),
            "timeline_bytes": self.timeline.sync(),
            "timeline_generation": self.timeline.generation,
            "done": self.done,
            "windows": self.windows,
            "tier": self.tier,
            "recent": list(self.recent),
        }

    def restore(self, d: Mapping[str, Any] | None,
                lookup: ProfileLookup | None = None) -> list[WindowResult]:
        """Back to a checkpoint (None: a fresh start, outputs emptied). The checkpoint is
        restored on the profile it was taken on (the one kept in the state folder, else
        ``lookup``'s); when that is not the profile this start judges on (the reference
        file changed, or a champion's profile was adopted after the checkpoint), that one
        is then adopted as a live change is: the restored open window closes first."""
        if d is None:
            self.timeline.clear()
            return []
        saved = d["monitor"]
        target = self.monitor.profile
        wanted = str(saved.get("profile"))
        if wanted != target.fingerprint:
            found = self.profiles.load(wanted) if self.profiles is not None else None
            if found is None and lookup is not None:
                found = lookup(wanted)
            if found is None:
                raise StateError(
                    f"{self.name}: the checkpoint was taken against reference {wanted}, "
                    f"this start reads {target.fingerprint}, and the state folder does "
                    "not hold the checkpoint's (a state folder from an older driftwatch); "
                    "restore the old reference, or start from an empty state directory")
            self._use_profile(found)
        spec_now = self.monitor.spec
        try:
            self.monitor.spec = WindowSpec(**d["window_spec"])
            self.monitor.load_state(saved)
        except (KeyError, TypeError, ValueError) as exc:  # written by another version
            raise StateError(
                f"{self.name}: the checkpoint cannot be restored by this version of "
                f"driftwatch ({type(exc).__name__}: {exc}); keep the old state folder for "
                "the old version, or start this one on an empty state folder") from exc
        # a checkpoint of a version without rotation: the first generation
        self.timeline.restore(int(d.get("timeline_generation", 1)), int(d["timeline_bytes"]))
        self.positions = {str(k): int(v) for k, v in d["positions"].items()}
        self.done = bool(d["done"])
        self.windows = int(d.get("windows", 0))
        self.tier = str(d.get("tier", "none"))
        self.recent = deque(d.get("recent", ()), maxlen=_RECENT)
        self._late_seen = int(self.monitor.window.n_late)
        if self.positions:
            self.source.seek(self.positions)
        results = []
        if target.fingerprint != self.monitor.profile.fingerprint:
            log.info("%s: the checkpoint was taken on reference %s; judging on %s from "
                     "here (%s)", self.name, wanted, target.fingerprint,
                     f"champion v{self.champion}'s profile" if self.champion is not None
                     else "the reference file's profile")
            results = self.adopt_reference(target)
        # the policy file changed window settings while the daemon was down
        return results + (self._respec(spec_now) if spec_now != self.monitor.spec else [])

    # -- what others read ----------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Whether the source was connected at the last poll."""
        return self._ready

    def consumer_lag(self) -> int:
        """Messages behind the end of the assigned partitions at the last poll."""
        return self._lag

    def snapshot(self) -> ModelSnapshot:
        j = self.monitor.joiner
        wm = self.monitor.window.watermark
        return ModelSnapshot(
            model=self.name,
            source_ready=self.ready,
            source_done=self.done,
            consumer_lag=self.consumer_lag(),
            source_held=self._held,
            last_event_monotonic=self.last_event_monotonic,
            label_backlog=int(getattr(j, "backlog", 0)),
            label_counters=dict(getattr(j, "counters", {})),
            label_delay=_delay_buckets(j),
            watermark=wm if math.isfinite(wm) else None,
            window_bytes=int(self.monitor.window.nbytes),
        )

    def status(self) -> dict[str, Any]:
        m = self.monitor
        return {
            "model": self.name,
            "policy": str(self.config.policy),
            "policy_name": m.policy.metadata.name if m.policy is not None else None,
            # who to call about this model's drift, as its policy names them
            "policy_owner": (m.policy.metadata.owner or None) if m.policy is not None else None,
            "connector": self.connector.name,
            "source": {"kind": self.connector.kind, "ready": self.ready, "done": self.done,
                       "positions": dict(self.positions), "lag": self.consumer_lag()},
            "reference": m.profile.fingerprint,
            # whose profile that is: a champion's adopted from the registry, or the file's
            "reference_champion": self.champion,
            "tier": self.tier,
            "windows": self.windows,
            **m.record_counts(),
            # as replay's summary says them: which reasons make up bad_records
            "bad_by_reason": dict(sorted(m.bad_by_reason.items())),
            "unknown_labels": {s: dict(v) for s, v in sorted(m.unknown_labels.items())},
            "labels": dict(getattr(m.joiner, "counters", {})),
            "labelled_rows": m.labelled_buffer.summary(),
            "last_decisions": list(self.recent)[-5:],
            "report": f"/reports/{self.name}/",
        }

    def write_report(self, *, generated_at: str | None, windows: int | None = None) -> Path:
        """``summary.json`` and ``report.html`` from the timeline so far (its segments, then
        the active file), as replay writes them; served under ``/reports/<model>/``. The
        summary streams every line kept and holds only what it counts of each (not the
        per-feature summaries and signals); the report covers the last ``windows``
        windows (all when None)."""
        from driftwatch.report import write_report

        self.timeline.sync()
        records = [slim_record(orjson.loads(line)) for line in iter_lines(self.timeline.path)]
        (self.out_dir / "summary.json").write_bytes(orjson.dumps(
            summarise(records, self.monitor), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))
        del records
        return write_report(self.out_dir, reference=self.monitor.profile,
                            generated_at=generated_at, windows=windows)

    def stopping(self) -> None:
        """Shutdown has begun: a source that waits on a broker caps those waits from now."""
        hook = getattr(self.source, "stopping", None)
        if callable(hook):
            hook()

    def close(self) -> None:
        try:
            self.source.close()
        finally:
            self.timeline.close()
            if self.dead_letter is not None:
                self.dead_letter.close()

    def discard(self) -> None:
        """Close without writing anything more: the daemon goes back to its checkpoint
        (the state folder refused a write) and opens this model again."""
        if self.dead_letter is not None:
            self.dead_letter.discard()
        try:
            self.source.close()
        except Exception as exc:  # this runtime is dropped either way
            log.debug("%s: closing the source of a dropped runtime: %s", self.name, exc)
        self.timeline.close()


def _adopted_champion(name: str, profiles: ProfileStore) -> tuple[str, ReferenceProfile] | None:
    """The champion version and its profile the model judged on before this start, as the
    state folder keeps them; None when it judged on the reference file's."""
    adopted = profiles.champion()
    if adopted is None or adopted.version is None or adopted.fingerprint is None:
        return None
    profile = profiles.load(adopted.fingerprint)
    if profile is None:
        log.warning("%s: champion v%s's profile %s is missing from the state folder; the "
                    "reference file's profile is used until the champion is read again",
                    name, adopted.version, adopted.fingerprint)
        return None
    return adopted.version, profile


def _shown(path: Path) -> Path:
    """Relative to the working directory when under it: decisions cite ``file:line`` the
    way a replay from the same folder does."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _stamp(path: Path | None) -> tuple[int, int] | None:
    try:
        st = path.stat() if path is not None else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if st is not None else None


def _delay_buckets(joiner: Any) -> tuple[tuple[tuple[float, int], ...], float, int]:
    """Cumulative label-delay counts at :data:`DELAY_BUCKET_BINS` edges, sum and count."""
    h = getattr(joiner, "delays", None)
    if h is None:
        return (), 0.0, 0
    cum = np.cumsum(h.counts)
    per = h.PER_DECADE
    buckets = tuple((10 ** (b / per), int(cum[min(b, cum.size - 1)])) for b in DELAY_BUCKET_BINS)
    return buckets, float(h.total), int(h.count)
