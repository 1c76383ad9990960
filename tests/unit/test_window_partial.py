"""Which windows are ``partial``: the stream covers only part of their span.

The expected flags come from the stream itself (its first event time against the
window's bounds, which are checked against the grid separately), never from the window.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.windows.panes import ClosedWindow, PaneWindow, WindowSpec
from driftwatch.windows.sketch import SketchLayout

LAYOUT = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])


def _events(times: list[float] | np.ndarray) -> Batch:
    t = np.asarray(times, dtype=float)
    return Batch.build("predictions", n=len(t), n_numeric=1, numeric=np.ones((len(t), 1)),
                       event_time=t)


def _run(spec: WindowSpec, times, *, flush: bool = False) -> list[ClosedWindow]:
    w = PaneWindow(LAYOUT, spec)
    out = w.add(_events(times))
    return out + (w.flush() if flush else [])


def _flags(windows: list[ClosedWindow]) -> list[tuple[float, float, bool]]:
    return [(c.start_time, c.end_time, c.partial) for c in windows]


# -- sliding and tumbling time windows ---------------------------------------------------------
def test_sliding_time_windows_starting_before_the_stream_are_partial() -> None:
    # 1h windows sliding by 10 min; the stream starts at 00:25
    spec = WindowSpec(kind="time", pane_size=600.0, panes=6, mode="sliding")
    times = np.arange(1500.0, 4 * 3600.0, 30.0)
    got = _flags(_run(spec, times))
    # windows ending 00:30 .. 01:20 began before 00:25; the one ending 01:30 began at 00:30
    assert got[:6] == [(e - 3600.0, e, True) for e in np.arange(1800.0, 5400.0, 600.0)]
    assert got[6] == (1800.0, 5400.0, False)
    assert not any(p for _, _, p in got[6:])


def test_a_stream_starting_on_a_window_boundary_has_no_partial_first_window() -> None:
    spec = WindowSpec(kind="time", pane_size=600.0, panes=6, mode="sliding")
    got = _flags(_run(spec, np.arange(3600.0, 3 * 3600.0, 30.0)))
    # the first window closes with the first pane: its span 00:10-01:10 holds only 10 min
    assert got[:5] == [(e - 3600.0, e, True) for e in np.arange(4200.0, 7200.0, 600.0)]
    assert got[5] == (3600.0, 7200.0, False)


def test_tumbling_time_window_partial_only_when_the_stream_starts_inside_it() -> None:
    spec = WindowSpec(kind="time", pane_size=3600.0, panes=1, mode="tumbling")
    inside = _flags(_run(spec, np.arange(1800.0, 4 * 3600.0, 60.0)))
    assert [p for _, _, p in inside] == [True, False, False]
    on_edge = _flags(_run(spec, np.arange(3600.0, 4 * 3600.0, 60.0)))
    assert [(s, p) for s, _, p in on_edge] == [(3600.0, False), (7200.0, False)]


def test_flushed_time_window_the_stream_did_not_reach_the_end_of_is_partial() -> None:
    spec = WindowSpec(kind="time", pane_size=100.0, panes=1)
    assert [c.partial for c in _run(spec, [0.0, 50.0, 150.0], flush=True)] == [False, True]
    assert [c.partial for c in _run(spec, [0.0, 50.0, 100.0], flush=True)] == [False, True]
    # allowed lateness holds a pane open after the stream passed its end: it is whole
    late = WindowSpec(kind="time", pane_size=100.0, panes=1, allowed_lateness=30.0)
    got = _run(late, [0.0, 50.0, 120.0], flush=True)
    assert [(c.start_time, c.partial) for c in got] == [(0.0, False), (100.0, True)]


def test_an_early_late_event_counts_as_the_stream_start() -> None:
    # 95 arrives after 130 but within the lateness: the stream began at 95, not 130
    spec = WindowSpec(kind="time", pane_size=100.0, panes=2, mode="sliding",
                      allowed_lateness=50.0)
    w = PaneWindow(LAYOUT, spec)
    out = w.add(_events([130.0, 95.0, 250.0, 400.0]))
    assert _flags(out)[:2] == [(-100.0, 100.0, True), (0.0, 200.0, True)]
    assert _flags(out)[2] == (100.0, 300.0, False)


def test_the_stream_start_survives_a_checkpoint() -> None:
    spec = WindowSpec(kind="time", pane_size=100.0, panes=3, mode="sliding")
    w = PaneWindow(LAYOUT, spec)
    first = w.add(_events([150.0, 260.0]))
    assert [c.partial for c in first] == [True]
    w = PaneWindow.from_dict(LAYOUT, spec, w.to_dict())
    rest = w.add(_events([350.0, 460.0, 570.0]))
    assert _flags(rest) == [(0.0, 300.0, True), (100.0, 400.0, True), (200.0, 500.0, False)]


def test_a_checkpoint_saved_before_the_stream_start_was_kept_is_past_its_start() -> None:
    spec = WindowSpec(kind="time", pane_size=100.0, panes=3, mode="sliding")
    w = PaneWindow(LAYOUT, spec)
    w.add(_events([150.0, 260.0, 370.0, 480.0]))
    d = w.to_dict()
    del d["first_time"]
    got = PaneWindow.from_dict(LAYOUT, spec, d).add(_events([590.0]))
    assert [c.partial for c in got] == [False]
    # and it is written back as JSON-safe
    assert PaneWindow.from_dict(LAYOUT, spec, d).to_dict()["first_time"] < -1e300


# -- count windows: the same meaning ----------------------------------------------------------
def test_leading_sliding_count_windows_hold_less_than_a_window_and_are_partial() -> None:
    spec = WindowSpec(kind="count", pane_size=4, panes=3, mode="sliding")
    got = _run(spec, np.arange(22.0), flush=True)
    assert [(c.n_events, c.partial) for c in got] == [
        (4, True), (8, True), (12, False), (12, False), (12, False), (10, True)]
    tumbling = _run(WindowSpec(kind="count", pane_size=8), np.arange(20.0), flush=True)
    assert [(c.n_events, c.partial) for c in tumbling] == [(8, False), (8, False), (4, True)]


# -- property: partial == the stream started after the window's start ---------------------------
@settings(max_examples=150, deadline=None)
@given(
    pane=st.integers(1, 50),
    panes=st.integers(1, 6),
    mode=st.sampled_from(["tumbling", "sliding"]),
    # the first event on a boundary, or anywhere
    origin=st.integers(-20, 20),
    offset=st.one_of(st.just(0), st.integers(0, 299)),
    gaps=st.lists(st.integers(0, 40), min_size=1, max_size=60),
)
def test_partial_is_the_stream_starting_after_the_window_start(
    pane, panes, mode, origin, offset, gaps
) -> None:
    spec = WindowSpec(kind="time", pane_size=float(pane), panes=panes, mode=mode)
    span = pane * panes
    step = span if mode == "tumbling" else pane
    first = origin * span + offset
    times = first + np.cumsum([0, *gaps]).astype(float)
    got = _run(spec, times)
    for c in got:
        # bounds from the grid alone: ends on a step, one window long
        assert c.end_time % step == 0 and c.end_time - c.start_time == span
        assert c.end_time <= times.max()  # closed by the watermark, not flushed
        assert c.partial == (first > c.start_time), (c.start_time, first)
    # every window starting before the first event closed, marked partial: a window ends
    # on the grid and closes with its newest pane (one step long) once the stream passes
    # its end, when that pane holds events
    leading = {e for e in _grid_ends(first, times.max(), step)
               if e - span < first and ((times >= e - step) & (times < e)).any()}
    assert {c.end_time for c in got if c.partial} == leading


def _grid_ends(lo: float, hi: float, step: int) -> list[float]:
    """Multiples of ``step`` in ``(lo, hi]``."""
    k = int(np.floor(lo / step)) + 1
    out = []
    while k * step <= hi:
        out.append(float(k * step))
        k += 1
    return out


def test_a_reshaped_window_goes_on_from_the_old_one_and_its_first_windows_are_partial() -> None:
    old = PaneWindow(LAYOUT, WindowSpec(kind="time", pane_size=100.0))
    assert [c.partial for c in old.add(_events([0.0, 150.0, 250.0]))] == [False, False]
    old.flush()
    new = old.reshaped(WindowSpec(kind="time", pane_size=100.0, panes=2, mode="sliding"))
    got = new.add(_events([300.0, 450.0, 550.0]))
    assert [(c.window_id, c.start_time, c.partial) for c in got] == [
        (3, 200.0, True), (4, 300.0, False)]


# -- bad records after the last prediction ------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 30), bad=st.integers(1, 500), kind=st.sampled_from(["count", "time"]))
def test_bad_records_after_the_last_prediction_close_a_window_at_flush(
        n: int, bad: int, kind: str) -> None:
    """Before: a pane holding only bad records (a replay's outcomes, read after its
    predictions, with label values the connector does not name) was dropped at flush, so
    the policy's bad_record_rate never saw them and no data-quality fault was raised."""
    spec = WindowSpec(kind=kind, pane_size=10.0 if kind == "count" else 3600.0)  # type: ignore[arg-type]
    w = PaneWindow(LAYOUT, spec)
    closed = w.add(_events(np.arange(float(n))))
    w.add_read("n_bad", bad)
    closed += w.flush()
    assert sum(c.sketch.n for c in closed) == n
    assert sum(c.sketch.n_bad for c in closed) == bad
