"""An outcome that comes before its prediction in the merged stream (an outcomes file
without times, read ahead of the predictions; PaySim's or IEEE-CIS's labels as a bare
``id,isFraud`` table) is charged to the window of its prediction, whether the two arrive
in one poll or in two: the windows do not depend on how the stream was cut into polls."""

from __future__ import annotations

import numpy as np
import pandas as pd

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

IDS = ["a", "b", "c", "d", "e", "f"]
#: a, b and c are frauds (bad), d, e and f not
LABELS = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def _monitor(kind: str = "count") -> ModelMonitor:
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"x": rng.normal(0, 1, 200), "score": rng.uniform(0, 1, 200)})
    prof = ReferenceProfile.build(ref, numeric=["x"])
    size = 2 if kind == "count" else 100.0
    return ModelMonitor("m", prof, WindowSpec(kind=kind, pane_size=size))


def _batches() -> tuple[Batch, Batch]:
    preds = Batch.build("predictions", n=6, ids=IDS, score=[0.5] * 6,
                        event_time=[10.0, 20.0, 110.0, 120.0, 210.0, 220.0],
                        decision=[1] * 6, numeric=[[0.0]] * 6, n_numeric=1)
    outs = Batch.build("outcomes", n=6, ids=IDS, label=LABELS, event_time=[np.nan] * 6)
    return outs, preds


def _labelled(mon: ModelMonitor, polls: list[Polled]) -> list[list[int]]:
    """(good, bad) labelled counts of each window, in order."""
    results = []
    for p in polls:
        results += mon.process(p)
    results += mon.flush()
    return [r.window.sketch.lab_n.tolist() for r in results if r.cohort is None]


def test_outcomes_read_ahead_in_the_same_poll_land_in_their_predictions_windows():
    for kind in ("count", "time"):
        outs, preds = _batches()
        one = Polled(batches=[outs, preds], order=np.array([0] * 6 + [1] * 6))
        got = _labelled(_monitor(kind), [one])
        # windows of two predictions each: (a, b) bad, (c bad, d good), (e, f) good
        assert got == [[0, 2], [1, 1], [2, 0]], (kind, got)
        outs, preds = _batches()
        two = [Polled(batches=[outs], order=np.zeros(6, dtype=np.intp)),
               Polled(batches=[preds], order=np.zeros(6, dtype=np.intp))]
        assert _labelled(_monitor(kind), two) == got, kind


def test_an_outcome_after_its_prediction_still_lands_where_it_arrives():
    # a, b predicted in window 0; their outcomes arrive after c and d
    preds = Batch.build("predictions", n=4, ids=IDS[:4], score=[0.5] * 4,
                        event_time=[10.0, 20.0, 110.0, 120.0], decision=[1] * 4,
                        numeric=[[0.0]] * 4, n_numeric=1)
    outs = Batch.build("outcomes", n=2, ids=IDS[:2], label=[1.0, 0.0],
                       event_time=[np.nan] * 2)
    poll = Polled(batches=[preds, outs], order=np.array([0, 0, 0, 0, 1, 1]))
    got = _labelled(_monitor("count"), [poll])
    assert got == [[0, 0], [0, 0], [1, 1]]  # after four predictions: the third pane


def test_without_training_rows_the_windows_are_the_same_and_nothing_is_held():
    # a replay that runs no action keeps no labelled training rows; what the windows
    # measure must not depend on it
    kept, lean = _monitor("count"), _monitor("count")
    lean.keep_training_rows = False
    polls = []
    for mon in (kept, lean):
        outs, preds = _batches()
        polls.append(_labelled(mon, [Polled(batches=[outs, preds],
                                            order=np.array([0] * 6 + [1] * 6))]))
    assert polls[0] == polls[1] == [[0, 2], [1, 1], [2, 0]]
    assert len(kept.labelled_buffer) == 6 and len(lean.labelled_buffer) == 0
    assert len(lean.pending_features) == 0
