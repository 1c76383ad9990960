"""The cohort book in binary checkpoints: raw columns round-trip exactly, through the
checkpoint store too, and the earlier base64 form (in either checkpoint format) still reads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.errors import StateError
from driftwatch.labels.cohort_book import BINS, CohortBook, cohort_columns
from driftwatch.labels.landing import LandingBook
from driftwatch.state import CheckpointStore
from driftwatch.statetree import Capture

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

_OPS = st.lists(st.tuples(st.sampled_from(["pred", "lab", "expired", "evicted", "window"]),
                          st.integers(0, 2**31)), min_size=1, max_size=12)


def _fill(book: CohortBook, ops: list[tuple[str, int]]) -> None:
    """Rows of a few cohorts, with missing scores and times, and named windows."""
    for op, seed in ops:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 200))
        cohort = rng.integers(-1, 8, n)
        score = np.where(rng.uniform(size=n) < 0.1, np.nan, rng.uniform(size=n))
        time = np.where(rng.uniform(size=n) < 0.1, np.nan, rng.uniform(0, 80, n))
        if op == "pred":
            book.add_predictions(cohort, score, time)
        elif op == "lab":
            book.add_labelled(cohort, score, rng.integers(0, 2, n).astype(float), time=time)
        elif op == "window":
            book.set_window(int(cohort[0]), seed % 100, float(seed % 7), float(seed % 7 + 1))
        else:
            book.add_lost(op, cohort, time=time)


@SETTINGS
@given(ops=_OPS, cap=st.integers(1, 6))
def test_columns_round_trip_to_the_same_book(ops, cap):
    book = CohortBook(max_cohorts=cap)
    _fill(book, ops)
    if book.cohorts():
        book.cohorts()[0].judged = True
    back = CohortBook.from_dict(book.to_dict(Capture()))
    assert back.to_dict() == book.to_dict()
    assert [c.summary() for c in back.cohorts()] == [c.summary() for c in book.cohorts()]


@SETTINGS
@given(ops=_OPS)
def test_a_landing_book_round_trips_its_staged_rows_as_columns(ops):
    book = LandingBook(10.0, max_cohorts=5)
    _fill(book, ops)
    back = LandingBook.from_dict(book.to_dict(Capture()), pane_size=10.0)
    assert back.to_dict() == book.to_dict()


def test_a_landing_book_with_staged_rows_reads_back_from_a_checkpoint(tmp_path):
    book = LandingBook(10.0, max_cohorts=5)
    _fill(book, [("pred", 1), ("lab", 2), ("expired", 3), ("lab", 4)])
    assert book.staged  # the case this test is for
    store = CheckpointStore(tmp_path / "cp")
    store.save({"m": {"book": book.to_dict(store.capture("m"))}}, now=0.0)
    saved = CheckpointStore(tmp_path / "cp").load().models["m"]["book"]
    assert LandingBook.from_dict(saved, pane_size=10.0).to_dict() == book.to_dict()


@pytest.mark.parametrize("form", ["columns", "base64"])
def test_a_book_reads_back_from_a_binary_checkpoint_in_either_form(tmp_path, form):
    """``base64``: a part written before the book had columns (its JSON form inside)."""
    book = CohortBook(max_cohorts=4)
    _fill(book, [("pred", 5), ("lab", 6), ("window", 7), ("evicted", 8), ("lab", 9)])
    state = book.to_dict(Capture()) if form == "columns" else book.to_dict()
    store = CheckpointStore(tmp_path / "cp")
    store.save({"m": {"book": state}}, now=0.0)
    saved = CheckpointStore(tmp_path / "cp").load().models["m"]["book"]
    assert isinstance(saved["cohorts"], dict if form == "columns" else list)
    assert CohortBook.from_dict(saved).to_dict() == book.to_dict()


def test_restored_cohorts_change_alone_and_leave_the_stored_columns_as_they_were():
    book = CohortBook()
    book.add_predictions(np.array([0, 1, 2]), np.array([0.2, 0.4, 0.6]), np.zeros(3))
    state = book.to_dict(Capture())
    stored = {k: v.copy() for k, v in state["cohorts"].items() if isinstance(v, np.ndarray)}
    back = CohortBook.from_dict(state)
    back.add_predictions(np.array([1, 1]), np.array([0.5, 0.5]), np.ones(2))
    assert [c.predicted for c in back.cohorts()] == [1, 3, 1]
    assert all(np.array_equal(state["cohorts"][k], v, equal_nan=v.dtype.kind == "f")
               for k, v in stored.items())


def test_the_columns_of_no_cohorts_read_back_as_an_empty_book():
    cols = cohort_columns([])
    assert cols["pred_n"].shape == (0, BINS + 1) and cols["lab_n"].shape == (0, 2, BINS + 1)
    assert len(CohortBook.from_dict(CohortBook(7).to_dict(Capture()))) == 0


def test_corrupt_columns_are_a_state_error():
    book = CohortBook()
    book.add_predictions(np.array([0, 1]), np.array([0.2, 0.4]), np.zeros(2))
    state = book.to_dict(Capture())
    state["cohorts"]["lab_n"] = state["cohorts"]["lab_n"][:1]
    with pytest.raises(StateError, match="corrupt cohort book"):
        CohortBook.from_dict(state)
    del state["cohorts"]
    with pytest.raises(StateError, match="corrupt cohort book"):
        CohortBook.from_dict(state)
