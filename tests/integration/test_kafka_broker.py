"""The local Kafka broker the other integration tests rely on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer

from driftwatch.testing.kafka import broker_module

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kafka_broker.py"


def test_producer_and_consumer_round_trip(kafka_endpoint, kafka_topic, kafka_group):
    topic = kafka_topic("roundtrip", partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    sent = {f"k{i}": f"v{i}".encode() for i in range(200)}
    for key, value in sent.items():
        producer.send(topic, key=key.encode(), value=value)
    producer.flush()
    producer.close()

    consumer = KafkaConsumer(
        bootstrap_servers=kafka_endpoint.bootstrap,
        group_id=kafka_group(),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    consumer.subscribe([topic])
    got: dict[str, bytes] = {}
    for _ in range(200):  # bounded number of polls, not a clock
        for records in consumer.poll(timeout_ms=500).values():
            got.update({r.key.decode(): r.value for r in records})
        if len(got) == len(sent):
            break
    consumer.close()
    assert got == sent


def test_cli_starts_reports_and_stops_a_broker(tmp_path):
    state_file = tmp_path / "broker.json"
    base = [sys.executable, str(SCRIPT), "--state-file", str(state_file)]
    start = subprocess.run(
        [*base, "start", "--state-dir", str(tmp_path / "broker")],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        assert start.returncode == 0, start.stderr
        bootstrap = start.stdout.strip()
        state = json.loads(state_file.read_text())
        assert state["bootstrap"] == bootstrap
        assert bootstrap.startswith("127.0.0.1:")
        assert broker_module().broker_ready(bootstrap)

        status = subprocess.run([*base, "status"], capture_output=True, text=True, check=False)
        assert status.returncode == 0
        assert json.loads(status.stdout)["ready"] is True
    finally:
        stop = subprocess.run([*base, "stop"], capture_output=True, text=True, check=False)
    assert stop.returncode == 0
    assert not state_file.exists()
    assert not broker_module().pid_alive(state["pid"])
    after = subprocess.run([*base, "status"], capture_output=True, text=True, check=False)
    assert after.returncode == 1


def test_cluster_ids_never_read_as_an_option() -> None:
    """A URL-safe base64 id may start with '-', which the storage tool parses as a flag
    (one broker start in 64 failed so); ids are 22 characters and never start with it."""
    ids = [broker_module().cluster_id() for _ in range(5000)]
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)
