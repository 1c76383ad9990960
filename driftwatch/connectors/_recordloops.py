"""The Kafka record reader's loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.connectors.kafka_records` for where it runs).

One pass over a record batch's records (message format v2, after decompression) finds
each record's offset and timestamp deltas and where its key and value lie; nothing is
copied and no Python object is built per record. The layout, per record::

    length varint, attributes int8, timestamp delta varlong, offset delta varint,
    key length varint + key, value length varint + value,
    header count varint + (key length varint + key, value length varint + value) * count

Varints are zigzag-encoded, as Kafka (and kafka-python's ``decode_varint``) read them; a
negative key or value length is a null. A batch whose records do not fill it exactly, a
varint longer than 64 bits, a negative header count or header key length, or a length
that runs past the batch is corrupt: the loop stops and says which (:data:`ERRORS`).
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["ERRORS", "read_records"]

#: What each status of :func:`read_records` means (0 is success)
ERRORS = {
    1: "a record runs past the end of its batch",
    2: "a varint longer than 64 bits",
    3: "a negative header count",
    4: "a negative header key length",
    5: "a record's length does not match its fields",
    6: "bytes left over after the batch's last record",
}

# no reference counts: ``_varint`` takes the batch's bytes several times a record
# (see numba_setup)
_jit = compiled(inline="always", refcounts=False)


@_jit
def _varint(buf: np.ndarray, pos: int, end: int) -> tuple[int, int, int]:
    """(value, next position, status) of the zigzag varint at ``pos``."""
    acc = np.uint64(0)
    shift = 0
    while True:
        if pos >= end:
            return 0, pos, 1
        b = np.uint64(buf[pos])
        pos += 1
        acc |= (b & np.uint64(0x7F)) << np.uint64(shift)
        if b < np.uint64(0x80):
            break
        shift += 7
        if shift >= 64:
            return 0, pos, 2
    value = np.int64(acc >> np.uint64(1)) ^ -np.int64(acc & np.uint64(1))
    return value, pos, 0


@compiled(refcounts=False)
def read_records(buf: np.ndarray, pos: int, n: int, out: np.ndarray) -> tuple[int, int, int]:
    """Read ``n`` records from ``buf[pos:]`` into ``out`` (int64, ``n`` x 6 columns:
    offset delta, timestamp delta, key start, key length, value start, value length; a
    null is length -1). Returns (status, records read, bytes of the records' bodies)."""
    end = buf.shape[0]
    body = 0
    for i in range(n):
        length, pos, st = _varint(buf, pos, end)
        if st:
            return st, i, body
        first = pos
        if length < 0 or first + length > end:
            return 1, i, body
        pos += 1  # attributes (unused)
        ts, pos, st = _varint(buf, pos, end)
        if st:
            return st, i, body
        off, pos, st = _varint(buf, pos, end)
        if st:
            return st, i, body
        out[i, 0] = off
        out[i, 1] = ts
        for col in (2, 4):  # key, then value
            size, pos, st = _varint(buf, pos, end)
            if st:
                return st, i, body
            out[i, col] = pos
            if size < 0:
                out[i, col + 1] = -1
            else:
                if pos + size > end:
                    return 1, i, body
                out[i, col + 1] = size
                pos += size
        headers, pos, st = _varint(buf, pos, end)
        if st:
            return st, i, body
        if headers < 0:
            return 3, i, body
        for _ in range(headers):
            size, pos, st = _varint(buf, pos, end)
            if st:
                return st, i, body
            if size < 0:
                return 4, i, body
            pos += size
            size, pos, st = _varint(buf, pos, end)
            if st:
                return st, i, body
            if size > 0:
                pos += size
            if pos > end:
                return 1, i, body
        if pos - first != length:
            return 5, i, body
        body += length
    if pos != end:
        return 6, n, body
    return 0, n, body
