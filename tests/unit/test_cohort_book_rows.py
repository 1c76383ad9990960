"""A cohort book whose sums are rows of book-wide arrays holds, hands out and saves what a
book of independent cohort objects does: on random streams of predictions, outcomes,
losses and merges, with cohorts dropped for space and the arrays growing, the same
cohorts, totals and checkpoints, bit for bit; a cohort or a checkpoint handed out never
sees a write meant for another cohort, and a dropped cohort keeps its sums."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.cohort_book import Cohort, CohortBook
from driftwatch.labels.cohort_sums import _bin_sums
from driftwatch.statetree import Capture


class _PlainBook:
    """The reference: every cohort its own arrays, each cohort's sums from its own rows
    alone (numpy, no compiled pass), dropped oldest first beyond ``max_cohorts`` (a
    cohort dropped by a batch that reaches it still gets its rows)."""

    def __init__(self, max_cohorts: int) -> None:
        self.max_cohorts = max_cohorts
        self.c: dict[int, Cohort] = {}
        self.dropped = self.late_for_dropped = 0
        self.floor = -(2**62)

    def _cohorts(self, cohort: np.ndarray) -> list[tuple[Cohort, np.ndarray]]:
        """The cohorts a batch reaches and their rows."""
        ok = cohort >= 0
        self.late_for_dropped += int((ok & (cohort < self.floor)).sum())
        keep = ok & (cohort >= self.floor)
        out = [(self.c.setdefault(k, Cohort(k)), np.flatnonzero(cohort == k))
               for k in np.unique(cohort[keep]).tolist()]
        self._trim()
        return out

    def _trim(self) -> None:
        over = len(self.c) - self.max_cohorts
        for k in sorted(self.c)[:max(over, 0)]:
            del self.c[k]
            self.dropped += 1
            self.floor = max(self.floor, k + 1)

    def add_predictions(self, cohort: np.ndarray, score: np.ndarray, time: np.ndarray) -> None:
        for c, r in self._cohorts(cohort):
            s, t = score[r], time[r]
            n, pd, pq, _ = _bin_sums(np.zeros(r.size, np.int64), s, 1, loops=None)
            c.pred_n += n[0, 0]
            c.pred_pd += pd[0, 0]
            c.pred_pq += int(pq[0])
            t = t[np.isfinite(t)]
            if t.size:
                c.t_min, c.t_max = min(c.t_min, float(t.min())), max(c.t_max, float(t.max()))

    def add_labelled(self, cohort: np.ndarray, score: np.ndarray, label: np.ndarray) -> None:
        for c, r in self._cohorts(cohort):
            n, pd, pq, ll = _bin_sums(np.zeros(r.size, np.int64), score[r], 1,
                                      label[r] > 0.5, loss=True, loops=None)
            c.lab_n += n[0]
            c.lab_pd += pd[0]
            c.lab_pq += int(pq[0])
            c.lab_ll += int(ll[0])

    def add_lost(self, kind: str, cohort: np.ndarray) -> None:
        for c, r in self._cohorts(cohort):
            setattr(c, kind, getattr(c, kind) + r.size)

    def absorb(self, delta: Cohort) -> None:
        if delta.key < self.floor:
            self.late_for_dropped += delta.rows
            return
        self.c.setdefault(delta.key, Cohort(delta.key)).merge(delta)
        self._trim()

    def state(self) -> dict[str, Any]:
        return {"dropped": self.dropped, "late_for_dropped": self.late_for_dropped,
                "floor": self.floor, "cohorts": [self.c[k].to_dict() for k in sorted(self.c)]}


def _state(book: CohortBook) -> dict[str, Any]:
    d = book.to_dict()
    return {k: d[k] for k in ("dropped", "late_for_dropped", "floor", "cohorts")}


def _columns(book: CohortBook) -> dict[str, Any]:
    """A binary checkpoint's cohort columns, as plain lists (to compare later)."""
    cols = book.to_dict(Capture())["cohorts"]
    return json.loads(json.dumps({k: v.tolist() if isinstance(v, np.ndarray) else v
                                  for k, v in cols.items()}, default=str))


_OPS = st.lists(st.tuples(st.sampled_from(["pred", "lab", "expired", "absorb", "restore",
                                           "total"]),
                          st.integers(0, 2**31), st.integers(0, 40)),
                min_size=1, max_size=14)


