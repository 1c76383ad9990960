"""The compiled counting kernel gives the numpy fallback's counts, on every feature kind."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.errors import ConfigError
from driftwatch.windows import _compiled, kernel
from driftwatch.windows.layout import NumericLayout
from driftwatch.windows.sketch import SketchLayout

pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(
    kernel.kernel_name() != "numba", reason="the compiled kernel is disabled"
)

KINDS = ("continuous", "integer", "wide_integer", "far_integer", "halves", "constant",
         "nan_heavy", "skewed", "tiny")


def reference(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "continuous":
        return rng.normal(0, 1, n)
    if kind == "integer":
        return rng.poisson(3, n).astype(float)
    if kind == "wide_integer":  # too many whole numbers for a cell each
        return rng.integers(-50_000, 50_000, n).astype(float)
    if kind == "far_integer":  # whole numbers far from zero, a cell each
        return rng.integers(10**9, 10**9 + 40, n).astype(float)
    if kind == "halves":  # edges at x.5: not whole, values on them
        return rng.integers(0, 6, n) + 0.5
    if kind == "constant":
        return np.full(n, 7.0)
    if kind == "nan_heavy":
        v = rng.gamma(2.0, 1.0, n)
        v[rng.uniform(size=n) < 0.8] = np.nan
        return v
    if kind == "skewed":
        return rng.lognormal(10, 2.0, n)
    return 1e-300 * rng.normal(0, 1, n)  # a range near the smallest floats


def queries(ref: np.ndarray, edges: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """Values from the reference, exactly on edges and one ulp beside them, whole and
    half numbers around the edges, out of range, infinite and missing."""
    finite = ref[np.isfinite(ref)]
    pool = [
        rng.choice(finite, n) if finite.size else np.zeros(n),
        rng.choice(edges, n),
        np.nextafter(rng.choice(edges, n), np.inf),
        np.nextafter(rng.choice(edges, n), -np.inf),
        np.round(rng.choice(edges, n) + rng.uniform(-2.0, 2.0, n), 1),
        rng.choice(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e308, -1e308]), n),
        rng.normal(0, 1, n) * (np.abs(finite).max() * 3 if finite.size else 1.0),
    ]
    pick = rng.integers(0, len(pool), n)
    return np.choose(pick, pool)


def truth(edges: np.ndarray, x: np.ndarray, width: int) -> np.ndarray:
    """Ground truth, independent of both counters: ``searchsorted`` left, NaN missing."""
    nan = np.isnan(x)
    b = np.searchsorted(edges, x[~nan], side="left")
    return np.bincount(b, minlength=width) + np.eye(width, dtype=np.int64)[-1] * nan.sum()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
    rows=st.sampled_from([1, 7, 600, 5_000]),
    fine_bins=st.sampled_from([10, 40, 200]),
    ncell=st.sampled_from([4, 37, 16384]),  # few cells: most are searched, few numbers fit
)
def test_numeric_kernel_equals_fallback(kinds, seed, rows, fine_bins, ncell):
    rng = np.random.default_rng(seed)
    ref = np.stack([reference(k, rng, 2_000) for k in kinds], axis=1)
    lay = NumericLayout.fit([f"x{j}" for j in range(len(kinds))], ref, coarse_bins=10,
                            fine_bins=fine_bins)
    x = np.stack([queries(ref[:, j], lay.fine_edges[j], rng, rows)
                  for j in range(len(kinds))], axis=1)
    counter = lay._counter
    tables = kernel.BinTables.build(lay.fine_edges, lay.fine_width,
                                    [lay.fine_width - 1] * len(kinds), ncell=ncell)
    got = kernel.count_numeric(tables, x)
    want = counter.count_numpy(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    for j, e in enumerate(lay.fine_edges):
        np.testing.assert_array_equal(got[0][j], truth(e, x[:, j], lay.fine_width))
        assert got[1][j] == np.sum(x[:, j] < e[0]) and got[2][j] == np.sum(x[:, j] > e[-1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.sampled_from([0, 1, 50, 3_000]),  # 3,000: several blocks
    n_levels=st.lists(st.integers(0, 12), min_size=0, max_size=4),
    kinds=st.lists(st.sampled_from(KINDS), min_size=0, max_size=4),
    order=st.sampled_from("CF"),
    code_order=st.sampled_from("CF"),
)
def test_fused_pass_equals_fallback(seed, rows, n_levels, kinds, order, code_order):
    """Numeric, categorical (levels, other, unseen, missing, codes out of range) and score
    counted in one pass equal the three numpy counters, from row- and column-major
    features and codes, in either combination."""
    rng = np.random.default_rng(seed)
    ref = (np.stack([reference(k, rng, 1_000) for k in kinds], axis=1) if kinds
           else np.empty((1_000, 0)))
    lay = SketchLayout.fit(
        numeric_names=tuple(f"x{j}" for j in range(len(kinds))), numeric=ref,
        categorical_names=tuple(f"c{j}" for j in range(len(n_levels))),
        levels=tuple(tuple(f"l{i}" for i in range(k)) for k in n_levels),
        score=rng.beta(2, 5, 1_000),
    )
    x = (np.stack([queries(ref[:, j], lay.numeric.fine_edges[j], rng, rows)
                   for j in range(len(kinds))], axis=1) if kinds else np.empty((rows, 0)))
    codes = np.stack([rng.integers(-3, k + 5, rows) for k in n_levels], axis=1).astype(
        np.int32) if n_levels else np.empty((rows, 0), np.int32)
    score = queries(np.array([0.0, 1.0]), lay.score.fine_edges[0], rng, rows)
    got = lay.count(np.asarray(x, order=order), np.asarray(codes, order=code_order), score)
    none = (np.zeros((0, lay.numeric.fine_width), np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int64))
    num = lay.numeric._counter.count_numpy(x) if kinds else none
    want = (*num, lay.categorical.count(codes), *lay.score._counter.count_numpy(score[:, None]))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_threads_split_rows_and_give_the_same_counts(monkeypatch):
    """A batch large enough to be cut into chunks on several threads."""
    rng = np.random.default_rng(3)
    ref = np.stack([reference(k, rng, 5_000) for k in KINDS], axis=1)
    lay = NumericLayout.fit([f"x{j}" for j in range(len(KINDS))], ref)
    x = np.stack([queries(ref[:, j], lay.fine_edges[j], rng, 60_000)
                  for j in range(len(KINDS))], axis=1)
    want = lay._counter.count_numpy(x)
    for threads in ("1", "3"):
        monkeypatch.setenv("DRIFTWATCH_KERNEL_THREADS", threads)
        assert len(kernel._chunks(len(x), x.shape[1])) == int(threads)
        for g, w in zip(kernel.count_numeric(lay._counter.tables, x), want, strict=True):
            np.testing.assert_array_equal(g, w)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 1_000_000), per_row=st.integers(0, 40), threads=st.integers(1, 8))
def test_chunks_cover_the_rows_in_even_spans(n, per_row, threads):
    """The spans follow each other from row 0 to ``n``, as many as the threads and the
    values allow, within a row of the same length; one span is cut without numpy."""
    tasks = min(threads, max(n * max(per_row, 1) // kernel._MIN_VALUES_PER_TASK, 1))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DRIFTWATCH_KERNEL_THREADS", str(threads))
        if tasks == 1:
            mp.setattr(kernel.np, "linspace", None)  # a call would raise
        spans = kernel._chunks(n, per_row)
    assert len(spans) == (min(tasks, n) if n else 0)
    assert [a for a, _ in spans[1:]] == [b for _, b in spans[:-1]]
    if n:
        assert spans[0][0] == 0 and spans[-1][1] == n
        sizes = [b - a for a, b in spans]
        assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 1_000_000), per_row=st.integers(0, 40), threads=st.integers(2, 8),
       beside=st.integers(1, 12))
def test_the_span_that_also_works_beside_is_shortened_to_an_even_share(n, per_row, threads,
                                                                         beside):
    """As many spans as without work beside, still from row 0 to ``n``; the last (whose
    thread also does the work beside) is the shortest, at least a row, and its thread's
    share, ``last * per_row + n * beside``, is within a row of every other thread's
    unless even one row is more than a share."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DRIFTWATCH_KERNEL_THREADS", str(threads))
        even = kernel._chunks(n, per_row)
        spans = kernel._chunks(n, per_row, beside)
    assert len(spans) == len(even)
    if len(spans) < 2:
        assert spans == even
        return
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert [a for a, _ in spans[1:]] == [b for _, b in spans[:-1]]
    per = max(per_row, 1)
    sizes = [b - a for a, b in spans]
    last, others = sizes[-1], sizes[:-1]
    assert 1 <= last <= min(others) and max(others) - min(others) <= 1
    share = n * (per + beside) / len(spans)
    if last > 1:  # not cut to the floor of one row: the split is even, to a row or two
        assert abs(last * per + n * beside - share) <= 2 * per
        assert all(abs(k * per - share) <= 2 * per for k in others)


