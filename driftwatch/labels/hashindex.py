"""An open-addressing hash index from ``uint64`` keys to row numbers, in vectorised numpy.

Every operation takes a whole batch of keys and probes all of them at once, one round per
probe step (linear probing, so a few rounds). Deleted keys
leave a tombstone that lookups step over and inserts reuse; the table is rebuilt (at
twice the live keys, rounded up to a power of two) when tombstones and live keys fill 60%
of it. The keys are multiplied by a 64-bit odd
constant before their top bits choose the slot, so keys that are not random (small
integers in tests, sequential ids) spread as well as hashed ones.

With numba installed the probe, insert and remove loops run compiled, one key after the
other (:mod:`driftwatch.labels._hashloops`, cached on disk like the window kernel);
otherwise the numpy rounds below do. Both give every lookup and removal the same answer
(``DRIFTWATCH_KERNEL=numpy`` forces the fallback, ``numba`` requires the compiled loops).
:func:`first_occurrences` finds the first copy of each key in a batch the same way.

>>> import numpy as np
>>> ix = HashIndex()
>>> ix.insert(np.array([5, 1, 9], dtype=np.uint64), np.array([0, 1, 2]))
>>> ix.lookup(np.array([9, 7, 5], dtype=np.uint64)).tolist()
[2, -1, 0]
>>> ix.remove(np.array([9], dtype=np.uint64)).tolist(), len(ix)
([2], 2)
>>> ix.lookup(np.array([9, 1], dtype=np.uint64)).tolist()
[-1, 1]
>>> first_occurrences(np.array([7, 3, 7, 5, 3], dtype=np.uint64)).tolist()
[0, 1, 3]
"""

from __future__ import annotations

import functools
from types import ModuleType

import numpy as np

from driftwatch.numba_setup import numba_enabled

__all__ = ["HashIndex", "compiled", "first_occurrences", "warm_up"]

_EMPTY = -1
_TOMB = -2
_MUL = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd
_LOAD = 0.6  # live keys + tombstones per slot before a rebuild
_SMALL = 16  # fewer keys than this: numpy's few calls cost less than a compiled call


@functools.cache
def compiled() -> ModuleType | None:
    """The compiled loops, or None when the numpy rounds run (see the module docstring)."""
    if not numba_enabled():
        return None
    from driftwatch.labels import _hashloops

    return _hashloops


def _shift_for(cap: int) -> np.uint64:
    return np.uint64(64 - (cap.bit_length() - 1))


def first_occurrences(keys: np.ndarray, loops: ModuleType | bool | None = True) -> np.ndarray:
    """Indices of the first occurrence of each key, in arrival order (``loops=None``: by
    numpy's sort, as without numba)."""
    keys = np.asarray(keys, dtype=np.uint64)
    if loops is True:
        loops = compiled()
    if keys.size < _SMALL:
        loops = None
    if loops is None:
        _, first = np.unique(keys, return_index=True)
        first.sort()
        return first
    cap = 1 << max(2 * keys.size - 1, 1).bit_length()
    return loops.first_occurrences(keys, cap, _shift_for(cap))  # type: ignore[union-attr,no-any-return]


