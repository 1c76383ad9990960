"""A cohort book's bin sums as rows of book-wide arrays: one row per cohort.

A poll of outcomes reaches hundreds of cohorts (every pane whose predictions are still
waiting). Added cohort by cohort, that is hundreds of small array updates per poll, and
a ``[cohorts, 2, bins]`` array of the poll's sums made and thrown away; as rows of one
array, the poll's rows are added straight into their cohorts' rows in one pass.

A :class:`CohortRows` hands out rows (:meth:`CohortRows.take`) and takes them back
(:meth:`CohortRows.release`); :meth:`CohortRows.view` gives a row's arrays as views, which
the book's :class:`~driftwatch.labels.cohort_book.Cohort` objects hold as their own, so
a cohort reads and merges as before. The book keeps that aliasing honest: when the arrays
grow it points every cohort at its new row, a cohort it drops gets copies of its sums
before its row goes to another, and it writes a row whole when it takes one (a row
taken holds what its last cohort left there).

>>> r = CohortRows(width=3, capacity=1)
>>> a, grown = r.take()
>>> v = r.view(a); v["lab_n"][1, 2] += 5
>>> r.lab_n[a].tolist(), grown
([[0, 0, 0], [0, 0, 5]], False)
>>> b, grown = r.take()          # full: the arrays double and the rows move with them
>>> grown, r.capacity, int(r.lab_n[a, 1, 2])
(True, 2, 5)
>>> v["lab_n"][1, 2] += 1        # a view of the old arrays: stale, so the book rebinds
>>> int(r.lab_n[a, 1, 2]), int(r.view(a)["lab_n"][1, 2])
(5, 5)
"""

from __future__ import annotations

import numpy as np

__all__ = ["FIELDS", "CohortRows"]

#: The per-bin sums kept as rows: predictions (one class) and labelled rows (two).
FIELDS = ("pred_n", "pred_pd", "lab_n", "lab_pd")
_CLASSES = {"pred_n": 1, "pred_pd": 1, "lab_n": 2, "lab_pd": 2}


class CohortRows:
    """Rows of ``[capacity, classes, width]`` int64 arrays, one per field of
    :data:`FIELDS`, handed out and taken back (module docstring)."""

    def __init__(self, width: int, capacity: int = 8) -> None:
        if width < 1 or capacity < 1:
            raise ValueError("width and capacity must be at least 1")
        self.width = int(width)
        self.capacity = 0
        self._free: list[int] = []
        self.pred_n, self.pred_pd, self.lab_n, self.lab_pd = (
            np.zeros((0, _CLASSES[name], self.width), np.int64) for name in FIELDS)
        self._grow(int(capacity))

    def _grow(self, capacity: int) -> None:
        for name in FIELDS:
            new = np.zeros((capacity, _CLASSES[name], self.width), np.int64)
            new[: self.capacity] = getattr(self, name)
            setattr(self, name, new)
        # lowest first: a book of few cohorts keeps to the first rows
        self._free.extend(range(capacity - 1, self.capacity - 1, -1))
        self._free.sort(reverse=True)
        self.capacity = capacity

    def take(self) -> tuple[int, bool]:
        """A free row (as its last user left it: write it whole) and whether the arrays
        grew for it (then every view handed out before is of the old arrays)."""
        grown = not self._free
        if grown:
            self._grow(2 * self.capacity)
        return self._free.pop(), grown

    def release(self, row: int) -> None:
        """Take back a row (its views must no longer be anyone's sums)."""
        self._free.append(int(row))

    def view(self, row: int) -> dict[str, np.ndarray]:
        """The row's arrays as views, shaped as a cohort holds them: ``[width]`` for the
        predictions' sums, ``[2, width]`` for the labelled rows'."""
        return {"pred_n": self.pred_n[row, 0], "pred_pd": self.pred_pd[row, 0],
                "lab_n": self.lab_n[row], "lab_pd": self.lab_pd[row]}
