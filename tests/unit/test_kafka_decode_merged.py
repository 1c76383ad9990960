"""A poll's partitions of a topic are decoded in one call, as if each had been on its own.

``KafkaSource._decode`` hands the decoder every record of a topic at once (each call has a
fixed cost), with each record's partition. The result must be what decoding partition by
partition and concatenating gave: the same batch rows in the same order, the same dead
letters (each with its own partition) in the same order, and the same positions. The
reference below is that per-partition loop, written out here.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka import TopicPartition

from driftwatch.batch import Batch
from driftwatch.connectors.decode import MAX_MESSAGE_BYTES, Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_records import fetched
from driftwatch.connectors.kafka_sample import FirstRecords
from driftwatch.connectors.kafka_stats import KafkaSourceStats

from .test_decode_paths_agree import PLAIN, SCHEMA, STREAMS, WARM, assert_same, letters, line

TOPIC = "preds"


def _source() -> KafkaSource:
    src = object.__new__(KafkaSource)  # no broker: only the decoding runs
    src._streams = {TOPIC: "predictions"}
    dec = Decoder(STREAMS.stream("predictions"), SCHEMA)
    dec.decode_block(b"\n".join(WARM), source="warm")
    src._decoders = {"predictions": dec}
    src.stats = KafkaSourceStats()
    src._positions = {}
    src._first = FirstRecords([], n=0, wait_s=0.0)  # keeps nothing
    src._holds = PartitionHolds()  # nothing held: every value reads
    return src


def _per_partition(records: dict[Any, list[Any]]) -> tuple[Batch | None, list[Any]]:
    """The reference: one decoder call per partition, batches concatenated in order."""
    dec = Decoder(STREAMS.stream("predictions"), SCHEMA)
    dec.decode_block(b"\n".join(WARM), source="warm")
    batches, bad = [], []
    for tp, recs in records.items():
        if not recs:
            continue
        values = [b"" if r.value is None else r.value for r in recs]
        ts = np.array([r.timestamp for r in recs], dtype=np.float64)
        b, bb = dec.decode(values, source=tp.topic, positions=np.array([r.offset for r in recs]),
                           partition=tp.partition, timestamps=np.where(ts >= 0, ts / 1e3, np.nan))
        if len(b):
            batches.append(b)
        bad += bb
    return (Batch.concat(batches) if batches else None), bad


values = st.one_of(st.sampled_from(PLAIN), line, st.none(),
                   st.just(b'{"id":"' + b"x" * (MAX_MESSAGE_BYTES + 10) + b'"}'))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 10**6),
                                st.lists(values, max_size=60)),
                      min_size=1, max_size=5, unique_by=lambda t: t[0]))
def test_one_call_per_topic_gives_what_one_call_per_partition_gave(
    parts: list[tuple[int, int, list[bytes | None]]],
) -> None:
    records = {
        TopicPartition(TOPIC, p): [
            SimpleNamespace(value=v, key=None, offset=first + i,
                            timestamp=1_700_000_000_000 + i)
            for i, v in enumerate(vals)]
        for p, first, vals in parts
    }
    want_batch, want_bad = _per_partition(records)
    got = _source()._decode({tp: fetched(recs) for tp, recs in records.items() if recs})
    if want_batch is None:
        assert got.batches == []
    else:
        assert len(got.batches) == 1
        assert_same(got.batches[0], want_batch)
    assert letters(got.bad) == letters(want_bad)
    assert [b.partition for b in got.bad] == [b.partition for b in want_bad]
    assert got.positions == {f"{TOPIC}:{p}": first + len(vals)
                             for p, first, vals in parts if vals}
