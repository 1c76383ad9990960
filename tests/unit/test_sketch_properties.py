"""Sketches add, serialise losslessly, and windows do not depend on micro-batch size."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.windows.panes import PaneWindow, WindowSpec
from driftwatch.windows.sketch import Sketch, SketchLayout, add_labelled_at

LEVELS = (("a", "b", "c"), ("x", "y"))


def _layout() -> SketchLayout:
    rng = np.random.default_rng(7)
    ref = np.column_stack(
        [rng.normal(0, 1, 2000), rng.lognormal(3, 1, 2000), rng.integers(0, 5, 2000)]
    )
    return SketchLayout.fit(
        numeric_names=("n0", "n1", "n2"),
        numeric=ref,
        categorical_names=("c0", "c1"),
        levels=LEVELS,
        score=rng.beta(2, 5, 2000),
        fine_bins=50,
        coarse_bins=10,
    )


LAYOUT = _layout()


def _batch(seed: int, n: int, t0: float = 0.0) -> Batch:
    rng = np.random.default_rng(seed)
    num = np.column_stack([rng.normal(0.3, 1.2, n), rng.lognormal(3, 1, n), rng.integers(0, 7, n)])
    num[rng.random((n, 3)) < 0.1] = np.nan
    cat = np.column_stack([rng.integers(-1, 5, n), rng.integers(-1, 4, n)]).astype(np.int32)
    score = rng.beta(2, 4, n)
    score[rng.random(n) < 0.05] = np.nan
    return Batch.build(
        "predictions",
        n=n,
        n_numeric=3,
        n_categorical=2,
        numeric=num,
        categorical=cat,
        score=score,
        decision=rng.integers(-1, 2, n),
        exposure=rng.uniform(100, 1000, n),
        event_time=t0 + np.sort(rng.uniform(0, 1000, n)),
    )


def _sketch(b: Batch) -> Sketch:
    s = Sketch.empty(LAYOUT)
    s.add_batch(b)
    rng = np.random.default_rng(len(b))
    lab = (rng.random(len(b)) < 0.2).astype(float)
    s.add_labelled(b.score, lab, b.exposure)
    return s


def _assert_same(a: Sketch, b: Sketch) -> None:
    da, db = a.to_dict(), b.to_dict()
    assert da.keys() == db.keys()
    for k in da:
        if isinstance(da[k], float):
            assert da[k] == pytest.approx(db[k], rel=1e-9, abs=1e-9), k
        else:
            assert da[k] == db[k], k


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 400), cut=st.floats(0, 1))
def test_merging_halves_equals_whole(seed: int, n: int, cut: float) -> None:
    b = _batch(seed, n)
    k = int(cut * n)
    whole = Sketch.empty(LAYOUT)
    whole.add_batch(b)
    left, right = Sketch.empty(LAYOUT), Sketch.empty(LAYOUT)
    left.add_batch(b.take(slice(0, k)))
    right.add_batch(b.take(slice(k, n)))
    left.merge(right)
    _assert_same(left, whole)
    assert int(whole.num_fine.sum()) == 3 * n  # every value lands in exactly one bin


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 300))
def test_serialise_roundtrip_is_lossless(seed: int, n: int) -> None:
    s = _sketch(_batch(seed, n)) if n else Sketch.empty(LAYOUT)
    back = Sketch.from_dict(LAYOUT, s.to_dict())
    assert back == s
    assert back.to_dict() == s.to_dict()
    assert SketchLayout.from_dict(LAYOUT.to_dict()).to_dict() == LAYOUT.to_dict()


def _approx(d: dict) -> dict:
    """Float sums depend on addition order: compare them to 1e-9, everything else exactly."""
    return {
        k: pytest.approx(v, rel=1e-9, abs=1e-9) if isinstance(v, float) else v for k, v in d.items()
    }


def _run_windows(spec: WindowSpec, b: Batch, sizes: list[int]) -> list[tuple]:
    w = PaneWindow(LAYOUT, spec)
    out, start, i = [], 0, 0
    while start < len(b):
        step = sizes[i % len(sizes)]
        out += w.add(b.take(slice(start, start + step)))
        start += step
        i += 1
    out += w.flush()
    return [
        (c.window_id, c.first_index, c.last_index, c.start_time, _approx(c.sketch.to_dict()))
        for c in out
    ]


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(7, 97), min_size=1, max_size=5),
    mode=st.sampled_from(["tumbling", "sliding"]),
    panes=st.integers(1, 3),
)
def test_count_windows_do_not_depend_on_batch_size(seed, sizes, mode, panes) -> None:
    b = _batch(seed, 300)
    spec = WindowSpec(kind="count", pane_size=37, panes=panes, mode=mode)
    assert _run_windows(spec, b, sizes) == _run_windows(spec, b, [len(b)])


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(7, 97), min_size=1, max_size=5),
    lateness=st.sampled_from([0.0, 15.0, 60.0]),
    mode=st.sampled_from(["tumbling", "sliding"]),
)
def test_time_windows_do_not_depend_on_batch_size(seed, sizes, lateness, mode) -> None:
    b = _batch(seed, 300)
    # shuffle a little so some events arrive out of order (some late)
    rng = np.random.default_rng(seed)
    t = b.event_time + rng.normal(0, 20, len(b))
    b = Batch.build(
        "predictions",
        n=len(b),
        n_numeric=3,
        n_categorical=2,
        numeric=b.numeric,
        categorical=b.categorical,
        score=b.score,
        event_time=t,
    )
    spec = WindowSpec(kind="time", pane_size=50.0, panes=2, mode=mode, allowed_lateness=lateness)
    assert _run_windows(spec, b, sizes) == _run_windows(spec, b, [len(b)])


def test_late_events_are_counted_not_added() -> None:
    spec = WindowSpec(kind="time", pane_size=10.0, allowed_lateness=5.0)
    w = PaneWindow(LAYOUT, spec)
    def mk(ts):
        return Batch.build(
            "predictions",
            n=len(ts),
            n_numeric=3,
            n_categorical=2,
            event_time=np.array(ts, float),
        )
    closed = w.add(mk([1.0, 2.0, 16.0]))  # watermark 16 - 5 = 11 closes pane [0, 10)
    assert [c.n_events for c in closed] == [2]
    w.add(mk([3.0, 12.0]))  # 3.0 belongs to the closed pane: late
    assert w.n_late == 1
    rest = w.flush()
    assert [c.n_events for c in rest] == [2]
    assert rest[0].sketch.n_late == 1


def test_window_memory_does_not_grow_with_events() -> None:
    spec = WindowSpec(kind="count", pane_size=1_000_000, panes=1)
    w = PaneWindow(LAYOUT, spec)
    sizes = []
    for i in range(5):
        w.add(_batch(i, 20_000))
        sizes.append(w.nbytes)
    assert w.n_seen == 100_000
    assert len(set(sizes)) == 1


def test_window_checkpoint_roundtrip_continues_identically() -> None:
    spec = WindowSpec(kind="time", pane_size=100.0, panes=3, mode="sliding", allowed_lateness=10)
    b = _batch(3, 600)
    full = PaneWindow(LAYOUT, spec)
    ref = [c.sketch.to_dict() for c in full.add(b)] + [c.sketch.to_dict() for c in full.flush()]
    w = PaneWindow(LAYOUT, spec)
    got = [c.sketch.to_dict() for c in w.add(b.take(slice(0, 250)))]
    w = PaneWindow.from_dict(LAYOUT, spec, w.to_dict())
    got += [c.sketch.to_dict() for c in w.add(b.take(slice(250, 600)))]
    got += [c.sketch.to_dict() for c in w.flush()]
    assert got == [_approx(d) for d in ref]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3_000),
       odd=st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1.0, 1e-300]))
def test_score_moments_are_the_textbook_sums_to_the_bit(seed: int, n: int, odd: float) -> None:
    """The moments kept for the score: centred sum and sum of squares, summed binary
    entropy (clipped), over the finite scores only; the batch is left as it was."""
    rng = np.random.default_rng(seed)
    score = rng.beta(2, 5, n)
    score[rng.random(n) < 0.05] = odd
    before = score.copy()
    s = Sketch.empty(LAYOUT)
    s._add_moments(score)
    fin = score[np.isfinite(score)]
    c = fin - LAYOUT.score_center
    p = np.clip(fin, 1e-12, 1 - 1e-12)
    assert s.n_score == fin.size
    assert s.score_sum == float(c.sum()) and s.score_sumsq == float((c * c).sum())
    assert s.entropy_sum == float((-(p * np.log(p) + (1 - p) * np.log1p(-p))).sum())
    np.testing.assert_array_equal(score, before)


def _labelled_one_by_one(sk: Sketch, score, label, exposure) -> None:
    """The labelled rows of one sketch added as before they were counted together: a
    histogram per label from the numpy counter, then the float sums in row order."""
    ok = np.isfinite(label)
    score, label = score[ok], label[ok]
    if score.size == 0:
        return
    bad = label > 0.5
    for cls_i, mask in ((0, ~bad), (1, bad)):
        sk.lab_score[cls_i] += LAYOUT.score._counter.count_numpy(score[mask][:, None])[0][0]
        sk.lab_n[cls_i] += int(mask.sum())
    fin = np.isfinite(score)
    sk.lab_pd_sum += float(score[fin].sum())
    if exposure is not None:
        ex = exposure[ok]
        has = np.isfinite(ex) & fin
        sk.lab_exposure_n += int(has.sum())
        sk.lab_exposure += float(ex[has].sum())
        sk.lab_el_pred += float((ex[has] * score[has]).sum())
        sk.lab_el_obs += float((ex[has] * label[has]).sum())


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(0, 300),
    n_sketches=st.integers(1, 6),
    with_exposure=st.booleans(),
)
def test_labelled_rows_added_together_equal_each_sketch_added_alone(
    seed: int, n: int, n_sketches: int, with_exposure: bool
) -> None:
    """Bit for bit (the float sums too): each sketch's rows, in their order."""
    rng = np.random.default_rng(seed)
    score = rng.beta(2, 4, n)
    score[rng.random(n) < 0.1] = np.nan
    score[rng.random(n) < 0.05] = rng.choice([-0.5, 1.5, -0.0, np.inf], int(n > 0))
    label = rng.choice([0.0, 1.0, np.nan, 0.7], n, p=[0.6, 0.25, 0.1, 0.05])
    exposure = rng.choice([np.nan, -0.0, 250.0, 1e4], n) if with_exposure else None
    group = rng.integers(0, n_sketches, n)
    base = [_sketch(_batch(seed + g, 20)) for g in range(n_sketches)]
    together = [Sketch.from_dict(LAYOUT, s.to_dict()) for s in base]
    alone = [Sketch.from_dict(LAYOUT, s.to_dict()) for s in base]
    add_labelled_at(together, group, score, label, exposure)
    for g, sk in enumerate(alone):
        rows = group == g
        _labelled_one_by_one(sk, score[rows], label[rows],
                             None if exposure is None else exposure[rows])
    for a, b in zip(together, alone, strict=True):
        assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())  # -0.0 is not 0.0 here
    if n_sketches == 1:  # and a sketch's own method adds them the same way
        own = Sketch.from_dict(LAYOUT, base[0].to_dict())
        own.add_labelled(score, label, exposure)
        assert json.dumps(own.to_dict()) == json.dumps(alone[0].to_dict())


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(45_000, 70_000))
def test_a_batch_split_across_threads_gives_the_same_sketch_to_the_bit(seed: int, n: int) -> None:
    """A batch large enough to be counted on several threads, its sums (moments, time
    span, decisions, exposure) taken beside the count on one of them: every count and
    every float is what one thread gives."""
    from driftwatch.windows import kernel

    b = _batch(seed, n)
    got = {}
    with pytest.MonkeyPatch.context() as mp:
        for threads in (1, 2, 3):
            mp.setenv("DRIFTWATCH_KERNEL_THREADS", str(threads))
            if kernel.kernel_name() == "numba" and threads > 1:
                assert len(kernel._chunks(n, 3 + 2 + 1, 4)) == threads
            s = Sketch.empty(LAYOUT)
            s.add_batch(b)
            got[threads] = json.dumps(s.to_dict(), sort_keys=True)
    assert got[1] == got[2] == got[3]
    assert json.loads(got[1])["n"] == n
