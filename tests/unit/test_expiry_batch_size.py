"""A prediction expires when the stream's watermark passes its time plus ``labels.ttl``,
wherever a poll happens to end: an outcome that comes after that joins nothing, in a poll
of one record or of the whole stream alike.

Before, expiry ran once at the end of each poll, so an outcome later than the wait still
joined its prediction when both sat in one poll: a Lending Club replay (outcomes 6 to 36
months after issue, the default wait of 120 days) joined 3,004 outcomes at
``--batch-size 1000`` and 27,261 at ``--batch-size 100000``.

Nor does an outcome join whose own time is more than the wait after its prediction's,
where no later prediction moved a count window's watermark past it (the outcomes after a
stream's last prediction): they used to join, however late."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

TTL = 100.0
REF = ReferenceProfile.build(
    pd.DataFrame({"x": np.random.default_rng(0).normal(0, 1, 500),
                  "score": np.random.default_rng(1).uniform(0, 1, 500)}),
    numeric=["x"])


def _polls(pred_t: np.ndarray, out_t: np.ndarray, out_ids: list[str], cut: int
           ) -> list[Polled]:
    """The merged stream (in event time, predictions first on ties) in polls of ``cut``
    records, each with its merged order, as a file source gives them."""
    n = len(pred_t)
    recs = sorted([(t, 0, i) for i, t in enumerate(pred_t)]
                  + [(t, 1, i) for i, t in enumerate(out_t)])
    polls = []
    for a in range(0, len(recs), cut):
        chunk = recs[a:a + cut]
        p = [i for _, s, i in chunk if s == 0]
        o = [i for _, s, i in chunk if s == 1]
        batches, order = [], []
        if p:
            batches.append(Batch.build(
                "predictions", n=len(p), ids=[f"k{i}" for i in p], score=[0.5] * len(p),
                decision=[1] * len(p), n_numeric=1, numeric=[[0.0]] * len(p),
                event_time=pred_t[p]))
        if o:
            batches.append(Batch.build("outcomes", n=len(o), ids=[out_ids[i] for i in o],
                                       label=[1.0] * len(o), event_time=out_t[o]))
        at = {0: 0, 1: len(batches) - 1}
        order = [at[s] for _, s, _ in chunk]
        polls.append(Polled(batches=batches, order=np.array(order, dtype=np.intp)))
    assert sum(p.n_events for p in polls) == n + len(out_t)
    return polls


def _counts(polls: list[Polled], kind: str) -> dict[str, int]:
    spec = WindowSpec(kind=kind, pane_size=1000 if kind == "count" else 50.0)  # type: ignore[arg-type]
    mon = ModelMonitor("m", REF, spec)
    mon.joiner.ttl = TTL
    for p in polls:
        mon.process(p)
    mon.flush()
    c = mon.joiner.counters
    return {k: int(c[k]) for k in ("joined", "expired", "late_predictions")} | {
        "orphans": mon.joiner.orphans_held + int(c["orphan_outcomes"])}


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 10_000), cut=st.integers(2, 50),
       kind=st.sampled_from(["count", "time"]))
def test_the_outcomes_joined_do_not_depend_on_where_polls_end(n: int, seed: int, cut: int,
                                                               kind: str) -> None:
    rng = np.random.default_rng(seed)
    pred_t = np.sort(rng.uniform(0, 300, n)).round()
    delay = rng.choice([5.0, 50.0, 99.0, 150.0, 400.0], n)  # some past the wait
    out_t = pred_t + delay
    ids = [f"k{i}" for i in range(n)]
    one = _counts(_polls(pred_t, out_t, ids, 1), kind)
    assert _counts(_polls(pred_t, out_t, ids, cut), kind) == one
    assert _counts(_polls(pred_t, out_t, ids, 2 * n), kind) == one
    # and what one-record polls give is the rule: joined where neither the window's
    # watermark before the outcome (outcomes move it in time panes, only predictions in
    # count panes) nor the outcome's own time had passed the prediction's time plus the
    # wait
    merged = sorted([(t, 0) for t in pred_t] + [(t, 1, i) for i, t in enumerate(out_t)])
    wm, joined = -np.inf, 0
    for rec in merged:
        if rec[1] == 1:
            joined += int(pred_t[rec[2]] >= max(wm, rec[0]) - TTL)
        if rec[1] == 0 or kind == "time":
            wm = max(wm, rec[0])
    assert one["joined"] == joined
    assert one["joined"] + one["orphans"] == n


def test_an_outcome_waiting_past_its_wait_joins_no_prediction_later_in_the_poll() -> None:
    """The other side: an outcome read before its prediction waits ``orphan_ttl``; a
    prediction that comes after the watermark passed that finds it gone, whether the
    record that moved the watermark ended a poll or not."""
    outcome = Batch.build("outcomes", n=1, ids=["k"], label=[1.0], event_time=[0.0])

    def preds(ids: list[str], t: list[float]) -> Batch:
        return Batch.build("predictions", n=len(ids), ids=ids, score=[0.5] * len(ids),
                           decision=[1] * len(ids), n_numeric=1,
                           numeric=[[0.0]] * len(ids), event_time=t)

    together = [Polled(batches=[outcome], order=np.zeros(1, np.intp)),
                Polled(batches=[preds(["x", "k"], [200.0, 250.0])],
                       order=np.zeros(2, np.intp))]
    apart = [together[0], Polled(batches=[preds(["x"], [200.0])], order=np.zeros(1, np.intp)),
             Polled(batches=[preds(["k"], [250.0])], order=np.zeros(1, np.intp))]
    got = []
    for polls in (together, apart):
        mon = ModelMonitor("m", REF, WindowSpec(kind="count", pane_size=1000))
        mon.joiner.ttl = mon.joiner.orphan_ttl = TTL
        for p in polls:
            mon.process(p)
        got.append((int(mon.joiner.counters["joined"]),
                    int(mon.joiner.counters["orphan_outcomes"]), mon.joiner.backlog))
    assert got[0] == got[1] == (0, 1, 2)


def test_outcomes_after_the_last_prediction_later_than_the_wait_join_nothing() -> None:
    """Count panes, which outcomes do not move: the predictions end, and their outcomes
    come after, some within the wait and some past it, with or without a merged order
    (a file's, or Kafka's polls)."""
    pred_t = np.arange(10.0)
    delay = np.array([5.0, 150.0] * 5)
    ids = [f"k{i}" for i in range(10)]
    preds = Batch.build("predictions", n=10, ids=ids, score=[0.5] * 10, decision=[1] * 10,
                        n_numeric=1, numeric=[[0.0]] * 10, event_time=pred_t)
    outs = Batch.build("outcomes", n=10, ids=ids, label=[1.0] * 10, event_time=pred_t + delay)
    for order in (True, False):
        mon = ModelMonitor("m", REF, WindowSpec(kind="count", pane_size=1000))
        mon.joiner.ttl = TTL
        mon.process(Polled(batches=[preds], order=np.zeros(10, np.intp) if order else None))
        mon.process(Polled(batches=[outs], order=np.zeros(10, np.intp) if order else None))
        c = mon.joiner.counters
        assert (int(c["joined"]), int(c["expired"])) == (5, 5), order


def test_an_outcome_read_ahead_later_than_the_wait_after_its_prediction_joins_nothing() -> None:
    """The same rule where the outcome comes first (a lagging predictions topic): dated
    more than the wait after its prediction, it is given up when the prediction comes,
    and the prediction waits as any other; within the wait, it joins."""
    got = []
    for delay in (50.0, 150.0):
        mon = ModelMonitor("m", REF, WindowSpec(kind="count", pane_size=1000))
        mon.joiner.ttl = TTL
        mon.process(Polled(batches=[Batch.build("outcomes", n=1, ids=["k"], label=[1.0],
                                                event_time=[10.0 + delay])]))
        mon.process(Polled(batches=[Batch.build(
            "predictions", n=1, ids=["k"], score=[0.5], decision=[1], n_numeric=1,
            numeric=[[0.0]], event_time=[10.0])]))
        c = mon.joiner.counters
        got.append((int(c["joined"]), int(c["orphan_outcomes"]), mon.joiner.backlog))
    assert got == [(1, 0, 0), (0, 1, 1)]
