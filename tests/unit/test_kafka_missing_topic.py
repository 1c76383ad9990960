"""A subscribed topic the cluster lacks (a misspelt ``topic:``) makes the source not ready.

Without the check kafka-python assigns nothing and the daemon reads as a healthy, idle
consumer: ``/readyz`` green, no error, no events.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("kafka")

from driftwatch.clock import ManualClock
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import TOPIC_CHECK_S, KafkaSource
from driftwatch.connectors.kafka_settings import (
    KafkaConnection,
    KafkaSourceSettings,
    KafkaTopic,
)
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.schema import FeatureSchema


class FakeConsumer:
    """What KafkaSource calls on a connected consumer that is assigned nothing."""

    def __init__(self, on_cluster: set[str]) -> None:
        self.on_cluster = on_cluster
        self.topics_calls = 0

    def subscribe(self, topics: list[str], listener: Any) -> None:
        self.subscribed = topics

    def poll(self, timeout_ms: int, max_records: int) -> dict:
        return {}

    def paused(self) -> set:
        return set()

    def topics(self) -> set[str]:
        self.topics_calls += 1
        return set(self.on_cluster)

    def metrics(self) -> dict:
        return {"consumer-metrics": {"connection-count": 1}}

    def close(self, **kw: Any) -> None:
        pass


def source(consumer: FakeConsumer, clock: ManualClock, tmp_path, factory=None,
           servers: tuple[str, ...] = ("b:9092",)) -> KafkaSource:
    mapping = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                            event_time=TimeField(None, source="kafka_timestamp"), features=())
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=servers, group_id="g"),
        topics=(KafkaTopic("gmsc.prediction", "predictions"),),
        dead_letter_path=str(tmp_path / "dead.jsonl"),
    )
    return KafkaSource(settings, {"predictions": Decoder(mapping, FeatureSchema())},
                       clock=clock, consumer_factory=factory or (lambda **c: consumer))


def test_missing_topic_is_not_ready_and_named_with_the_nearest(tmp_path, caplog) -> None:
    clock = ManualClock()
    consumer = FakeConsumer({"gmsc.predictions", "gmsc.outcomes"})
    src = source(consumer, clock, tmp_path)
    with caplog.at_level(logging.ERROR, logger="driftwatch.connectors.kafka"):
        src.poll(timeout_s=0.01)
    assert not src.ready
    assert src.not_ready_reason == "topic(s) not found on the cluster: gmsc.prediction"
    assert "gmsc.prediction (did you mean gmsc.predictions?)" in caplog.text
    src.poll(timeout_s=0.01)  # not looked up again before TOPIC_CHECK_S
    assert consumer.topics_calls == 1
    consumer.on_cluster.add("gmsc.prediction")  # the exporter creates it: ready again
    clock.advance(TOPIC_CHECK_S)
    src.poll(timeout_s=0.01)
    assert src.ready and src.not_ready_reason == ""
    clock.advance(TOPIC_CHECK_S)
    src.poll(timeout_s=0.01)  # found once: no more look-ups
    assert consumer.topics_calls == 2
    src.close()


def test_init_sample_of_a_missing_topic_names_it_and_creates_nothing(monkeypatch) -> None:
    from driftwatch.connectors import kafka_client
    from driftwatch.errors import SourceError
    from driftwatch.onboard.sample import kafka_sample

    made: dict[str, Any] = {}
    consumer = FakeConsumer({"gmsc.predictions", "gmsc.outcomes"})

    def build(cls: Any, **config: Any) -> FakeConsumer:
        made.update(config)
        return consumer

    monkeypatch.setattr(kafka_client, "build_client", build)
    with pytest.raises(SourceError) as err:
        kafka_sample("gmsc.prediction", "b:9092")
    assert str(err.value) == ("no topic gmsc.prediction (did you mean gmsc.predictions?) at "
                              "b:9092; topics there: gmsc.outcomes, gmsc.predictions")
    assert made["allow_auto_create_topics"] is False
    assert not hasattr(consumer, "subscribed")


def test_build_client_makes_no_auto_create_hold_on_the_metadata() -> None:
    from types import SimpleNamespace

    from driftwatch.connectors.kafka_client import build_client

    class Client:  # kafka-python 3.0's shape: the cluster metadata keeps its own default
        def __init__(self, **config: Any) -> None:
            cluster = SimpleNamespace(config={"allow_auto_create_topics": True})
            self._client = SimpleNamespace(_manager=SimpleNamespace(cluster=cluster))

    off = build_client(Client, allow_auto_create_topics=False)
    assert off._client._manager.cluster.config["allow_auto_create_topics"] is False
    on = build_client(Client)
    assert on._client._manager.cluster.config["allow_auto_create_topics"] is True


def test_unreachable_names_the_bootstrap_servers(tmp_path, caplog) -> None:
    """A bootstrap typo is found from the log line alone."""

    def refuse(**config: Any) -> None:
        raise OSError("connection refused")

    src = source(FakeConsumer(set()), ManualClock(), tmp_path, factory=refuse)
    with caplog.at_level(logging.WARNING, logger="driftwatch.connectors.kafka"):
        src.poll(timeout_s=0.01)
    assert "Kafka not reachable at b:9092 (OSError)" in caplog.text
    assert not src.ready and src.not_ready_reason == "no broker connection to b:9092"
    src.close()


def test_unreachable_names_the_servers_a_variable_gives(tmp_path, caplog, monkeypatch
                                                        ) -> None:
    """``bootstrap_servers: ["${DRIFTWATCH_KAFKA_BOOTSTRAP}"]``, as the shipped Kafka
    connector writes it: the log line and the readiness reason name the address the
    variable holds, not the variable (which said nothing of where the client looked)."""
    monkeypatch.setenv("DRIFTWATCH_KAFKA_BOOTSTRAP", "kafka-7.internal:9093")

    def refuse(**config: Any) -> None:
        assert config["bootstrap_servers"] == ["kafka-7.internal:9093"]
        raise OSError("connection refused")

    src = source(FakeConsumer(set()), ManualClock(), tmp_path, factory=refuse,
                 servers=("${DRIFTWATCH_KAFKA_BOOTSTRAP}",))
    with caplog.at_level(logging.WARNING, logger="driftwatch.connectors.kafka"):
        src.poll(timeout_s=0.01)
    assert "Kafka not reachable at kafka-7.internal:9093 (OSError)" in caplog.text
    assert src.not_ready_reason == "no broker connection to kafka-7.internal:9093"
    src.close()


def test_a_codec_without_its_library_stops_the_source_with_what_to_install(tmp_path) -> None:
    """A topic compressed with lz4 (say) and no lz4 library: kafka-python fails every
    poll alike, so retrying would stall the source forever without a word."""
    from kafka.errors import UnsupportedCodecError

    from driftwatch.errors import SourceError

    class NoCodec(FakeConsumer):
        def poll(self, timeout_ms: int, max_records: int) -> dict:
            raise UnsupportedCodecError("Libraries for lz4 compression codec not found")

    src = source(NoCodec({"gmsc.prediction"}), ManualClock(), tmp_path)
    with pytest.raises(SourceError, match=r"gmsc\.prediction.*lz4.*driftwatch\[kafka\]"):
        src.poll(timeout_s=0.01)
