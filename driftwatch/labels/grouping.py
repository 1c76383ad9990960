"""Distinct integer ids of a batch, each row's place among them and their counts: what
``np.unique(ids, return_inverse=True, return_counts=True)`` gives, by counting.

A batch's cohorts and days are a few ids close together (thousands of rows, a handful of
values), and sorting the rows to find them cost more than all else the cohort tracker
and book do with them. Where the ids span at most a few times as many values as there
are rows, a bincount finds them in one pass; elsewhere ``np.unique`` still does. Both
give the same arrays.

>>> import numpy as np
>>> keys, inverse, counts = group_ids(np.array([9, 7, 9, 9], dtype=np.int64))
>>> keys.tolist(), inverse.tolist(), counts.tolist()
([7, 9], [1, 0, 1, 1], [1, 3])
"""

from __future__ import annotations

import numpy as np

__all__ = ["group_ids"]


def group_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct ``ids`` (int64), each row's index among them, and their counts."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        if hi - lo < 4 * ids.size + 64:  # Python integers: no overflow on far ids
            off = (ids - lo).astype(np.intp, copy=False)
            counts = np.bincount(off)
            if counts.all():  # every id of the span is there (a poll's few panes or days)
                return np.arange(lo, hi + 1, dtype=np.int64), off, counts
            present = counts > 0
            keys = np.flatnonzero(present)
            inverse = (np.cumsum(present) - 1)[off]
            return keys + lo, inverse.astype(np.intp, copy=False), counts[keys]
    keys, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return keys, inverse.reshape(-1), counts
