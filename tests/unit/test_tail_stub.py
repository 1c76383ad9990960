"""The last window of a finite stream, cut short by its end (a replay of 5,010 events in
tumbling windows of 1,000 leaves a window of 10), is a *stub* when it covers under half
a full window: its drift on a handful of events is noise, so the policy does not judge
it; its labels are judged, and its bad records as a share of a full window's records.

Before, such a tail read ``severe`` (PSI of 2 to 4 on ten events) and two truncated lines
at the end of a predictions file were a data-quality fault (2 bad of 2 records read)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.judging import STUB_COVERAGE, is_stub
from driftwatch.policy.loader import load_policy_text
from driftwatch.policy.watcher import MINIMAL
from driftwatch.windows.panes import PaneWindow, WindowSpec
from driftwatch.windows.profile import ReferenceProfile

PANE = 200
POLICY = MINIMAL.replace("pane: 500", f"pane: {PANE}") + """data_quality:
  signals:
    - detector: bad_record_rate
      threshold: 0.01
"""
REF = ReferenceProfile.build(
    pd.DataFrame({"x": np.random.default_rng(0).normal(0, 1, 4000),
                  "score": np.random.default_rng(1).uniform(0, 1, 4000)}),
    numeric=["x"])


def _batch(x: np.ndarray, t0: float = 0.0) -> Batch:
    n = len(x)
    return Batch.build("predictions", n=n, score=np.full(n, 0.5), n_numeric=1,
                       numeric=x[:, None], event_time=t0 + np.arange(n, dtype=float))


def _monitor() -> ModelMonitor:
    return ModelMonitor("m", REF, WindowSpec(kind="count", pane_size=PANE),
                        policy=load_policy_text(POLICY))


@settings(max_examples=25, deadline=None)
@given(tail=st.integers(1, PANE - 1))
def test_a_tail_under_half_a_window_is_not_judged_on_its_predictions(tail: int) -> None:
    rng = np.random.default_rng(tail)
    mon = _monitor()
    full = mon.process(Polled(batches=[_batch(rng.normal(0, 1, 2 * PANE))]))
    # the tail is far off the reference: judged, its PSI reads severe
    last = mon.process(Polled(batches=[_batch(rng.normal(4, 1, tail), 2 * PANE)]))
    last += mon.flush()
    assert [r.window.tail_coverage for r in full] == [None, None]
    (res,) = [r for r in last if r.cohort is None]
    assert res.window.tail_coverage == tail / PANE
    assert res.decision is not None
    stub = tail / PANE < STUB_COVERAGE
    assert is_stub(res.window) == stub
    if stub:
        assert str(res.decision.raw_tier) == "none", res.decision
        assert res.decision.notes[0].startswith("stub: "), res.decision.notes
        # the signals are measured and kept all the same
        assert any(s.signal == "psi" and s.value > 0.5 for s in res.assessment.signals)
    else:
        assert str(res.decision.raw_tier) == "severe", res.decision
        assert not any(n.startswith("stub") for n in res.decision.notes)


@settings(max_examples=25, deadline=None)
@given(bad=st.integers(1, 3 * PANE))
def test_bad_records_after_the_last_window_are_a_share_of_a_full_window(bad: int) -> None:
    """Lines the reader rejects after the last full window (a truncated last line, or a
    run of unreadable outcomes) close a window of no predictions: a fault where they
    would be one in a full window, not whenever there are any."""
    mon = _monitor()
    mon.process(Polled(batches=[_batch(np.random.default_rng(bad).normal(0, 1, PANE))]))
    mon.window.add_read("n_bad", bad)
    (res,) = [r for r in mon.flush() if r.cohort is None]
    (sig,) = [s for s in res.assessment.signals if s.signal == "bad_record_rate"]
    assert sig.details["count"] == bad and sig.details["records"] == bad
    # named only where it is more than the records read
    assert sig.details.get("measured_against", bad) == max(bad, PANE)
    assert ("measured_against" in sig.details) == (bad < PANE)
    assert sig.value == bad / max(bad, PANE)
    assert res.decision is not None
    assert res.decision.data_quality_fault == (bad / max(bad, PANE) > 0.01)


@settings(max_examples=50, deadline=None)
@given(size=st.integers(1, 20), panes=st.integers(1, 4), n=st.integers(0, 200),
       mode=st.sampled_from(["tumbling", "sliding"]))
def test_count_windows_closed_at_the_end_carry_their_share_of_a_full_window(
        size: int, panes: int, n: int, mode: str) -> None:
    spec = WindowSpec(kind="count", pane_size=size, panes=panes, mode=mode)  # type: ignore[arg-type]
    w = PaneWindow(REF.layout, spec)
    before = w.add(_batch(np.zeros(n))) if n else []
    at_end = w.flush()
    assert all(c.tail_coverage is None for c in before)
    assert len(at_end) == (1 if n % (size * (panes if mode == "tumbling" else 1)) else 0)
    for c in at_end:
        assert c.tail_coverage == min(1.0, c.n_events / (size * panes))


def test_a_time_window_closed_at_the_end_covers_the_span_up_to_the_watermark() -> None:
    w = PaneWindow(REF.layout, WindowSpec(kind="time", pane_size=3600.0))
    assert [c.tail_coverage for c in w.add(_batch(np.zeros(4), 0.0))] == []
    w.add(Batch.build("predictions", n=2, score=[0.5, 0.5], n_numeric=1,
                      numeric=[[0.0], [0.0]], event_time=[3700.0, 3600.0 + 900.0]))
    (c,) = w.flush()
    assert (c.start_time, c.end_time, c.tail_coverage) == (3600.0, 7200.0, 0.25)


def test_policy_explain_says_what_a_stub_is_judged_on() -> None:
    from driftwatch.policy.explain import explain_policy

    text = explain_policy(load_policy_text(POLICY))
    assert "is a stub: its labels are judged, and its bad records as a share of a full " \
        "window's records" in text, text
