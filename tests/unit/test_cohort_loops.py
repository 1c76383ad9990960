"""The compiled cohort sums give the numpy fallback's integers, bit for bit, on every kind
of score (missing, out of range, on a bin edge, too large for fixed point), added straight
into a book's rows or not, and a book fed through either holds the same state."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels import cohort_sums
from driftwatch.labels.cohort_book import CohortBook
from driftwatch.labels.cohort_sums import BINS, _add_bin_sums, _bin_sums, compiled

pytestmark = [pytest.mark.skipif(compiled() is None, reason="numba is not installed"),
              # the fallback warns on scores past fixed point, as it always has
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

# P(bad) whose logit sits on a bin edge (or one ulp either side of it)
_EDGES = 1.0 / (1.0 + np.exp(-np.linspace(-10.0, 10.0, 201)))
_ODD = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1e-13, 1 - 1e-13, 5e-324,
                 -0.25, 1.5, 2.0**15 - 1, -(2.0**15) + 1, 2.0**15, 1e300, -1e300])


def _scores(rng: np.random.Generator, n: int, odd: float) -> np.ndarray:
    s = rng.uniform(size=n)
    pick = rng.uniform(size=n)
    edge = rng.choice(_EDGES, n)
    s = np.where(pick < 0.2, np.nextafter(edge, rng.choice([-1.0, 2.0], n)), s)
    s = np.where((pick >= 0.2) & (pick < 0.3), edge, s)
    return np.where(rng.uniform(size=n) < odd, rng.choice(_ODD, n), s)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 400), groups=st.integers(1, 5),
       odd=st.sampled_from([0.0, 0.05, 0.5]), labelled=st.booleans())
def test_compiled_sums_equal_the_numpy_sums(seed: int, n: int, groups: int, odd: float,
                                            labelled: bool) -> None:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n).astype(np.int64)
    s = _scores(rng, n, odd)
    bad = rng.uniform(size=n) < 0.3 if labelled else None
    fast = _bin_sums(g, s, groups, bad, loss=labelled, loops=compiled())
    slow = _bin_sums(g, s, groups, bad, loss=labelled, loops=None)
    for a, b in zip(fast, slow, strict=True):
        assert a.dtype == b.dtype == np.int64
        np.testing.assert_array_equal(a, b)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 400), groups=st.integers(1, 5),
       odd=st.sampled_from([0.0, 0.05, 0.5]), labelled=st.booleans())
def test_sums_added_into_rows_equal_the_sums_of_each_group_added_there(
        seed: int, n: int, groups: int, odd: float, labelled: bool) -> None:
    # rows already holding sums (a book's), groups on distinct rows in any order; a score
    # the compiled pass refuses must leave nothing of its partial sums behind
    rng = np.random.default_rng(seed)
    classes = 2 if labelled else 1
    start = rng.integers(0, 2**20, (8, classes, BINS + 1))
    rows = rng.permutation(8)[:groups].astype(np.int64)
    g = rng.integers(0, groups, n).astype(np.int64)
    s = _scores(rng, n, odd)
    bad = rng.uniform(size=n) < 0.3 if labelled else None
    n_want, pd_want = start.copy(), start.copy() + 7
    sums = _bin_sums(g, s, groups, bad, loss=labelled, loops=None)
    for k, r in enumerate(rows.tolist()):
        n_want[r] += sums[0][k]
        pd_want[r] += sums[1][k]
    for loops in (compiled(), None):
        n_out, pd_out = start.copy(), start.copy() + 7
        pq, ll = _add_bin_sums(rows, g, s, n_out, pd_out, bad, loss=labelled, loops=loops)
        np.testing.assert_array_equal(n_out, n_want)
        np.testing.assert_array_equal(pd_out, pd_want)
        np.testing.assert_array_equal(pq, sums[2])
        np.testing.assert_array_equal(ll, sums[3])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), batches=st.integers(1, 4))
def test_a_book_fed_through_either_path_saves_the_same_state(seed: int, batches: int) -> None:
    rng = np.random.default_rng(seed)
    feed = []
    for _ in range(batches):
        n = int(rng.integers(0, 300))
        cohort = rng.integers(-1, 6, n)
        feed.append((cohort, _scores(rng, n, 0.1), rng.uniform(size=n) < 0.3,
                     rng.uniform(0, 100, n)))
    books = []
    for loops in (compiled(), None):
        book = CohortBook(max_cohorts=4)
        with mock.patch.object(cohort_sums, "compiled", lambda loops=loops: loops):
            for cohort, s, bad, t in feed:
                book.add_predictions(cohort, s, t)
                book.add_labelled(cohort[::-1], s, bad.astype(float))
        books.append(json.dumps(book.to_dict(), sort_keys=True))
    assert books[0] == books[1]
