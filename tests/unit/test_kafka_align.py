"""A Kafka backlog read partition by partition reaches the windows in event time.

A fake consumer fetches each partition's records in runs (as kafka-python does: whole
fetches of one partition, then another), honours pause and resume, and reports each
partition's end only once it has fetched from it. The records ``KafkaSource`` hands out
must be each partition's, once, in merged event-time order (each partition here is in
time order, so the merged order is sorted); its positions must cover only what it handed
out, so that a crash at any poll, and a new source resuming from those positions, loses
and doubles nothing. A partition that never answers stops holding the others back after
``align_stall_s``, with a warning naming it.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("kafka")
from kafka import TopicPartition

from driftwatch.clock import ManualClock
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.schema import FeatureSchema

PRED, OUT = "dw.predictions", "dw.outcomes"


class FakeBroker:
    """Topic partitions of records; a consumer group of one."""

    def __init__(self, parts: dict[TopicPartition, list[tuple[str, float]]]) -> None:
        self.log = {tp: [SimpleNamespace(offset=i, value=b'{"id":"' + key.encode() + b'"}',
                                         timestamp=round(t * 1000), key=None)
                         for i, (key, t) in enumerate(recs)]
                    for tp, recs in parts.items()}
        self.committed: dict[TopicPartition, int] = {}


class FakeConsumer:
    """Fetches a run of at most ``fetch`` records per partition and poll, in a fixed
    rotation of partitions; a partition in ``silent`` never answers."""

    def __init__(self, broker: FakeBroker, fetch: int, rotate: int = 0,
                 silent: set | frozenset = frozenset()) -> None:
        self.broker, self.fetch, self.rotate, self.silent = broker, fetch, rotate, silent
        self.position_of: dict[TopicPartition, int] = {}
        self.end: dict[TopicPartition, int] = {}
        self.paused_set: set[TopicPartition] = set()
        self.listener: Any = None
        self.turn = 0
        self.waits: list[int] = []  # each poll's timeout_ms

    def subscribe(self, topics: list[str], listener: Any) -> None:
        self.listener = listener

    def poll(self, timeout_ms: int, max_records: int) -> dict:
        self.waits.append(timeout_ms)
        if not self.position_of:  # the first poll joins the group: everything assigned
            tps = set(self.broker.log)
            for tp in tps:
                self.position_of[tp] = self.broker.committed.get(tp, 0)
            self.listener.on_partitions_assigned(tps)
        order = sorted(self.broker.log)
        self.turn += 1
        k = (self.turn * self.rotate) % len(order)
        out, n = {}, 0
        for tp in order[k:] + order[:k]:
            if tp in self.paused_set or tp in self.silent or n >= max_records:
                continue
            at = self.position_of[tp]
            recs = self.broker.log[tp][at: at + min(self.fetch, max_records - n)]
            self.end[tp] = len(self.broker.log[tp])
            if recs:
                out[tp] = recs
                self.position_of[tp] = at + len(recs)
                n += len(recs)
        return out

    def highwater(self, tp: TopicPartition) -> int | None:
        return self.end.get(tp)

    def position(self, tp: TopicPartition) -> int:
        return self.position_of[tp]

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.position_of[tp] = offset

    def pause(self, *tps: TopicPartition) -> None:
        self.paused_set.update(tps)

    def resume(self, *tps: TopicPartition) -> None:
        self.paused_set.difference_update(tps)

    def paused(self) -> set[TopicPartition]:
        return set(self.paused_set)

    def commit(self, offsets: dict, timeout_ms: int = 0) -> None:
        self.broker.committed.update({tp: o.offset for tp, o in offsets.items()})

    def topics(self) -> set[str]:
        return {tp.topic for tp in self.broker.log}

    def metrics(self) -> dict:
        return {"consumer-metrics": {"connection-count": 1}}

    def close(self, **kw: Any) -> None:
        pass


def _source(consumer: FakeConsumer, tmp_path, clock: ManualClock, **kw: Any) -> KafkaSource:
    def stream(name: str) -> StreamMapping:
        return StreamMapping(name=name, event_id=FieldPath.parse("id"), role=name,
                             event_time=TimeField(None, source="kafka_timestamp"), features=())
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=("b:9092",), group_id="g"),
        topics=(KafkaTopic(PRED, "predictions"), KafkaTopic(OUT, "outcomes")),
        dead_letter_path=str(tmp_path / "dead.jsonl"), **kw)
    decoders = {n: Decoder(stream(n), FeatureSchema()) for n in ("predictions", "outcomes")}
    return KafkaSource(settings, decoders, clock=clock, consumer_factory=lambda **c: consumer)


def _drain(src: KafkaSource, clock: ManualClock, polls: int, max_records: int
           ) -> list[tuple[str, str, float]]:
    """What ``polls`` polls hand out, in order: (stream, id, event time)."""
    got: list[tuple[str, str, float]] = []
    for _ in range(polls):
        p = src.poll(max_records, timeout_s=0.0)
        clock.advance(0.1)
        rows = {b.stream: list(zip(b.ids.tolist(), b.event_time.tolist(), strict=True))
                for b in p.batches}
        streams = [b.stream for b in p.batches]
        at = dict.fromkeys(streams, 0)
        for k in ([] if p.order is None else p.order.tolist()):
            s = streams[k]
            got.append((s, *rows[s][at[s]]))
            at[s] += 1
        assert sum(at.values()) == p.n_events
        src.commit(p.positions)  # no checkpoint here: the positions are the state
    return got


def _parts(draw: Any, n_parts: int, n: int) -> dict[TopicPartition, list[tuple[str, float]]]:
    """``n`` predictions, each with an outcome 0-30 time units later, spread over
    ``n_parts`` partitions of each topic; every partition in time order. Times are whole
    milliseconds (a Kafka timestamp's), all distinct: the merged order is unique."""
    t = np.sort(np.array(draw(st.lists(st.integers(0, 500), min_size=n, max_size=n)),
                         dtype=np.float64))
    t = t + np.arange(n) * 0.001
    delay = np.array(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)), np.float64)
    part = draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n))
    parts: dict[TopicPartition, list[tuple[str, float]]] = {
        TopicPartition(topic, p): [] for topic in (PRED, OUT) for p in range(n_parts)}
    for i in range(n):
        parts[TopicPartition(PRED, part[i])].append((f"e{i}", 1e9 + t[i]))
    order = np.argsort(t + delay, kind="stable")
    for i in order.tolist():
        parts[TopicPartition(OUT, part[i])].append((f"e{i}", 1e9 + t[i] + delay[i] + 0.0005))
    return {tp: [(k, round(x * 1000) / 1000) for k, x in recs] for tp, recs in parts.items()}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n_parts=st.integers(1, 4), n=st.integers(1, 120),
       fetch=st.integers(1, 40), rotate=st.integers(0, 3), max_records=st.integers(5, 60))
