"""The line-end loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.connectors.lineends`, which falls back to numpy without it)."""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["line_ends"]

_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_NEWLINES = np.uint64(0x0A0A0A0A0A0A0A0A)


@compiled()
def line_ends(buf, start, count, out):  # type: ignore[no-untyped-def]
    """Write the offsets of the newlines in ``buf[start:start + count]`` (offsets into
    ``buf``, ascending) to the front of ``out`` (``count`` long at least); return how many.

    Eight bytes are tested at a time: a word holds a newline where one of its bytes, XORed
    with ``\\n``, is zero (the classic has-zero-byte test, exact for every byte value). One
    pass, where numpy's ``flatnonzero(b == 10)`` makes two and a mask as long as the bytes.
    """
    k = 0
    i = start
    end = start + count
    while i < end and i & 7:
        if buf[i] == 10:
            out[k] = i
            k += 1
        i += 1
    words = buf[i : end - ((end - i) & 7)].view(np.uint64)
    for j in range(words.size):
        x = words[j] ^ _NEWLINES
        if (x - _ONES) & ~x & _HIGHS:
            w = i + 8 * j
            for t in range(w, w + 8):
                if buf[t] == 10:
                    out[k] = t
                    k += 1
    for t in range(i + 8 * words.size, end):
        if buf[t] == 10:
            out[k] = t
            k += 1
    return k
