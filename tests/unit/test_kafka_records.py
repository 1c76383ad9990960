"""Record batches read in bulk hand out what kafka-python's own records hold.

The reference is kafka-python's ``PartitionRecords`` over the same fetched bytes, taken
in the same slices: each take must give the same records (offset, timestamp, key, value),
the same count, and leave the same next fetch offset, for batches written by
kafka-python's own builder with keys, nulls, headers, gaps (compaction), gzip,
transactions (aborted ones are skipped), a fetch offset inside a batch, and the broker's
timestamps. Both the compiled record loop and its fallback (kafka-python's records,
packed) are checked.
"""

from __future__ import annotations

import struct
from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.consumer.fetcher import Fetcher
from kafka.errors import CorruptRecordError
from kafka.protocol.consumer import IsolationLevel
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder
from kafka.record.util import calc_crc32c
from kafka.structs import TopicPartition

from driftwatch.connectors import kafka_records
from driftwatch.connectors.kafka_records import Fetched, _bulk_class, _Taken, fetched
from driftwatch.numba_setup import numba_enabled

TP = TopicPartition("preds", 2)
Bulk = _bulk_class(Fetcher.PartitionRecords)
LOOPS = kafka_records._LOOPS.get(wait=True)


def test_the_compiled_loop_loads_where_numba_runs() -> None:
    assert (LOOPS is not None) == numba_enabled()


def _no_loop() -> Any:
    return mock.patch.object(kafka_records._LOOPS, "get", lambda wait=False: None)


blob = st.binary(max_size=40)
record = st.fixed_dictionaries({
    "key": st.none() | blob,
    "value": st.none() | blob | st.sampled_from([b'{"id": "a", "x": 1.5}', b"", b"{}"]),
    "headers": st.lists(st.tuples(st.text(max_size=6), st.none() | blob), max_size=3),
    "ts": st.integers(0, 10**6),
    "gap": st.integers(0, 3),  # offsets removed before this record (compaction)
})
batch = st.fixed_dictionaries({
    "records": st.lists(record, min_size=1, max_size=12),
    "gzip": st.booleans(),
    "append_time": st.booleans(),  # the broker's timestamps (LogAppendTime)
    "producer": st.sampled_from([-1, 5, 6]),  # 5: its transactions are aborted
    "tail_gap": st.integers(0, 2),  # the batch's last offsets compacted away
    "control": st.sampled_from([None, 0, 1]),  # a transaction marker: abort (0), commit
})


def _write(batches: list[dict[str, Any]], first: int) -> tuple[bytes, int]:
    """The fetched bytes of ``batches`` from offset ``first``, and the offset after."""
    out, base = bytearray(), first
    for b in batches:
        tx = b["producer"] >= 0
        builder = MemoryRecordsBuilder(2, 1 if b["gzip"] else 0, 1 << 20, offset=0,
                                       transactional=tx, producer_id=b["producer"],
                                       producer_epoch=0 if tx else -1,
                                       base_sequence=0 if tx else -1)
        marker = b.get("control")
        rows = b["records"] if marker is None else [  # a marker: (version, type) as its key
            {"gap": 0, "ts": 0, "key": struct.pack(">hh", 0, marker), "value": bytes(6),
             "headers": []}]
        for r in rows:
            builder.skip(r["gap"])
            builder.append(1_700_000_000_000 + r["ts"], r["key"], r["value"], r["headers"])
        builder.close()
        raw = bytearray(builder.buffer())
        struct.pack_into(">q", raw, 0, base)  # the base offset (outside the checksum)
        # attributes bit 3: the broker's timestamps, bit 5: a control batch; the checksum
        # covers them: rewritten
        attrs = struct.unpack_from(">h", raw, 21)[0]
        attrs |= (0x08 if b["append_time"] else 0) | (0 if marker is None else 0x20)
        struct.pack_into(">h", raw, 21, attrs)
        struct.pack_into(">I", raw, 17, calc_crc32c(memoryview(raw)[21:]))
        last_delta = struct.unpack_from(">i", raw, 23)[0]
        base += last_delta + 1 + b["tail_gap"]
        out += raw
    return bytes(out), base


def _reader(cls: type, data: bytes, fetch_offset: int, committed: bool) -> Any:
    aborted = [SimpleNamespace(producer_id=5, first_offset=0)]
    level = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    return cls(fetch_offset, TP, MemoryRecords(data), check_crcs=True,
               isolation_level=level, aborted_transactions=aborted)


def _row(key: Any, value: Any) -> tuple[bytes | None, bytes]:
    return key, b"" if value is None else value


