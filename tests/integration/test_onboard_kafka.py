"""``driftwatch init`` reading its sample from a real Kafka topic."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from kafka import KafkaProducer

from driftwatch.cli import main
from driftwatch.connectors.config import load_connector

pytestmark = pytest.mark.integration


def test_init_samples_a_topic_and_writes_a_kafka_connector(kafka_endpoint, kafka_topic,
                                                           tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 300
    ref = pd.DataFrame({"income": rng.normal(50, 10, n).round(2),
                        "purpose": rng.choice(["car", "home"], n),
                        "score": rng.uniform(0, 1, n).round(4)})
    ref.to_csv("ref.csv", index=False)
    topic = kafka_topic("init")
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    for i, row in enumerate(ref.to_dict(orient="records")):
        msg = {"key": {"app_id": f"a{i}"}, "applicant": {"income": row["income"]},
               "loan": {"purpose": row["purpose"]}, "model": {"score": row["score"]}}
        producer.send(topic, value=orjson.dumps(msg))
    outcomes = kafka_topic("init-outcomes")
    for i in range(0, n, 3):
        producer.send(outcomes, value=orjson.dumps(
            {"key": {"app_id": f"a{i}"}, "outcome": "bad" if i % 2 else "good"}))
    producer.flush()
    producer.close()
    code = main(["init", "--reference", "ref.csv", "--kafka-topic", topic, "--bootstrap",
                 kafka_endpoint.bootstrap, "--outcomes-topic", outcomes, "--model", "m",
                 "--connector-out", "c.yaml", "--policy-out", "p.yaml", "--rows", "50"])
    out = capsys.readouterr().out
    assert code == 0
    assert "event time: Kafka record timestamp" in out and "id: key.app_id" in out
    doc = yaml.safe_load((tmp_path / "c.yaml").read_text())
    src = doc["source"]
    assert src["kind"] == "kafka"
    assert src["connection"]["bootstrap_servers"] == [kafka_endpoint.bootstrap]
    pred = src["streams"]["predictions"]
    assert pred["topic"] == topic
    assert pred["fields"]["event_time"] == {"source": "kafka_timestamp"}
    assert pred["fields"]["features"]["income"] == {"path": "applicant.income",
                                                    "type": "numeric"}
    out_fields = src["streams"]["outcomes"]["fields"]
    assert src["streams"]["outcomes"]["topic"] == outcomes
    assert out_fields["event_time"] == {"source": "kafka_timestamp"}
    assert out_fields["label"] == {"path": "outcome", "bad": ["bad"], "good": ["good"]}
    assert load_connector("c.yaml").kind == "kafka"
    assert main(["policy", "check", "--connector", "c.yaml", "p.yaml"]) == 0


def test_init_on_an_address_with_no_broker_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    from driftwatch.testing.net import free_port

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"income": [1.0, 2.0, 3.0], "score": [0.1, 0.5, 0.9]}).to_csv(
        "ref.csv", index=False)
    where = f"127.0.0.1:{free_port()}"  # nothing listens there
    code = main(["init", "--reference", "ref.csv", "--kafka-topic", "t", "--bootstrap", where,
                 "--connector-out", "c.yaml", "--policy-out", "p.yaml"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert f"cannot reach Kafka at {where} within 10 s" in err
    assert not (tmp_path / "c.yaml").exists() and not (tmp_path / "p.yaml").exists()
