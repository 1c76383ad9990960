"""A partition's fetched Kafka records as columns, read in bulk from the record batches.

kafka-python hands out one ``ConsumerRecord`` per message and reads each record's
fields in Python first (varints, slices, a named tuple): about 10 µs a record, most of a
bare consumer loop's time. The source needs none of those objects: its decoder scans
value spans in a buffer (:class:`~driftwatch.connectors.jsonblock.Lines`), and it keeps
the offsets and timestamps as arrays. So :func:`read_in_bulk` has the consumer's fetcher
hand out each record batch as one :class:`Fetched` instead: the batch's own buffer, with
every record's offset, timestamp, key and value span found by one compiled pass
(:mod:`driftwatch.connectors._recordloops`).

Everything else stays kafka-python's: fetching, CRC checks, decompression, transactions
(aborted batches and control records are skipped exactly as it skips them), pauses,
positions and ``max_records``, which still counts records (a batch is split where a poll
is full, and the rest handed out next). Without numba, while the loop loads, and for old
message formats, a batch is read by kafka-python's records and packed into a
:class:`Fetched` all the same; a consumer whose fetcher is not the one known here is left
as it is, and :func:`fetched` packs its records.

>>> from types import SimpleNamespace as R
>>> f = fetched([R(offset=7, timestamp=1000, key=None, value=b'{"a": 1}'),
...              R(offset=9, timestamp=-1, key=b"k", value=None)])
>>> len(f), f.first_offset, f.last_offset, f.value(0), f.value(1), f.key(1), f.key(0)
(2, 7, 9, b'{"a": 1}', b'', b'k', None)
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.connectors.jsonblock import Lines
from driftwatch.numba_setup import LoadedLater

__all__ = ["Fetched", "fetched", "read_in_bulk"]

log = logging.getLogger(__name__)

_LOG_APPEND_TIME = 1  # a batch's timestamp type: the broker's time, one for all records


@dataclass(frozen=True, slots=True, eq=False)
class Fetched:
    """Records of one partition, in offset order, as spans of one buffer.

    A null value reads as empty (``start == end``), as an empty message does; a null key
    has length -1. ``timestamps`` are epoch milliseconds, -1 where a record has none.
    """

    buf: bytes | bytearray
    offsets: np.ndarray  # int64
    timestamps: np.ndarray  # int64
    starts: np.ndarray  # value spans: buf[starts[i]:ends[i]]
    ends: np.ndarray
    key_starts: np.ndarray
    key_lens: np.ndarray  # -1: a null key

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def first_offset(self) -> int:
        return int(self.offsets[0])

    @property
    def last_offset(self) -> int:
        return int(self.offsets[-1])

    def value(self, i: int) -> bytes:
        return bytes(self.buf[int(self.starts[i]) : int(self.ends[i])])

    def key(self, i: int) -> bytes | None:
        size = int(self.key_lens[i])
        at = int(self.key_starts[i])
        return None if size < 0 else bytes(self.buf[at : at + size])

    def values(self) -> Iterator[bytes]:
        return (self.value(i) for i in range(len(self)))

    def lines(self) -> Lines:
        """The values as rows for the decoder (the buffer holds more than the values)."""
        return Lines(bytes(self.buf), self.starts, self.ends, whole=False)

    def value_bytes(self) -> int:
        return int((self.ends - self.starts).sum())

    def cut(self, lo: int, hi: int | None = None) -> Fetched:
        """Records ``lo`` to ``hi`` (views: the buffer is shared)."""
        s = slice(lo, hi)
        return Fetched(self.buf, self.offsets[s], self.timestamps[s], self.starts[s],
                       self.ends[s], self.key_starts[s], self.key_lens[s])

    @classmethod
    def concat(cls, parts: Sequence[Fetched]) -> Fetched:
        """One :class:`Fetched` of ``parts`` in order, over one buffer."""
        if len(parts) == 1:
            return parts[0]
        shift = np.cumsum([0, *(len(p.buf) for p in parts[:-1])], dtype=np.int64)

        def cat(name: str, moved: bool) -> np.ndarray:
            cols = [getattr(p, name) for p in parts]
            if moved:
                cols = [c + d for c, d in zip(cols, shift, strict=True)]
            return np.concatenate(cols) if cols else np.zeros(0, np.int64)

        return cls(b"".join(p.buf for p in parts), cat("offsets", False),
                   cat("timestamps", False), cat("starts", True), cat("ends", True),
                   cat("key_starts", True), cat("key_lens", False))

    @classmethod
    def from_records(cls, records: Sequence[Any]) -> Fetched:
        """Pack records with kafka-python's ``offset``, ``timestamp``, ``key``, ``value``."""
        n = len(records)
        values = [b"" if r.value is None else r.value for r in records]
        keys = [r.key for r in records]
        vlen = np.fromiter(map(len, values), np.int64, n)
        klen = np.fromiter((-1 if k is None else len(k) for k in keys), np.int64, n)
        starts = np.concatenate(([0], np.cumsum(vlen)[:-1])).astype(np.int64) if n else vlen
        key_starts = int(vlen.sum()) + np.concatenate(
            ([0], np.cumsum(np.maximum(klen, 0))[:-1])).astype(np.int64) if n else klen
        buf = b"".join(values) + b"".join(k for k in keys if k is not None)
        return cls(buf, np.fromiter((r.offset for r in records), np.int64, n),
                   np.fromiter((-1 if r.timestamp is None else r.timestamp for r in records),
                               np.int64, n),
                   starts, starts + vlen, key_starts, klen)


