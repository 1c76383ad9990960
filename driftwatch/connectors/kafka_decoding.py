"""A poll's Kafka records decoded: what reads, what is dead-lettered, what waits.

Each topic's records of a poll, whatever its partitions, go to its stream's decoder in
one call (each call has a fixed cost; a topic of 12 partitions paid it 12 times), as
spans of the fetched batches' own buffers (:mod:`~driftwatch.connectors.kafka_records`).
The result is cut back into partitions: each one's good rows, its bad records and the
offset to read next.

An Avro value whose writer schema the registry cannot serve now is not bad: its partition
is held at it (:mod:`~driftwatch.connectors.kafka_hold`), sought back and paused, and the
records from it on are neither handed out nor counted; they are read again once the
registry's backoff has run out and it answers.

:class:`PollDecoding` is a part of :class:`~driftwatch.connectors.kafka.KafkaSource`
(a mixin): the attributes it declares are the source's, set up in its ``__init__``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from driftwatch.batch import Batch
from driftwatch.clock import Clock
from driftwatch.connectors.avro import SCHEMA_UNAVAILABLE
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.connectors.jsonblock import Lines
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_offsets import tp_key
from driftwatch.connectors.kafka_records import Fetched
from driftwatch.connectors.kafka_sample import FirstRecords
from driftwatch.connectors.kafka_stats import KafkaSourceStats

__all__ = ["Piece", "PollDecoding", "RecordDecoder"]


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


@dataclass
class Piece:
    """One partition's records of a poll, decoded."""

    key: str  # "topic:partition"
    tp: Any
    batch: Batch | None  # good rows, ``position`` the offset
    bad: list[BadRecord]
    start: int  # first offset fetched
    end: int  # next offset to fetch


class PollDecoding:
    """Decoding a poll's records, and holding partitions for the registry (module
    docstring)."""

    stats: KafkaSourceStats
    _clock: Clock
    _consumer: Any
    _streams: Mapping[str, str]  # topic -> stream
    _decoders: dict[str, RecordDecoder]
    _assigned: set[Any]
    _first: FirstRecords
    _holds: PartitionHolds

    def _decoded(self, records: Mapping[Any, Fetched],
                 polled: Polled) -> list[tuple[str, Piece]]:
        """Each partition's records of a poll decoded (one decoder call per topic): its
        good rows (``position`` is the offset), its bad records and the offsets fetched,
        in the poll's order. Counts bytes and messages into ``polled`` and the stats."""
        per_topic: dict[str, list[tuple[Any, Fetched]]] = defaultdict(list)
        for tp, recs in records.items():
            if len(recs):
                per_topic[tp.topic].append((tp, recs))
        out: list[tuple[str, Piece]] = []
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
                out.append((stream, Piece(tp_key(tp.topic, tp.partition), tp, got, letters,
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
        self._holds.hold(tp, key=tp_key(tp.topic, tp.partition), offset=first.position,
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
