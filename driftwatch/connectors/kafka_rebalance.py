"""A Kafka source's partitions as the group assigns and revokes them.

On assignment, a partition with a known position (from ``seek`` or already consumed here)
is sought to it, so the group's committed offset, which may lag the checkpoint, never
causes a re-count; a partition still held for the schema registry is paused again. On
revocation ``commit_requested`` turns True: the run loop should checkpoint and commit
soon, so the partition's next owner starts where this one stopped.

:class:`PartitionAssignment` is a part of
:class:`~driftwatch.connectors.kafka.KafkaSource` (a mixin): the attributes it declares
are the source's, set up in its ``__init__``. A subclass (the group's source) extends
``_on_assigned`` / ``_on_revoked``.
"""

from __future__ import annotations

from typing import Any

from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_offsets import tp_key
from driftwatch.connectors.kafka_stats import KafkaSourceStats

try:
    from kafka import ConsumerRebalanceListener
except ImportError:  # pragma: no cover - depends on the install
    ConsumerRebalanceListener = object

__all__ = ["PartitionAssignment", "RebalanceListener"]


class RebalanceListener(ConsumerRebalanceListener):  # type: ignore[misc, valid-type]
    """Runs inside ``consumer.poll``; only touches in-memory state, never blocks."""

    def __init__(self, source: PartitionAssignment) -> None:
        self._source = source

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._source._on_assigned(set(assigned))

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._source._on_revoked(set(revoked))


class PartitionAssignment:
    """What a rebalance changes in a Kafka source (module docstring)."""

    stats: KafkaSourceStats
    commit_requested: bool
    _consumer: Any
    _closed: bool
    _positions: dict[Any, int]  # TopicPartition -> next offset our state covers
    _fetched: dict[Any, int]  # TopicPartition -> next offset fetched
    _assigned: set[Any]
    _realign: set[str]  # partitions whose records held for alignment to drop
    _holds: PartitionHolds

    def _on_assigned(self, assigned: set[Any]) -> None:
        self.stats.rebalances_total += 1
        self._assigned |= assigned
        held = set(self._holds.paused())
        for tp in assigned:  # read again from the position: what was held goes
            self._realign.add(tp_key(tp.topic, tp.partition))
            self._fetched.pop(tp, None)
            if tp in self._positions:  # checkpoint (or our own state) wins over the group
                self._consumer.seek(tp, self._positions[tp])
            if tp in held:  # back here (a rebalance revokes all first): still held
                self._consumer.pause(tp)

    def _on_revoked(self, revoked: set[Any]) -> None:
        self._assigned -= revoked
        for tp in revoked:
            self._realign.add(tp_key(tp.topic, tp.partition))
            self._fetched.pop(tp, None)
            self.stats.lag.pop(tp_key(tp.topic, tp.partition), None)
        if revoked and not self._closed:
            self.commit_requested = True

    @property
    def assignment(self) -> list[str]:
        """The partitions assigned here, as ``topic:partition``, sorted."""
        return sorted(tp_key(tp.topic, tp.partition) for tp in self._assigned)
