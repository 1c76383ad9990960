"""Prediction cohorts and labelled statistics across a group, without a broker.

The rows of one stream split over partitions in any way, staged by landing pane in each
and merged by the decider, give the cohort statistics, verdicts and label-free estimates
one monitor gives on the whole stream; and one monitor gives the same whatever the polls'
size (a verdict sees the rows landed up to its window, not the rest of the poll).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.labels.cohort_book import CohortBook
from driftwatch.labels.landing import LandingBook
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.monitor import window_spec_from_policy
from driftwatch.policy.loader import load_policy_text
from driftwatch.service.group import cohorts as group_cohorts
from driftwatch.service.group.merge import PaneMerger
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

from ._group_streams import polls, share

PANE = 500.0
TTL = 2500.0
N = 3000


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    x = rng.normal(size=20_000)
    p = _sigmoid(-2.0 + x)
    df = pd.DataFrame({"x": x, "score": p, "label": (rng.uniform(size=x.size) < p) * 1.0})
    return ReferenceProfile.build(df, numeric=["x"])


POLICY = load_policy_text(
    "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: g}\n"
    "model: {name: m, reference: not-read.parquet}\n"
    f"window: {{kind: time, pane: {int(PANE)}s, panes: 2, mode: sliding}}\n"
    f"labels: {{ttl: {int(TTL)}s}}\n"
    "cohorts: {min_completeness: 0.5}\n"
    "detectors: {min_labelled: 20}\n"
    "signals:\n"
    "  - detector: cohort_bad_rate\n    measure: rel_change\n    thresholds: {mild: 0.2}\n"
    "  - detector: cohort_gini_gap\n    direction: abs\n    thresholds: {mild: 0.3}\n"
    "  - detector: expected_bad_rate\n    measure: rel_change\n    thresholds: {mild: 0.1}\n"
    "persistence: 1\n",
    file="g.yaml")


def _stream(seed: int) -> tuple[Batch, Batch]:
    """Predictions (time-ordered) and, for 75% of them, an outcome up to 2000 s later;
    the rest expire after the TTL. A shift from the middle on."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 6000.0, N))
    x = rng.normal(np.where(t > 3000, 0.7, 0.0), 1.0)
    p = _sigmoid(-2.0 + x)
    ids = np.char.add("k", np.arange(N).astype(str))
    pred = Batch.build("predictions", n=N, n_numeric=1, ids=ids, numeric=x[:, None], score=p,
                       event_time=t)
    lab = np.sort(rng.permutation(N)[: int(0.75 * N)])
    out_t = t[lab] + rng.uniform(1.0, 2000.0, lab.size)
    order = np.argsort(out_t, kind="stable")
    out = Batch.build("outcomes", n=lab.size, ids=ids[lab][order],
                      label=(rng.uniform(size=lab.size) < p[lab][order]) * 1.0,
                      event_time=out_t[order])
    return pred, out


def _whole(profile: ReferenceProfile, pred: Batch, out: Batch, step: float) -> list:  # type: ignore[type-arg]
    mon = ModelMonitor("m", profile, window_spec_from_policy(POLICY), policy=POLICY)
    results = []
    for p, o in polls(pred, out, step):
        results += mon.process(Polled(batches=[b for b in (p, o) if len(b)]))
    return results


def _view(results: list) -> list:  # type: ignore[type-arg]
    """What the cohorts decide: verdicts (summary and signals) and window estimates."""
    out = []
    for r in results:
        if r.cohort is not None:
            out.append(("verdict", r.window.window_id, r.cohort,
                        [(s.signal, s.value, s.details) for s in r.assessment.signals]))
        else:
            out.append(("window", r.window.window_id,
                        [(s.signal, s.value) for s in r.assessment.signals
                         if s.group == "estimated"]))
    return out


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), steps=st.sampled_from([(37.0, 900.0), (250.0, 61.0)]))
def test_a_verdict_does_not_depend_on_the_polls(profile, seed, steps) -> None:
    pred, out = _stream(seed)
    a, b = (_view(_whole(profile, pred, out, s)) for s in steps)
    assert a == b
    assert any(v[0] == "verdict" for v in a), "no cohort was judged: nothing compared"


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), n_parts=st.integers(1, 4), step=st.sampled_from([90.0, 400.0]))
def test_partitions_merged_by_the_decider_give_the_whole_streams_cohorts(
        profile, seed, n_parts, step) -> None:
    got_view, want = _merged(profile, seed, n_parts, step)
    assert got_view == want[: len(got_view)]
    assert any(v[0] == "verdict" for v in got_view), "no cohort was judged: nothing compared"
    assert any(v[0] == "window" and v[2] for v in got_view), "no estimate: nothing compared"


def test_the_decider_judges_the_windows_one_merge_closes_in_one_stacked_pass(profile) -> None:
    from unittest import mock

    from driftwatch.pipeline import judging as judging_mod

    sizes: list[int] = []
    real = judging_mod.window_stats

    def spy(prep, sketches, cfg):  # type: ignore[no-untyped-def]
        sizes.append(len(sketches))
        return real(prep, sketches, cfg)

    with mock.patch.object(judging_mod, "window_stats", spy):
        got_view, want = _merged(profile, 3, 2, 1600.0)  # three panes a poll
    assert max(sizes) >= 2  # several windows closed by one merge, judged together
    assert got_view == want[: len(got_view)] and len(got_view) > 2


