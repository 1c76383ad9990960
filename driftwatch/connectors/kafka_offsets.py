"""A Kafka source's offsets: the checkpoint's positions sought, and committed after it.

Positions are ``{"topic:partition": next_offset}``. After a restart the run loop calls
:meth:`SourceOffsets.seek` with the checkpoint's positions; they are applied whenever
those partitions are assigned, so offsets committed in Kafka can lag the checkpoint
without any event being counted twice. :meth:`SourceOffsets.commit` commits positions
only after the checkpoint that holds them is durable, and only once the dead letters
before them are durable too.

:class:`SourceOffsets` is a part of :class:`~driftwatch.connectors.kafka.KafkaSource`
(a mixin): the attributes it declares are the source's, set up in its ``__init__``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from driftwatch.clock import Clock
from driftwatch.connectors.kafka_dead_letter import DeadLetterSink
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.kafka_slices import wait_in_slices
from driftwatch.connectors.kafka_stats import KafkaSourceStats

try:
    from kafka import TopicPartition
    from kafka.errors import KafkaError, KafkaTimeoutError
    from kafka.structs import OffsetAndMetadata
except ImportError:  # pragma: no cover - depends on the install
    KafkaError = KafkaTimeoutError = Exception

__all__ = ["SourceOffsets", "tp_key"]

# the source's messages, under the source's logger name (as before the split)
log = logging.getLogger("driftwatch.connectors.kafka")


def tp_key(topic: str, partition: int) -> str:
    """A partition's key in positions and checkpoints.

    >>> tp_key("credit.predictions", 3)
    'credit.predictions:3'
    """
    return f"{topic}:{partition}"


class SourceOffsets:
    """Seek, commit and the positions a Kafka source reports (module docstring)."""

    settings: KafkaSourceSettings
    stats: KafkaSourceStats
    commit_requested: bool
    _clock: Clock
    _consumer: Any
    _streams: Mapping[str, str]  # topic -> stream
    _positions: dict[Any, int]  # TopicPartition -> next offset our state covers
    _fetched: dict[Any, int]  # TopicPartition -> next offset fetched
    _assigned: set[Any]
    _committed: dict[str, int]
    _realign: set[str]
    _holds: PartitionHolds
    _dead: DeadLetterSink | None
    _wait: Callable[[float], float]  # a broker wait in seconds, capped on shutdown
    _stopping: bool  # shutdown has begun (KafkaSource.stopping)

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
            self._commit_in_slices(consumer, offsets)
        except KafkaError as exc:
            self.stats.commit_failures_total += 1
            log.warning("offset commit failed: %s", type(exc).__name__)
            return
        latency = max(0.0, self._clock.monotonic() - t0)
        self.stats.commits_total += 1
        self.stats.commit_latency_seconds_sum += latency
        self.stats.commit_latency_seconds_last = latency
        self._committed.update(
            {tp_key(tp.topic, tp.partition): o.offset for tp, o in offsets.items()}
        )
        self.commit_requested = False

    def _commit_in_slices(self, consumer: Any, offsets: dict[Any, Any]) -> None:
        """Commit ``offsets``, waiting up to ``commit_timeout_s`` in all, in slices that a
        shutdown beginning meanwhile cuts short (:mod:`~driftwatch.connectors.kafka_slices`)."""
        wait_in_slices(lambda s: consumer.commit(offsets, timeout_ms=max(1, int(s * 1000))),
                       self._wait(self.settings.commit_timeout_s), lambda: self._stopping,
                       KafkaTimeoutError)

    @property
    def positions(self) -> dict[str, int]:
        """Next offset per assigned partition, as far as delivered batches go."""
        return {tp_key(tp.topic, tp.partition): o for tp, o in self._positions.items()
                if tp in self._assigned}  # fmt: skip

    @property
    def committed(self) -> dict[str, int]:
        """Offsets this source committed successfully."""
        return dict(self._committed)

    def _update_lag(self) -> None:
        """Each assigned partition's lag: the broker's end less the position delivered."""
        consumer = self._consumer
        for tp in self._assigned:
            pos = self._positions.get(tp)
            try:
                hw = consumer.highwater(tp)
            except KafkaError:
                continue
            if hw is not None and pos is not None:
                self.stats.lag[tp_key(tp.topic, tp.partition)] = max(0, int(hw) - pos)