def test_work_beside_runs_once_on_one_thread_or_split_and_its_error_is_raised(monkeypatch):
    """On a batch counted whole and on one split across threads: the work beside runs
    exactly once, the counts are those without it, and what it raises is raised."""
    rng = np.random.default_rng(5)
    ref = np.stack([reference(k, rng, 5_000) for k in KINDS], axis=1)
    lay = NumericLayout.fit([f"x{j}" for j in range(len(KINDS))], ref)
    tables = lay._counter.tables
    for rows, threads in ((100, "2"), (60_000, "1"), (60_000, "2"), (60_000, "3")):
        monkeypatch.setenv("DRIFTWATCH_KERNEL_THREADS", threads)
        x = np.stack([queries(ref[:, j], lay.fine_edges[j], rng, rows)
                      for j in range(len(KINDS))], axis=1)
        calls: list[int] = []
        got = kernel.count_fused(tables, x, None, beside=functools.partial(calls.append, 1))
        assert calls == [1]
        for g, w in zip(got[:3], lay._counter.count_numpy(x), strict=True):
            np.testing.assert_array_equal(g, w)

        def fails() -> None:
            raise OSError("beside")

        with pytest.raises(OSError, match="beside"):
            kernel.count_fused(tables, x, None, beside=fails)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 100_000), per_row=st.integers(0, 40))