class HashIndex:
    """``uint64`` key -> ``int64`` row (see the module docstring)."""

    def __init__(self, capacity: int = 1024) -> None:
        #: Whether the compiled loops run (False: the numpy rounds; tests compare both).
        self.use_compiled = compiled() is not None
        self._alloc(capacity)

    def _alloc(self, capacity: int) -> None:
        cap = 1 << max(int(capacity) - 1, 1023).bit_length()
        self._keys = np.zeros(cap, dtype=np.uint64)
        self._rows = np.full(cap, _EMPTY, dtype=np.int32)  # rows < 2**31: 12 bytes a slot
        self._mask = cap - 1
        self._shift = _shift_for(cap)
        self._live = 0
        self._filled = 0  # live keys + tombstones

    def __len__(self) -> int:
        return self._live

    @property
    def capacity(self) -> int:
        return int(self._rows.size)

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ((keys * _MUL) >> self._shift).astype(np.int64)

    def _probe(self, keys: np.ndarray) -> np.ndarray:
        """Slot of each key, or -1 where it is absent."""
        if not self._live or not keys.size:  # an empty table (the orphans, mostly): no probe
            return np.full(keys.size, -1, dtype=np.int64)
        loops = compiled() if self.use_compiled and keys.size >= _SMALL else None
        if loops is not None:
            slots = np.empty(keys.size, dtype=np.int64)
            loops.probe(self._keys, self._rows, self._mask, self._shift, keys, slots)
            return slots
        out = np.full(keys.size, -1, dtype=np.int64)
        pend = np.arange(keys.size)
        pos = self._slot(keys)
        while pend.size:
            r = self._rows[pos]
            hit = (r >= 0) & (self._keys[pos] == keys[pend])
            out[pend[hit]] = pos[hit]
            go = (r != _EMPTY) & ~hit  # a tombstone or another key: step on
            pend, pos = pend[go], (pos[go] + 1) & self._mask
        return out

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Row of each key, ``-1`` where it is absent."""
        keys = np.asarray(keys, dtype=np.uint64)
        slot = self._probe(keys)
        return np.where(slot >= 0, self._rows[np.maximum(slot, 0)], -1).astype(np.int64)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key is present: :meth:`lookup` without reading the rows."""
        return self._probe(np.asarray(keys, dtype=np.uint64)) >= 0

    def remove(self, keys: np.ndarray) -> np.ndarray:
        """Delete the keys that are present; returns the row of each key (``-1``: absent)."""
        keys = np.asarray(keys, dtype=np.uint64)
        slot = self._probe(keys)
        loops = compiled() if self.use_compiled and keys.size >= _SMALL else None
        if loops is not None:
            rows = np.empty(keys.size, dtype=np.int64)
            self._live -= int(loops.tombstone(self._rows, slot, rows))
            return rows
        rows = np.where(slot >= 0, self._rows[np.maximum(slot, 0)], -1).astype(np.int64)
        hit = np.unique(slot[slot >= 0])
        self._rows[hit] = _TOMB
        self._live -= int(hit.size)
        return rows

    def insert(self, keys: np.ndarray, rows: np.ndarray) -> None:
        """Add keys that are unique and not present, pointing at ``rows``."""
        keys = np.asarray(keys, dtype=np.uint64)
        rows = np.asarray(rows, dtype=np.int64)
        if keys.size == 0:
            return
        if self._filled + keys.size > _LOAD * self.capacity:
            self._rebuild(keys.size)
        loops = compiled() if self.use_compiled and keys.size >= _SMALL else None
        if loops is not None:
            self._filled += int(loops.insert(self._keys, self._rows, self._mask, self._shift,
                                             keys, rows))
            self._live += int(keys.size)
            return
        pend = np.arange(keys.size)
        pos = self._slot(keys)
        while pend.size:
            free = self._rows[pos] < 0
            cand, at = pend[free], pos[free]
            # keys that want the same free slot: one write lands, the others step on
            self._keys[at] = keys[cand]
            won = self._keys[at] == keys[cand]
            win, slot = cand[won], at[won]
            self._filled += int(np.count_nonzero(self._rows[slot] == _EMPTY))
            self._rows[slot] = rows[win]
            go = np.ones(pend.size, dtype=bool)
            go[np.flatnonzero(free)[won]] = False
            pend, pos = pend[go], (pos[go] + 1) & self._mask
        self._live += int(keys.size)

    def _rebuild(self, more: int) -> None:
        loops = compiled() if self.use_compiled else None
        if loops is not None:  # straight from the old table: no masks, no gathered copies
            okeys, orows, live = self._keys, self._rows, self._live
            self._alloc(2 * (live + more))
            self._filled = self._live = int(loops.reinsert(okeys, orows, self._keys,
                                                           self._rows, self._mask,
                                                           self._shift))
            return
        used = self._rows >= 0
        keys, rows = self._keys[used], self._rows[used]
        self._alloc(2 * (keys.size + more))
        self.insert(keys, rows)

    def renumber(self, mapping: np.ndarray) -> None:
        """Point every key at ``mapping[old row]`` (after the rows were compacted)."""
        loops = compiled() if self.use_compiled else None
        if loops is not None:
            loops.renumber(self._rows, np.asarray(mapping, dtype=np.int64))
            return
        used = self._rows >= 0
        self._rows[used] = mapping[self._rows[used]]


def warm_up() -> None:
    """Load every compiled loop now, each with the types the label join gives it, on a
    small table: numba reads a loop from its disk cache on its first call (a few
    milliseconds each), which a replay would otherwise pay in the middle of its stream.
    Nothing where the numpy rounds run."""
    if compiled() is None:
        return
    keys = np.arange(1, 2 * _SMALL + 1, dtype=np.uint64)
    first_occurrences(keys)
    ix = HashIndex()
    ix.insert(keys, np.arange(keys.size))
    ix.lookup(keys)
    ix.remove(keys[:_SMALL])
    ix.renumber(np.arange(keys.size))
    ix._rebuild(0)
    loops = compiled()  # and the key filter's (driftwatch.labels.keyfilter)
    words = np.zeros(16, dtype=np.uint64)
    loops.filter_add(words, np.uint64(60), keys)  # type: ignore[union-attr]
    loops.filter_maybe(words, np.uint64(60), keys,  # type: ignore[union-attr]
                       np.empty(keys.size, dtype=bool))