def fetched(records: Sequence[Any]) -> Fetched:
    """A poll's records of one partition as one :class:`Fetched`: what the bulk reader
    handed out, or kafka-python's own records (a consumer without it)."""
    if records and all(isinstance(r, Fetched) for r in records):
        return Fetched.concat(records)
    return Fetched.from_records(records)


# -- reading record batches ---------------------------------------------------------------
def _load_loops() -> Any:
    from driftwatch.connectors import _recordloops as loops

    # one record: length 8, attributes, ts +2, offset +1, null key, value "ab", no headers
    rec = bytes([16, 0, 4, 2, 1, 4]) + b"ab" + bytes([0])
    out = np.empty((1, 6), np.int64)
    status, n, body = loops.read_records(np.frombuffer(rec, np.uint8), 0, 1, out)
    assert (status, n, body) == (0, 1, 8) and out[0].tolist() == [1, 2, 5, -1, 6, 2]
    return loops


_LOOPS = LoadedLater("Kafka record reader", _load_loops)


def _read_batch(batch: Any) -> tuple[Fetched, int]:
    """A message format v2 batch's records (decompressed) and their bytes."""
    loops = _LOOPS.get()
    iter(batch)  # kafka-python decompresses the records here
    buf = getattr(batch, "_buffer", None)
    pos = getattr(batch, "_pos", None)
    if loops is None or not isinstance(buf, bytearray) or not isinstance(pos, int):
        return _by_record(batch)
    n = max(int(batch.records_count), 0)
    out = np.empty((n, 6), np.int64)
    status, got, body = loops.read_records(np.frombuffer(buf, np.uint8), pos, n, out)
    if status:
        from kafka.errors import CorruptRecordError

        raise CorruptRecordError(f"Found invalid record structure: {loops.ERRORS[status]} "
                                 f"(record {got} of the batch at offset {batch.base_offset})")
    if batch.timestamp_type == _LOG_APPEND_TIME:
        ts = np.full(n, batch.max_timestamp, np.int64)
    else:
        ts = batch.first_timestamp + out[:, 1]
    starts = out[:, 4].copy()
    return Fetched(buf, batch.base_offset + out[:, 0], ts, starts,
                   starts + np.maximum(out[:, 5], 0), out[:, 2].copy(), out[:, 3].copy()), body


def _by_record(batch: Any, check_crcs: bool = False) -> tuple[Fetched, int]:
    records = []
    for record in batch:
        if check_crcs and not record.validate_crc():
            from kafka.errors import CorruptRecordError

            raise CorruptRecordError(f"Record at offset {record.offset} failed crc check")
        records.append(record)
    return Fetched.from_records(records), sum(r.size_in_bytes for r in records)


class _Taken(list):  # type: ignore[type-arg]
    """Runs handed out by one ``take``; its length is their records' (kafka-python counts
    what ``take`` gives against ``max_records``)."""

    def __len__(self) -> int:
        return sum(len(run) for run in self)


