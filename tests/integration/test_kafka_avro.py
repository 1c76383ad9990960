"""Avro values on a real topic: Confluent-framed bodies read by the source with
``avro: {schema: ...}``, a corrupt one dead-lettered, and ``driftwatch record`` keeping the
bytes for a replay; with ``avro: {registry: ...}``, a registry down for a while holds the
stream and every record is counted once when it answers again."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import fastavro
import pytest
from kafka import KafkaProducer

from driftwatch.connectors.config import load_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.connectors.schema_registry import RegistrySchemas
from driftwatch.schema import FeatureSchema
from driftwatch.testing.schema_registry import LocalRegistry

pytestmark = pytest.mark.integration

SCHEMA = {"type": "record", "name": "Prediction", "fields": [
    {"name": "id", "type": "string"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "applicant", "type": {"type": "record", "name": "Applicant", "fields": [
        {"name": "income", "type": ["null", "double"]},
        {"name": "purpose", "type": {"type": "enum", "name": "Purpose",
                                     "symbols": ["car", "home"]}}]}},
    {"name": "score", "type": "double"}]}


# a later version of the schema: one more field, first
SCHEMA_V2 = {"type": "record", "name": "Prediction", "fields": [
    {"name": "region", "type": "string"}, *SCHEMA["fields"]]}


def framed(i: int, schema_id: int = 3) -> bytes:
    import datetime as dt

    rec = {"id": f"e{i}", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
           "applicant": {"income": None if i % 5 == 0 else 1000.0 + i,
                         "purpose": "car" if i % 2 else "home"},
           "score": i / 1000}
    if schema_id == 4:
        rec["region"] = "eu"
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(SCHEMA_V2 if schema_id == 4
                                                          else SCHEMA), rec)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def test_confluent_framed_avro_from_a_topic(kafka_endpoint, kafka_topic, kafka_group,
                                            tmp_path: Path) -> None:
    topic = kafka_topic("avro")
    (tmp_path / "prediction.avsc").write_text(json.dumps(SCHEMA))
    conn = tmp_path / "c.yaml"
    conn.write_text(
        "apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: avro}\nsource:\n"
        f"  kind: kafka\n  connection: {{bootstrap_servers: ['{kafka_endpoint.bootstrap}']}}\n"
        f"  streams:\n    predictions:\n      topic: {topic}\n"
        "      avro: {schema: prediction.avsc}\n"
        "      fields:\n        event_id: id\n        event_time: {path: ts, unit: s}\n"
        "        features: {income: applicant.income, purpose: applicant.purpose}\n"
        "        score: score\n")
    stream = load_connector(conn).streams[0]
    values = [framed(i) for i in range(60)]
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    for v in [*values[:30], values[30][:-3], *values[30:]]:
        producer.send(topic, value=v)
    producer.flush()
    producer.close()
    schema = FeatureSchema(numeric=("income",), categorical=("purpose",),
                           levels=(("car", "home"),))
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=(kafka_endpoint.bootstrap,),
                                   group_id=kafka_group()),
        topics=(KafkaTopic(topic, "predictions"),),
        dead_letter_path=str(tmp_path / "dead.jsonl"))
    source = KafkaSource(settings, {"predictions": Decoder(stream, schema)})
    ids: list[str] = []
    times: list[float] = []
    bad = []
    try:
        for _ in range(200):
            polled = source.poll(max_records=10_000, timeout_s=0.5)
            for b in polled.batches:
                ids += b.ids.tolist()
                times += b.event_time.tolist()
            bad += polled.bad
            if len(ids) >= 60:
                break
    finally:
        source.close()
    assert ids == [f"e{i}" for i in range(60)]
    assert times == [1704067200.0 + i for i in range(60)]
    assert [(b.reason, b.position) for b in bad] == [("invalid_avro", 30)]
    letters = [json.loads(x) for x in (tmp_path / "dead.jsonl").read_text().splitlines()]
    assert [x["reason"] for x in letters] == ["invalid_avro"]


def test_a_registry_down_for_a_while_holds_the_stream_and_loses_nothing(
    kafka_endpoint, kafka_topic, kafka_group, tmp_path: Path,
) -> None:
    """Two partitions; schema 3 is cached while the registry is up, then the registry goes
    down and values of schema 4 (not cached) arrive among schema-3 ones. Each partition
    stops at its first schema-4 value (nothing dead-lettered, nothing committed past it);
    once the registry is back every record is handed out exactly once and the committed
    offsets reach the end of both partitions."""
    topic = kafka_topic("avro-reg", partitions=2)
    registry = LocalRegistry({3: SCHEMA, 4: SCHEMA_V2})
    registry.start()
    conn = tmp_path / "c.yaml"
    conn.write_text(
        "apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: avro}\nsource:\n"
        f"  kind: kafka\n  connection: {{bootstrap_servers: ['{kafka_endpoint.bootstrap}']}}\n"
        f"  streams:\n    predictions:\n      topic: {topic}\n"
        f"      avro: {{registry: '{registry.url}'}}\n"
        "      fields:\n        event_id: id\n        event_time: {path: ts, unit: s}\n"
        "        features: {income: applicant.income, purpose: applicant.purpose}\n"
        "        score: score\n")
    decoder = Decoder(load_connector(conn).streams[0],
                      FeatureSchema(numeric=("income",), categorical=("purpose",),
                                    levels=(("car", "home"),)))
    assert decoder.avro is not None  # tries 0.2 s apart at most: the test stays short
    decoder.avro.registry = RegistrySchemas(registry.url, timeout_s=2.0, retry_min_s=0.2,
                                            retry_max_s=0.5)
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=(kafka_endpoint.bootstrap,),
                                   group_id=kafka_group()),
        topics=(KafkaTopic(topic, "predictions"),),
        dead_letter_path=str(tmp_path / "dead.jsonl"))
    source = KafkaSource(settings, {"predictions": decoder})
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    ends = {0: 0, 1: 0}

    def send(i: int, schema_id: int) -> None:
        producer.send(topic, value=framed(i, schema_id), partition=i % 2)
        ends[i % 2] += 1

    ids: list[str] = []
    bad = []

    def poll_until(done, within_s: float = 90.0) -> None:
        deadline = time.monotonic() + within_s  # a cold broker's group join takes a while
        while time.monotonic() < deadline:
            polled = source.poll(max_records=10_000, timeout_s=0.25)
            for b in polled.batches:
                ids.extend(b.ids.tolist())
            bad.extend(polled.bad)
            source.commit(polled.positions)  # no checkpoint here: the positions are it
            if done():
                return

    try:
        for i in range(20):  # schema 3 only: read and cached while the registry is up
            send(i, 3)
        producer.flush()
        poll_until(lambda: len(ids) >= 20)
        assert sorted(ids) == sorted(f"e{i}" for i in range(20))
        registry.stop()
        for i in range(20, 80):  # from 30 on, every third value is schema 4 (not cached)
            send(i, 4 if i >= 30 and i % 3 == 0 else 3)
        producer.flush()
        # e30 (partition 0) and e33 (partition 1) are the first values each cannot read;
        # e29 and e31 (partition 1) wait in the event-time alignment for partition 0
        poll_until(lambda: source.held_offsets.keys() == {f"{topic}:0", f"{topic}:1"}
                   and len(ids) >= 29)
        held = source.held_offsets
        assert held == {f"{topic}:0": 15, f"{topic}:1": 16}, held
        for _ in range(8):  # a while down: nothing more read, dead-lettered or committed
            polled = source.poll(max_records=10_000, timeout_s=0.25)
            assert polled.n_events == 0 and polled.bad == []
            source.commit(polled.positions)
        assert len(ids) == len(set(ids))
        assert {f"e{i}" for i in range(29)} <= set(ids) <= {f"e{i}" for i in range(32)} - {"e30"}
        assert all(source.committed[k] <= held[k] for k in held), (source.committed, held)
        assert source.registry_up is False and "unreachable since" in source.registry_fault
        registry.start()  # up again, on the same port
        poll_until(lambda: len(ids) >= 80)
        poll_until(lambda: False, within_s=1.0)  # nothing more comes
    finally:
        producer.close()
        source.close()
        registry.stop()
    assert sorted(ids) == sorted(f"e{i}" for i in range(80))  # every record, once
    dead = tmp_path / "dead.jsonl"
    assert bad == [] and (not dead.exists() or dead.read_text() == "")
    assert source.committed == {f"{topic}:0": ends[0], f"{topic}:1": ends[1]}
    assert source.registry_up is True and source.registry_fault == ""
