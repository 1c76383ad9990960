"""Cohort statistics as of a pane: rows wait, by the pane they land in, until it closes.

A cohort's verdict is judged when a window closes; what the cohort holds at that moment
must not depend on how the stream was cut into polls, nor on how many processes read it.
A :class:`LandingBook` is a :class:`~driftwatch.labels.cohort_book.CohortBook` (time panes)
whose updates are *staged* by the pane they land in:

* a held prediction lands in its own cohort's pane;
* an outcome lands in the pane of its own event time;
* an expiry lands in the pane of the prediction's time plus the TTL (when it expired);
* an eviction lands where it happens;

never below :attr:`LandingBook.floor`, the first pane still open where the rows arrive (a
late row lands there, as a late outcome does in the window's sketches). :meth:`fold`
adds the rows landed up to a pane to the book, so a window that closes with pane ``K``
judges every cohort on exactly the rows that landed in panes up to ``K``. In a consumer
group each partition stages its rows and publishes them with its panes (:meth:`take`);
the decider stages what every partition published (:meth:`stage`) and folds as replay
does. Sums are fixed point (integers), so the split does not change a bit.

>>> import numpy as np
>>> b = LandingBook(pane_size=10.0, ttl=25.0)
>>> b.add_predictions(np.array([0, 1]), np.array([0.2, 0.4]), np.array([5.0, 12.0]))
>>> b.add_labelled(np.array([0]), np.array([0.2]), np.array([1.0]), time=np.array([31.0]))
>>> b.fold(2); b.get(0).predicted, b.get(0).labelled   # the outcome landed in pane 3
(1, 0)
>>> b.fold(3); b.get(0).labelled
1
>>> LandingBook.from_dict(b.to_dict(), pane_size=10.0).to_dict() == b.to_dict()
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from driftwatch.errors import StateError
from driftwatch.labels.cohort_book import Cohort, CohortBook, cohort_columns, cohorts_from_state
from driftwatch.statetree import Capture

__all__ = ["LandingBook"]


class LandingBook(CohortBook):
    """Cohort rows staged by landing pane until :meth:`fold` (module docstring)."""

    def __init__(self, pane_size: float, max_cohorts: int = 400, *,
                 ttl: float = math.inf) -> None:
        super().__init__(max_cohorts)
        self.size = float(pane_size)
        self.ttl = float(ttl)
        #: The first pane open where rows arrive now (None: none closed yet).
        self.floor: int | None = None
        #: landing pane -> cohort key -> rows not yet folded
        self.staged: dict[int, dict[int, Cohort]] = {}
        self._land: np.ndarray = np.zeros(0, np.int64)

    @classmethod
    def adopt(cls, book: CohortBook, pane_size: float, *, ttl: float = math.inf) -> LandingBook:
        """A landing book holding what ``book`` holds (its rows count as folded)."""
        out = cls.from_dict(book.to_dict(Capture()), pane_size=pane_size)  # columns: copied
        out.ttl = float(ttl)
        return out

    # -- landing ------------------------------------------------------------------------
    def _landing(self, own: np.ndarray, cohort: np.ndarray) -> np.ndarray:
        own = np.where(np.isfinite(own), own, cohort.astype(np.float64))
        if self.floor is not None:
            own = np.fmax(own, float(self.floor))
        return own.astype(np.int64)

    def _pane_of(self, t: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.floor(np.asarray(t, dtype=np.float64) / self.size)

    def _grouping(self, cohort: np.ndarray) -> tuple[list[Cohort], None, np.ndarray]:
        """Rows are staged by (landing pane, cohort): the staged cohorts they add to (not
        rows of the book's arrays: None), and each row's index among them (-1: a row
        without a cohort)."""
        cohort = np.asarray(cohort, dtype=np.int64)
        ok = cohort >= 0
        pairs, inverse = np.unique(np.stack([self._land[ok], cohort[ok]], axis=1), axis=0,
                                   return_inverse=True)
        gid = np.full(cohort.size, -1, dtype=np.int64)
        gid[ok] = inverse.reshape(-1)
        groups = []
        for p, k in pairs.tolist():
            bucket = self.staged.setdefault(int(p), {})
            c = bucket.get(k)
            if c is None:
                c = bucket[k] = Cohort(k)
            groups.append(c)
        return groups, None, gid

    def _added(self) -> None:
        """Staged rows change no cohort of the book: nothing to drop before a fold."""

    def add_predictions(self, cohort: np.ndarray, score: np.ndarray, time: np.ndarray) -> None:
        cohort = np.asarray(cohort, dtype=np.int64)
        self._land = self._landing(cohort.astype(np.float64), cohort)
        super().add_predictions(cohort, score, time)

    def add_labelled(self, cohort: np.ndarray, score: np.ndarray, label: np.ndarray, *,
                     time: np.ndarray | None = None) -> None:
        cohort = np.asarray(cohort, dtype=np.int64)
        own = np.full(cohort.size, np.nan) if time is None else self._pane_of(time)
        self._land = self._landing(own, cohort)
        super().add_labelled(cohort, score, label)

    def add_lost(self, kind: str, cohort: np.ndarray, *,
                 time: np.ndarray | None = None) -> None:
        cohort = np.asarray(cohort, dtype=np.int64)
        own = np.full(cohort.size, np.nan)
        if kind == "expired" and time is not None and math.isfinite(self.ttl):
            own = self._pane_of(np.asarray(time, dtype=np.float64) + self.ttl)
        self._land = self._landing(own, cohort)
        super().add_lost(kind, cohort)

    # -- staged rows --------------------------------------------------------------------
    def fold(self, upto: float) -> None:
        """Add every row landed in panes up to ``upto`` (inclusive) to the cohorts."""
        for p in sorted(p for p in self.staged if p <= upto):
            for k in sorted(self.staged[p]):
                self.absorb(self.staged[p][k])
            del self.staged[p]

    def take(self, below: int) -> list[tuple[int, list[Cohort]]]:
        """Remove and return the rows landed in panes below ``below``, by pane (what a
        partition publishes once those panes closed on it)."""
        out = [(p, [self.staged[p][k] for k in sorted(self.staged[p])])
               for p in sorted(p for p in self.staged if p < below)]
        for p, _ in out:
            del self.staged[p]
        return out

    def peek(self) -> list[tuple[int, list[dict[str, Any]]]]:
        """The rows staged in every pane, by pane, as ``Cohort.to_dict`` copies (they stay
        staged: an idle partition's provisional copies)."""
        return [(p, [self.staged[p][k].to_dict() for k in sorted(self.staged[p])])
                for p in sorted(self.staged)]

    def stage(self, pane: int, cohorts: Iterable[Cohort]) -> None:
        """Stage rows another book landed in ``pane`` (a partition's, in a group)."""
        bucket = self.staged.setdefault(int(pane), {})
        for d in cohorts:
            c = bucket.get(d.key)
            if c is None:
                c = bucket[d.key] = Cohort(d.key)
            c.merge(d)

    # -- persistence --------------------------------------------------------------------
    def to_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """JSON-safe; with a ``capture``, cohorts as columns (:func:`cohort_columns`)."""
        out = super().to_dict(capture)

        def pane(p: int) -> Any:
            rows = [self.staged[p][k] for k in sorted(self.staged[p])]
            return cohort_columns(rows) if capture is not None else [c.to_dict() for c in rows]

        out["landing"] = {
            "floor": self.floor, "ttl": self.ttl if math.isfinite(self.ttl) else None,
            "staged": [[p, pane(p)] for p in sorted(self.staged)]}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, pane_size: float = 1.0) -> LandingBook:
        """Back from :meth:`to_dict` (or a plain book's: nothing staged)."""
        plain = CohortBook.from_dict(d)
        b = cls(pane_size, plain.max_cohorts)
        b.__dict__.update({k: v for k, v in plain.__dict__.items()})
        land = d.get("landing")
        if land is not None:
            try:
                b.floor = None if land["floor"] is None else int(land["floor"])
                b.ttl = math.inf if land["ttl"] is None else float(land["ttl"])
                for p, rows in land["staged"]:
                    b.stage(int(p), cohorts_from_state(rows))
            except (KeyError, TypeError, ValueError) as exc:
                raise StateError(f"corrupt cohort landing state: {exc}") from exc
        return b