def test_a_backlog_comes_out_in_event_time_once(tmp_path_factory, data, n_parts, n, fetch,
                                                 rotate, max_records) -> None:
    parts = _parts(data.draw, n_parts, n)
    broker = FakeBroker(parts)
    clock = ManualClock()
    src = _source(FakeConsumer(broker, fetch, rotate), tmp_path_factory.mktemp("a"), clock)
    got = _drain(src, clock, polls=40 + 4 * n, max_records=max_records)
    times = [t for _, _, t in got]
    assert times == sorted(times), "handed out out of event-time order"
    want = sorted((("predictions" if tp.topic == PRED else "outcomes"), k, t)
                  for tp, recs in parts.items() for k, t in recs)
    assert sorted(got) == want  # every record, once
    assert src.stats.held == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n_parts=st.integers(1, 3), n=st.integers(1, 80),
       fetch=st.integers(1, 30), crash_after=st.integers(0, 12))
def test_a_crash_at_any_poll_loses_and_doubles_nothing(tmp_path_factory, data, n_parts, n,
                                                        fetch, crash_after) -> None:
    """The committed offsets are the state: what the first source handed out before the
    crash and what a second one hands out from those offsets is every record once."""
    parts = _parts(data.draw, n_parts, n)
    broker = FakeBroker(parts)
    clock = ManualClock()
    first = _source(FakeConsumer(broker, fetch, 1), tmp_path_factory.mktemp("a"), clock)
    before = _drain(first, clock, polls=crash_after, max_records=25)
    # killed: whatever it held is gone with it
    second = _source(FakeConsumer(broker, fetch, 2), tmp_path_factory.mktemp("b"), clock)
    after = _drain(second, clock, polls=40 + 4 * n, max_records=25)
    got = before + after
    assert len(got) == len(set(got)), "a record handed out twice"
    assert len(got) == sum(map(len, parts.values())), "a record lost"
    assert [t for _, _, t in after] == sorted(t for _, _, t in after)


def test_a_partition_ahead_is_paused_while_the_ones_behind_catch_up(tmp_path) -> None:
    # partition 0 holds the first 100 time units, partition 1 the next 100: read
    # partition 1 first and nothing of it may go before partition 0 has been read
    parts = {TopicPartition(PRED, 0): [(f"a{i}", 1e9 + i) for i in range(100)],
             TopicPartition(PRED, 1): [(f"b{i}", 1e9 + 100 + i) for i in range(100)],
             TopicPartition(OUT, 0): [], TopicPartition(OUT, 1): []}
    slow = TopicPartition(PRED, 0)
    consumer = FakeConsumer(FakeBroker(parts), fetch=50, silent={slow})  # not answering yet
    clock = ManualClock()
    src = _source(consumer, tmp_path, clock)
    assert _drain(src, clock, polls=3, max_records=50) == []
    assert TopicPartition(PRED, 1) in consumer.paused_set  # it holds a poll's worth
    assert src.positions[f"{PRED}:1"] == 0  # nothing of it handed out: nothing committed
    consumer.silent = frozenset()
    got = _drain(src, clock, polls=10, max_records=50)
    assert [k for _, k, _ in got] == [f"a{i}" for i in range(100)] + [f"b{i}" for i in range(100)]


