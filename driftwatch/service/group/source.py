"""The group's Kafka source: the daemon's consumer, batches kept per partition.

:class:`GroupSource` is a :class:`~driftwatch.connectors.kafka.KafkaSource` whose batches
stay one per topic partition (``Batch.source`` is ``topic:partition``) and whose
rebalance hands the partitions to the group runtime: on assignment it restores their
state from the pane log (and the offsets that state covers, which the source then seeks
to); on revocation it publishes their state and waits until it is durable, before the
group moves them; the next owner seeks to the offsets that state covers.
Partitions are assigned by range, so partition *p* of the predictions and of the outcomes
topic always go to the same instance and joins stay local, provided each event's two
records are on the same partition: the first records read are checked for that
(:class:`~driftwatch.service.group.keys.KeyCheck`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from driftwatch.clock import Clock
from driftwatch.connectors.base import Polled
from driftwatch.connectors.kafka import KafkaSource, RecordDecoder
from driftwatch.connectors.kafka_records import Fetched
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.service.group.keys import KeyCheck

try:
    from kafka import TopicPartition
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.errors import KafkaError
except ImportError:  # pragma: no cover - depends on the install
    RangePartitionAssignor = TopicPartition = None
    KafkaError = Exception

__all__ = ["GroupSource", "partition_of"]

Hook = Callable[[set[Any]], None]


def partition_of(source: str) -> int:
    """The partition of a batch's ``source`` (``topic:partition``).

    >>> partition_of("credit.predictions:7")
    7
    """
    return int(source.rpartition(":")[2])


class GroupSource(KafkaSource):
    """A KafkaSource for a group member (see the module docstring).

    kafka-python runs rebalance callbacks on its network thread, where nothing may wait on
    a client: a revocation only publishes and flushes (the pane log's producer has its own
    thread); newly assigned partitions are restored in the loop thread, at the start of
    the poll that assigned them, and their records of that poll are read again from the
    restored offsets.
    """

    def __init__(self, settings: KafkaSourceSettings, decoders: Mapping[str, RecordDecoder], *,
                 clock: Clock, on_assigned: Hook, on_revoked: Hook) -> None:
        super().__init__(settings, decoders, clock=clock, consumer_config={
            "partition_assignment_strategy": [RangePartitionAssignor]})
        self._aligner = None  # each partition has its own panes: the merge lines them up
        self._group_assigned = on_assigned
        self._group_revoked = on_revoked
        self._fresh: set[Any] = set()
        self.key_check = KeyCheck()
        self.key_check.done = len(set(self._streams.values())) < 2  # nothing to join

    def caught_up(self, partition: int) -> bool:
        """Whether this member has read ``partition`` of every topic up to the end the
        broker last reported (False while that end is not known yet)."""
        consumer = self._consumer
        if consumer is None:
            return False
        try:
            for topic in self._streams:
                tp = TopicPartition(topic, partition)
                end = consumer.highwater(tp)
                if end is None:
                    return False
                at = self._positions.get(tp)
                if (consumer.position(tp) if at is None else at) < end:
                    return False
        except (AssertionError, KafkaError):  # not assigned any more (a rebalance)
            return False
        return True

    def _on_assigned(self, assigned: set[Any]) -> None:
        super()._on_assigned(assigned)
        self._fresh |= set(assigned)

    def _on_revoked(self, revoked: set[Any]) -> None:
        self._fresh -= set(revoked)
        self._group_revoked(revoked)  # their state durable in the pane log first
        super()._on_revoked(revoked)

    def _decode(self, records: Mapping[Any, Fetched]) -> Polled:
        if self._fresh:
            fresh, self._fresh = self._fresh, set()
            self._group_assigned(fresh)  # restores their state, seeks through seek()
            keep = {}
            for tp, recs in records.items():
                want = self._positions.get(tp)
                if tp not in fresh or not len(recs) or want is None or want == recs.first_offset:
                    keep[tp] = recs
                    if tp in fresh and len(recs) and self._consumer is not None:
                        # the restore sought to where these start: on past them, or the
                        # next poll would hand them out again (counted twice)
                        self._consumer.seek(tp, recs.last_offset + 1)
                # else: sought to the restored offset, read again from there
            records = keep
        out = Polled()
        for tp, recs in records.items():
            one = super()._decode({tp: recs})
            if not self.key_check.done:  # raises on an event not co-partitioned
                key_at = {int(o): recs.key(i) for i, o in enumerate(recs.offsets)}
                for b in one.batches:
                    self.key_check.see(b.stream, tp.topic, tp.partition,
                                       [key_at.get(int(x)) for x in b.position], b.ids)
            out.batches += [replace(b, source=f"{tp.topic}:{tp.partition}") for b in one.batches]
            out.bad += one.bad
            out.bytes_read += one.bytes_read
            out.positions.update(one.positions)
        return out
