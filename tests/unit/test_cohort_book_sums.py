"""A batch of joined outcomes adds to each cohort exactly what that cohort's rows alone add."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.cohort_book import BINS, SCALE, CohortBook, score_bins
from driftwatch.labels.landing import LandingBook


def _alone(cohort: int, score: np.ndarray, bad: np.ndarray) -> dict[str, object]:
    """One cohort's sums from its own rows alone, written out from the module docstring:
    counts per class and score bin; fixed-point sums of P(bad), of p(1 - p) and of the
    log loss over the rows with a score."""
    b = score_bins(score)
    fin = b < BINS
    y = bad.astype(np.int64)
    n = np.zeros((2, BINS + 1), np.int64)
    pd = np.zeros((2, BINS + 1), np.int64)
    for yi, bi, si, ok in zip(y.tolist(), b.tolist(), score.tolist(), fin.tolist(),
                              strict=True):
        n[yi, bi] += 1
        if ok:
            pd[yi, bi] += int(np.rint(si * SCALE))
    s, yf = score[fin], bad[fin]
    fixed = np.rint(s * (1 - s) * SCALE).astype(np.int64)
    p = np.clip(s, 1e-12, 1 - 1e-12)
    loss = np.rint(np.where(yf, -np.log(p), -np.log1p(-p)) * SCALE).astype(np.int64)
    return {"key": cohort, "lab_n": n.tolist(), "lab_pd": pd.tolist(),
            "lab_pq": int(fixed.sum()), "lab_ll": int(loss.sum())}


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 120), batches=st.integers(1, 3))
def test_labelled_sums_per_cohort_equal_the_rows_alone(seed: int, n: int, batches: int) -> None:
    rng = np.random.default_rng(seed)
    book = CohortBook(max_cohorts=6)
    book.add_predictions(np.array([3]), np.array([0.5]), np.array([0.0]))  # a floor of 0
    want: dict[int, dict[str, object]] = {}
    rows: dict[int, tuple[list[float], list[bool]]] = {}
    for _ in range(batches):
        cohort = rng.integers(-1, 9, n)
        score = rng.choice([0.0, 1.0, np.nan, 0.3, 1e-13], n)
        score = np.where(rng.uniform(size=n) < 0.6, rng.uniform(size=n), score)
        bad = rng.uniform(size=n) < 0.3
        book.add_labelled(cohort, score, bad.astype(float))
        for c in np.unique(cohort[cohort >= 0]).tolist():
            m = cohort == c
            s, y = rows.setdefault(c, ([], []))
            s.extend(score[m].tolist())
            y.extend(bad[m].tolist())
    for c, (s, y) in rows.items():
        want[c] = _alone(c, np.array(s), np.array(y, dtype=bool))
    kept = {c.key: c for c in book.cohorts()}
    for key, c in kept.items():
        if key not in want:
            assert c.labelled == 0
            continue
        got = {"key": key, "lab_n": c.lab_n.tolist(), "lab_pd": c.lab_pd.tolist(),
               "lab_pq": c.lab_pq, "lab_ll": c.lab_ll}
        assert got == want[key]


def _predicted_alone(score: np.ndarray, time: np.ndarray, lost: int) -> dict[str, object]:
    """One cohort's prediction sums from its own rows alone: count and fixed-point P(bad)
    per score bin, fixed-point p(1 - p) over the rows with a score, the first and last
    finite time, and the rows lost."""
    n = np.zeros(BINS + 1, np.int64)
    pd = np.zeros(BINS + 1, np.int64)
    pq = 0
    for bi, si in zip(score_bins(score).tolist(), score.tolist(), strict=True):
        n[bi] += 1
        if bi < BINS:
            pd[bi] += int(np.rint(si * SCALE))
            pq += int(np.rint(si * (1 - si) * SCALE))
    t = time[np.isfinite(time)]
    return {"pred_n": n.tolist(), "pred_pd": pd.tolist(), "pred_pq": pq,
            "t_min": float(t.min()) if t.size else float("inf"),
            "t_max": float(t.max()) if t.size else float("-inf"), "expired": lost}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 120), batches=st.integers(1, 3),
       landing=st.booleans())
def test_prediction_sums_per_cohort_equal_the_rows_alone(seed: int, n: int, batches: int,
                                                         landing: bool) -> None:
    rng = np.random.default_rng(seed)
    book = LandingBook(pane_size=10.0, max_cohorts=50) if landing else CohortBook(50)
    rows: dict[int, tuple[list[float], list[float], list[int]]] = {}
    for _ in range(batches):
        cohort = rng.integers(-1, 9, n)
        score = np.where(rng.uniform(size=n) < 0.6, rng.uniform(size=n),
                         rng.choice([0.0, 1.0, np.nan, 0.3, 1e-13], n))
        time = np.where(rng.uniform(size=n) < 0.8, rng.uniform(0, 100, n),
                        rng.choice([np.nan, np.inf, -np.inf], n))
        book.add_predictions(cohort, score, time)
        gone = rng.uniform(size=n) < 0.2
        book.add_lost("expired", np.where(gone, cohort, -1), time=time)
        for c in np.unique(cohort[cohort >= 0]).tolist():
            m = cohort == c
            s, t, lost = rows.setdefault(c, ([], [], [0]))
            s.extend(score[m].tolist())
            t.extend(time[m].tolist())
            lost[0] += int((m & gone).sum())
    if landing:
        book.fold(np.inf)  # type: ignore[attr-defined]
    got = {c.key: {"pred_n": c.pred_n.tolist(), "pred_pd": c.pred_pd.tolist(),
                   "pred_pq": c.pred_pq, "t_min": c.t_min, "t_max": c.t_max,
                   "expired": c.expired} for c in book.cohorts()}
    assert got == {c: _predicted_alone(np.array(s), np.array(t), lost[0])
                   for c, (s, t, lost) in rows.items()}
