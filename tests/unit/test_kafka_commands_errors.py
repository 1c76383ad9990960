"""``record`` and ``produce`` against brokers they cannot use say so in one ``error:`` line
(no broker needed: kafka-python's clients are stood in for).

Before: an unreachable broker ended both in kafka-python's ``KafkaTimeoutError`` traceback,
and ``record`` of a connector whose predictions topic was misspelt recorded the outcomes
alone, without a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ._cli import run_cli

kafka = pytest.importorskip("kafka")
from kafka.errors import KafkaTimeoutError  # noqa: E402

CONNECTOR = str(Path(__file__).resolve().parents[2] / "connectors" / "demo-kafka.yaml")


class _Unreachable:
    def __init__(self, **config: Any) -> None:
        raise KafkaTimeoutError("Unable to bootstrap from ['127.0.0.1:1']")


class _Cluster:
    """A consumer on a cluster that holds ``credit.outcomes`` and ``credit.prediction``."""

    def __init__(self, **config: Any) -> None:
        self.on_cluster = {"credit.outcomes": {0}, "credit.prediction": {0}}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self.on_cluster.get(topic)

    def topics(self) -> set[str]:
        return set(self.on_cluster)

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFTWATCH_KAFKA_BOOTSTRAP", "127.0.0.1:1")


@pytest.mark.parametrize("client", ["KafkaConsumer", "KafkaProducer"])
def test_an_unreachable_broker_is_one_line(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(kafka, client, _Unreachable)
    data = tmp_path / "outcomes.jsonl"
    data.write_text('{"application_id": "a"}\n')
    args = (["record", "-c", CONNECTOR, "-o", str(tmp_path / "r.jsonl")]
            if client == "KafkaConsumer" else ["produce", "-c", CONNECTOR, "-i", str(data)])
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (1, "")
    assert err == ("error: cannot reach Kafka at 127.0.0.1:1 (KafkaTimeoutError: Unable to "
                   "bootstrap from ['127.0.0.1:1']): is the broker up, and is this its address "
                   "(host:port of a listener, as clients see it)?\n")


def test_record_names_a_topic_the_cluster_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(kafka, "KafkaConsumer", _Cluster)
    code, _, err = run_cli(["record", "-c", CONNECTOR, "-o", str(tmp_path / "r.jsonl")],
                           capsys)
    assert (code, err) == (1, "error: no topic credit.predictions (did you mean "
                              "credit.prediction?) on the cluster; topics there: "
                              "credit.outcomes, credit.prediction\n")
    assert not (tmp_path / "r.jsonl").exists()
