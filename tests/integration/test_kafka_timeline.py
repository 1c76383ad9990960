"""The same recording, fed through a real Kafka broker, gives the replay's windows.

Predictions and outcomes are produced to two topics (with kafka-python over three
partitions each, and with kcat to one), consumed by ``KafkaSource`` into the same
``ModelMonitor`` replay uses, and compared window by window with a replay of the files.
The whole backlog is there before the consumer starts, so it reads runs of one partition
and then another: the source lines the partitions and the two topics up in event time
(as replay merges files), so every window's bounds, sketches, labelled statistics and
signals must be the replay's. Recording the topics (a file per topic) and replaying the
recordings must give the replay's timeline byte for byte.
"""

from __future__ import annotations

import gzip
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from driftwatch.connectors.commands import produce_files
from driftwatch.connectors.config import load_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.recorder import record
from driftwatch.policy.loader import load_policy
from driftwatch.replay import build_monitor, replay
from driftwatch.replay.timeline import read_timeline, window_record
from driftwatch.testing.generator import write_scenario
from driftwatch.testing.timelines import assert_same_windows

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "policies" / "credit-risk-demo.yaml"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("rec")
    write_scenario("demo", out, seed=3, n_events=12_000, days=30)
    base = tmp_path_factory.mktemp("replay")
    replay(
        ROOT / "connectors/demo-file.yaml",
        [out / "predictions.jsonl.gz", out / "outcomes.jsonl.gz"],
        base / "out",
        policy=POLICY,
        reference=out / "reference.parquet",
        progress=False,
        report=False,
    )
    return {"dir": out, "timeline": base / "out" / "timeline.jsonl"}


def _connector(tmp: Path, bootstrap: str, pred: str, out: str, group: str) -> Path:
    text = (ROOT / "connectors/demo-kafka.yaml").read_text()
    text = (
        text.replace("${DRIFTWATCH_KAFKA_BOOTSTRAP}", bootstrap)
        .replace("credit.predictions", pred)
        .replace("credit.outcomes", out)
        .replace("driftwatch-credit-demo", group)
        .replace("topic: credit.dead-letter\n", "")
    )
    path = tmp / "kafka.yaml"
    path.write_text(text)
    return path


def _consume(connector_path: Path, reference: Path, expected: int,
             max_records: int = 5_000) -> list[dict]:
    conn = load_connector(connector_path)
    monitor = build_monitor(load_policy(POLICY), reference=reference)
    schema = conn.schema_for(monitor.profile.schema)
    settings = KafkaSourceSettings.from_connector(conn, out_dir=connector_path.parent)
    source = KafkaSource(settings, {s.name: Decoder(s, schema) for s in conn.streams})
    records: list[dict] = []
    seen = polls = 0
    try:
        while seen < expected and polls < 2_000:
            polls += 1
            polled = source.poll(max_records, timeout_s=1.0)
            seen += polled.n_events + len(polled.bad)
            records += [window_record(r) for r in monitor.process(polled)]
        records += [window_record(r) for r in monitor.flush()]
    finally:
        source.close()
    assert seen == expected, f"consumed {seen} of {expected} messages"
    return records


def _lines(path: Path) -> int:
    with gzip.open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


@pytest.mark.parametrize(("client", "partitions", "max_records"),
                         [("kafka-python", 3, 5_000), ("kafka-python", 1, 250), ("kcat", 1, 5_000)],
                         ids=["3-partitions", "small-polls", "kcat"])
def test_kafka_fed_windows_equal_the_replay(
    client, partitions, max_records, recording, kafka_endpoint, kafka_topic, kafka_group, tmp_path
) -> None:
    rec = recording["dir"]
    pred_t, out_t = kafka_topic(partitions=partitions), kafka_topic(partitions=partitions)
    conn = _connector(tmp_path, kafka_endpoint.bootstrap, pred_t, out_t, kafka_group())
    files = {"predictions": rec / "predictions.jsonl.gz", "outcomes": rec / "outcomes.jsonl.gz"}
    if client == "kafka-python":
        produce_files(load_connector(conn), [f"{k}={v}" for k, v in files.items()])
    else:
        for stream, topic in (("predictions", pred_t), ("outcomes", out_t)):
            plain = tmp_path / f"{stream}.jsonl"
            plain.write_bytes(gzip.decompress(files[stream].read_bytes()))
            subprocess.run(
                ["kcat", "-b", kafka_endpoint.bootstrap, "-t", topic, "-P", "-l", str(plain)],
                check=True,
                timeout=300,
            )
    expected = _lines(files["predictions"]) + _lines(files["outcomes"])
    # small polls: the outcomes topic, ahead in event time, fills what the source may hold
    # and is paused until the predictions catch up (and resumed: kafka-python's parked
    # records must come back)
    got = _consume(conn, rec / "reference.parquet", expected, max_records)
    assert_same_windows(got, read_timeline(recording["timeline"]), keys=(
        "window_id", "first_index", "last_index", "start_time", "end_time", "n_events",
        "n_late", "n_labelled", "n_labelled_bad", "features", "partial", "tier",
        "decision"), rel=1e-12)


def test_record_then_replay_gives_the_same_timeline(
    recording, kafka_endpoint, kafka_topic, kafka_group, tmp_path
) -> None:
    rec = recording["dir"]
    pred_t, out_t = kafka_topic("pred"), kafka_topic("out")
    conn = _connector(tmp_path, kafka_endpoint.bootstrap, pred_t, out_t, kafka_group())
    produce_files(
        load_connector(conn),
        [f"predictions={rec / 'predictions.jsonl.gz'}", f"outcomes={rec / 'outcomes.jsonl.gz'}"],
    )
    settings = KafkaSourceSettings.from_connector(load_connector(conn), out_dir=tmp_path)
    # one recording per topic: Kafka orders a partition, not two topics against each other,
    # so each file is in event time and replay merges the two exactly
    files, total = [], 0
    for topic in settings.topics:
        path = tmp_path / f"rec-{topic.stream}.jsonl.gz"
        summary = record(replace(settings, topics=(topic,)), path, idle_timeout_s=10)
        total += summary.messages
        files.append(path)
    assert total == _lines(rec / "predictions.jsonl.gz") + _lines(rec / "outcomes.jsonl.gz")
    replay(
        conn,
        files,
        tmp_path / "out",
        policy=POLICY,
        reference=rec / "reference.parquet",
        progress=False,
        report=False,
    )
    assert (tmp_path / "out" / "timeline.jsonl").read_bytes() == recording["timeline"].read_bytes()