def _merged(profile, seed: int, n_parts: int, step: float) -> tuple[list, list]:
    """The decider's view of partitions merged, and the whole stream's, on one stream."""
    pred, out = _stream(seed)
    want = _view(_whole(profile, pred, out, 200.0))
    rng = np.random.default_rng(seed)
    key_part = {k: int(rng.integers(0, n_parts)) for k in pred.keys.tolist()}
    layout = profile.layout
    decider = ModelMonitor("m", profile, window_spec_from_policy(POLICY), policy=POLICY)
    parts = [PartitionPanes(layout, pane_size=PANE, ttl=TTL) for _ in range(n_parts)]
    merger = PaneMerger(layout, n_partitions=n_parts)
    held = group_cohorts.CohortParts()
    got = []
    for p_all, o_all in polls(pred, out, step):
        for i, part in enumerate(parts):
            for k, sk in part.take(*share(p_all, o_all, key_part, i)):
                merger.add_pane(i, k, sk)
            for k, rows in part.take_cohorts():  # through the log's JSON, as live
                held.add(i, k, group_cohorts.encode(rows), next_pane=merger.next_pane)
            if part.frontier is not None:
                merger.add_mark(i, part.frontier)
        held.stage_into(decider.joiner.book, below=merger.complete_below)
        closed = [decider.window.close_merged(k, sk, first=first, last=last)
                  for k, sk, first, last, _ in merger.complete()]
        got += decider.judge_closed([cw for cw in closed if cw is not None])
    return _view(got), want


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 5), upto=st.integers(-1, 12))
def test_split_landing_books_add_up_to_the_whole_bit_for_bit(seed, n_parts, upto) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    cohort = rng.integers(0, 8, n)
    score = np.where(rng.uniform(size=n) < 0.05, np.nan, rng.uniform(size=n))
    t_pred = cohort * 10.0 + rng.uniform(0, 10, n)
    t_out = t_pred + rng.uniform(0, 40, n)
    label = (rng.uniform(size=n) < 0.3) * 1.0
    lost = rng.uniform(size=n) < 0.2
    part = rng.integers(0, n_parts, n)

    def fill(book: LandingBook, m: np.ndarray) -> None:
        book.add_predictions(cohort[m], score[m], t_pred[m])
        book.add_labelled(cohort[m & ~lost], score[m & ~lost], label[m & ~lost],
                          time=t_out[m & ~lost])
        book.add_lost("expired", cohort[m & lost], time=t_pred[m & lost])

    whole = LandingBook(10.0, ttl=25.0)
    fill(whole, np.ones(n, bool))
    decider = LandingBook(10.0, ttl=25.0)
    for p in range(n_parts):
        book = LandingBook(10.0, ttl=25.0)
        fill(book, part == p)
        for pane, rows in book.take(10**6):
            decider.stage(pane, group_cohorts.decode(group_cohorts.encode(rows)))
    whole.fold(upto)
    decider.fold(upto)
    assert CohortBook.to_dict(decider) == CohortBook.to_dict(whole)
    assert sorted(decider.staged) == sorted(whole.staged)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 5))
def test_split_labelled_statistics_add_up_to_the_whole(profile, seed, n_parts) -> None:
    """The labelled part of a pane sketch (class counts and score histograms, PD, exposure
    and expected-loss sums) of partitions adds up to the whole's: counts exactly, float
    sums to rounding."""
    rng = np.random.default_rng(seed)
    n = 500
    score = rng.uniform(size=n)
    label = (rng.uniform(size=n) < score) * 1.0
    exposure = np.where(rng.uniform(size=n) < 0.1, np.nan, rng.uniform(100, 1000, n))
    part = rng.integers(0, n_parts, n)
    whole = Sketch.empty(profile.layout)
    whole.add_labelled(score, label, exposure)
    pieces = []
    for p in range(n_parts):
        s = Sketch.empty(profile.layout)
        m = part == p
        s.add_labelled(score[m], label[m], exposure[m])
        pieces.append(Sketch.from_dict(profile.layout, s.to_dict()))  # as the log carries it
    merged = Sketch.sum(profile.layout, pieces)
    assert merged.lab_n.tolist() == whole.lab_n.tolist()
    assert merged.lab_score.tolist() == whole.lab_score.tolist()
    assert merged.lab_exposure_n == whole.lab_exposure_n
    for name in ("lab_pd_sum", "lab_exposure", "lab_el_pred", "lab_el_obs"):
        assert getattr(merged, name) == pytest.approx(getattr(whole, name), rel=1e-12), name


def test_a_new_decider_drops_rows_it_read_again_for_panes_already_merged() -> None:
    """A new decider reads the log from the start (merged panes not yet compacted away)
    before the leader state tells it where the merge stood: those rows must not count
    twice; a re-published copy of a pane's rows replaces the first."""
    part = LandingBook(pane_size=10.0)
    part.add_predictions(np.array([0, 1, 2]), np.array([0.1, 0.2, 0.3]),
                         np.array([1.0, 11.0, 21.0]))
    rows = {pane: group_cohorts.encode(cs) for pane, cs in part.take(3)}
    held = group_cohorts.CohortParts()
    for pane, r in rows.items():
        held.add(0, pane, r, next_pane=None)
        held.add(0, pane, r, next_pane=None)  # re-published
    held.drop_below(2)  # panes 0 and 1 were merged by the previous decider
    book = LandingBook(pane_size=10.0)
    assert held.stage_into(book, below=3) == [(2, 0)]
    book.fold(2)
    assert book.keys() == [2] and book.get(2).predicted == 1
    held.add(0, 1, rows[1], next_pane=3)  # late copy of a merged pane: ignored
    assert held.stage_into(book, below=4) == []
