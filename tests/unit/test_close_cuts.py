"""A poll cut where a window may close (:mod:`driftwatch.pipeline.closecuts`).

Replay's actions step between the parts, so every window must close at the end of a part,
right after the record that closes it: checked against a monitor fed one record a poll.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.closecuts import close_points, cut_at_closes, split_polled
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

PROFILE = ReferenceProfile.build(
    pd.DataFrame({"x": np.random.default_rng(0).normal(size=300)}), numeric=["x"])


def _poll(kinds: list[bool], gaps: list[float], n_bad: int, seed: int) -> Polled:
    """Predictions (``False``) and outcomes (``True``) in merged order at increasing
    times; each outcome names an earlier prediction; ``n_bad`` bad records among them."""
    times = np.cumsum(gaps[: len(kinds)])
    is_out = np.array(kinds, dtype=bool)
    n_pred = int((~is_out).sum())
    rng = np.random.default_rng(seed)
    pred = Batch.build("predictions", n=n_pred, n_numeric=1, ids=[f"p{i}" for i in range(n_pred)],
                       event_time=times[~is_out], numeric=rng.normal(size=(n_pred, 1)),
                       score=rng.uniform(size=n_pred))
    seen = np.cumsum(~is_out)[is_out]  # predictions before each outcome
    ids = [f"p{rng.integers(0, max(k, 1))}" for k in seen]
    out = Batch.build("outcomes", n=len(ids), ids=ids, event_time=times[is_out],
                      label=rng.integers(0, 2, size=len(ids)))
    bad = [BadRecord("missing_id", "d", "f", i, b"") for i in range(n_bad)]
    at = np.sort(rng.integers(0, len(kinds) + 1, size=n_bad))
    return Polled([pred, out], bad=bad, positions={"f": 9}, bytes_read=7,
                  order=is_out.astype(np.intp), bad_at=at)


polls = st.integers(2, 60).flatmap(lambda n: st.builds(
    _poll, st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.floats(0.0, 3.0), min_size=n, max_size=n), st.integers(0, 4),
    st.integers(0, 2**16)))
specs = st.one_of(
    st.builds(WindowSpec, kind=st.just("count"), pane_size=st.integers(1, 7),
              panes=st.integers(1, 3), mode=st.sampled_from(["sliding", "tumbling"])),
    st.builds(WindowSpec, kind=st.just("time"), pane_size=st.sampled_from([1.0, 2.5, 6.0]),
              panes=st.integers(1, 3), mode=st.sampled_from(["sliding", "tumbling"]),
              allowed_lateness=st.sampled_from([0.0, 1.0, 4.0])))


@settings(max_examples=60, deadline=None)
@given(polled=polls, cuts=st.lists(st.integers(1, 59), unique=True))
def test_the_parts_put_together_are_the_poll(polled: Polled, cuts: list[int]) -> None:
    n = len(polled.order)
    cuts = sorted(k for k in cuts if k < n)
    parts = split_polled(polled, cuts)
    assert len(parts) == len(cuts) + 1
    starts = [0, *cuts]
    assert np.concatenate([p.order for p in parts]).tolist() == polled.order.tolist()
    for k, whole in enumerate(polled.batches):
        assert np.concatenate([p.batches[k].ids for p in parts]).tolist() == whole.ids.tolist()
    bad = [(r.position, int(a) + s) for p, s in zip(parts, starts, strict=True)
           for r, a in zip(p.bad, p.bad_at, strict=True)]
    assert bad == [(r.position, int(a)) for r, a in zip(polled.bad, polled.bad_at, strict=True)]
    # a bad record sits before the records of its part (or at the poll's end)
    for p in parts[:-1]:
        assert all(a < len(p.order) for a in p.bad_at)
    assert [p.positions for p in parts] == [{}] * len(cuts) + [{"f": 9}]
    assert sum(p.bytes_read for p in parts) == 7


def _closes_one_by_one(spec: WindowSpec, polled: Polled) -> list[int]:
    """The merged positions right after which a monitor fed one record a poll closes a
    window (bad records ride with the record after them)."""
    mon = ModelMonitor("m", PROFILE, spec)
    n = len(polled.order)
    at = []
    for k, part in enumerate(split_polled(polled, list(range(1, n)))):
        at += [k + 1] * len(mon.process(part))
    return at


@settings(max_examples=80, deadline=None)
@given(spec=specs, polled=polls)
def test_every_window_closes_at_the_end_of_a_part(spec: WindowSpec, polled: Polled) -> None:
    expected = _closes_one_by_one(spec, polled)
    mon = ModelMonitor("m", PROFILE, spec)
    got, end = [], 0
    for part in cut_at_closes(mon.window, polled):
        end += len(part.order)
        got += [end] * len(mon.process(part))
    assert got == expected


def test_a_count_pane_closes_on_the_prediction_that_fills_it() -> None:
    # 3 predictions a pane; outcomes between them do not count
    polled = _poll([False, True, False, False, True, False, False, False, True], [1.0] * 9, 0, 0)
    spec = WindowSpec(kind="count", pane_size=3)
    assert close_points(ModelMonitor("m", PROFILE, spec).window, polled) == [4, 8]


def test_a_time_pane_closes_when_the_watermark_passes_its_end_and_lateness() -> None:
    # times 1..9 (an outcome at 5 moves the watermark too); panes of 3 s, 1 s late at most:
    # the first time read (nothing before it may close but a pane of bad records), then
    # 4 s and 7 s (3 s and 6 s, plus the lateness, are passed)
    polled = _poll([False, False, False, False, True, False, False, False, False],
                   [1.0] * 9, 0, 0)
    spec = WindowSpec(kind="time", pane_size=3.0, allowed_lateness=1.0)
    assert close_points(ModelMonitor("m", PROFILE, spec).window, polled) == [1, 4, 7]


def test_a_poll_without_a_merged_order_stays_whole() -> None:
    polled = _poll([False, True, False], [1.0] * 3, 0, 0)
    polled.order = None  # Kafka: topics consumed independently
    spec = WindowSpec(kind="count", pane_size=1)
    assert cut_at_closes(ModelMonitor("m", PROFILE, spec).window, polled) == [polled]
