"""Event-id keys in compiled code (imported only when numba is; see :mod:`driftwatch.idhash`).

For each id of a numpy unicode array (UTF-32 code points, padded with zeros), its UTF-8
bytes are hashed with SipHash-2-4 under pandas' default key (``"0123456789123456"``) and
then mixed as ``pandas.util.hash_array`` mixes them: the keys are bit for bit pandas',
which checkpoints and the label join already hold. An id with a surrogate code point
(which has no UTF-8 form) is flagged for the caller to hand to pandas.
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["hash_utf32"]

_K0 = np.uint64(int.from_bytes(b"01234567", "little"))
_K1 = np.uint64(int.from_bytes(b"89123456", "little"))
_jit = compiled(inline="always")


@_jit
def _rotl(x: np.uint64, b: int) -> np.uint64:
    return (x << np.uint64(b)) | (x >> np.uint64(64 - b))


@_jit
def _rounds(v0: np.uint64, v1: np.uint64, v2: np.uint64, v3: np.uint64,
            times: int) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    for _ in range(times):
        v0 += v1
        v1 = _rotl(v1, 13)
        v1 ^= v0
        v0 = _rotl(v0, 32)
        v2 += v3
        v3 = _rotl(v3, 16)
        v3 ^= v2
        v0 += v3
        v3 = _rotl(v3, 21)
        v3 ^= v0
        v2 += v1
        v1 = _rotl(v1, 17)
        v1 ^= v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


@_jit
def _siphash(buf: np.ndarray, n: int) -> np.uint64:
    v0 = _K0 ^ np.uint64(0x736F6D6570736575)
    v1 = _K1 ^ np.uint64(0x646F72616E646F6D)
    v2 = _K0 ^ np.uint64(0x6C7967656E657261)
    v3 = _K1 ^ np.uint64(0x7465646279746573)
    full = n - n % 8
    for at in range(0, full, 8):
        m = np.uint64(0)
        for j in range(8):
            m |= np.uint64(buf[at + j]) << np.uint64(8 * j)
        v3 ^= m
        v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = np.uint64(n & 0xFF) << np.uint64(56)
    for j in range(n - full):
        last |= np.uint64(buf[full + j]) << np.uint64(8 * j)
    v3 ^= last
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= np.uint64(0xFF)
    v0, v1, v2, v3 = _rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


@compiled()
def hash_utf32(points: np.ndarray, out: np.ndarray) -> int:
    """Keys of ``points`` (uint32, ids x width) into ``out``; returns the first row
    holding a surrogate (or a value past U+10FFFF), or -1."""
    n, width = points.shape
    buf = np.empty(4 * width + 8, np.uint8)
    for i in range(n):
        size = width
        while size > 0 and points[i, size - 1] == 0:
            size -= 1
        k = 0
        for j in range(size):
            c = points[i, j]
            if c < 0x80:
                buf[k] = c
                k += 1
            elif c < 0x800:
                buf[k] = 0xC0 | (c >> 6)
                buf[k + 1] = 0x80 | (c & 0x3F)
                k += 2
            elif c < 0x10000:
                if 0xD800 <= c <= 0xDFFF:
                    return i
                buf[k] = 0xE0 | (c >> 12)
                buf[k + 1] = 0x80 | ((c >> 6) & 0x3F)
                buf[k + 2] = 0x80 | (c & 0x3F)
                k += 3
            elif c <= 0x10FFFF:
                buf[k] = 0xF0 | (c >> 18)
                buf[k + 1] = 0x80 | ((c >> 12) & 0x3F)
                buf[k + 2] = 0x80 | ((c >> 6) & 0x3F)
                buf[k + 3] = 0x80 | (c & 0x3F)
                k += 4
            else:  # not a code point
                return i
        x = _siphash(buf, k)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        out[i] = x
    return -1
