"""A schema registry outage holds the Kafka stream; it does not dead-letter it.

A fake consumer (position, seek, pause, resume) serves Confluent-framed Avro values; a
local HTTP registry (driftwatch.testing.schema_registry) answers 503, is down, or serves
the schemas. While a value's writer schema cannot be fetched, its partition stops there:
nothing at or after it is handed out, dead-lettered or committed. Once the registry
answers (after its backoff), the partition is read from exactly that message, so every
record is handed out once. An id the registry does not hold (404) stays a dead letter.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import fastavro
import pytest

pytest.importorskip("kafka")
from kafka import TopicPartition

from driftwatch.clock import ManualClock
from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.connectors.schema_registry import RegistrySchemas
from driftwatch.schema import FeatureSchema
from driftwatch.testing.schema_registry import LocalRegistry

TOPIC = "p"
SCHEMA = {"type": "record", "name": "R", "fields": [
    {"name": "id", "type": "string"}, {"name": "ts", "type": "long"},
    {"name": "score", "type": "double"}]}
SCHEMA_V2 = {"type": "record", "name": "R", "fields": [
    {"name": "region", "type": "string"}, *SCHEMA["fields"]]}


def framed(i: int, schema_id: int = 1) -> bytes:
    schema = SCHEMA if schema_id != 2 else SCHEMA_V2
    rec: dict[str, Any] = {"id": f"r{i}", "ts": 1704067200 + i, "score": 0.5}
    if schema_id == 2:
        rec["region"] = "eu"
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


class FakeConsumer:
    """Partitions of values; each poll fetches up to ``fetch`` records of each partition
    not paused, from its position (what kafka-python's poll does, minus the network)."""

    def __init__(self, log: dict[TopicPartition, list[bytes]], fetch: int = 100) -> None:
        self.log = log
        self.fetch = fetch
        self.position_of: dict[TopicPartition, int] = {}
        self.paused_set: set[TopicPartition] = set()
        self.committed: dict[TopicPartition, int] = {}
        self.listener: Any = None

    def subscribe(self, topics: list[str], listener: Any) -> None:
        self.listener = listener

    def poll(self, timeout_ms: int, max_records: int) -> dict:
        if not self.position_of:
            for tp in self.log:
                self.position_of[tp] = self.committed.get(tp, 0)
            self.listener.on_partitions_assigned(set(self.log))
        out = {}
        for tp in sorted(self.log):
            if tp in self.paused_set:
                continue
            at = self.position_of[tp]
            vals = self.log[tp][at: at + self.fetch]
            if vals:
                out[tp] = [SimpleNamespace(offset=at + i, value=v, timestamp=0, key=None)
                           for i, v in enumerate(vals)]
                self.position_of[tp] = at + len(vals)
        return out

    def highwater(self, tp: TopicPartition) -> int:
        return len(self.log[tp])

    def position(self, tp: TopicPartition) -> int:
        return self.position_of[tp]

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.position_of[tp] = offset

    def pause(self, *tps: TopicPartition) -> None:
        self.paused_set.update(tps)

    def resume(self, *tps: TopicPartition) -> None:
        self.paused_set.difference_update(tps)

    def paused(self) -> set[TopicPartition]:
        return set(self.paused_set)

    def commit(self, offsets: dict, timeout_ms: int = 0) -> None:
        self.committed.update({tp: o.offset for tp, o in offsets.items()})

    def topics(self) -> set[str]:
        return {TOPIC}

    def metrics(self) -> dict:
        return {"consumer-metrics": {"connection-count": 1}}

    def close(self, **kw: Any) -> None:
        pass


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def registry() -> Iterator[LocalRegistry]:
    r = LocalRegistry({1: SCHEMA, 2: SCHEMA_V2})
    r.start()
    yield r
    r.stop()


def _source(consumer: FakeConsumer, url: str, reg_clock: _Clock, tmp_path: Path,
            align: bool, clock: ManualClock | None = None) -> KafkaSource:
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            "  kind: kafka\n  streams:\n    predictions:\n      topic: p\n"
            f"      avro: {{registry: '{url}'}}\n      fields: {{event_id: id, event_time: "
            "{path: ts, unit: s}, score: score}\n")
    dec = Decoder(parse_connector(text).streams[0], FeatureSchema())
    assert dec.avro is not None
    dec.avro.registry = RegistrySchemas(url, monotonic=reg_clock, timeout_s=2.0)
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=("b:9092",), group_id="g"),
        topics=(KafkaTopic(TOPIC, "predictions"),),
        dead_letter_path=str(tmp_path / "dead.jsonl"), align_event_time=align)
    return KafkaSource(settings, {"predictions": dec},
                       clock=clock or ManualClock(1704067200.0),
                       consumer_factory=lambda **c: consumer)


def _poll(src: KafkaSource) -> tuple[list[str], list[tuple[str, int]], dict[str, int]]:
    p = src.poll(max_records=1000, timeout_s=0.0)
    assert p is not None
    ids = [i for b in p.batches for i in b.ids.tolist()]
    src.commit(p.positions)
    return ids, [(b.reason, b.position) for b in p.bad], dict(p.positions)


