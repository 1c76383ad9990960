"""Read prediction and outcome streams from Kafka in columnar micro-batches.

:class:`KafkaSource` is the production :class:`~driftwatch.connectors.base.Source`: a
consumer group member (kafka-python) that never auto-commits. The run loop drives it::

    polled = source.poll(max_records=10_000, timeout_s=1.0)   # decode, dead-letter the bad
    ...process polled.batches, merge polled.positions into the checkpoint...
    store.checkpoint(state, positions)                        # durable first
    source.commit(positions)                                  # then the offsets

Positions are ``{"topic:partition": next_offset}``. After a restart the run loop calls
:meth:`KafkaSource.seek` with the checkpoint's positions; they are applied whenever those
partitions are assigned, so offsets committed in Kafka can lag the checkpoint without any
event being counted twice.

Bad messages never stop the source: the stream's decoder returns them as
:class:`~driftwatch.connectors.base.BadRecord` and the source keeps each one in the
dead-letter topic (or file) before the poll returns. They are also returned in
``Polled.bad`` for counting; the run loop must not dead-letter them again.

An Avro value whose writer schema the registry cannot serve now is not bad: its partition
is held at it, paused and retried with the registry's backoff, and read from exactly there
once the registry answers (:mod:`~driftwatch.connectors.kafka_hold`); :attr:`KafkaSource.
registry_fault` says so meanwhile.

Fetched record batches are read in bulk (:mod:`~driftwatch.connectors.kafka_records`):
each partition's records of a poll reach the decoder as spans of the batches' own
buffers, with no Python object per message.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from driftwatch.batch import Batch
from driftwatch.clock import Clock, SystemClock
from driftwatch.connectors.avro import SCHEMA_UNAVAILABLE
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.connectors.jsonblock import Lines
from driftwatch.connectors.kafka_align import PartitionAligner
from driftwatch.connectors.kafka_client import build_client, is_connected, topic_hint
from driftwatch.connectors.kafka_dead_letter import DeadLetterSink, dead_letter_sink
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_records import Fetched, fetched, read_in_bulk
from driftwatch.connectors.kafka_sample import FirstRecords
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.kafka_stats import KafkaSourceStats
from driftwatch.connectors.probe import SAMPLE
from driftwatch.errors import ConnectorError, SourceError

try:
    from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.errors import KafkaError, UnsupportedCodecError
    from kafka.structs import OffsetAndMetadata
except ImportError:  # pragma: no cover - depends on the install
    KafkaConsumer = KafkaProducer = None
    ConsumerRebalanceListener = object
    KafkaError = Exception
    UnsupportedCodecError = type("UnsupportedCodecError", (Exception,), {})

__all__ = ["STOP_WAIT_S", "KafkaSource", "KafkaSourceStats", "RecordDecoder"]

log = logging.getLogger(__name__)

#: On shutdown, the longest one broker call may wait (a commit, a flush, a close): five
#: such calls fit the daemon's 10 s shutdown bound with room to spare.
STOP_WAIT_S = 1.0
# how often the subscribed topics are looked up on the cluster while one of them is missing
TOPIC_CHECK_S = 10.0

#: Seconds after a stream's first message its first records are handed out to be probed,
#: when fewer than ``SAMPLE`` came by then.
SAMPLE_WAIT_S = 60.0

_DLQ_PRODUCER = {"acks": "all", "linger_ms": 5, "bootstrap_timeout_ms": 10_000}


@dataclass
class _Piece:
    """One partition's records of a poll, decoded."""

    key: str  # "topic:partition"
    tp: Any
    batch: Batch | None  # good rows, ``position`` the offset
    bad: list[BadRecord]
    start: int  # first offset fetched
    end: int  # next offset to fetch


class RecordDecoder(Protocol):
    """What a stream's decoder offers (``driftwatch.connectors.decode.Decoder``)."""

    def decode_lines(
        self,
        lines: Lines,
        *,
        source: str,
        positions: np.ndarray,
        partition: int | None = None,
        timestamps: np.ndarray | None = None,
    ) -> tuple[Batch, list[BadRecord]]: ...


