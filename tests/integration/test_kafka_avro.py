"""Avro values on a real topic: Confluent-framed bodies read by the source with
``avro: {schema: ...}``, a corrupt one dead-lettered, and ``driftwatch record`` keeping the
bytes for a replay."""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest
from kafka import KafkaProducer

from driftwatch.connectors.config import load_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.schema import FeatureSchema

pytestmark = pytest.mark.integration

SCHEMA = {"type": "record", "name": "Prediction", "fields": [
    {"name": "id", "type": "string"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "applicant", "type": {"type": "record", "name": "Applicant", "fields": [
        {"name": "income", "type": ["null", "double"]},
        {"name": "purpose", "type": {"type": "enum", "name": "Purpose",
                                     "symbols": ["car", "home"]}}]}},
    {"name": "score", "type": "double"}]}


def framed(i: int) -> bytes:
    import datetime as dt

    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(SCHEMA), {
        "id": f"e{i}", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        "applicant": {"income": None if i % 5 == 0 else 1000.0 + i,
                      "purpose": "car" if i % 2 else "home"},
        "score": i / 1000})
    return b"\x00\x00\x00\x00\x03" + buf.getvalue()


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
