"""``driftwatch init --time-unit`` on a real Kafka topic: a PaySim-shaped stream whose
``step`` counts hours from the start of its simulation, and outcomes dated on the same
counter. ``init`` samples both topics and writes ``unit: h``; with the ``origin:`` its
warning names added to both streams, the Kafka source reads each record's event time as
that many hours after the origin."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from kafka import KafkaProducer

from driftwatch.cli import main
from driftwatch.connectors.config import load_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.policy import load_policy
from driftwatch.replay import build_monitor

pytestmark = pytest.mark.integration

ORIGIN = "2016-09-01T00:00:00Z"
START = pd.Timestamp(ORIGIN).timestamp()


def _produce(bootstrap: str, topic: str, rows: list[dict[str, object]]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for row in rows:
        producer.send(topic, value=orjson.dumps(row))
    producer.flush()
    producer.close()


def _times(source: KafkaSource, want: int) -> dict[str, dict[int, float]]:
    """Each stream's event time by transaction id, polled until ``want`` records came."""
    got: dict[str, dict[int, float]] = {"predictions": {}, "outcomes": {}}
    for _ in range(200):
        polled = source.poll(max_records=1_000, timeout_s=0.5)
        for b in polled.batches:
            got[b.stream].update(zip(map(int, b.ids.tolist()), b.event_time.tolist(),
                                     strict=True))
        if sum(map(len, got.values())) >= want:
            break
    return got


def test_init_reads_a_topics_hour_counter_with_time_unit(kafka_endpoint, kafka_topic,
                                                         tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    n = 240
    kinds = ["CASH_OUT", "PAYMENT", "TRANSFER"]
    pd.DataFrame({"step": rng.integers(1, 744, n), "type": rng.choice(kinds, n),
                  "amount": rng.lognormal(11, 1.6, n).round(2),
                  "isFraud": (rng.random(n) < 0.1).astype(int)}).to_csv("ref.csv", index=False)
    steps = np.sort(rng.integers(1, 121, n)).tolist()
    preds = [{"txn_id": i, "step": s, "type": str(rng.choice(kinds)),
              "amount": round(float(rng.lognormal(11, 1.6)), 2),
              "score": round(float(rng.random()), 5)} for i, s in enumerate(steps)]
    outs = [{"txn_id": i, "step": s + 24, "isFraud": int(rng.random() < 0.1)}
            for i, s in enumerate(steps)]
    topic, out_topic = kafka_topic("paysim"), kafka_topic("paysim-outcomes")
    _produce(kafka_endpoint.bootstrap, topic, preds)
    _produce(kafka_endpoint.bootstrap, out_topic, outs)

    code = main(["init", "--reference", "ref.csv", "--kafka-topic", topic,
                 "--outcomes-topic", out_topic, "--bootstrap", kafka_endpoint.bootstrap,
                 "--model", "m", "--connector-out", "c.yaml", "--policy-out", "p.yaml",
                 "--time-field", "step", "--time-unit", "h", "--id-field", "txn_id",
                 "--label-field", "isFraud", "--rows", "200"])
    said = capsys.readouterr()
    assert code == 0, said.err
    assert "unit: h, origin:" in said.out + said.err  # the line to complete
    doc = yaml.safe_load((tmp_path / "c.yaml").read_text())
    streams = doc["source"]["streams"]
    for name in ("predictions", "outcomes"):
        assert streams[name]["fields"]["event_time"]["path"] == "step"
        assert streams[name]["fields"]["event_time"]["unit"] == "h"
        streams[name]["fields"]["event_time"]["origin"] = ORIGIN  # as the warning asks
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))

    conn = load_connector(tmp_path / "c.yaml")
    schema = build_monitor(load_policy(tmp_path / "p.yaml"), connector=conn).profile.schema
    settings = KafkaSourceSettings.from_connector(conn, out_dir=tmp_path)
    source = KafkaSource(settings, {s.name: Decoder(s, conn.schema_for(schema))
                                    for s in conn.streams})
    try:
        got = _times(source, 2 * n)
    finally:
        source.close()
    assert len(got["predictions"]) == n and len(got["outcomes"]) == n
    for i, s in enumerate(steps):
        assert got["predictions"][i] == START + 3600.0 * s
        assert got["outcomes"][i] == START + 3600.0 * (s + 24)  # a day after, same clock
