"""The group source's first poll after an assignment, without a broker.

A rebalance that hands an instance partitions restores their state and seeks the
consumer to the offsets that state covers. Records the same poll already brought for
those partitions are kept when they start exactly there; the consumer must then go on
after them, or the next poll hands them out again and their events are counted twice
(seen as a pane over-counted after a takeover, with the rest counted late).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kafka import TopicPartition

from driftwatch.connectors.base import Polled
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_records import fetched
from driftwatch.service.group.source import GroupSource

TP = TopicPartition("predictions", 3)


class _Consumer:
    def __init__(self) -> None:
        self.position: dict[Any, int] = {}

    def seek(self, tp: Any, offset: int) -> None:
        self.position[tp] = offset


def _source(restored: int, monkeypatch: pytest.MonkeyPatch) -> tuple[GroupSource, list]:
    """A group source whose runtime restores ``TP`` at offset ``restored``; returns it and
    the list of record offsets it decodes."""
    src = object.__new__(GroupSource)  # no broker: only the rebalance bookkeeping runs
    src._consumer, src._positions, src._fresh = _Consumer(), {}, {TP}
    src.key_check = SimpleNamespace(done=True)
    decoded: list[list[int]] = []

    def restore(tps: set[Any]) -> None:  # what GroupRuntime._assign does through seek()
        src._positions[TP] = restored
        src._consumer.seek(TP, restored)

    def decode(self: KafkaSource, records: dict) -> Polled:  # type: ignore[type-arg]
        decoded.append([int(o) for recs in records.values() for o in recs.offsets])
        return Polled()

    src._group_assigned = restore
    monkeypatch.setattr(KafkaSource, "_decode", decode)
    return src, decoded


def _records(first: int, n: int) -> dict:  # type: ignore[type-arg]
    return {TP: fetched([SimpleNamespace(offset=first + i, key=b"k", value=b"{}", timestamp=0)
                         for i in range(n)])}


def test_records_that_start_at_the_restored_offset_are_read_once(monkeypatch) -> None:
    src, decoded = _source(10, monkeypatch)
    src._decode(_records(10, 5))
    assert decoded == [[10, 11, 12, 13, 14]]
    assert src._consumer.position[TP] == 15  # not back at 10: no second copy


def test_records_past_the_restored_offset_are_read_again_from_it(monkeypatch) -> None:
    src, decoded = _source(10, monkeypatch)
    src._decode(_records(12, 5))
    assert decoded == []
    assert src._consumer.position[TP] == 10