def _dead(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "dead.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("align", [True, False])
def test_a_registry_503_holds_the_partition_and_it_resumes_at_the_held_message(
    registry: LocalRegistry, tmp_path: Path, align: bool, caplog: pytest.LogCaptureFixture,
) -> None:
    """Ids 1 (cached while the registry was up) and 2 (not yet): the first value of id 2
    holds the partition, values of id 1 after it wait too (no skipping ahead)."""
    tp = TopicPartition(TOPIC, 0)
    ids = [1, 1, 1, 2, 2, 1, 1, 2]
    consumer = FakeConsumer({tp: [framed(i, s) for i, s in enumerate(ids)]}, fetch=3)
    reg_clock = _Clock()
    clock = ManualClock(1704067200.0)
    src = _source(consumer, registry.url, reg_clock, tmp_path, align, clock)
    got, bad, pos = _poll(src)  # offsets 0-2: schema id 1, fetched while up
    assert (got, bad, pos) == (["r0", "r1", "r2"], [], {"p:0": 3})
    assert src.registry_up is True and src.registry_fault == ""
    registry.failing = 503
    caplog.set_level(logging.WARNING, "driftwatch.connectors.kafka_hold")
    got, bad, pos = _poll(src)  # offsets 3-5: 3 needs id 2, which the registry cannot give
    assert (got, bad, pos) == ([], [], {"p:0": 3})
    assert consumer.committed == {tp: 3}  # never past the held message
    assert tp in consumer.paused() and consumer.position_of[tp] == 3
    assert src.registry_up is False and src.held_offsets == {"p:0": 3}
    assert "HTTP 503" in src.registry_fault and "p:0 at offset 3" in src.registry_fault
    assert "unreachable since 2024-01-01T00:00:00Z" in src.registry_fault
    assert any("p:0 is held at offset 3" in r.getMessage() for r in caplog.records)
    hits = len(registry.hits)
    for _ in range(3):  # the backoff (1 s) has not run out: paused, the registry not asked
        assert _poll(src)[:2] == ([], [])
    assert len(registry.hits) == hits and consumer.committed == {tp: 3}
    reg_clock.now = 1.0  # backoff over, still 503: asked once, held again
    assert _poll(src)[:2] == ([], [])
    assert len(registry.hits) == hits + 1 and tp in consumer.paused()
    registry.failing = None
    reg_clock.now = 3.0  # the second wait (2 s) is over; the registry answers
    seen = []
    for _ in range(4):
        got, bad, pos = _poll(src)
        seen += got
        assert bad == []
    assert seen == ["r3", "r4", "r5", "r6", "r7"]  # from the held message, each once
    assert consumer.committed == {tp: 8}
    assert src.registry_up is True and src.registry_fault == "" and src.held_offsets == {}
    assert _dead(tmp_path) == []  # nothing was dead-lettered
    assert src.stats.bad_total == 0 and src.stats.messages_total == 8
    clock.advance(61)  # the first records, probed against the connector: each once too
    assert [r["id"] for r in src.take_samples()["predictions"]] == [f"r{i}" for i in range(8)]


def test_a_registry_down_holds_only_its_partition_and_a_new_source_resumes_there(
    registry: LocalRegistry, tmp_path: Path,
) -> None:
    """Refused connections (the port closed): partition 0 waits on id 2 at offset 1;
    partition 1 (id 1, cached) goes on. A crash while held: a new source from the committed
    offsets reads the held message, not the one after it."""
    p0, p1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)
    log = {p0: [framed(0), framed(1, 2), framed(2)], p1: [framed(10), framed(11)]}
    consumer = FakeConsumer({p1: log[p1][:1], p0: log[p0][:1]})
    src = _source(consumer, registry.url, _Clock(), tmp_path, align=False)
    assert _poll(src)[0] == ["r0", "r10"]
    registry.stop()
    consumer.log = log
    got, bad, pos = _poll(src)
    assert (got, bad, pos) == (["r11"], [], {"p:0": 1, "p:1": 2})
    assert "cannot fetch schema id 2" in src.registry_fault and "refused" in src.registry_fault
    assert consumer.committed == {p0: 1, p1: 2}
    src.close()
    registry.start()
    again = FakeConsumer(log)
    again.committed = dict(consumer.committed)
    src2 = _source(again, registry.url, _Clock(), tmp_path, align=False)
    got, bad, pos = _poll(src2)
    assert (got, bad, pos) == (["r1", "r2"], [], {"p:0": 3})  # p:1 has nothing new
    assert _dead(tmp_path) == []


def test_an_id_the_registry_does_not_hold_is_dead_lettered_not_held(
    registry: LocalRegistry, tmp_path: Path,
) -> None:
    tp = TopicPartition(TOPIC, 0)
    consumer = FakeConsumer({tp: [framed(0), framed(1, 7), framed(2)]})
    src = _source(consumer, registry.url, _Clock(), tmp_path, align=False)
    got, bad, pos = _poll(src)
    assert (got, bad, pos) == (["r0", "r2"], [("invalid_avro", 1)], {"p:0": 3})
    assert src.held_offsets == {} and src.registry_up is True
    assert [(x["reason"], x["offset"]) for x in _dead(tmp_path)] == [("invalid_avro", 1)]


def test_a_held_partition_stays_held_across_a_rebalance_and_is_dropped_when_it_moves(
    registry: LocalRegistry, tmp_path: Path,
) -> None:
    tp = TopicPartition(TOPIC, 0)
    consumer = FakeConsumer({tp: [framed(0, 2), framed(1)]})
    registry.failing = 503
    src = _source(consumer, registry.url, _Clock(), tmp_path, align=True)
    assert _poll(src)[:2] == ([], [])
    assert src.held_offsets == {"p:0": 0}
    consumer.paused_set.clear()  # a client that forgets the pause on a new assignment
    consumer.listener.on_partitions_revoked({tp})
    consumer.listener.on_partitions_assigned({tp})  # eager: all revoked, then assigned
    assert tp in consumer.paused() and consumer.position_of[tp] == 0
    assert _poll(src)[:2] == ([], []) and src.held_offsets == {"p:0": 0}
    consumer.listener.on_partitions_revoked({tp})  # moved to another member
    consumer.paused_set.clear()
    consumer.log = {}
    _poll(src)
    assert src.held_offsets == {} and src.registry_fault == ""
