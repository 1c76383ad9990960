"""Loops over the text spans a scan found, compiled by numba (imported only when numba is;
see :mod:`driftwatch.connectors.scanbatch`, which reads a batch's columns from them).

A scanned text is a span ``buf[s0[i]:s1[i]]`` of valid UTF-8 with no escape and no control
character (:mod:`driftwatch.connectors._scanloops` refuses the others), so its bytes are
its text.
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["NON_ASCII", "SPACES", "ascii_texts", "distinct_columns", "warm_up"]

#: :func:`ascii_texts` flags: a text of spaces alone (or none), a byte past ASCII
SPACES, NON_ASCII = 1, 2
_FNV_BASIS = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@compiled()
def ascii_texts(buf, s0, s1, out):  # type: ignore[no-untyped-def]
    """Each span's bytes as code points, into row ``i`` of ``out`` (zeros after them): the
    UTF-32 of numpy's fixed-width text, for ASCII spans. Returns which of :data:`SPACES`
    and :data:`NON_ASCII` some span is: where it is not 0, ``out`` means nothing.

    The spans are checked as they are copied: one pass over their bytes, not a check and
    then a copy."""
    flags = 0
    for i in range(s0.size):
        a = s0[i]
        spaces = True
        for x in range(s1[i] - a):
            c = buf[a + x]
            if c >= 0x80:
                flags |= NON_ASCII
            if c != 32:
                spaces = False
            out[i, x] = c
        if spaces:
            flags |= SPACES
    return flags


@compiled()
def distinct_columns(buf, s0, s1, valid, slots, at, codes, firsts, tables,  # type: ignore[no-untyped-def]
                     found):
    """Number each distinct text of several columns in the order first seen, in one pass
    over the rows (a line's texts lie side by side: one pass per column would bring every
    line's bytes back into the cache once per column).

    Column ``k`` is ``buf[s0[i, slots[k]]:s1[i, slots[k]]]``, present where
    ``valid[i, at[k]]``. ``codes[k, i]`` is row ``i``'s text number (-1 for a null cell),
    ``firsts[k, d]`` the first row of text ``d``. ``tables[k]`` (-1 filled, a power of two)
    is column ``k``'s hash table; at most half of it is used. ``found`` (zeros) becomes how
    many texts each column holds, or -1 where it holds more (its codes then mean nothing).
    """
    mask = tables.shape[1] - 1
    cap = tables.shape[1] >> 1
    for i in range(s0.shape[0]):
        for k in range(slots.size):
            seen = found[k]
            if seen < 0:
                continue
            if valid[i, at[k]] == 0:
                codes[k, i] = -1
                continue
            c = slots[k]
            a, b = s0[i, c], s1[i, c]
            h = _FNV_BASIS
            for x in range(a, b):
                h = (h ^ np.uint64(buf[x])) * _FNV_PRIME
            slot = np.int64(h & np.uint64(mask))
            while True:
                d = tables[k, slot]
                if d < 0:
                    if seen == cap:
                        found[k] = -1
                        break
                    tables[k, slot] = seen
                    firsts[k, seen] = i
                    codes[k, i] = seen
                    found[k] = seen + 1
                    break
                j = firsts[k, d]
                same = s1[j, c] - s0[j, c] == b - a
                if same:
                    o = s0[j, c] - a
                    for x in range(a, b):
                        if buf[x + o] != buf[x]:
                            same = False
                            break
                if same:
                    codes[k, i] = d
                    break
                slot = (slot + 1) & mask


def warm_up(buf: np.ndarray, s0: np.ndarray, s1: np.ndarray, valid: np.ndarray) -> None:
    """Run each loop once on a scan's column (loaded from numba's cache, or compiled), with
    the argument types a decoder passes."""
    n = s0.size
    ascii_texts(buf, s0, s1, np.zeros((n, max(1, int((s1 - s0).max(initial=0)))), np.uint32))
    one = np.zeros(1, np.int64)  # as a scan's tables: a row per line, a column per slot
    distinct_columns(buf, s0.reshape(n, 1), s1.reshape(n, 1), valid.reshape(n, 1), one, one,
                     np.empty((1, n), np.int64), np.empty((1, 4), np.int64),
                     np.full((1, 8), -1, np.int64), np.zeros(1, np.int64))