def test_a_batch_too_small_to_split_does_not_ask_for_the_cores(n, per_row):
    """A pane's slice of a poll, the common call, is one span without an environment read
    or a system call; a batch worth splitting asks."""
    worth = n * max(per_row, 1) >= 2 * kernel._MIN_VALUES_PER_TASK
    asked = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel, "_threads", lambda: asked.append(1) or 1)
        spans = kernel._chunks(n, per_row)
    assert bool(asked) == worth
    assert spans == ([(0, n)] if n else [])


@pytest.mark.parametrize("order", ["C", "F"])
def test_many_columns_in_groups_and_blocks_count_the_same(order):
    """More columns than one transposed group, more rows than one block."""
    rng = np.random.default_rng(11)
    kinds = [KINDS[j % len(KINDS)] for j in range(70)]
    ref = np.stack([reference(k, rng, 1_000) for k in kinds], axis=1)
    lay = NumericLayout.fit([f"x{j}" for j in range(len(kinds))], ref, fine_bins=40)
    x = np.stack([queries(ref[:, j], lay.fine_edges[j], rng, 5_000)
                  for j in range(len(kinds))], axis=1)
    want = lay._counter.count_numpy(x)
    got = kernel.count_numeric(lay._counter.tables, np.asarray(x, order=order))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_integer_features_get_a_grid_of_whole_numbers_and_continuous_ones_do_not():
    rng = np.random.default_rng(0)
    ref = np.stack([rng.poisson(3, 1_000).astype(float), rng.normal(0, 1, 1_000),
                    rng.integers(-50_000, 50_000, 1_000).astype(float)], axis=1)
    t = NumericLayout.fit(["count", "x", "wide"], ref)._counter.tables
    assert t.unit.tolist() == [True, False, False]  # the wide range has too many numbers
    e = ref[:, 0].min()
    assert (t.lo[0], t.inv[0], t.top[0]) == (e - 1.0, 1.0, ref[:, 0].max() - e + 1.0)


