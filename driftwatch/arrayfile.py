"""One file of named raw arrays and a JSON header, closed by a checksum.

The layout is deliberately plain, so a file can be read with nothing but numpy::

    b"DWARRAY1"  u64 header length  header (UTF-8 JSON)  padding
    array 0 ... array k-1            each little-endian, C order, 64-byte aligned
    b"DWEND\\0\\0\\0"  u64 bytes before the trailer  u32 CRC-32 of those bytes  u32 0

The header is ``{"meta": ..., "arrays": [{"name", "dtype", "shape", "offset"}...]}``. A
file cut short, or with one flipped bit, fails the trailer's length or CRC and
:func:`read_arrays` raises :class:`~driftwatch.errors.StateError`: a torn write is never
read as state. :func:`write_arrays` fsyncs before it returns.

>>> import tempfile, pathlib, numpy as np
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.arr"
>>> size = write_arrays(p, {"note": "hi"}, {"a": np.arange(3.0), "b": np.ones((2, 2), np.int32)})
>>> meta, arrays = read_arrays(p)
>>> meta, arrays["a"].tolist(), arrays["b"].dtype.str, arrays["b"].shape
({'note': 'hi'}, [0.0, 1.0, 2.0], '<i4', (2, 2))
>>> _ = p.write_bytes(p.read_bytes()[:-3])  # torn
>>> read_arrays(p)
Traceback (most recent call last):
...
driftwatch.errors.StateError: ...x.arr: damaged (cut short or not an array file)
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from driftwatch.errors import StateError

__all__ = ["file_crc", "read_arrays", "write_arrays"]

_MAGIC = b"DWARRAY1"
_END = b"DWEND\0\0\0"
_TRAILER = struct.Struct("<8sQII")
_ALIGN = 64
_CHUNK = 1 << 22


def _pad(n: int) -> int:
    return -n % _ALIGN


def _little(a: np.ndarray) -> np.ndarray:
    a = a if a.flags.c_contiguous else a.copy(order="C")  # (keeps 0-d arrays 0-d)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and not _NATIVE_LITTLE):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


_NATIVE_LITTLE = np.dtype("=i4").str == "<i4"


def write_arrays(path: str | Path, meta: Any, arrays: Mapping[str, np.ndarray]) -> int:
    """Write ``meta`` (JSON-safe; NaN and infinities allowed) and ``arrays``; fsync.

    Returns the file's size in bytes. Object arrays are refused (a :class:`TypeError`)."""
    arrs = {str(k): _little(np.asarray(v)) for k, v in arrays.items()}
    for name, a in arrs.items():
        if a.dtype.hasobject:
            raise TypeError(f"array {name!r} holds Python objects; only plain dtypes are stored")
    entries, offset = [], 0
    for name, a in arrs.items():
        entries.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape),
                        "offset": offset})
        offset += a.nbytes + _pad(a.nbytes)
    header = json.dumps({"meta": meta, "arrays": entries}, separators=(",", ":")).encode()
    head = _MAGIC + struct.pack("<Q", len(header)) + header
    head += b"\0" * _pad(len(head))
    crc = zlib.crc32(head)
    total = len(head)
    with open(path, "wb") as fh:
        fh.write(head)
        for a in arrs.values():
            view = memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")
            fh.write(view)
            crc = zlib.crc32(view, crc)
            pad = b"\0" * _pad(a.nbytes)
            fh.write(pad)
            crc = zlib.crc32(pad, crc)
            total += a.nbytes + len(pad)
        fh.write(_TRAILER.pack(_END, total, crc, 0))
        fh.flush()
        os.fsync(fh.fileno())
    return total + _TRAILER.size


def file_crc(path: str | Path) -> int:
    """The CRC-32 a whole, intact array file carries (read in chunks, nothing kept);
    :class:`~driftwatch.errors.StateError` when it is damaged."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            body = size - _TRAILER.size
            if body < len(_MAGIC) + 8:
                raise StateError(f"{p}: damaged (cut short or not an array file)")
            crc, left = 0, body
            while left:
                chunk = fh.read(min(_CHUNK, left))
                if not chunk:
                    break
                crc = zlib.crc32(chunk, crc)
                left -= len(chunk)
            end, total, want, _ = _TRAILER.unpack(fh.read(_TRAILER.size))
    except OSError as exc:
        raise StateError(f"{p}: unreadable ({exc})") from exc
    except struct.error:
        raise StateError(f"{p}: damaged (cut short or not an array file)") from None
    if end != _END or total != body or left:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    if crc != want:
        raise StateError(f"{p}: damaged (checksum mismatch)")
    return want


def read_arrays(path: str | Path, *, verify: bool = True) -> tuple[Any, dict[str, np.ndarray]]:
    """``(meta, arrays)`` of a file :func:`write_arrays` wrote; the arrays are writable
    views of one buffer. ``verify=False`` skips the CRC (the caller checked it already)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            buf = bytearray(size)
            got = fh.readinto(buf)
    except OSError as exc:
        raise StateError(f"{p}: unreadable ({exc})") from exc
    body = size - _TRAILER.size
    if got != size or body < len(_MAGIC) + 8 or buf[: len(_MAGIC)] != _MAGIC:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    end, total, want, _ = _TRAILER.unpack_from(buf, body)
    if end != _END or total != body:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    mv = memoryview(buf)
    if verify and zlib.crc32(mv[:body]) != want:
        raise StateError(f"{p}: damaged (checksum mismatch)")
    (hlen,) = struct.unpack_from("<Q", buf, len(_MAGIC))
    start = len(_MAGIC) + 8
    try:
        header = json.loads(bytes(mv[start : start + hlen]))
    except ValueError as exc:
        raise StateError(f"{p}: damaged header ({exc})") from exc
    base = start + hlen + _pad(start + hlen)
    arrays: dict[str, np.ndarray] = {}
    for e in header["arrays"]:
        dt = np.dtype(e["dtype"])
        shape = tuple(int(s) for s in e["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        off = base + int(e["offset"])
        if off + count * dt.itemsize > body:
            raise StateError(f"{p}: damaged (array {e['name']!r} runs past the end)")
        a = np.frombuffer(buf, dtype=dt, count=count, offset=off).reshape(shape)
        arrays[e["name"]] = a if dt.isnative else a.astype(dt.newbyteorder("="))
    return header["meta"], arrays
