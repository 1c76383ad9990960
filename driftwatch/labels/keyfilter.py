"""A filter of ``uint64`` keys that answers "maybe held" or "surely not", for a cheap first
look before a lookup in a large hash index.

A blocked Bloom filter: each key sets two bits of one 64-bit word (the word chosen by the
key's top bits after the hash index's multiplication, the bits by another odd multiplier),
so a question costs one memory read, in an array a fraction of the size of the index it
guards. Keys are never taken out: a filter answers "maybe" for every key added since it
was built, and for a few others (about 0.5% of them while the filter is half full, 5% when
full). :meth:`KeyFilter.has_room` says when ``capacity`` keys were added; the owner then
builds a new one from the keys it still holds.

With numba installed the two loops run compiled (:mod:`driftwatch.labels._hashloops`);
otherwise numpy computes the same bits.

>>> import numpy as np
>>> f = KeyFilter.of(np.array([5, 1, 9], dtype=np.uint64))
>>> f.maybe(np.array([9, 1, 5], dtype=np.uint64)).tolist()
[True, True, True]
>>> int(f.maybe(np.arange(100, 10_100, dtype=np.uint64)).sum()) < 50
True
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from driftwatch.labels.hashindex import compiled

__all__ = ["KeyFilter"]

_MUL = np.uint64(0x9E3779B97F4A7C15)  # as the hash index: the word
_MUL2 = np.uint64(0xC2B2AE3D27D4EB4F)  # the two bits in it
_ONE = np.uint64(1)
_HI, _MID, _LOW6 = np.uint64(58), np.uint64(52), np.uint64(63)  # the bits: top 6, next 6
_BITS_PER_KEY = 8  # at capacity: about 5% of absent keys answer "maybe"
_SMALL = 16  # fewer keys than this: numpy's few calls cost less than a compiled call


class KeyFilter:
    """Keys added answer "maybe"; most others "no" (see the module docstring)."""

    def __init__(self, capacity: int = 1024) -> None:
        nbits = _BITS_PER_KEY * max(int(capacity), 1024)
        nwords = 1 << (max(nbits // 64, 2) - 1).bit_length()
        self._words = np.zeros(nwords, dtype=np.uint64)
        self._shift = np.uint64(64 - (nwords.bit_length() - 1))
        #: Keys this filter holds before it is full (8 bits a key, or more).
        self.capacity = nwords * 64 // _BITS_PER_KEY
        #: Keys added since the filter was built (a key added twice counts twice).
        self.added = 0
        #: Whether the compiled loops run (False: numpy; tests compare both).
        self.use_compiled = compiled() is not None

    @classmethod
    def of(cls, keys: np.ndarray, room: int = 0) -> KeyFilter:
        """A filter of ``keys`` with room for as many again, and ``room`` more."""
        keys = np.asarray(keys, dtype=np.uint64)
        f = cls(2 * keys.size + room)
        f.add(keys)
        return f

    def has_room(self, n: int) -> bool:
        """Whether ``n`` more keys fit in ``capacity`` (else: time to build a new filter)."""
        return self.added + n <= self.capacity

    def _loops(self, n: int) -> ModuleType | None:
        return compiled() if self.use_compiled and n >= _SMALL else None

    def _where(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore"):
            word = ((keys * _MUL) >> self._shift).astype(np.intp)
            g = keys * _MUL2
        bits = (_ONE << (g >> _HI)) | (_ONE << ((g >> _MID) & _LOW6))
        return word, bits

    def add(self, keys: np.ndarray) -> None:
        """Let ``keys`` answer "maybe" from now on."""
        keys = np.asarray(keys, dtype=np.uint64)
        self.added += int(keys.size)
        loops = self._loops(keys.size)
        if loops is not None:
            loops.filter_add(self._words, self._shift, keys)
            return
        word, bits = self._where(keys)
        np.bitwise_or.at(self._words, word, bits)

    def maybe(self, keys: np.ndarray) -> np.ndarray:
        """False for each key surely never added; True for the others."""
        keys = np.asarray(keys, dtype=np.uint64)
        loops = self._loops(keys.size)
        if loops is not None:
            out = np.empty(keys.size, dtype=bool)
            loops.filter_maybe(self._words, self._shift, keys, out)
            return out
        word, bits = self._where(keys)
        return (self._words[word] & bits) == bits