def test_a_partition_that_never_answers_stops_holding_the_others_back(tmp_path,
                                                                       caplog) -> None:
    parts = {TopicPartition(PRED, 0): [(f"a{i}", 1e9 + i) for i in range(10)],
             TopicPartition(PRED, 1): [(f"b{i}", 1e9 + i) for i in range(10)],
             TopicPartition(OUT, 0): [], TopicPartition(OUT, 1): []}
    consumer = FakeConsumer(FakeBroker(parts), fetch=50,
                            silent=frozenset({TopicPartition(PRED, 1)}))
    clock = ManualClock()
    src = _source(consumer, tmp_path, clock, align_stall_s=5.0)
    assert _drain(src, clock, polls=10, max_records=50) == []  # 1 s: still waiting for it
    with caplog.at_level(logging.WARNING, logger="driftwatch.connectors.kafka"):
        clock.advance(5.0)
        got = _drain(src, clock, polls=1, max_records=50)
    assert [k for _, k, _ in got] == [f"a{i}" for i in range(10)]
    assert f"{PRED}:1 behind but fetched nothing for 5s" in caplog.text


def test_alignment_off_hands_records_out_as_fetched(tmp_path) -> None:
    parts = {TopicPartition(PRED, 0): [(f"a{i}", 1e9 + 100 + i) for i in range(5)],
             TopicPartition(PRED, 1): [(f"b{i}", 1e9 + i) for i in range(5)],
             TopicPartition(OUT, 0): [], TopicPartition(OUT, 1): []}
    clock = ManualClock()
    src = _source(FakeConsumer(FakeBroker(parts), fetch=50), tmp_path, clock,
                  align_event_time=False)
    p = src.poll(50, timeout_s=0.0)
    assert p.order is None and sorted(p.batches[0].ids.tolist()) == sorted(
        [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)])


def test_a_pause_kept_across_a_rebalance_is_lifted(tmp_path) -> None:
    """kafka-python keeps a partition's pause when a rebalance leaves it with the same
    member; the source drops what it held for it and must fetch it again."""
    parts = {TopicPartition(PRED, 0): [(f"a{i}", 1e9 + i) for i in range(200)],
             TopicPartition(PRED, 1): [(f"b{i}", 1e9 + 300 + i) for i in range(200)],
             TopicPartition(OUT, 0): [], TopicPartition(OUT, 1): []}
    broker = FakeBroker(parts)
    ahead = TopicPartition(PRED, 1)
    consumer = FakeConsumer(broker, fetch=60, silent={TopicPartition(PRED, 0)})
    clock = ManualClock()
    src = _source(consumer, tmp_path, clock)
    assert _drain(src, clock, polls=3, max_records=50) == []
    assert ahead in consumer.paused_set
    consumer.listener.on_partitions_revoked(set(broker.log))  # a rebalance: all stay here
    for tp in broker.log:
        consumer.position_of[tp] = broker.committed.get(tp, 0)
    consumer.listener.on_partitions_assigned(set(broker.log))
    consumer.silent = frozenset()
    got = _drain(src, clock, polls=20, max_records=50)
    assert [k for _, k, _ in got] == [f"a{i}" for i in range(200)] + [f"b{i}" for i in range(200)]


def test_held_records_ready_to_leave_do_not_wait_for_the_broker(tmp_path) -> None:
    """Records held while a partition was behind all become ready once it catches up, and
    leave max_records a poll; while more are ready the source must not sit in the client's
    poll for its timeout (a second per poll, when the client has nothing new)."""
    parts = {TopicPartition(PRED, 0): [(f"a{i}", 1e9 + 2 * i) for i in range(100)],
             TopicPartition(PRED, 1): [(f"b{i}", 1e9 + 2 * i + 1) for i in range(100)],
             TopicPartition(OUT, 0): [], TopicPartition(OUT, 1): []}
    consumer = FakeConsumer(FakeBroker(parts), fetch=100, silent={TopicPartition(PRED, 1)})
    clock = ManualClock()
    src = _source(consumer, tmp_path, clock)
    sizes = [src.poll(40, timeout_s=1.0).n_events for _ in range(3)]
    consumer.silent = frozenset()
    sizes += [src.poll(40, timeout_s=1.0).n_events for _ in range(12)]
    assert sum(sizes) == 200 and sizes[:3] == [0, 0, 0]
    assert sizes.count(40) == 5
    # the poll after a take cut at max_records does not wait; any other waits as asked
    for before, wait in zip(sizes, consumer.waits[1:], strict=False):
        assert wait == (0 if before == 40 else 1000)
