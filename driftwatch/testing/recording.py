"""A recorded stream fed into a real Kafka broker: its lines, a producer that waits for
every acknowledgement, and the demo connector pointed at the topics.

Tests that run ``driftwatch run`` against a broker produce a recording's JSON lines into
topics, then give the daemon a connector that reads them (``kafka_connector``).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml

__all__ = ["demo_kafka_connector", "gz_lines", "kafka_connector", "produce"]

ROOT = Path(__file__).resolve().parents[2]


def gz_lines(path: Path) -> list[bytes]:
    """The non-blank lines of a gzipped JSON-lines file, without their newlines."""
    with gzip.open(path, "rb") as fh:
        return [line.rstrip(b"\n") for line in fh if line.strip()]


def produce(bootstrap: str, topic: str, payloads: list[bytes]) -> None:
    """Send ``payloads`` to ``topic`` in order and wait until every one is acknowledged."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                             batch_size=256 * 1024)
    try:
        for p in payloads:
            producer.send(topic, p)
        producer.flush(60)
    finally:
        producer.close(30)


def kafka_connector(path: Path, bootstrap: str, topics: dict[str, str], group: str,
                    *, name: str = "kafka-test") -> Path:
    """The demo's file connector turned into a Kafka one reading ``topics`` (stream name
    to topic) in consumer group ``group``, written to ``path``.

    The session is short: a killed member leaves the group within seconds, not 45.
    """
    doc = yaml.safe_load((ROOT / "connectors" / "demo-file.yaml").read_text())
    doc["metadata"]["name"] = name
    source = doc["source"]
    source["kind"] = "kafka"
    source["connection"] = {"bootstrap_servers": [bootstrap], "group_id": group,
                            "session_timeout_ms": 6000}
    for stream_name, stream in source["streams"].items():
        stream.pop("paths", None)
        stream.pop("format", None)
        stream["topic"] = topics[stream_name]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def demo_kafka_connector(path: Path, bootstrap: str, topics: dict[str, str],
                         group: str) -> Path:
    """The demo's Kafka connector (``connectors/demo-kafka.yaml``, keyed topics) pointed at
    ``bootstrap`` and ``topics`` in consumer group ``group``, written to ``path``; no
    dead-letter topic, and a short session so a killed member leaves within seconds."""
    text = (ROOT / "connectors" / "demo-kafka.yaml").read_text(encoding="utf-8")
    text = (text.replace("${DRIFTWATCH_KAFKA_BOOTSTRAP}", bootstrap)
            .replace("credit.predictions", topics["predictions"])
            .replace("credit.outcomes", topics["outcomes"])
            .replace("driftwatch-credit-demo", group)
            .replace("topic: credit.dead-letter\n", "")
            .replace("    security_protocol: PLAINTEXT\n",
                     "    security_protocol: PLAINTEXT\n    session_timeout_ms: 6000\n"))
    path.write_text(text, encoding="utf-8")
    return path