@settings(max_examples=120, deadline=None)
@given(ops=_OPS, cap=st.integers(1, 40), spread=st.integers(1, 60))
def test_the_book_matches_a_book_of_independent_cohorts(ops, cap, spread):
    book, ref = CohortBook(cap), _PlainBook(cap)
    held: list[tuple[Cohort, Cohort]] = []  # cohorts handed out, and the reference's
    saved: list[tuple[dict[str, Any], dict[str, Any]]] = []  # checkpoints, and their content
    totals: list[tuple[Cohort, dict[str, Any]]] = []
    base = 0
    for op, seed, shift in ops:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(0, 600))
        base += shift // 4  # the cohorts move on, as panes do: old ones get dropped
        cohort = rng.integers(base - 2, base + spread, n)
        score = np.where(rng.uniform(size=n) < 0.05, np.nan, rng.uniform(size=n))
        if op == "pred":
            time = rng.uniform(0, 100, n)
            book.add_predictions(cohort, score, time)
            ref.add_predictions(cohort, score, time)
        elif op == "lab":
            label = rng.integers(0, 2, n).astype(float)
            book.add_labelled(cohort, score, label)
            ref.add_labelled(cohort, score, label)
        elif op == "expired":
            book.add_lost("expired", cohort)
            ref.add_lost("expired", cohort)
        elif op == "absorb":  # another partition's cohorts merged in (a consumer group's)
            other = CohortBook(400)
            other.add_predictions(cohort, score, rng.uniform(0, 100, n))
            other.add_labelled(cohort[::-1], score, rng.integers(0, 2, n).astype(float))
            for c in other.cohorts():
                book.absorb(c)
                ref.absorb(c)
        elif op == "restore":  # a book read back from a checkpoint goes on from there
            state = book.to_dict(Capture()) if seed % 2 else book.to_dict()
            saved.append((state, _columns(book) if seed % 2 else json.loads(json.dumps(state))))
            book = CohortBook.from_dict(state)
            # what was handed out before stays the old book's; the reference's alike
            ref.c = {k: Cohort.from_dict(c.to_dict()) for k, c in ref.c.items()}
        elif op == "total":
            keys = range(base + shift - 20, base + shift)
            t = book.total(keys)
            totals.append((t, t.to_dict()))
            r = Cohort(-1)
            for k in keys:
                if k in ref.c:
                    r.merge(ref.c[k])
            assert t.to_dict() == r.to_dict()
        assert _state(book) == ref.state()
        if len(book):  # hand one out: it must go on as the reference's own does
            c = book.cohorts()[seed % len(book)]
            held.append((c, ref.c[c.key]))
        for c, r in held:  # live while the book's; once dropped, as it was then
            assert c.to_dict() == r.to_dict()
    for t, then in totals:
        assert t.to_dict() == then
    for state, then in saved:
        got = ({k: v.tolist() if isinstance(v, np.ndarray) else v
                for k, v in state["cohorts"].items()}
               if isinstance(state["cohorts"], dict) else state)
        assert json.loads(json.dumps(got, default=str)) == then


def test_a_dropped_cohort_keeps_its_sums_while_its_row_goes_to_another():
    book = CohortBook(max_cohorts=1)
    book.add_predictions(np.array([0, 0]), np.array([0.2, 0.4]), np.array([1.0, 2.0]))
    old = book.get(0)
    before = old.to_dict()
    for k in range(1, 4):  # each new cohort drops the one before and takes its row
        book.add_predictions(np.full(k + 1, k), np.full(k + 1, 0.9), np.full(k + 1, 3.0))
        book.add_labelled(np.array([k]), np.array([0.9]), np.array([1.0]))
    assert book.keys() == [3] and book.get(3).predicted == 4 and book.get(3).labelled == 1
    assert old.to_dict() == before and old.predicted == 2 and old.labelled == 0


def test_cohorts_handed_out_before_the_arrays_grow_still_get_their_rows():
    book = CohortBook(max_cohorts=400)
    book.add_predictions(np.array([0]), np.array([0.5]), np.array([0.0]))
    first = book.get(0)
    keys = np.arange(1, 100)  # far past the arrays' first capacity
    book.add_predictions(keys, np.full(keys.size, 0.5), np.zeros(keys.size))
    book.add_labelled(np.array([0, 0]), np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    assert first is book.get(0) and first.labelled == 2 and first.predicted == 1
    assert [book.get(int(k)).predicted for k in keys] == [1] * keys.size


def test_a_key_given_twice_in_a_checkpoint_keeps_the_last_and_no_other_row():
    book = CohortBook()
    book.add_predictions(np.array([3, 4]), np.array([0.2, 0.4]), np.zeros(2))
    d = book.to_dict()
    d["cohorts"] = [d["cohorts"][0], d["cohorts"][1], d["cohorts"][0]]
    back = CohortBook.from_dict(d)
    back.add_predictions(np.array([5]), np.array([0.6]), np.zeros(1))
    assert [(c.key, c.predicted) for c in back.cohorts()] == [(3, 1), (4, 1), (5, 1)]

