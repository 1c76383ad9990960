"""Cohort rows and labelled rows of a partition that goes idle, without a broker.

An idle partition publishes provisional copies of the rows staged in its open panes and
the merge passes those panes with them; when the partition's traffic comes back and the
panes close there, only what the copies lacked is added (late cohort rows land in the
first pane not merged, as one process lands a late row). Whatever the idle spells, the
decider ends with every cohort's sums and every labelled row of the stream once: the
same as a group whose partitions never went idle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.batch import Batch
from driftwatch.labels.landing import LandingBook
from driftwatch.service.group import cohorts as group_cohorts
from driftwatch.service.group.labelled import LabelledPanes, LabelledParts
from driftwatch.service.group.merge import PaneMerger
from driftwatch.service.group.panelog import decode_value, encode_value
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.profile import ReferenceProfile

from ._group_streams import delayed_outcomes, polls, share

PANE = 500.0
TTL = 2500.0
FAR = 1e7  # a last event on every partition: every pane of the stream closes there


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    x = rng.normal(size=5_000)
    df = pd.DataFrame({"x": x, "score": 1 / (1 + np.exp(2 - x)), "label": (x > 1) * 1.0})
    return ReferenceProfile.build(df, numeric=["x"])


def _stream(seed: int, n: int) -> tuple[Batch, Batch]:
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 6000.0, n))
    ids = np.char.add("k", np.arange(n).astype(str))
    pred = Batch.build("predictions", n=n, n_numeric=1, ids=ids,
                       numeric=rng.normal(size=n)[:, None], score=rng.uniform(size=n),
                       event_time=t)
    return pred, delayed_outcomes(rng, t, ids)


def _run(profile: ReferenceProfile, pred: Batch, out: Batch, n_parts: int,
         idle: dict[int, tuple[int, int]], seed: int) -> tuple[dict, list]:  # type: ignore[type-arg]
    """The decider's cohort sums and labelled rows; ``idle[p] = (a, b)``: partition p's
    traffic stops at poll a (its owner marks it idle, with copies of its open panes) and
    what it missed arrives at poll b."""
    rng = np.random.default_rng(seed)
    key_part = dict(zip(pred.keys.tolist(), rng.integers(0, n_parts, len(pred)).tolist(),
                        strict=True))
    parts = [PartitionPanes(profile.layout, pane_size=PANE, ttl=TTL,
                            labelled=LabelledPanes(profile.schema, feature_rows=10**6,
                                                   pane_rows=10**6)) for _ in range(n_parts)]
    merger = PaneMerger(profile.layout, n_partitions=n_parts)
    cohorts, labelled = group_cohorts.CohortParts(), LabelledParts(profile.schema)
    book, buf = LandingBook(PANE, ttl=TTL), LabelledBuffer(profile.schema, 10**6)
    held: dict[int, list] = {p: [] for p in range(n_parts)}  # type: ignore[type-arg]

    def log(value: dict) -> dict:  # type: ignore[type-arg]
        return decode_value(encode_value(value))

    def passed(i: int, k: int) -> bool:  # as the decider reads it (Leadership._passed)
        return k >= merger.marks.get(i, k)

    def publish(i: int, part: PartitionPanes, batches: tuple) -> None:  # type: ignore[type-arg]
        for k, sk in part.take(*batches):
            merger.add_pane(i, k, sk)
        for k, rows in part.take_cohorts():
            cohorts.add(i, k, log({"c": group_cohorts.encode(rows)})["c"],
                        next_pane=merger.next_pane, passed=passed(i, k))
        for k, rows in part.take_labelled():
            labelled.add(i, k, log({"r": rows})["r"], next_pane=merger.next_pane,
                         passed=passed(i, k))
        if part.frontier is not None:
            merger.add_mark(i, part.frontier)

    poll_list = list(polls(pred, out, 150.0))
    far = (Batch.build("predictions", n=1, n_numeric=1, ids=["far"], numeric=[[0.0]],
                       score=[0.5], event_time=[FAR]),
           Batch.build("outcomes", n=1, ids=["nobody"], label=[0.0], event_time=[FAR]))
    for j in range(len(poll_list) + 1):
        for i, part in enumerate(parts):
            a, b = idle.get(i, (-1, -1))
            if j == a:  # quiet: provisional copies of what is open, then the idle mark
                for k, sk in part.open_panes():
                    merger.add_pane(i, k, sk.copy(), provisional=True)
                c_rows, l_rows = part.open_rows()
                for k, rows in c_rows:
                    cohorts.add(i, k, log({"c": rows})["c"], next_pane=merger.next_pane,
                                provisional=True)
                for k, rows in l_rows:
                    labelled.add(i, k, log({"r": rows})["r"], next_pane=merger.next_pane,
                                 provisional=True)
                merger.add_mark(i, part.frontier, idle=True)
            if j == len(poll_list):
                batches = [*held[i], far]
            else:
                mine = share(*poll_list[j], key_part, i)
                if a <= j < b:
                    held[i].append(mine)
                    continue
                batches = [*held[i], mine]
            if held[i] or j == b:
                merger.add_mark(i, part.frontier, idle=False)  # traffic again
            held[i] = []
            for bt in batches:
                publish(i, part, bt)
        late_at = merger.next_pane
        cohorts.stage_into(book, below=merger.complete_below, late_at=late_at)
        labelled.feed(buf, below=merger.complete_below)
        merger.complete()
    assert merger.next_pane is not None and merger.next_pane * PANE > 6000 + 2000
    book.fold(10**9)
    sums = {k: (book.get(k).pred_n.tolist(), book.get(k).lab_n.tolist(),
                book.get(k).pred_pd.tolist(), book.get(k).lab_pd.tolist(), book.get(k).lab_ll)
            for k in sorted(book.keys())}
    rows = sorted(map(tuple, buf.frame().drop(columns=["seq"]).astype(str).values.tolist()))
    return sums, rows



@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n_parts=st.integers(2, 4),
       spells=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.integers(1, 20)),
                       min_size=1, max_size=3))
def test_idle_spells_lose_and_double_nothing(profile, seed, n_parts, spells) -> None:
    pred, out = _stream(seed, 1200)
    idle = {p % n_parts: (a, a + d) for p, a, d in spells}
    want = _run(profile, pred, out, n_parts, {}, seed)
    assert len(want[1]) > 500 and want[0], "nothing to compare"
    assert _run(profile, pred, out, n_parts, idle, seed) == want