def _takes(reader: Any, sizes: list[int]) -> list[tuple[Any, ...]]:
    """What each take gives: its records, its count and the next fetch offset."""
    out: list[tuple[Any, ...]] = []
    for n in [*sizes, 1 << 20, 1]:
        if not reader:  # drained: kafka-python takes no more from it
            out.append(("drained", reader.next_fetch_offset))
            continue
        got = reader.take(n)
        if got and isinstance(got[0], Fetched):
            f = fetched(got)
            rows = [(int(o), int(t), *_row(f.key(i), f.value(i)))
                    for i, (o, t) in enumerate(zip(f.offsets, f.timestamps, strict=True))]
        else:
            rows = [(r.offset, r.timestamp, *_row(r.key, r.value)) for r in got]
        out.append((rows, len(got), reader.next_fetch_offset, bool(reader)))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(batch, min_size=1, max_size=5), first=st.integers(0, 10**9),
       skip=st.integers(0, 20), sizes=st.lists(st.integers(1, 15), max_size=6),
       committed=st.booleans(), compiled=st.booleans())
def test_bulk_takes_give_what_kafka_python_gives(batches, first, skip, sizes, committed,
                                                compiled) -> None:
    data, _ = _write(batches, first)
    want = _takes(_reader(Fetcher.PartitionRecords, data, first + skip, committed), sizes)
    with nullcontext() if compiled else _no_loop():
        got = _takes(_reader(Bulk, data, first + skip, committed), sizes)
    assert got == want


def test_a_poll_split_inside_a_batch_goes_on_where_it_stopped() -> None:
    records = [{"key": None, "value": b'{"i": %d}' % i, "headers": [], "ts": i, "gap": 0}
               for i in range(10)]
    one = {"records": records, "gzip": False, "append_time": False, "producer": -1,
           "tail_gap": 0}
    data, after = _write([one], 40)
    reader = _reader(Bulk, data, 43, committed=False)  # the batch starts at 40
    first = reader.take(4)
    assert len(first) == 4 and fetched(first).offsets.tolist() == [43, 44, 45, 46]
    assert reader.next_fetch_offset == 47
    rest = reader.take(100)
    assert fetched(rest).offsets.tolist() == [47, 48, 49]
    assert fetched(rest).value(0) == b'{"i": 7}'
    assert reader.take(1) == [] and reader.next_fetch_offset == after and not reader
    assert [len(got) for got in (first, rest)] == [4, 3]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_record_running_past_its_batch_is_corrupt(compiled: bool) -> None:
    records = [{"key": b"k", "value": b"vvvv", "headers": [], "ts": 0, "gap": 0}] * 3
    one = {"records": records, "gzip": False, "append_time": False, "producer": -1,
           "tail_gap": 0}
    data = bytearray(_write([one], 0)[0])
    data[61] = 0x7E  # the first record's length varint: 63, past the batch's end
    with nullcontext() if compiled else _no_loop():
        for cls in (Fetcher.PartitionRecords, Bulk):
            reader = cls(0, TP, MemoryRecords(bytes(data)), check_crcs=False)
            with pytest.raises(CorruptRecordError):
                reader.take(10)


def test_a_changed_byte_fails_the_checksum_in_both() -> None:
    records = [{"key": None, "value": b'{"a": 1}', "headers": [], "ts": 0, "gap": 0}] * 4
    one = {"records": records, "gzip": False, "append_time": False, "producer": -1,
           "tail_gap": 0}
    data = bytearray(_write([one], 0)[0])
    data[-3] ^= 0x01
    for cls in (Fetcher.PartitionRecords, Bulk):
        with pytest.raises(CorruptRecordError, match="crc"):
            cls(0, TP, MemoryRecords(bytes(data)), check_crcs=True).take(10)


def test_a_take_counts_records_not_runs() -> None:
    """kafka-python counts a take's length against ``max_records`` and extends its own
    list with it: the runs go in, counted by their records."""
    runs = _Taken()
    for first in (0, 10):
        list.append(runs, fetched([SimpleNamespace(offset=first + i, timestamp=0, key=None,
                                                   value=b"{}") for i in range(3)]))
    assert len(runs) == 6 and runs
    drained: list[Any] = []
    drained.extend(runs)
    assert len(drained) == 2 and all(isinstance(r, Fetched) for r in drained)


def test_concat_keeps_every_span() -> None:
    a = fetched([SimpleNamespace(offset=1, timestamp=5, key=b"ka", value=b"va")])
    b = fetched([SimpleNamespace(offset=7, timestamp=-1, key=None, value=None),
                 SimpleNamespace(offset=8, timestamp=9, key=b"", value=b"vb")])
    both = Fetched.concat([a, b])
    assert [both.value(i) for i in range(3)] == [b"va", b"", b"vb"]
    assert [both.key(i) for i in range(3)] == [b"ka", None, b""]
    assert both.offsets.tolist() == [1, 7, 8] and both.timestamps.tolist() == [5, -1, 9]
    lines = both.lines()
    assert [lines.raw(i) for i in range(3)] == [b"va", b"", b"vb"]
    assert both.value_bytes() == 4
    assert np.array_equal(both.cut(1).offsets, [7, 8])
