"""LabelJoiner: joins, duplicates, orphans, TTL, bounded memory, checkpoints, cohorts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from driftwatch.batch import Batch
from driftwatch.errors import StateError
from driftwatch.labels.joiner import COUNTERS, LabelJoiner
from driftwatch.labels.store import KeyStore

DAY = 86400.0


def _preds(ids, times, score=None, decision=None, exposure=None) -> Batch:
    n = len(ids)
    return Batch.build(
        "predictions", n=n, ids=[str(i) for i in ids], event_time=times,
        score=score if score is not None else np.linspace(0.01, 0.99, n),
        decision=decision if decision is not None else np.ones(n, np.int8),
        exposure=exposure if exposure is not None else np.full(n, np.nan),
    )


def _outs(ids, times, labels) -> Batch:
    return Batch.build("outcomes", n=len(ids), ids=[str(i) for i in ids], event_time=times,
                       label=labels)


def test_join_carries_prediction_fields_and_delay() -> None:
    j = LabelJoiner(ttl_seconds=90 * DAY, max_pending=100)
    j.add_predictions(_preds([1, 2, 3], [0.0, 100.0, 200.0], score=[0.1, 0.2, 0.3],
                             exposure=[1000.0, 2000.0, 3000.0]))
    got = j.add_outcomes(_outs([3, 1], [5 * DAY, 2 * DAY], [1.0, 0.0]))
    assert got.score.tolist() == [0.3, 0.1]
    assert got.label.tolist() == [1.0, 0.0] and got.exposure.tolist() == [3000.0, 1000.0]
    assert got.delay.tolist() == [5 * DAY - 200.0, 2 * DAY]
    assert got.decision.tolist() == [1, 1] and got.pred_time.tolist() == [200.0, 0.0]
    assert j.backlog == 1 and j.joined == 2


def test_duplicates_are_counted_and_the_first_copy_wins() -> None:
    j = LabelJoiner(ttl_seconds=DAY, max_pending=100)
    j.add_predictions(_preds([1, 1, 2], [0.0, 1.0, 2.0], score=[0.1, 0.9, 0.2]))
    j.add_predictions(_preds([2], [3.0], score=[0.5]))  # redelivered, still pending
    got = j.add_outcomes(_outs([1, 1], [10.0, 11.0], [1.0, 0.0]))
    assert got.score.tolist() == [0.1] and got.label.tolist() == [1.0]
    j.add_predictions(_preds([1], [0.0]))  # redelivered after its join
    assert len(j.add_outcomes(_outs([1], [12.0], [1.0]))) == 0  # outcome redelivered
    assert (j.duplicate_predictions, j.duplicate_outcomes) == (3, 2)
    assert j.backlog == 1 and j.orphans_held == 0


def test_orphan_outcome_joins_when_its_prediction_arrives_late() -> None:
    j = LabelJoiner(ttl_seconds=DAY, max_pending=100, orphan_ttl_seconds=3600.0)
    assert len(j.add_outcomes(_outs([7, 8], [500.0, 600.0], [1.0, 0.0]))) == 0
    assert j.orphans_held == 2
    got = j.add_predictions(_preds([7], [100.0], score=[0.4]))
    assert got.label.tolist() == [1.0] and got.delay.tolist() == [400.0]
    assert j.late_predictions == 1 and j.orphans_held == 1 and j.backlog == 0
    j.expire(600.0 + 3601.0)
    assert j.orphan_outcomes == 1 and j.orphans_held == 0


def test_ttl_is_event_time_and_expired_are_counted_per_cohort() -> None:
    j = LabelJoiner(ttl_seconds=30 * DAY, max_pending=100)
    j.add_predictions(_preds([1, 2, 3], [0.0, DAY, 40 * DAY]))
    assert j.expire(31 * DAY) == 1  # only the one older than the TTL at event time 31d
    assert j.expired == 1 and j.backlog == 2
    j.add_outcomes(_outs([2], [20 * DAY], [0.0]))
    c = {s.start: s for s in j.cohort_stats()}
    assert (c[0.0].predicted, c[0.0].expired, c[0.0].pending) == (1, 1, 0)
    assert (c[DAY].labelled, c[DAY].completeness) == (1, 1.0)
    assert (c[40 * DAY].pending, c[40 * DAY].completeness) == (1, 0.0)


def test_memory_is_bounded_by_evicting_the_oldest() -> None:
    j = LabelJoiner(ttl_seconds=DAY, max_pending=1_000)
    rng = np.random.default_rng(0)
    times = rng.permutation(5_000).astype(float)
    for part in np.array_split(np.arange(5_000), 10):
        j.add_predictions(_preds(part, times[part]))
    assert j.backlog == 1_000 and j.evicted == 4_000
    got = j.add_outcomes(_outs(np.arange(5_000), np.full(5_000, 1e4), np.zeros(5_000)))
    assert sorted(got.pred_time.tolist()) == list(np.arange(4_000.0, 5_000.0))  # newest kept
    assert j.orphans_held == j.max_orphans == 100
    assert j.orphan_outcomes == 4_000 - 100


def test_declined_are_not_held_unless_asked() -> None:
    preds = _preds([1, 2], [0.0, 0.0], decision=np.array([0, 1], np.int8))
    j = LabelJoiner(ttl_seconds=DAY, max_pending=10)
    j.add_predictions(preds)
    assert (j.backlog, j.declined_skipped) == (1, 1)
    k = LabelJoiner(ttl_seconds=DAY, max_pending=10, hold_declined=True)
    k.add_predictions(preds)
    assert k.backlog == 2


def test_counters_account_for_every_record() -> None:
    rng = np.random.default_rng(1)
    j = LabelJoiner(ttl_seconds=10 * DAY, max_pending=3_000)
    for day in range(20):
        ids = rng.integers(0, 20_000, 800)  # repeats across days: duplicates
        times = day * DAY + rng.uniform(0, DAY, 800)
        times[:5] = np.nan
        dec = (rng.uniform(size=800) < 0.8).astype(np.int8)
        j.add_predictions(_preds(ids, times, decision=dec))
        oid = rng.integers(0, 20_000, 500)
        lab = (rng.uniform(size=500) < 0.1).astype(float)
        lab[:3] = np.nan
        j.add_outcomes(_outs(oid, np.full(500, day * DAY + DAY), lab))
        j.expire(day * DAY + DAY)
    s = j.stats()
    held_or_left = s["backlog"] + s["expired"] + s["evicted"]
    assert s["predictions"] == s["joined"] + held_or_left + s["duplicate_predictions"] + s[
        "declined_skipped"] + s["invalid_predictions"]
    assert s["outcomes"] == s["joined"] + s["duplicate_outcomes"] + s["orphan_outcomes"] + s[
        "orphans_held"] + s["invalid_outcomes"]
    total = sum(c.predicted for c in j.cohort_stats())
    assert total == s["joined"] + held_or_left
    assert set(COUNTERS) <= set(s)


def test_checkpoint_round_trip_through_json_continues_identically() -> None:
    def feed(j: LabelJoiner, day: int) -> list[float]:
        r = np.random.default_rng(day)
        j.add_predictions(_preds(r.integers(0, 5_000, 300), day * DAY + r.uniform(0, DAY, 300),
                                 score=r.uniform(size=300)))
        got = j.add_outcomes(_outs(r.integers(0, 5_000, 200), np.full(200, (day + 1) * DAY),
                                   (r.uniform(size=200) < 0.2).astype(float)))
        j.expire((day + 1) * DAY)
        return sorted(got.score.tolist())

    a = LabelJoiner(ttl_seconds=3 * DAY, max_pending=800)
    b = LabelJoiner(ttl_seconds=3 * DAY, max_pending=800)
    for day in range(5):
        assert feed(a, day) == feed(b, day)
    b = LabelJoiner.from_dict(json.loads(json.dumps(b.to_dict())))
    assert b.to_dict() == a.to_dict()
    for day in range(5, 10):
        assert feed(a, day) == feed(b, day)
    assert a.stats() == b.stats()


def test_corrupt_state_raises_state_error() -> None:
    d = LabelJoiner(ttl_seconds=DAY, max_pending=10).to_dict()
    with pytest.raises(StateError):
        LabelJoiner.from_dict({**d, "version": 99})
    with pytest.raises(StateError):
        LabelJoiner.from_dict({**d, "pending": {**d["pending"], "n": 5}})


def test_delay_stats_and_bulk_speed_path() -> None:
    j = LabelJoiner(ttl_seconds=365 * DAY, max_pending=200_000)
    n = 100_000
    ids = np.arange(n)
    j.add_predictions(_preds(ids, np.zeros(n)))
    delays = np.random.default_rng(3).uniform(30 * DAY, 90 * DAY, n // 2)
    got = j.add_outcomes(_outs(ids[: n // 2], delays, np.zeros(n // 2)))
    assert len(got) == n // 2 and j.backlog == n // 2
    st = j.delay_stats()
    assert st["count"] == n // 2 and st["mean"] == pytest.approx(delays.mean())
    assert st["p50"] == pytest.approx(np.median(delays), rel=0.34)  # one log bin
    assert st["max"] == delays.max()


def test_key_store_agrees_with_a_dict_under_random_operations() -> None:
    rng = np.random.default_rng(4)
    store, model = KeyStore({"v": np.float64}), {}
    for _ in range(200):
        op = rng.integers(0, 3)
        keys = np.unique(rng.integers(0, 2_000, rng.integers(1, 60)).astype(np.uint64))
        if op == 0:
            new = keys[~np.isin(keys, np.array(list(model), dtype=np.uint64))]
            vals = rng.uniform(size=new.size)
            store.insert(new, {"v": vals})
            model.update(zip(new.tolist(), vals.tolist(), strict=True))
        elif op == 1:
            found, rows = store.pop(keys)
            expect = [k for k in keys.tolist() if k in model]
            assert found.sum() == len(expect)
            assert rows["v"].tolist() == [model.pop(k) for k in expect]
        else:
            gone = store.pop_where_below("v", 0.05)
            for k in gone["key"].tolist():
                assert model.pop(k) < 0.05
        assert len(store) == len(model)
    assert sorted(KeyStore.from_dict(store.to_dict()).get(
        np.array(sorted(model), dtype=np.uint64))[1]["v"].tolist()) == sorted(model.values())


def test_an_expiry_with_nothing_gone_books_nothing() -> None:
    """``expire`` runs every poll: with nothing past the TTL it adds no lost rows to the
    cohort book; once rows expire they are booked as before."""
    j = LabelJoiner(ttl_seconds=10 * DAY, max_pending=100)
    j.add_predictions(_preds(["a", "b"], [0.0, 5 * DAY]), cohort=np.array([0, 1]))
    lost: list[list[int]] = []
    book_lost = j.book.add_lost
    j.book.add_lost = (  # type: ignore[method-assign]
        lambda kind, cohort, **kw: lost.append(cohort.tolist()) or book_lost(kind, cohort, **kw))
    assert j.expire(9 * DAY) == 0 and lost == [] and j.expired == 0
    assert j.expire(12 * DAY) == 1 and lost == [[0]] and j.expired == 1
    assert j.book.get(0).expired == 1
