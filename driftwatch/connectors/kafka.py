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

This module holds the source and its poll loop; its parts live beside it, one idea each:
getting the consumer (:mod:`~driftwatch.connectors.kafka_connect`), decoding a poll and
holding partitions for the registry (:mod:`~driftwatch.connectors.kafka_decoding`),
event-time alignment and pausing (:mod:`~driftwatch.connectors.kafka_aligned`), seek and
commit (:mod:`~driftwatch.connectors.kafka_offsets`) and rebalances
(:mod:`~driftwatch.connectors.kafka_rebalance`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from driftwatch.batch import Batch
from driftwatch.clock import Clock, SystemClock
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.connectors.kafka_align import PartitionAligner
from driftwatch.connectors.kafka_aligned import AlignedPolls, unpark
from driftwatch.connectors.kafka_client import build_client, is_connected
from driftwatch.connectors.kafka_connect import TOPIC_CHECK_S, ConsumerStarter, TopicCheck
from driftwatch.connectors.kafka_dead_letter import DeadLetterSink, dead_letter_sink
from driftwatch.connectors.kafka_decoding import PollDecoding, RecordDecoder
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_offsets import SourceOffsets
from driftwatch.connectors.kafka_rebalance import PartitionAssignment, RebalanceListener
from driftwatch.connectors.kafka_records import Fetched, fetched, read_in_bulk
from driftwatch.connectors.kafka_sample import FirstRecords
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.kafka_slices import STOP_WAIT_S
from driftwatch.connectors.kafka_stats import KafkaSourceStats
from driftwatch.connectors.probe import SAMPLE
from driftwatch.errors import ConnectorError, SourceError

try:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import KafkaError, UnsupportedCodecError
except ImportError:  # pragma: no cover - depends on the install
    KafkaConsumer = KafkaProducer = None
    KafkaError = Exception
    UnsupportedCodecError = type("UnsupportedCodecError", (Exception,), {})

__all__ = ["STOP_WAIT_S", "TOPIC_CHECK_S", "KafkaSource", "KafkaSourceStats", "RecordDecoder"]

log = logging.getLogger(__name__)

#: Seconds after a stream's first message its first records are handed out to be probed,
#: when fewer than ``SAMPLE`` came by then.
SAMPLE_WAIT_S = 60.0

_DLQ_PRODUCER = {"acks": "all", "linger_ms": 5, "bootstrap_timeout_ms": 10_000}


class KafkaSource(AlignedPolls, PollDecoding, SourceOffsets, PartitionAssignment):
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
        make_consumer = consumer_factory or (lambda **c: build_client(KafkaConsumer, **c))
        self._make_producer = producer_factory or (lambda **c: build_client(KafkaProducer, **c))
        # the cluster being away at start: tried again with backoff (kafka_connect.py)
        self._starter = ConsumerStarter(settings, consumer_config or {}, make_consumer,
                                        clock=self._clock, stats=self.stats)
        self._topic_check = TopicCheck(self._streams, clock=self._clock)
        self._consumer: Any = None
        self._positions: dict[Any, int] = {}  # TopicPartition -> next offset our state covers
        self._assigned: set[Any] = set()
        self._committed: dict[str, int] = {}
        self._closed = False
        self._stopping = False  # shutdown: every broker wait is capped at STOP_WAIT_S
        self._ready = False
        self._bulk = False  # the consumer reads record batches in bulk (kafka_records.py)
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
            unpark(consumer)
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
            self._topic_check.check(consumer)
        return polled

    def stopping(self) -> None:
        """The daemon is shutting down: from now on a commit, a dead-letter flush and the
        close each wait at most ``STOP_WAIT_S`` for the broker, so a broker that is down
        cannot hold the shutdown. Nothing is lost by it: the checkpoint holds the positions
        (a commit that times out is redone from them on the next start) and dead letters
        the topic has not taken go to the fallback file."""
        self._stopping = True
        if self._dead is not None and hasattr(self._dead, "close_timeout_s"):
            self._dead.close_timeout_s = STOP_WAIT_S
            self._dead.stopping = True  # a flush under way ends at its slice's end

    def _wait(self, seconds: float) -> float:
        return min(seconds, STOP_WAIT_S) if self._stopping else seconds

    def close(self) -> None:
        """Keep pending dead letters, leave the group without committing, release sockets."""
        if self._closed:
            return
        self._closed = True
        self._starter.wake()
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
        return self._ready and not self._closed and not self._topic_check.missing

    @property
    def not_ready_reason(self) -> str:
        """Why :attr:`ready` is False, in words ("" when it is True)."""
        if self._closed:
            return "source closed"
        if not self._ready:
            return f"no broker connection to {self.settings.connection.address()}"
        if self._topic_check.missing:
            return f"topic(s) not found on the cluster: {', '.join(self._topic_check.missing)}"
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

    # -- internals -----------------------------------------------------------------------------
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

    def _connect(self, timeout_s: float) -> Any:
        """The consumer, subscribed, or None while the cluster cannot be reached."""
        if self._consumer is not None:
            return self._consumer
        consumer = self._starter.start(timeout_s)
        if consumer is None:
            return None
        self._bulk = read_in_bulk(consumer)
        consumer.subscribe(topics=list(self._streams), listener=RebalanceListener(self))
        self._consumer = consumer
        self._starter.started()
        return consumer

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