def test_column_major_and_strided_inputs_count_the_same():
    rng = np.random.default_rng(5)
    ref = np.stack([reference(k, rng, 2_000) for k in KINDS], axis=1)
    lay = NumericLayout.fit([f"x{j}" for j in range(len(KINDS))], ref)
    x = np.stack([queries(ref[:, j], lay.fine_edges[j], rng, 3_000)
                  for j in range(len(KINDS))], axis=1)
    wide = np.repeat(x, 2, axis=1)[:, ::2]  # neither row- nor column-contiguous
    rows = np.asfortranarray(x)[7:2_900]  # rows of a column-major batch: columns contiguous
    assert rows.strides[0] == rows.itemsize and not rows.flags.f_contiguous
    one = NumericLayout.fit(["x0"], ref[:, :1])  # one column: its rows are contiguous too
    for arr in (np.asfortranarray(x), wide, rows, np.asfortranarray(x)[:1], x[:, :1]):
        on = lay if arr.shape[1] == x.shape[1] else one
        want = on._counter.count_numpy(np.ascontiguousarray(arr))
        for g, w in zip(kernel.count_numeric(on._counter.tables, arr), want, strict=True):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(("value", "name"), [("numpy", "numpy"), ("numba", "numba"),
                                             ("", "numba"), ("bogus", None)])
def test_the_environment_chooses_the_kernel(monkeypatch, value, name):
    monkeypatch.setenv("DRIFTWATCH_KERNEL", value)
    _compiled.loop.cache_clear()
    try:
        if name is None:
            with pytest.raises(ConfigError, match="DRIFTWATCH_KERNEL"):
                kernel.kernel_name()
        else:
            assert kernel.kernel_name() == name
    finally:
        monkeypatch.undo()
        _compiled.loop.cache_clear()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(0, 3_000), min_size=0, max_size=12),  # 3,000: several blocks
)
def test_runs_count_as_each_run_counted_alone(kind, seed, sizes):
    """A run's row is its values' count however many runs share the call: the kernel's
    and the fallback's, and the ``searchsorted`` truth, empty runs all zeros."""
    rng = np.random.default_rng(seed)
    ref = reference(kind, rng, 2_000)[:, None]
    lay = NumericLayout.fit(("s",), ref, coarse_bins=10, fine_bins=40)
    x = queries(ref[:, 0], lay.fine_edges[0], rng, sum(sizes))
    starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    got = lay.count_runs(x, starts)
    fallback = lay._counter
    assert got.shape == (len(sizes), lay.fine_width) and got.dtype == np.int64
    for g, (a, b) in enumerate(itertools.pairwise(starts)):
        np.testing.assert_array_equal(got[g], truth(lay.fine_edges[0], x[a:b], lay.fine_width))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel, "kernel_name", lambda: "numpy")
        np.testing.assert_array_equal(fallback.count_runs(x, starts), got)


def test_runs_are_counted_on_one_column_only():
    lay = NumericLayout.fit(("a", "b"), np.ones((10, 2)), coarse_bins=2, fine_bins=4)
    with pytest.raises(ValueError, match="one column, not 2"):
        lay.count_runs(np.zeros(3), np.array([0, 3]))
