"""KafkaSource against a real broker: decoding, commits, seeks, outages, dead letters."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Sequence

import numpy as np
import orjson
import pytest
from kafka import KafkaConsumer, KafkaProducer

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord, Polled, Source
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.recorder import decode_payload, record
from driftwatch.schema import FeatureSchema

pytestmark = pytest.mark.integration


def decoder() -> Decoder:
    """``{"id", "score"}`` messages; event time is the Kafka timestamp."""
    mapping = StreamMapping(
        name="predictions",
        event_id=FieldPath.parse("id"),
        event_time=TimeField(None, source="kafka_timestamp"),
        features=(),
        score=FieldPath.parse("score"),
    )
    return Decoder(mapping, FeatureSchema())


def settings(bootstrap: str, topics: dict[str, str], group: str, **kw) -> KafkaSourceSettings:
    return KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=(bootstrap,), group_id=group),
        topics=tuple(KafkaTopic(t, s) for t, s in topics.items()),
        **kw,
    )


def make_source(bootstrap, topic, group, tmp_path, **kw) -> KafkaSource:
    kw.setdefault("dead_letter_path", str(tmp_path / f"dead-{group}.jsonl"))
    s = settings(bootstrap, {topic: "predictions"}, group, **kw)
    return KafkaSource(s, {"predictions": decoder()})


def produce(bootstrap: str, topic: str, values: Sequence[bytes], **kw) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for v in values:
        producer.send(topic, value=v, **kw)
    producer.flush()
    producer.close()


def events(start: int, stop: int) -> list[bytes]:
    return [orjson.dumps({"id": f"e{i}", "score": i / 1000}) for i in range(start, stop)]


def drain(source: KafkaSource, n: int, *, max_records: int = 10_000, max_polls: int = 200):
    """Poll until ``n`` good events arrived (bounded by a number of polls)."""
    batches: list[Batch] = []
    bad: list[BadRecord] = []
    positions: dict[str, int] = {}
    for _ in range(max_polls):
        polled = source.poll(max_records=max_records, timeout_s=0.5)
        assert isinstance(polled, Polled)
        batches += polled.batches
        bad += polled.bad
        positions.update(polled.positions)
        if sum(len(b) for b in batches) >= n:
            break
    ids = [i for b in batches for i in b.ids.tolist()]
    return ids, batches, bad, positions


def test_is_a_source(kafka_endpoint, kafka_topic, kafka_group, tmp_path):
    source = make_source(kafka_endpoint.bootstrap, kafka_topic(), kafka_group(), tmp_path)
    assert isinstance(source, Source)
    source.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_consumes_what_kcat_produces(kafka_endpoint, kafka_topic, kafka_group, tmp_path, codec):
    """librdkafka's record batches, plain and in every compression a producer may choose,
    read in bulk."""
    topic = kafka_topic("kcat")
    lines = "".join(f"app-{i}|" + json.dumps({"id": f"app-{i}", "score": 0.25}) + "\n"
                    for i in range(300))  # fmt: skip
    subprocess.run(
        ["kcat", "-b", kafka_endpoint.bootstrap, "-t", topic, "-P", "-K", "|", "-z", codec],
        input=lines.encode(),
        check=True,
        timeout=120,
    )
    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path)
    try:
        ids, batches, bad, positions = drain(source, 300)
    finally:
        source.close()
    assert ids == [f"app-{i}" for i in range(300)]
    assert not bad
    assert positions == {f"{topic}:0": 300}
    assert source.reads_in_bulk
    batch = Batch.concat(batches)
    assert batch.position.tolist() == list(range(300))
    assert np.all(batch.score == 0.25)
    assert np.all(np.isfinite(batch.event_time))  # from the Kafka timestamps kcat set


@pytest.mark.parametrize("level", ["read_committed", "read_uncommitted"])
def test_aborted_transactions_are_not_counted(kafka_endpoint, kafka_topic, kafka_group, tmp_path,
                                              level):
    """A transactional producer's aborted messages (and the transaction markers the broker
    writes) are skipped in the bulk-read batches; ``read_uncommitted`` counts them."""
    topic = kafka_topic("tx")
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all",
                             transactional_id=f"tx-{kafka_group()}")
    producer.init_transactions()
    fates = ["commit", "abort", "commit", "abort", "commit"]
    for k, fate in enumerate(fates):
        producer.begin_transaction()
        for i in range(40):
            producer.send(topic, value=orjson.dumps({"id": f"{fate}-{k}-{i}", "score": 0.2}))
        producer.flush()  # in the log before the abort: an unsent message is just dropped
        if fate == "commit":
            producer.commit_transaction()
        else:
            producer.abort_transaction()
    producer.close()
    committed = [f"commit-{k}-{i}" for k, f in enumerate(fates) if f == "commit"
                 for i in range(40)]
    every = [f"{f}-{k}-{i}" for k, f in enumerate(fates) for i in range(40)]
    want = committed if level == "read_committed" else every
    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path,
                         isolation_level=level)
    try:
        ids, _, bad, _ = drain(source, len(want))
        for _ in range(3):  # nothing more comes (an aborted message would, late)
            more = source.poll(timeout_s=0.3)
            ids += [i for b in more.batches for i in b.ids.tolist()]
        assert source.reads_in_bulk
    finally:
        source.close()
    assert ids == want
    assert not bad


def test_schema_registry_framed_values(kafka_endpoint, kafka_topic, kafka_group, tmp_path):
    """Values framed as a schema registry's JSON serializer writes them (a zero byte, a
    4-byte schema id, the JSON) are read as the JSON; a binary (Avro) value beside them is
    dead-lettered, naming its schema id."""
    topic = kafka_topic("registry")
    framed = [b"\x00\x00\x00\x01\x2c" + v for v in events(0, 60)]
    produce(kafka_endpoint.bootstrap, topic, [*framed[:30], b"\x00\x00\x00\x00\x07\x02\x06e99",
                                              *framed[30:]])
    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path)
    try:
        ids, _, bad, _ = drain(source, 60)
        assert source.reads_in_bulk
    finally:
        source.close()
    assert ids == [f"e{i}" for i in range(60)]
    assert [(b.reason, b.position) for b in bad] == [("invalid_json", 30)]
    assert "schema id 7" in bad[0].detail


def test_offsets_move_only_on_commit(kafka_endpoint, kafka_topic, kafka_group, tmp_path):
    topic, group = kafka_topic("commit"), kafka_group()
    produce(kafka_endpoint.bootstrap, topic, events(0, 50))

    first = make_source(kafka_endpoint.bootstrap, topic, group, tmp_path)
    ids, *_ = drain(first, 50)
    first.close()  # crashed before its checkpoint: nothing committed
    assert ids == [f"e{i}" for i in range(50)]

    second = make_source(kafka_endpoint.bootstrap, topic, group, tmp_path)
    ids, _, _, positions = drain(second, 50)
    assert ids == [f"e{i}" for i in range(50)]  # read again
    second.commit(positions)  # the checkpoint is durable
    assert second.committed == {f"{topic}:0": 50}
    second.close()

    produce(kafka_endpoint.bootstrap, topic, events(50, 55))
    third = make_source(kafka_endpoint.bootstrap, topic, group, tmp_path)
    ids, *_ = drain(third, 5)
    third.close()
    assert ids == [f"e{i}" for i in range(50, 55)]  # only what came after the commit


def test_seek_resumes_from_checkpoint_positions(kafka_endpoint, kafka_topic, kafka_group, tmp_path):
    topic = kafka_topic("seek", partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    for i in range(40):
        producer.send(topic, value=events(i, i + 1)[0], partition=i % 2,
                      timestamp_ms=1_700_000_000_000 + i * 1000)  # fmt: skip
    producer.flush()
    producer.close()

    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path)
    source.seek({f"{topic}:0": 15, f"{topic}:1": 3, "some/file.jsonl": 7})
    try:
        ids, batches, _, positions = drain(source, 5 + 17)
    finally:
        source.close()
    # partition 0 holds e0, e2, ... at offsets 0..19; partition 1 holds e1, e3, ...
    expected = {f"e{2 * o}" for o in range(15, 20)} | {f"e{2 * o + 1}" for o in range(3, 20)}
    assert sorted(ids) == sorted(expected)
    assert positions == {f"{topic}:0": 20, f"{topic}:1": 20}
    batch = Batch.concat(batches)
    n = np.array([int(i[1:]) for i in batch.ids])
    assert np.array_equal(batch.event_time, 1_700_000_000 + n)  # Kafka timestamps, seconds


def test_survives_a_broker_restart_mid_stream(kafka_broker_factory, tmp_path):
    broker = kafka_broker_factory()
    bootstrap = broker.bootstrap
    topic = "restart"
    produce(bootstrap, topic, events(0, 100))
    source = make_source(bootstrap, topic, "g-restart", tmp_path)
    try:
        before, *_ = drain(source, 60, max_records=20)
        assert source.ready

        broker.stop()
        for _ in range(50):  # the client notices the lost connection within a few polls
            polled = source.poll(max_records=20, timeout_s=0.2)
            before += [i for b in polled.batches for i in b.ids.tolist()]  # already fetched
            if not source.ready:
                break
        assert not source.ready

        assert broker.start() == bootstrap  # same data, same address
        produce(bootstrap, topic, events(100, 150))
        after, *_ = drain(source, 150 - len(before), max_records=20, max_polls=400)
        assert source.ready
    finally:
        source.close()
    assert before + after == [f"e{i}" for i in range(150)]  # nothing lost, nothing twice


def test_waits_for_a_broker_that_is_down_at_start(kafka_broker_factory, tmp_path):
    broker = kafka_broker_factory()
    bootstrap = broker.bootstrap
    produce(bootstrap, "late", events(0, 10))
    broker.stop()

    source = make_source(bootstrap, "late", "g-late", tmp_path, retry_backoff_s=0.2,
                         retry_backoff_max_s=1.0)  # fmt: skip
    try:
        for _ in range(3):
            assert source.poll(timeout_s=0.2).n_events == 0
        assert not source.ready
        assert source.stats.connect_failures_total >= 1

        broker.start()
        ids, *_ = drain(source, 10)
        assert source.ready
    finally:
        source.close()
    assert ids == [f"e{i}" for i in range(10)]


def test_malformed_messages_go_to_the_dead_letter_topic(
    kafka_endpoint, kafka_topic, kafka_group, tmp_path
):
    topic, dlq = kafka_topic("mixed", partitions=2), kafka_topic("dlq")
    malformed = {
        2: ("invalid_json", lambda i: b"{not json #%d" % i),
        3: ("not_an_object", lambda i: orjson.dumps([i, 2, 3])),
        4: ("missing_id", lambda i: orjson.dumps({"score": 0.1, "n": i})),
    }
    values, expected_reason = [], {}
    for i in range(5000):
        if i % 5 in malformed:
            reason, make = malformed[i % 5]
            values.append(make(i))
            expected_reason[values[-1]] = reason
        else:
            values.append(orjson.dumps({"id": f"e{i}", "score": 0.5}))
    produce(kafka_endpoint.bootstrap, topic, values)

    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path,
                         dead_letter_topic=dlq)  # fmt: skip
    try:
        ids, _, bad, _ = drain(source, 2000)
        stats = source.stats
    finally:
        source.close()
    assert sorted(ids) == sorted(f"e{i}" for i in range(5000) if i % 5 in (0, 1))
    assert len(bad) == 3000
    assert stats.bad_by_reason == {"invalid_json": 1000, "not_an_object": 1000, "missing_id": 1000}
    assert stats.dead_letters_total == 3000 and stats.dead_letters_pending == 0

    reader = KafkaConsumer(bootstrap_servers=kafka_endpoint.bootstrap, group_id=kafka_group(),
                           auto_offset_reset="earliest", enable_auto_commit=False)  # fmt: skip
    reader.subscribe([dlq])
    dead = []
    for _ in range(200):
        for records in reader.poll(timeout_ms=500).values():
            dead += records
        if len(dead) >= 3000:
            break
    reader.close()
    assert len(dead) == 3000
    by_origin = {}
    for r in dead:
        h = {k: v.decode() for k, v in r.headers}
        assert h["dw-reason"] == expected_reason[r.value]
        assert h["dw-source-topic"] == topic
        by_origin[(int(h["dw-source-partition"]), int(h["dw-source-offset"]))] = r.value
    assert sorted(by_origin.values()) == sorted(expected_reason)  # each bad message once


def test_dead_letter_file_without_a_topic(kafka_endpoint, kafka_topic, kafka_group, tmp_path):
    topic = kafka_topic("dlfile")
    produce(kafka_endpoint.bootstrap, topic, [b"oops", *events(0, 2), b"\xff\xfe"])
    path = tmp_path / "dead.jsonl.gz"
    source = make_source(kafka_endpoint.bootstrap, topic, kafka_group(), tmp_path,
                         dead_letter_path=str(path))  # fmt: skip
    try:
        ids, *_ = drain(source, 2)
        for _ in range(20):
            if source.stats.bad_total == 2:
                break
            source.poll(timeout_s=0.5)
    finally:
        source.close()
    assert ids == ["e0", "e1"]
    lines = [json.loads(x) for x in gzip.decompress(path.read_bytes()).splitlines()]
    assert [(x["offset"], x["reason"], x["topic"]) for x in lines] == [
        (0, "invalid_json", topic),
        (3, "invalid_json", topic),
    ]
    assert decode_payload(lines[1]["value"], lines[1].get("value_encoding")) == b"\xff\xfe"


def test_recorder_writes_what_kafka_delivered(kafka_endpoint, kafka_topic, tmp_path):
    topic = kafka_topic("rec")
    producer = KafkaProducer(bootstrap_servers=kafka_endpoint.bootstrap, acks="all")
    sent = [(b"k0", b'{"id": "a"}'), (None, b"\x80binary"), (b"k2", "çé".encode())]
    for key, value in sent:
        producer.send(topic, key=key, value=value, timestamp_ms=1_700_000_000_123)
    producer.flush()
    producer.close()

    s = settings(kafka_endpoint.bootstrap, {topic: "predictions"}, "unused")
    summary = record(s, tmp_path / "rec.jsonl.gz")
    lines = [
        json.loads(x)
        for x in gzip.decompress((tmp_path / "rec.jsonl.gz").read_bytes()).splitlines()
    ]
    assert summary.messages == 3 and summary.positions == {f"{topic}:0": 3}
    assert [(x["topic"], x["partition"], x["offset"], x["timestamp"]) for x in lines] == [
        (topic, 0, i, 1_700_000_000_123) for i in range(3)
    ]
    assert lines[0]["value"] == '{"id": "a"}' and lines[0]["key"] == "k0"
    assert lines[1]["value_encoding"] == "base64" and lines[1]["key"] is None
    assert decode_payload(lines[1]["value"], "base64") == b"\x80binary"
    assert lines[2]["value"] == "çé"
