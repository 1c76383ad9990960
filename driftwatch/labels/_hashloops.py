"""The hash index's probe, insert and remove loops, and the key filter's, compiled by numba
(imported only when numba is; :mod:`driftwatch.labels.hashindex` and
:mod:`driftwatch.labels.keyfilter` hold the tables and the numpy fallbacks).

One key after the other, on the same table layout as the fallback (linear probing from
the slot the key's top bits choose, ``-1`` empty, ``-2`` a tombstone): a lookup or an
insert costs a few tens of nanoseconds instead of a numpy round per probe step.
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["filter_add", "filter_maybe", "first_occurrences", "insert", "probe", "reinsert",
           "renumber", "tombstone"]

_EMPTY = -1
_TOMB = -2
_MUL = np.uint64(0x9E3779B97F4A7C15)
_MUL2 = np.uint64(0xC2B2AE3D27D4EB4F)  # the key filter's bit positions (an odd constant)
_ONE = np.uint64(1)
_HI, _MID, _LOW6 = np.uint64(58), np.uint64(52), np.uint64(63)  # the bits: top 6, next 6


_jit = compiled()


@_jit
def probe(tkeys, trows, mask, shift, keys, out):  # type: ignore[no-untyped-def]
    """``out[i]``: the slot holding ``keys[i]``, or -1."""
    for i in range(keys.size):
        key = keys[i]
        pos = np.int64((key * _MUL) >> shift)
        while True:
            r = trows[pos]
            if r == _EMPTY:
                out[i] = -1
                break
            if r >= 0 and tkeys[pos] == key:
                out[i] = pos
                break
            pos = (pos + 1) & mask


@_jit
def insert(tkeys, trows, mask, shift, keys, rows):  # type: ignore[no-untyped-def]
    """Put each (absent, unique) key in the first free slot of its probe path; returns
    how many of those slots were empty (not tombstones)."""
    filled = 0
    for i in range(keys.size):
        key = keys[i]
        pos = np.int64((key * _MUL) >> shift)
        while trows[pos] >= 0:
            pos = (pos + 1) & mask
        if trows[pos] == _EMPTY:
            filled += 1
        tkeys[pos] = key
        trows[pos] = rows[i]
    return filled


@_jit
def tombstone(trows, slots, rows):  # type: ignore[no-untyped-def]
    """``rows[i]``: the row at ``slots[i]`` (-1 for no slot); then every slot found becomes a
    tombstone. Returns how many distinct slots were freed (a key asked twice, once)."""
    for i in range(slots.size):
        s = slots[i]
        rows[i] = trows[s] if s >= 0 else -1
    freed = 0
    for i in range(slots.size):
        s = slots[i]
        if s >= 0 and trows[s] != _TOMB:
            trows[s] = _TOMB
            freed += 1
    return freed


@_jit
def renumber(trows, mapping):  # type: ignore[no-untyped-def]
    """Point every live slot at ``mapping[its row]``, in one pass over the table."""
    for i in range(trows.size):
        r = trows[i]
        if r >= 0:
            trows[i] = mapping[r]


@_jit
def reinsert(okeys, orows, tkeys, trows, mask, shift):  # type: ignore[no-untyped-def]
    """Put every live slot of the old table (``okeys``, ``orows``) into the new, empty one,
    in slot order; returns how many went in."""
    n = 0
    for i in range(orows.size):
        r = orows[i]
        if r < 0:
            continue
        key = okeys[i]
        pos = np.int64((key * _MUL) >> shift)
        while trows[pos] >= 0:
            pos = (pos + 1) & mask
        tkeys[pos] = key
        trows[pos] = r
        n += 1
    return n


@_jit
def first_occurrences(keys, cap, shift):  # type: ignore[no-untyped-def]
    """Indices of the first occurrence of each key, ascending, through a table of ``cap``
    slots (a power of two above the keys; ``shift = 64 - log2(cap)``)."""
    mask = cap - 1
    tkeys = np.empty(cap, dtype=np.uint64)
    used = np.zeros(cap, dtype=np.bool_)
    out = np.empty(keys.size, dtype=np.int64)
    n = 0
    for i in range(keys.size):
        key = keys[i]
        pos = np.int64((key * _MUL) >> shift)
        while used[pos] and tkeys[pos] != key:
            pos = (pos + 1) & mask
        if not used[pos]:
            used[pos] = True
            tkeys[pos] = key
            out[n] = i
            n += 1
    return out[:n]


@_jit
def filter_add(words, shift, keys):  # type: ignore[no-untyped-def]
    """Set each key's two bits in its word of the key filter."""
    for i in range(keys.size):
        key = keys[i]
        w = np.int64((key * _MUL) >> shift)
        g = key * _MUL2
        words[w] |= (_ONE << (g >> _HI)) | (_ONE << ((g >> _MID) & _LOW6))


@_jit
def filter_maybe(words, shift, keys, out):  # type: ignore[no-untyped-def]
    """``out[i]``: whether both of ``keys[i]``'s bits are set."""
    for i in range(keys.size):
        key = keys[i]
        w = np.int64((key * _MUL) >> shift)
        g = key * _MUL2
        bits = (_ONE << (g >> _HI)) | (_ONE << ((g >> _MID) & _LOW6))
        out[i] = (words[w] & bits) == bits