def _tp_key(topic: str, partition: int) -> str:
    return f"{topic}:{partition}"


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc, valid-type]
    """Runs inside ``consumer.poll``; only touches in-memory state, never blocks."""

    def __init__(self, source: KafkaSource) -> None:
        self._source = source

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._source._on_assigned(set(assigned))

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._source._on_revoked(set(revoked))


def _unpark(consumer: Any) -> None:
    """Let kafka-python hand out what it kept for a resumed partition.

    kafka-python 3.0 parks the records it had fetched for a partition when the partition
    is paused, and puts them back in line on resume only while nothing else is in line;
    but a partition's records stay "in line" after they are all handed out (an empty,
    drained holder, never cleared). From then on the resumed partition is neither handed
    out nor fetched again: its consumer stalls. An empty holder is nothing in line, so it
    is cleared before each poll; with another client (or a fixed one) there is nothing to
    do.
    """
    fetcher = getattr(consumer, "_fetcher", None)
    if fetcher is None or not getattr(fetcher, "_paused_partition_records", None):
        return
    held = getattr(fetcher, "_next_partition_records", None)
    if held is not None and not held:
        fetcher._next_partition_records = None


class KafkaSource:
    """A consumer-group source of ``predictions`` / ``outcomes`` batches.

    ``decoders`` maps each stream name bound in ``settings.topics`` to its decoder. The
    decoder also gets each message's Kafka timestamp (epoch seconds); it uses them as event
    time when its stream mapping says so.

    ``ready`` is False until the cluster answers and while the consumer has no live
    connection. The cluster being away at start is retried with exponential backoff
    (``retry_backoff_s`` doubling up to ``retry_backoff_max_s``); mid-stream, kafka-python
    reconnects by itself (bounded by ``reconnect_backoff_max_ms``) and resumes from the
    consumer's in-memory positions, so nothing is skipped.

    Rebalances: on assignment, a partition with a known position (from :meth:`seek` or
    already consumed here) is sought to it, so the group's committed offset, which may lag the
    checkpoint, never causes a re-count. On revocation ``commit_requested`` turns True: the
    run loop should checkpoint and :meth:`commit` soon, so the partition's next owner starts
    where this one stopped.
    """

    def __init__(
        self,
        settings: KafkaSourceSettings,
        decoders: Mapping[str, RecordDecoder],
        *,
        clock: Clock | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        consumer_factory: Callable[..., Any] | None = None,
        producer_factory: Callable[..., Any] | None = None,
    ) -> None:
        if KafkaConsumer is None:  # pragma: no cover
            raise SourceError(
                "the Kafka source needs kafka-python: pip install 'driftwatch[kafka]'"
            )
        missing = sorted({t.stream for t in settings.topics} - set(decoders))
        if missing:
            raise ConnectorError(f"no decoder for stream(s) {', '.join(missing)}")
        if settings.dead_letter_topic is None and settings.dead_letter_path is None:
            raise ConnectorError("a Kafka source needs dead_letter_topic or dead_letter_path")
        self.settings = settings
        self.stats = KafkaSourceStats()
        self.commit_requested = False  # set when partitions are revoked: checkpoint + commit
        self._decoders = dict(decoders)
        self._streams = settings.streams
        self._clock = clock or SystemClock()
        self._extra = dict(consumer_config or {})
        self._make_consumer = consumer_factory or (lambda **c: build_client(KafkaConsumer, **c))
        self._make_producer = producer_factory or (lambda **c: build_client(KafkaProducer, **c))
        self._consumer: Any = None
        self._positions: dict[Any, int] = {}  # TopicPartition -> next offset our state covers
        self._assigned: set[Any] = set()
        self._committed: dict[str, int] = {}
        self._backoff = settings.retry_backoff_s
        self._next_attempt = float("-inf")
        self._unavailable_since: float | None = None
        self._closed = False
        self._stopping = False  # shutdown: every broker wait is capped at STOP_WAIT_S
        self._ready = False
        self._bulk = False  # the consumer reads record batches in bulk (kafka_records.py)
        self._missing_topics: tuple[str, ...] = ()  # subscribed, absent from the cluster
        self._topics_checked_at = float("-inf")
        self._topics_known = False  # every subscribed topic was seen on the cluster once
        self._wake = threading.Event()
        # event-time alignment of the partitions (kafka_align.py); a group member has its
        # own (a pane per partition), and turns it off
        self._aligner = (PartitionAligner(stall_s=settings.align_stall_s)
                         if settings.align_event_time else None)
        names = list(dict.fromkeys(t.stream for t in settings.topics))
        self._stream_names = names
        self._stream_ix = {n: i for i, n in enumerate(names)}
        self._topic_rank = {t.name: i for i, t in enumerate(
            sorted(settings.topics, key=lambda t: self._stream_ix[t.stream]))}
        self._fetched: dict[Any, int] = {}  # TopicPartition -> next offset fetched
        self._paused: set[Any] = set()
        # partitions held at a value whose schema the registry cannot serve now
        self._holds = PartitionHolds()
        self._realign: set[str] = set()  # partitions whose held records to drop
        self._stalled: list[str] = []
        self._more_ready = False  # the aligner's last take stopped at max_records
        # the first messages of each stream, to check the connector's paths against (the
        # daemon probes them as replay probes its files: probe.py)
        self._first = FirstRecords(names, n=SAMPLE, wait_s=SAMPLE_WAIT_S)
        self._dead: DeadLetterSink | None = dead_letter_sink(
            settings.dead_letter_topic,
            settings.dead_letter_path,
            lambda: self._make_producer(**settings.connection.client_config(), **_DLQ_PRODUCER),
        )

    # -- Source protocol -----------------------------------------------------------------------
    def poll(self, max_records: int = 10_000, timeout_s: float = 1.0) -> Polled | None:
        """Next micro-batch: at most ``max_records`` messages, waiting up to ``timeout_s``.

        Never returns ``None`` (a topic has no end); an empty :class:`Polled` means nothing
        arrived in time or the cluster is unreachable (see :attr:`ready`).
        """
        if self._closed:
            raise SourceError("poll() on a closed KafkaSource")
        consumer = self._connect(timeout_s)
        if consumer is None:
            return Polled()
        self.stats.polls_total += 1
        if self._holds:
            self._retry_holds(consumer)
        if self._aligner is not None or self._holds.used:  # they pause partitions
            _unpark(consumer)
        try:
            # records held that may leave (the last take was cut at max_records): no wait
            wait_s = 0.0 if self._more_ready else timeout_s
            got = consumer.poll(timeout_ms=int(wait_s * 1000), max_records=max_records)
        except UnsupportedCodecError as exc:  # no retry reads it: say what to install
            raise SourceError(
                f"messages on {', '.join(self._streams)} are compressed with a codec this "
                f"install cannot decompress ({exc}): pip install 'driftwatch[kafka]' brings "
                "lz4, zstandard and python-snappy") from exc
        except KafkaError as exc:  # retriable trouble: the next poll tries again
            self.stats.poll_errors_total += 1
            self._ready = is_connected(consumer)
            log.warning("kafka poll failed: %s", type(exc).__name__)
            return Polled()
        records = {tp: fetched(recs) for tp, recs in got.items() if recs}
        if self._aligner is None:
            polled = self._decode(records)
        else:
            polled = self._aligned(records, consumer, max_records)
        if polled.bad:
            self._keep_dead_letters(polled.bad)
        self._update_lag()
        # records came over a live connection; only an empty poll asks the client's metrics
        # (a dict of every metric it keeps, ~1% of a busy source's time)
        self._ready = bool(got) or is_connected(consumer)
        if self._ready:
            self._check_topics(consumer)
        return polled

    def seek(self, positions: Mapping[str, int]) -> None:
        """Resume from checkpointed ``{"topic:partition": next_offset}``.

        Applied now to partitions already assigned, and on every later assignment of the
        others. Keys of other sources (files, unknown topics) are ignored.
        """
        for key, offset in positions.items():
            topic, sep, part = key.rpartition(":")
            if not sep or topic not in self._streams or not part.isdigit():
                continue
            tp = TopicPartition(topic, int(part))
            self._positions[tp] = int(offset)
            self._fetched.pop(tp, None)
            self._realign.add(key)
            held = tp in self._holds
            self._holds.forget(tp)  # read from there; a registry still down holds it again
            if self._consumer is not None and tp in self._assigned:
                self._consumer.seek(tp, int(offset))
                if held:
                    self._consumer.resume(tp)

    def commit(self, positions: Mapping[str, int]) -> None:
        """Commit exactly these offsets to the group.

        Call it only **after** the checkpoint holding these positions is durable: offsets
        never move ahead of durable state, so a crash between the two re-reads (and the
        checkpoint's positions skip) rather than losing events. Dead letters are made durable
        first; while some are not, the commit is deferred. Partitions no longer assigned are
        left to their new owner. A failed commit is counted and logged, not raised: the
        checkpoint still holds the positions and the next commit covers them.
        """
        consumer = self._consumer
        if consumer is None or not positions:
            return
        dead = self._dead
        if (
            dead is not None
            and dead.pending
            and not dead.flush(self._wait(self.settings.dead_letter_timeout_s))
        ):
            self.stats.commits_deferred_total += 1
            log.warning("offset commit deferred: %d dead letters not durable yet", dead.pending)
            return
        offsets = {}
        for key, offset in positions.items():
            topic, _, part = key.rpartition(":")
            tp = TopicPartition(topic, int(part)) if part.isdigit() else None
            if tp is not None and tp in self._assigned:
                offsets[tp] = OffsetAndMetadata(int(offset), "", -1)
        if not offsets:
            return
        t0 = self._clock.monotonic()
        try:
            wait_s = self._wait(self.settings.commit_timeout_s)
            consumer.commit(offsets, timeout_ms=int(wait_s * 1000))
        except KafkaError as exc:
            self.stats.commit_failures_total += 1
            log.warning("offset commit failed: %s", type(exc).__name__)
            return
        latency = max(0.0, self._clock.monotonic() - t0)
        self.stats.commits_total += 1
        self.stats.commit_latency_seconds_sum += latency
        self.stats.commit_latency_seconds_last = latency
        self._committed.update(
            {_tp_key(tp.topic, tp.partition): o.offset for tp, o in offsets.items()}
        )
        self.commit_requested = False

    def stopping(self) -> None:
        """The daemon is shutting down: from now on a commit, a dead-letter flush and the
        close each wait at most ``STOP_WAIT_S`` for the broker, so a broker that is down
        cannot hold the shutdown. Nothing is lost by it: the checkpoint holds the positions
        (a commit that times out is redone from them on the next start) and dead letters
        the topic has not taken go to the fallback file."""
        self._stopping = True
        if self._dead is not None and hasattr(self._dead, "close_timeout_s"):
            self._dead.close_timeout_s = STOP_WAIT_S

    def _wait(self, seconds: float) -> float:
        return min(seconds, STOP_WAIT_S) if self._stopping else seconds

    def close(self) -> None:
        """Keep pending dead letters, leave the group without committing, release sockets."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        if self._dead is not None:
            self._dead.flush(self._wait(self.settings.dead_letter_timeout_s))
            self._dead.close()
        if self._consumer is not None:
            try:
                self._consumer.close(autocommit=False, timeout_ms=int(self._wait(10.0) * 1000))
            except KafkaError as exc:
                log.warning("closing the kafka consumer failed: %s", type(exc).__name__)
            self._consumer = None

    # -- what the service and metrics read -----------------------------------------------------
    @property
    def reads_in_bulk(self) -> bool:
        """True when the consumer hands out record batches read in bulk
        (:mod:`~driftwatch.connectors.kafka_records`), False where it hands out kafka-python's
        own records (a client other than the one known here) or before it connected."""
        return self._bulk

    @property
    def ready(self) -> bool:
        """Connected to the cluster as of the last poll (a live broker connection), and
        every subscribed topic exists there.

        A plain attribute read, safe from a health-check thread.
        """
        return self._ready and not self._closed and not self._missing_topics

    @property
    def not_ready_reason(self) -> str:
        """Why :attr:`ready` is False, in words ("" when it is True)."""
        if self._closed:
            return "source closed"
        if not self._ready:
            servers = ",".join(self.settings.connection.bootstrap_servers)
            return f"no broker connection to {servers}"
        if self._missing_topics:
            return f"topic(s) not found on the cluster: {', '.join(self._missing_topics)}"
        return ""

    @property
    def registry_fault(self) -> str:
        """Why partitions are held, in words: the schema registry's error, since when, and
        each held partition's offset ("" when none is held). Read it in the poll's thread
        (the daemon's runtime keeps a copy for its health checks)."""
        return self._holds.fault

    @property
    def registry_up(self) -> bool | None:
        """False while a partition is held for the schema registry, True once a stream's
        registry answered, None when no registry was asked (or none is read)."""
        if self._holds:
            return False
        answered = [getattr(self._registry_of(s), "answered", None) for s in self._stream_names]
        return True if any(answered) else None

    @property
    def held_offsets(self) -> dict[str, int]:
        """``{"topic:partition": offset}`` of the partitions held for the registry."""
        return self._holds.positions()

    @property
    def positions(self) -> dict[str, int]:
        """Next offset per assigned partition, as far as delivered batches go."""
        return {_tp_key(tp.topic, tp.partition): o for tp, o in self._positions.items()
                if tp in self._assigned}  # fmt: skip

    @property
    def committed(self) -> dict[str, int]:
        """Offsets this source committed successfully."""
        return dict(self._committed)

    @property
    def assignment(self) -> list[str]:
        return sorted(_tp_key(tp.topic, tp.partition) for tp in self._assigned)

    # -- internals -----------------------------------------------------------------------------
    def _consumer_config(self, timeout_s: float) -> dict[str, Any]:
        s = self.settings
        cfg: dict[str, Any] = s.connection.client_config()
        cfg.update(
            group_id=s.connection.group_id,
            enable_auto_commit=False,
            allow_auto_create_topics=False,  # a misspelt topic must not spring into being
            auto_offset_reset=s.auto_offset_reset,
            isolation_level=s.isolation_level,
            fetch_max_wait_ms=s.fetch_max_wait_ms,
            max_partition_fetch_bytes=s.max_partition_fetch_bytes,
            session_timeout_ms=s.session_timeout_ms,
            reconnect_backoff_max_ms=s.reconnect_backoff_max_ms,
            bootstrap_timeout_ms=max(1000, int(timeout_s * 1000)),
        )
        cfg.update(self._extra)
        return cfg

    def _connect(self, timeout_s: float) -> Any:
        if self._consumer is not None:
            return self._consumer
        wait = self._next_attempt - self._clock.monotonic()
        if wait > 0:
            self._wake.wait(min(wait, timeout_s))
            return None
        try:
            consumer = self._make_consumer(**self._consumer_config(timeout_s))
        except Exception as exc:  # kafka errors, DNS, TLS files: all mean "not yet"
            now = self._clock.monotonic()
            self.stats.connect_failures_total += 1
            if self._unavailable_since is None:
                self._unavailable_since = now
            limit = self.settings.give_up_after_s
            if limit is not None and now - self._unavailable_since >= limit:
                raise SourceError(
                    f"Kafka unreachable for {now - self._unavailable_since:.0f}s "
                    f"({type(exc).__name__}); giving up"
                ) from exc
            log.warning("Kafka not reachable at %s (%s); retrying in %.1fs",
                        ",".join(self.settings.connection.bootstrap_servers),
                        type(exc).__name__, self._backoff)  # fmt: skip
            self._next_attempt = now + self._backoff
            self._backoff = min(self._backoff * 2, self.settings.retry_backoff_max_s)
            return None
        self._bulk = read_in_bulk(consumer)
        consumer.subscribe(topics=list(self._streams), listener=_Rebalance(self))
        self._consumer = consumer
        self._backoff = self.settings.retry_backoff_s
        self._unavailable_since = None
        return consumer

    def _check_topics(self, consumer: Any) -> None:
        """Look the subscribed topics up on the cluster: at the first connection, then every
        ``TOPIC_CHECK_S`` while one is missing. A misspelt topic is never created (no
        auto-create) and kafka-python just assigns nothing, so without this a wrong name
        reads as a healthy, idle consumer. The consumer stays subscribed: a topic created
        later is picked up by its own metadata refresh."""
        now = self._clock.monotonic()
        if self._topics_known or now - self._topics_checked_at < TOPIC_CHECK_S:
            return
        self._topics_checked_at = now
        try:
            on_cluster = set(consumer.topics())
        except KafkaError as exc:
            log.warning("listing Kafka topics failed: %s", type(exc).__name__)
            return
        missing = tuple(sorted(t for t in self._streams if t not in on_cluster))
        if missing and missing != self._missing_topics:
            log.error("Kafka topic(s) not found on the cluster: %s; nothing is read from them "
                      "until they exist (the connector's `topic:`)",
                      ", ".join(topic_hint(t, on_cluster) for t in missing))
        elif not missing and self._missing_topics:
            log.info("Kafka topic(s) now exist: %s", ", ".join(self._missing_topics))
        self._missing_topics = missing
        self._topics_known = not missing

    def _on_assigned(self, assigned: set[Any]) -> None:
        self.stats.rebalances_total += 1
        self._assigned |= assigned
        held = set(self._holds.paused())
        for tp in assigned:  # read again from the position: what was held goes
            self._realign.add(_tp_key(tp.topic, tp.partition))
            self._fetched.pop(tp, None)
            if tp in self._positions:  # checkpoint (or our own state) wins over the group
                self._consumer.seek(tp, self._positions[tp])
            if tp in held:  # back here (a rebalance revokes all first): still held
                self._consumer.pause(tp)

    def _on_revoked(self, revoked: set[Any]) -> None:
        self._assigned -= revoked
        for tp in revoked:
            self._realign.add(_tp_key(tp.topic, tp.partition))
            self._fetched.pop(tp, None)
            self.stats.lag.pop(_tp_key(tp.topic, tp.partition), None)
        if revoked and not self._closed:
            self.commit_requested = True

    def _decode(self, records: Mapping[Any, Fetched]) -> Polled:
        """Decode a poll's records: one decoder call per topic, whatever its partitions in
        the poll (each call has a fixed cost; a topic of 12 partitions paid it 12 times)."""
        polled = Polled()
        per_stream: dict[str, list[Batch]] = defaultdict(list)
        for stream, piece in self._decoded(records, polled):
            if piece.batch is not None:
                per_stream[stream].append(piece.batch)
            polled.bad += piece.bad
            polled.positions[piece.key] = self._positions[piece.tp] = piece.end
        polled.batches = [Batch.concat(bs) for bs in per_stream.values()]
        return polled

    def _decoded(self, records: Mapping[Any, Fetched],
                 polled: Polled) -> list[tuple[str, _Piece]]:
        """Each partition's records of a poll decoded (one decoder call per topic): its
        good rows (``position`` is the offset), its bad records and the offsets fetched,
        in the poll's order. Counts bytes and messages into ``polled`` and the stats."""
        per_topic: dict[str, list[tuple[Any, Fetched]]] = defaultdict(list)
        for tp, recs in records.items():
            if len(recs):
                per_topic[tp.topic].append((tp, recs))
        out: list[tuple[str, _Piece]] = []
        for topic, parts in per_topic.items():
            stream = self._streams[topic]
            every = Fetched.concat([recs for _, recs in parts])
            n = len(every)
            offsets = every.offsets
            ts = every.timestamps.astype(np.float64)
            ts = np.where(ts >= 0, ts / 1000.0, np.nan)
            sizes = [len(recs) for _, recs in parts]
            if len(parts) == 1:
                partition: int | np.ndarray = parts[0][0].partition
            else:
                partition = np.repeat(np.array([tp.partition for tp, _ in parts], np.int64),
                                      sizes)
            # each record's index as its position: offsets repeat across partitions
            batch, bad = self._decoders[stream].decode_lines(
                every.lines(), source=topic, positions=np.arange(n, dtype=np.int64),
                partition=partition, timestamps=ts)
            bounds = np.cumsum([0, *sizes])
            rows = np.searchsorted(batch.position, bounds) if len(batch) else np.zeros(
                len(bounds), np.int64)
            bad_at = np.searchsorted(bounds, [b.position for b in bad], side="right") - 1
            used = np.ones(n, bool)  # records read or dead-lettered (not held)
            for k, (tp, recs) in enumerate(parts):
                mine = batch.take(slice(int(rows[k]), int(rows[k + 1])))
                got = None
                if len(mine):
                    got = replace(mine, position=offsets[mine.position])
                letters = [replace(b, position=int(offsets[b.position]),
                                   stream=b.stream or stream)
                           for b, at in zip(bad, bad_at, strict=True) if at == k]
                end = self._held_at(tp, stream, letters, recs.last_offset + 1)
                if end <= recs.last_offset:  # the rest is read again once the registry answers
                    used[int(bounds[k]):int(bounds[k + 1])] = offsets[
                        int(bounds[k]):int(bounds[k + 1])] < end
                    if got is not None:
                        got = got.take(np.flatnonzero(got.position < end))
                    letters = [b for b in letters if b.position < end]
                out.append((stream, _Piece(_tp_key(tp.topic, tp.partition), tp, got, letters,
                                           recs.first_offset, end)))
                for b in letters:
                    self.stats.bad_total += 1
                    self.stats.bad_by_reason[b.reason] = (
                        self.stats.bad_by_reason.get(b.reason, 0) + 1)
            if self._first.wants(stream):  # not the held records: they come again
                avro = getattr(self._decoders[stream], "avro", None)
                self._first.keep(stream, every.values() if used.all() else
                                 (every.value(i) for i in np.flatnonzero(used).tolist()),
                                 now=self._clock.monotonic(),
                                 read=None if avro is None else avro.read)
            size = every.value_bytes() if used.all() else int(
                (every.ends - every.starts)[used].sum())
            polled.bytes_read += size
            self.stats.messages_total += int(used.sum())
            self.stats.bytes_total += size
        return out

    # -- partitions held while the schema registry is down (kafka_hold.py) --------------------
    def _held_at(self, tp: Any, stream: str, letters: list[BadRecord], end: int) -> int:
        """The offset to read ``tp`` from next: ``end`` (everything fetched), or the first
        value whose writer schema the registry could not serve, where ``tp`` is held."""
        waiting = [b for b in letters if b.reason == SCHEMA_UNAVAILABLE]
        if not waiting:
            if tp in self._holds:
                self._holds.release(tp, now=self._clock.now())
            return end
        now = self._clock.now()
        first = min(waiting, key=lambda b: b.position)
        down = getattr(self._registry_of(stream), "outage", None)
        self._holds.hold(tp, key=_tp_key(tp.topic, tp.partition), offset=first.position,
                         stream=stream, reason=first.detail, now=now,
                         attempt=0 if down is None else down.failures)
        consumer = self._consumer
        if consumer is not None:
            consumer.seek(tp, first.position)
            consumer.pause(tp)
        return first.position

    def _registry_of(self, stream: str) -> Any:
        """The schema registry client of ``stream``'s decoder (None: it reads no registry)."""
        avro = getattr(self._decoders.get(stream), "avro", None)
        return getattr(avro, "registry", None)

    def _retry_holds(self, consumer: Any) -> None:
        """Resume the held partitions whose registry's backoff has run out: their held
        message is fetched again and read (or held again) by this poll or the next."""
        self._holds.prune(self._assigned)

        def due(stream: str) -> bool:
            registry = self._registry_of(stream)
            return registry is None or registry.due()

        for tp in self._holds.resumable(due):
            consumer.resume(tp)

    def _aligned(self, records: Mapping[Any, Fetched], consumer: Any,
                 max_records: int) -> Polled:
        """A poll's records merged in event time with what earlier polls left held
        (:mod:`~driftwatch.connectors.kafka_align`): the records that may leave, in that
        order, one batch per stream, and positions that cover only those."""
        aligner = self._aligner
        assert aligner is not None
        if self._realign:  # sought or reassigned since: read again from their positions
            aligner.forget(self._realign)
            self._realign = set()
        now = self._clock.monotonic()
        polled = Polled()
        for stream, piece in self._decoded(records, polled):
            tp = piece.tp
            aligner.add(piece.key, rank=self._rank(tp), stream=self._stream_ix[stream],
                        batch=piece.batch, bad=piece.bad, start=piece.start, end=piece.end,
                        now=now)
            self._fetched[tp] = piece.end
        # what the consumer has paused: kafka-python keeps a pause across a rebalance
        # that leaves the partition here, where this source dropped what it held
        self._paused = set(consumer.paused()) & self._assigned
        behind = {}
        for tp in self._assigned:
            behind[_tp_key(tp.topic, tp.partition)] = self._is_behind(consumer, tp)
        aligner.behind(behind, now=now, paused=self._paused_keys())
        stalled = aligner.stalled()
        if stalled != self._stalled:
            new = sorted(set(stalled) - set(self._stalled))
            if new:
                log.warning("event-time alignment: %s behind but fetched nothing for %.0fs; "
                            "the other partitions no longer wait for it (its records may "
                            "count as late)", ", ".join(new), aligner.stall_s)
            self._stalled = stalled
        taken = aligner.take(max_records)
        self._more_ready = sum(len(b) for _, b in taken.batches) + len(taken.bad) >= max_records
        names = self._stream_names
        lut = np.full(len(names), -1, dtype=np.intp)
        for k, (ix, _) in enumerate(taken.batches):
            lut[ix] = k
        polled.batches = [b for _, b in taken.batches]
        polled.order = lut[taken.order[taken.order >= 0]] if taken.batches else None
        polled.bad = taken.bad
        by_key = {_tp_key(tp.topic, tp.partition): tp for tp in self._assigned}
        for key, offset in aligner.positions().items():
            tp = by_key.get(key)
            if tp is not None:
                polled.positions[key] = self._positions[tp] = offset
        self._pause_full(consumer, max_records)
        self.stats.held = aligner.n_held
        return polled

    def _is_behind(self, consumer: Any, tp: Any) -> bool:
        """The broker holds records of ``tp`` this consumer has not fetched (True while
        that is not known: no fetch answered yet)."""
        try:
            end = consumer.highwater(tp)
            if end is None:
                return True
            at = self._fetched.get(tp)
            return (consumer.position(tp) if at is None else at) < end
        except (AssertionError, KafkaError, ValueError):  # not assigned (a rebalance)
            return False

    def _pause_full(self, consumer: Any, max_records: int) -> None:
        """Stop fetching partitions that hold a poll's worth (they are ahead in event time;
        the ones behind get the fetches), and fetch again once they hold less."""
        assert self._aligner is not None
        full, free = [], []
        for tp in self._assigned:
            held = self._aligner.held(_tp_key(tp.topic, tp.partition))
            if held >= max_records and tp not in self._paused:
                full.append(tp)
            elif held < max_records and tp in self._paused:
                free.append(tp)
        if full:
            consumer.pause(*full)
            self._paused.update(full)
        held = set(self._holds.paused())  # paused until the registry answers
        free = [tp for tp in free if tp not in held]
        if free:
            consumer.resume(*free)
            self._paused.difference_update(free)

    def _paused_keys(self) -> set[str]:
        return {_tp_key(tp.topic, tp.partition) for tp in self._paused}

    def _rank(self, tp: Any) -> int:
        """Ties in event time: streams in the connector's order, then topics, then
        partitions (as a replay orders streams, then files)."""
        return self._topic_rank[tp.topic] * (1 << 24) + int(tp.partition)

    def take_samples(self) -> dict[str, list[dict[str, Any]]]:
        """Each stream's first messages (parsed JSON objects), once: when
        :data:`~driftwatch.connectors.probe.SAMPLE` have come, or ``SAMPLE_WAIT_S`` after the
        first one; an empty dict until then and afterwards."""
        if self._first.done:
            return {}
        return self._first.take(now=self._clock.monotonic())

    def dead_letter(self, records: Sequence[BadRecord]) -> None:
        """Dead-letter records the run loop could not process (after decoding); like the
        records that did not decode, they must be durable before the next commit."""
        self._keep_dead_letters(list(records))

    def _keep_dead_letters(self, bad: list[BadRecord]) -> None:
        if self._dead is None:
            return
        self._dead.publish(bad)
        self.stats.dead_letters_total += len(bad)
        self._dead.flush(self._wait(self.settings.dead_letter_timeout_s))
        self.stats.dead_letters_pending = self._dead.pending

    def _update_lag(self) -> None:
        consumer = self._consumer
        for tp in self._assigned:
            pos = self._positions.get(tp)
            try:
                hw = consumer.highwater(tp)
            except KafkaError:
                continue
            if hw is not None and pos is not None:
                self.stats.lag[_tp_key(tp.topic, tp.partition)] = max(0, int(hw) - pos)
