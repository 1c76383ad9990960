"""One model of a consumer group inside ``driftwatch run``.

:class:`GroupRuntime` is a :class:`~driftwatch.service.model.ModelRuntime` whose monitor
does not see the stream itself: each poll's batches go, partition by partition, to a
:class:`~driftwatch.service.group.partition.PartitionPanes`; the panes that close there
and each partition's mark go to the pane log. The instance that owns the model's leader
partition (:func:`~driftwatch.service.group.merge.leader_partition`) reads the log,
merges complete panes and only it judges windows (detectors, policy) and so decides and
acts: each decision exists once in the group. Those steps (merge, judge, leadership)
are :class:`~driftwatch.service.group.leader.Leadership`, mixed in here.

Ordering, per instance (DESIGN invariant 3)::

    poll -> panes and marks to the log
    decider: merge -> judge -> its state and the batch's lines to the log, durable
             -> timeline, actions -> (next poll) leader state, the batch acknowledged
             (``outputs.py``: a member killed in between completes the batch on restart)
    checkpoint: partition states (+ offsets they cover) to the log, durable -> commit
    revoked: the same for those partitions (durable) before the group moves them;
             their next owner seeks to the offsets that state covers
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from driftwatch.batch import Batch
from driftwatch.clock import Clock
from driftwatch.connectors.base import Polled
from driftwatch.connectors.config import load_connector
from driftwatch.errors import ConfigError, ServiceError
from driftwatch.onboard.consistency import check_reference
from driftwatch.outputlog import count_lines, segments
from driftwatch.pipeline import WindowResult, window_spec_from_policy
from driftwatch.pipeline.badcounts import count_bad
from driftwatch.policy.watcher import PolicyWatcher
from driftwatch.replay import build_monitor
from driftwatch.service.config import GroupConfig, ModelConfig, TimelineConfig
from driftwatch.service.group import cohorts as group_cohorts
from driftwatch.service.group.idle import IdlePartitions
from driftwatch.service.group.joins import PartitionJoins
from driftwatch.service.group.keys import co_partitioned
from driftwatch.service.group.labelled import (
    LOG_ROWS_BYTES,
    LabelledPanes,
    LabelledParts,
    row_bytes,
)
from driftwatch.service.group.leader import Leadership
from driftwatch.service.group.merge import PaneMerger, leader_partition
from driftwatch.service.group.outputs import (
    member_id,
)
from driftwatch.service.group.panelog import PaneLog, pane_value
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.service.group.source import GroupSource, partition_of
from driftwatch.service.metrics_live import ModelSnapshot
from driftwatch.service.model import (
    ModelRuntime,
    _delay_buckets,
    _shown,
    _stamp,
    check_pacing,
    open_timeline,
)

__all__ = ["GroupRuntime"]

log = logging.getLogger(__name__)

OUTCOMES = "outcomes"


@dataclass
class GroupRuntime(Leadership, ModelRuntime):
    """A model's share of a consumer group (see the module docstring)."""

    pane_log: Any = None
    n_partitions: int = 0
    topics: dict[str, str] = field(default_factory=dict)  # stream -> topic
    parts: dict[int, PartitionPanes] = field(default_factory=dict)
    merger: PaneMerger | None = None
    cohort_parts: group_cohorts.CohortParts = field(default_factory=group_cohorts.CohortParts)
    _cohorts_merged: list[tuple[int, int]] = field(default_factory=list)
    #: every partition's labelled rows per pane, until the pane is complete (the decider)
    labelled_parts: LabelledParts | None = None
    _labelled_merged: list[tuple[int, int]] = field(default_factory=list)
    _states: dict[int, dict[str, Any]] = field(default_factory=dict)
    _leader_state: dict[str, Any] | None = None
    _guard: Any = field(default_factory=threading.RLock)
    #: this member's name in the pane log (kept in its state folder)
    member: str = ""
    #: this member's batches in the log not acknowledged there: first window -> lines
    #: and the indexes of those whose action the group had decided before
    _pending: dict[int, tuple[list[bytes], list[int]]] = field(default_factory=dict)
    #: the action keys the group decided (key -> window), for windows a later cohort
    #: verdict can still be about: such a verdict's action is not submitted again
    _acted: dict[str, int] = field(default_factory=dict)
    #: batches handed to the daemon, to acknowledge at the next poll: (first window,
    #: the decider state to keep under ``leader``, None when it is not this member's now)
    _unacked: list[tuple[int, dict[str, Any] | None]] = field(default_factory=list)
    idle: IdlePartitions = field(default_factory=lambda: IdlePartitions(30.0))
    #: partitions the log's latest mark says are idle (whoever owned them then)
    _marked_idle: set[int] = field(default_factory=set)

    @classmethod
    def open_group(cls, cfg: ModelConfig, group: GroupConfig, *, state_dir: Path,
                   base_dir: Path, clock: Clock,
                   timeline: TimelineConfig | None = None) -> GroupRuntime:
        watcher = PolicyWatcher(_shown(cfg.policy))
        policy = watcher.policy
        connector = load_connector(cfg.connector, base_dir=base_dir)
        check_pacing(cfg, connector)
        if connector.kind != "kafka":
            raise ConfigError(f"group: model {cfg.name or policy.model.name!r} reads "
                              f"{connector.kind} input; a consumer group needs a Kafka "
                              "connector", file=str(cfg.connector))
        check_reference(policy, connector=connector, reference=cfg.reference, base_dir=base_dir)
        monitor = build_monitor(policy, reference=cfg.reference, base_dir=base_dir,
                                connector=connector)
        if monitor.spec.kind != "time":
            raise ConfigError(f"group: window.kind is {monitor.spec.kind!r}; instances in a "
                              "group need event-time panes (kind: time), since count panes "
                              "depend on one arrival order", file=str(watcher.path))
        monitor.warm_up()
        name = cfg.name or monitor.model
        monitor.model = name
        out_dir = state_dir / "out" / name
        out_dir.mkdir(parents=True, exist_ok=True)
        from driftwatch.connectors.decode import Decoder
        from driftwatch.connectors.kafka_settings import KafkaSourceSettings

        settings = KafkaSourceSettings.from_connector(connector, out_dir=out_dir)
        topics = {t.stream: t.name for t in settings.topics}
        pane_log = PaneLog(settings.connection.client_config(), group.topic, name)
        try:
            n = co_partitioned(pane_log.partitions, topics)
        except ServiceError:
            pane_log.close()
            raise
        ref = cfg.reference or (Path(policy.model.reference) if policy.model.reference else None)
        rt = cls(name=name, config=cfg, connector=connector, watcher=watcher, monitor=monitor,
                 source=None, out_dir=out_dir,  # type: ignore[arg-type]
                 timeline=open_timeline(out_dir, timeline), clock=clock,
                 reference_path=ref, base_dir=base_dir, _ref_stamp=_stamp(ref),
                 pane_log=pane_log, n_partitions=n, topics=topics, member=member_id(out_dir),
                 idle=IdlePartitions(group.idle_timeout_s))
        schema = connector.schema_for(monitor.profile.schema)
        decoders = {s.name: Decoder(s, schema) for s in connector.streams}
        rt.source = GroupSource(settings, decoders, clock=clock, on_assigned=rt._assigned,
                                on_revoked=rt._revoked)
        log.info("%s: in group %s over %d partitions; partition %d's owner decides", name,
                 settings.connection.group_id, n, rt.leader)
        return rt

    # -- who decides ---------------------------------------------------------------------
    @property
    def leader(self) -> int:
        return leader_partition(self.name, self.n_partitions)

    @property
    def deciding(self) -> bool:
        return self.merger is not None

    # -- the stream ----------------------------------------------------------------------
    def process(self, polled: Polled | None) -> list[WindowResult]:
        self._ready = bool(getattr(self.source, "ready", True))
        self._lag = int(getattr(self.source.stats, "lag_total", 0) or 0)
        self.read_registry_state()
        self._probe_first()  # its partitions' first messages against the connector's paths
        with self._guard:  # a revocation (on Kafka's thread) waits for this poll
            self._acknowledge()
            if polled is not None and (polled.n_events or polled.bad):
                self.last_event_monotonic = self.clock.monotonic()
                self._take(polled)
            self._mark_idle()
            return self._decide()

    def _mark_idle(self) -> None:
        """Owned partitions quiet for ``group.idle_timeout`` (and caught up) hold no pane
        back any more: provisional copies of their open panes go out, then an idle mark."""
        for p in self.idle.due(now=self.clock.monotonic(), caught_up=self.source.caught_up):
            part = self.parts[p]
            for k, sk in part.open_panes():
                self.pane_log.put("pane", pane_value(sk, part.segment_panes.get(k),
                                                     coder=part.segments, provisional=True),
                                  partition=p, pane=k)
            cohorts, labelled = part.open_rows()
            for k, rows in cohorts:
                self.pane_log.put("cohorts", {"cohorts": rows, "provisional": True},
                                  partition=p, pane=k)
            for k, rows in labelled:
                self.pane_log.put("labelled", {"rows": rows, "provisional": True},
                                  partition=p, pane=k)
            self._put_mark(p, idle=True)
            log.info("%s: partition %d has had no records for %.0fs; the group's panes no "
                     "longer wait for it", self.name, p, self.idle.timeout_s)

    def _put_mark(self, p: int, *, idle: bool) -> None:
        self.pane_log.put("mark", {"frontier": self.parts[p].frontier, "idle": idle},
                          partition=p)

    def _take(self, polled: Polled) -> None:
        m = self.monitor
        by_part: dict[int, dict[str, list[Batch]]] = defaultdict(lambda: defaultdict(list))
        for b in polled.batches:
            if len(b):
                by_part[partition_of(b.source)][b.stream].append(b)
        bad: dict[int, int] = defaultdict(int)
        count_bad(m.bad_by_reason, m.unknown_labels, polled.bad)
        for rec in polled.bad:
            if rec.partition is not None:
                bad[rec.partition] += 1
        flip = m.policy is not None and m.policy.reference.score_is == "p_good"
        for p in sorted(set(by_part) | set(bad)):
            part = self.parts.get(p)
            if part is None:  # not ours (any more): its next owner reads it again
                continue
            if self.idle.traffic(p, now=self.clock.monotonic()):
                self._put_mark(p, idle=False)  # before its panes: it holds them back again
            streams = by_part.get(p, {})
            pred = Batch.concat(streams["predictions"]) if streams.get("predictions") else None
            out = Batch.concat(streams[OUTCOMES]) if streams.get(OUTCOMES) else None
            if pred is not None:
                if flip:
                    pred = replace(pred, score=1.0 - pred.score)
                m.n_events += len(pred)
                if m.on_predictions is not None:
                    m.on_predictions(pred)
            m.n_outcomes += 0 if out is None else len(out)
            m.n_outcome_records += 0 if out is None else len(out)
            before = part.frontier
            closed = part.take(pred, out, n_bad=bad.get(p, 0))
            segments = part.take_segments()
            for k, sk in closed:
                self.pane_log.put("pane", pane_value(sk, segments.get(k), coder=part.segments),
                                  partition=p, pane=k)
            for k, rows in part.take_cohorts():  # before the mark that covers them
                self.pane_log.put("cohorts", {"cohorts": group_cohorts.encode(rows)},
                                  partition=p, pane=k)
            for k, labelled in part.take_labelled():
                self.pane_log.put("labelled", {"rows": labelled}, partition=p, pane=k)
            if part.frontier != before and part.frontier is not None:
                self.pane_log.put("mark", {"frontier": part.frontier}, partition=p)
        for key, offset in polled.positions.items():  # processed: what a state covers
            if partition_of(key) in self.parts:
                self.positions[key] = offset

    def _assigned(self, tps: set[Any]) -> None:
        with self._guard:
            self._assign(tps)

    def _assign(self, tps: set[Any]) -> None:
        preds = {tp.partition for tp in tps if tp.topic == self.topics["predictions"]}
        outs = {tp.partition for tp in tps if tp.topic == self.topics.get(OUTCOMES)}
        if OUTCOMES in self.topics and outs != preds:
            log.error("%s: the group assigned predictions %s but outcomes %s: joins are not "
                      "local", self.name, sorted(preds), sorted(outs))
        for e in self.pane_log.read(to_end=True):
            self._note(e)
        for p in sorted(preds):
            part = self._new_part()
            st = self._states.get(p)
            if st is not None:
                part.load(st["panes"])
                self.positions.update(st["positions"])
                self.source.seek(st["positions"])
            self.parts[p] = part
            self.idle.assigned(p, now=self.clock.monotonic())
            if p in self._marked_idle:  # a new owner waits its own timeout first
                self._put_mark(p, idle=False)
        if self.leader in preds:
            self._lead()
        log.info("%s: assigned partitions %s", self.name, sorted(preds))

    def _revoked(self, tps: set[Any]) -> None:
        # kafka-python calls this on its network thread: wait for the loop's poll in hand
        with self._guard:
            self._revoke(tps)

    def _revoke(self, tps: set[Any]) -> None:
        preds = {tp.partition for tp in tps if tp.topic == self.topics["predictions"]}
        gone = sorted(p for p in preds if p in self.parts)
        # durable in the log before the group moves them; the next owner seeks to the
        # offsets this state covers (a consumer cannot commit inside its own callback)
        positions = self._publish(gone, leader=self.leader in preds and self.deciding)
        for p in gone:
            del self.parts[p]
            self.idle.revoked(p)
        if self.leader in preds:
            self.merger = None
        for key in positions:
            self.positions.pop(key, None)

    def _new_part(self) -> PartitionPanes:
        m = self.monitor
        size, _ = m.spec.effective
        return PartitionPanes(m.profile.layout, pane_size=size,
                              allowed_lateness=m.spec.allowed_lateness,
                              has_outcomes=OUTCOMES in self.topics, ttl=m.joiner.ttl,
                              max_pending=m.joiner.max_pending, segments=m.window.segments,
                              labelled=self._labelled_panes())

    def _labelled_panes(self) -> LabelledPanes:
        """A partition's share of the feature rows one process keeps, and at most a
        buffer's worth of labelled rows per pane; both within a pane-log message."""
        m = self.monitor
        schema = m.profile.schema
        fit = LOG_ROWS_BYTES // row_bytes(schema)
        share = -(-m.pending_features.capacity // max(1, self.n_partitions))
        return LabelledPanes(schema, feature_rows=min(share, fit),
                             pane_rows=min(m.labelled_buffer.capacity, fit))

    def _publish(self, partitions: list[int], *, leader: bool) -> dict[str, int]:
        """States of ``partitions`` (and the leader's) to the log, durable; returns the
        offsets they cover (to commit now)."""
        self._acknowledge()
        have = self.positions  # offsets of the events these states hold, not of a poll
        covered: dict[str, int] = {}
        for p in partitions:
            pos = {k: v for t in self.topics.values() if (k := f"{t}:{p}") in have
                   for v in (have[k],)}
            part = self.parts[p]
            self.pane_log.put("state", {"panes": part.to_dict(), "positions": pos,
                                        "frontier": part.frontier}, partition=p)
            covered.update(pos)
        if leader:
            self.pane_log.put("leader", self._leader_dict())
        self.pane_log.flush()
        return covered

    # -- checkpoints ---------------------------------------------------------------------
    def state(self, capture: Any = None) -> dict[str, Any]:
        """Partition states go to the pane log (durable when this returns); the local
        checkpoint keeps the offsets to commit and this instance's outputs."""
        with self._guard:
            positions = self._publish(sorted(self.parts), leader=self.deciding)
        self.timeline.rotate()
        return {"group": True, "positions": positions, "timeline_bytes": self.timeline.sync(),
                "timeline_generation": self.timeline.generation, "done": False,
                "windows": self.windows, "tier": self.tier, "recent": list(self.recent)}

    def restore(self, d: Any, lookup: Any = None) -> list[WindowResult]:
        """Partition and leader state come from the pane log on assignment; locally the
        timeline is tidied (a line cut by a crash is dropped: the decider writes a line
        after its state is durable in the log, never before) and the batches this member
        was killed in the middle of are completed (:meth:`_complete`)."""
        path = self.timeline.path
        data = path.read_bytes() if path.exists() else b""
        data = data[: data.rfind(b"\n") + 1]
        self.timeline.truncate(len(data))
        self.windows = count_lines(path)
        if d is not None:
            self.tier = str(d.get("tier", "none"))
        for e in self.pane_log.read(to_end=True):
            self._note(e)
        # a batch is written between two checkpoints and the log rotates at a checkpoint,
        # so an unacknowledged batch is in the active file or the segment just closed
        segs = segments(path)
        return self._complete((segs[-1][1].read_bytes() if segs else b"") + data)

    # -- reloads -------------------------------------------------------------------------
    def apply_policy(self, policy: Any) -> list[WindowResult]:
        """A reloaded policy with the same window settings is used from the next window;
        one that changes them is not (every instance would have to change panes at the
        same pane): the running policy stays."""
        if window_spec_from_policy(policy) != self.monitor.spec:
            log.error("%s: the reloaded policy changes the window settings; a group keeps "
                      "the running policy (restart every instance to change them)", self.name)
            return []
        return super().apply_policy(policy)

    def adopt_reference(self, profile: Any, *, champion: str | None = None) -> list[WindowResult]:
        """Not while running: every instance's panes are on the running reference's bins."""
        log.error("%s: the reference changed (%s); a group keeps measuring against the "
                  "running one (restart every instance to adopt it)", self.name,
                  getattr(profile, "fingerprint", "?"))
        return []

    def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` says of this member: its partitions and the idle ones."""
        with self._guard:
            out = {"partitions": sorted(self.parts), "idle_partitions": sorted(self.idle.idle)}
            if self.merger is not None:
                out["merge_ignores"] = sorted(self.merger.idle)
        return out
    def joins(self) -> PartitionJoins:
        """The label joins of the partitions this instance owns (the decider's own
        monitor sees no event)."""
        with self._guard:
            return PartitionJoins.of(p.joiner for p in self.parts.values())

    def snapshot(self) -> ModelSnapshot:
        j = self.joins()
        return replace(super().snapshot(), label_backlog=j.backlog,
                       label_counters=j.counters, label_delay=_delay_buckets(j))

    def status(self) -> dict[str, Any]:
        out = super().status()
        out["labels"] = self.joins().counters
        out["group"] = {"partitions": sorted(self.parts), "leader_partition": self.leader,
                        "deciding": self.deciding, "pane_log": self.pane_log.topic,
                        "idle_partitions": sorted(self.idle.idle)}
        if self.merger is not None:  # the decider: every partition the merge ignores now
            out["group"]["merge_ignores"] = sorted(self.merger.idle)
        return out

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.pane_log.close()
