"""Values derived from a few objects, kept while those very objects come back.

A closed window is judged against arrays that do not change from one window to the next:
the reference's counts, the calibrated levels at the window's size (the same
:class:`~driftwatch.detectors.calibrate.NullThresholds` object while the size holds), the
detector settings. What is derived from them alone (Python lists of thresholds, the
reference's smoothed shares) is computed once and found again by the objects' identity.
An entry holds its objects, so their ``id`` cannot be reused while it lives; objects are
treated as immutable once built, as profiles and levels are.

>>> import numpy as np
>>> cache, a = IdentityCache(capacity=2), np.arange(3)
>>> first = cache.get((a,), "sum", lambda: int(a.sum()))
>>> cache.get((a,), "sum", lambda: -1)  # the same object: the kept value
3
>>> cache.get((a.copy(),), "sum", lambda: -1)  # an equal but other object: built again
-1
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

__all__ = ["IdentityCache", "read_only"]

T = TypeVar("T")


class IdentityCache:
    """The ``capacity`` most recent values, keyed by the identity of their objects and a
    hashable ``extra`` (what else they depend on: names, flags); safe across threads."""

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = int(capacity)
        self._items: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, objs: tuple[Any, ...], extra: Hashable, build: Callable[[], T]) -> T:
        """The value kept for these very ``objs`` and ``extra``, else ``build()`` kept."""
        key = (*map(id, objs), extra)
        with self._lock:
            # the entry holds its objects alive, so an equal id is the same object
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[1]  # type: ignore[no-any-return]
        value = build()
        with self._lock:
            self._items[key] = (objs, value)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value


def read_only(arrays: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """``arrays`` marked read-only: a kept value shared by every window must not be
    changed in place by one of them (numpy raises instead)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays
