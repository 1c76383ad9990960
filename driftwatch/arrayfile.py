"""One file of named raw arrays and a JSON header, closed by a checksum.

The layout is deliberately plain, so a file can be read with nothing but numpy::

    b"DWARRAY1"  u64 header length  header (UTF-8 JSON)  padding
    array 0 ... array k-1            each little-endian, C order, 64-byte aligned
    b"DWEND\\0\\0\\0"  u64 bytes before the trailer  u32 checksum of those bytes  u32 kind

The header is ``{"meta": ..., "arrays": [{"name", "dtype", "shape", "offset"}...]}``. The
checksum is CRC-32C (``kind`` 1, computed in hardware by the ``crc32c`` package, ~10 GB/s)
or, in files of earlier versions, zlib's CRC-32 (``kind`` 0). A file cut short, or with
one flipped bit, fails the trailer's length or checksum and :func:`read_arrays` raises
:class:`~driftwatch.errors.StateError`: a torn write is never read as state.
:func:`write_arrays` fsyncs before it returns.

:func:`file_crc` checks a file on a read-only map of it (no copy); :func:`read_arrays`
reads it in one pass into one buffer, of which the arrays are views.

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
import mmap
import os
import struct
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from driftwatch.errors import StateError

try:
    from crc32c import crc32c as _crc32c
except ImportError:  # pragma: no cover - a core dependency; zlib's CRC-32 then
    _crc32c = None

__all__ = ["file_crc", "read_arrays", "write_arrays"]

_MAGIC = b"DWARRAY1"
_END = b"DWEND\0\0\0"
_TRAILER = struct.Struct("<8sQII")
_ALIGN = 64
_CHUNK = 1 << 22
#: trailer ``kind`` -> checksum function ``f(data, running) -> int``
_CRC_ZLIB, _CRC_32C = 0, 1


def _checksum(kind: int, path: Path) -> Callable[[Any, int], int]:
    if kind == _CRC_ZLIB:
        return zlib.crc32
    if kind == _CRC_32C:
        if _crc32c is None:
            raise StateError(f"{path}: written with a CRC-32C checksum; install the crc32c "
                             "package to read it")
        return _crc32c
    raise StateError(f"{path}: damaged (unknown checksum kind {kind})")


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
    kind = _CRC_32C if _crc32c is not None else _CRC_ZLIB
    crc_of = _checksum(kind, Path(path))
    crc = crc_of(head, 0)
    total = len(head)
    with open(path, "wb") as fh:
        fh.write(head)
        for a in arrs.values():
            view = memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")
            fh.write(view)
            crc = crc_of(view, crc)
            pad = b"\0" * _pad(a.nbytes)
            fh.write(pad)
            crc = crc_of(pad, crc)
            total += a.nbytes + len(pad)
        fh.write(_TRAILER.pack(_END, total, crc, kind))
        fh.flush()
        os.fsync(fh.fileno())
    return total + _TRAILER.size


def _trailer(p: Path, buf: Any, size: int) -> tuple[int, int, int]:
    """``(bytes before the trailer, checksum, kind)`` of a file of ``size`` bytes held in
    ``buf``; StateError when it has no trailer or no magic."""
    body = size - _TRAILER.size
    if body < len(_MAGIC) + 8:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    end, total, want, kind = _TRAILER.unpack_from(buf, body)
    if end != _END or total != body or bytes(buf[: len(_MAGIC)]) != _MAGIC:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    return body, want, kind


def file_crc(path: str | Path) -> int:
    """The checksum a whole, intact array file carries, checked on a read-only map of
    the file (nothing copied, nothing kept open);
    :class:`~driftwatch.errors.StateError` when it is damaged."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < len(_MAGIC) + 8 + _TRAILER.size:
                raise StateError(f"{p}: damaged (cut short or not an array file)")
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise StateError(f"{p}: unreadable ({exc})") from exc
    try:
        body, want, kind = _trailer(p, mm, size)
        with memoryview(mm) as mv, mv[:body] as data:
            got = _checksum(kind, p)(data, 0)
    finally:
        mm.close()  # a map keeps a descriptor of its own: never more than one open
    if got != want:
        raise StateError(f"{p}: damaged (checksum mismatch)")
    return int(want)


def read_arrays(path: str | Path, *, verify: bool = True) -> tuple[Any, dict[str, np.ndarray]]:
    """``(meta, arrays)`` of a file :func:`write_arrays` wrote; the arrays are writable
    views of one buffer, read in one pass. ``verify=False`` skips the checksum (the
    caller checked it already, with :func:`file_crc`)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            buf = np.empty(size, np.uint8)  # not zeroed: the read fills it
            got = fh.readinto(memoryview(buf)) if size else 0
    except OSError as exc:
        raise StateError(f"{p}: unreadable ({exc})") from exc
    if got != size:
        raise StateError(f"{p}: damaged (cut short or not an array file)")
    body, want, kind = _trailer(p, buf, size)
    if verify and _checksum(kind, p)(memoryview(buf)[:body], 0) != want:
        raise StateError(f"{p}: damaged (checksum mismatch)")
    (hlen,) = struct.unpack_from("<Q", buf, len(_MAGIC))
    start = len(_MAGIC) + 8
    try:
        header = json.loads(buf[start : start + hlen].tobytes())
        base = start + hlen + _pad(start + hlen)
        arrays: dict[str, np.ndarray] = {}
        for e in header["arrays"]:
            dt = np.dtype(e["dtype"])
            shape = tuple(int(s) for s in e["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            off = base + int(e["offset"])
            if off < base or off + count * dt.itemsize > body:
                raise StateError(f"{p}: damaged (array {e['name']!r} runs past the end)")
            a = buf[off : off + count * dt.itemsize].view(dt).reshape(shape)
            arrays[e["name"]] = a if dt.isnative else a.astype(dt.newbyteorder("="))
        return header["meta"], arrays
    except (ValueError, KeyError, TypeError) as exc:
        raise StateError(f"{p}: damaged header ({exc})") from exc