@functools.cache
def _bulk_class(base: type) -> type:
    """kafka-python's ``PartitionRecords`` handing out :class:`Fetched` runs."""
    from kafka.consumer.fetcher import IsolationLevel
    from kafka.errors import CorruptRecordError

    class BulkRecords(base):  # type: ignore[misc, valid-type]
        _rest: Fetched | None = None

        def _maybe_skip_record(self, record: Any) -> bool:
            return False  # records before the fetch offset are cut in _unpack_records

        def take(self, n: int | None = None) -> list[Fetched]:
            self._maybe_raise_next_inline_exception()
            taken = _Taken()
            want = n if n is not None else 1 << 62
            try:
                while want > 0:
                    run, self._rest = self._rest, None
                    if run is None:
                        if self.record_iterator is None:
                            break
                        run = next(self.record_iterator, None)
                        if run is None:
                            break
                    if len(run) > want:
                        run, self._rest = run.cut(0, want), run.cut(want)
                    self.next_fetch_offset = run.last_offset + 1
                    taken.append(run)
                    want -= len(run)
            except Exception as exc:
                if not taken:  # (runs are never empty: no records, no runs)
                    raise
                self._next_inline_exception = exc  # raised by the next take, as kafka-python
            return taken

        def _unpack_records(self, tp: Any, records: Any, key_deserializer: Any,
                            value_deserializer: Any) -> Iterator[Fetched]:
            batch = records.next_batch()
            last_batch = None
            while batch is not None:
                last_batch = batch
                if self.check_crcs and not batch.validate_crc():
                    raise CorruptRecordError(f"Record batch for partition {tp} at offset "
                                             f"{batch.base_offset} failed crc check")
                if batch.magic == 2:
                    self.leader_epoch = batch.leader_epoch
                    if self._skipped(batch):
                        self.next_fetch_offset = batch.next_offset
                        batch = records.next_batch()
                        continue
                    run, size = _read_batch(batch)
                else:  # message formats 0 and 1 (brokers before 0.11)
                    run, size = _by_record(batch, self.check_crcs)
                if len(run) and run.first_offset < self.fetch_offset:
                    run = run.cut(int(np.searchsorted(run.offsets, self.fetch_offset)))
                if len(run):
                    self.records_read += len(run)
                    self.bytes_read += size
                    yield run
                batch = records.next_batch()
            # format v2 keeps a batch's last offset even when compaction removed its last
            # record: going on from there never fetches the same batch again
            if last_batch is not None and last_batch.magic == 2:
                self.next_fetch_offset = last_batch.next_offset
            self.drain()

        def _skipped(self, batch: Any) -> bool:
            """Aborted transactions and control records are not handed out (as
            kafka-python's own ``_unpack_records`` does)."""
            if (self.isolation_level == IsolationLevel.READ_COMMITTED
                    and batch.has_producer_id()):
                self._consume_aborted_transactions_up_to(batch.last_offset)
                if self._contains_abort_marker(batch):
                    self.aborted_producer_ids.discard(batch.producer_id)
                elif self._is_batch_aborted(batch):
                    return True
            return bool(batch.is_control_batch)

    return BulkRecords


_NEEDED = ("_unpack_records", "take", "_maybe_skip_record", "_maybe_raise_next_inline_exception",
           "_consume_aborted_transactions_up_to", "_is_batch_aborted", "_contains_abort_marker",
           "drain")


def read_in_bulk(consumer: Any) -> bool:
    """Have ``consumer`` (a kafka-python ``KafkaConsumer`` without deserializers) hand out
    :class:`Fetched` runs; False, leaving it as it is, where its fetcher is not the one
    known here."""
    fetcher = getattr(consumer, "_fetcher", None)
    base = getattr(type(fetcher), "PartitionRecords", None)
    config = getattr(fetcher, "config", None)
    bulk = None
    if (base is not None and isinstance(config, dict)
            and all(hasattr(base, name) for name in _NEEDED)
            and not config.get("key_deserializer") and not config.get("value_deserializer")):
        try:
            bulk = _bulk_class(base)
        except ImportError:  # a kafka-python without the names it uses
            bulk = None
    if bulk is None:
        log.info("kafka records are read one by one (not a fetcher known here)")
        return False
    _LOOPS.get()  # start loading the compiled loop
    fetcher.PartitionRecords = bulk
    return True
