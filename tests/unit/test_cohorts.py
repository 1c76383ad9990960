"""Cohorts: label-based signals attributed to the window of the prediction, and the
label-free estimates (expected bad rate and Gini) beside their realised values.

The synthetic streams use a known calibrated model, ``P(bad | x) = sigmoid(-2.2 + x)``,
so the truth is known: a concept drift raises the true P(bad) at the same scores; a
covariate shift moves ``x`` and leaves ``P(bad | x)`` as it was.
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
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.monitor import window_spec_from_policy
from driftwatch.policy.loader import load_policy_text
from driftwatch.policy.schema import Policy
from driftwatch.windows.profile import ReferenceProfile

A, B = -2.2, 1.0
PANE = 4000  # predictions per (tumbling) window: one cohort each
WINDOWS = 12
DELAY = 3 * PANE  # outcomes arrive three windows after their prediction (one event a second)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    x = rng.normal(size=40_000)
    p = _sigmoid(A + B * x)
    df = pd.DataFrame({"x": x, "score": p, "label": (rng.uniform(size=x.size) < p) * 1.0})
    return ReferenceProfile.build(df, numeric=["x"])


def _policy(signals: str, *, extra: str = "", pane: int = PANE) -> Policy:
    return load_policy_text(
        "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: cohorts}\n"
        "model: {name: m, reference: not-read.parquet}\n"
        f"window: {{kind: count, pane: {pane}}}\n"
        f"signals:\n{signals}persistence: 1\n{extra}",
        file="cohorts.yaml")


def _stream(seed: int, *, x_of, true_logit_shift) -> tuple[Batch, Batch]:  # type: ignore[no-untyped-def]
    """Predictions (one a second) and their outcomes (``DELAY`` seconds later)."""
    rng = np.random.default_rng(seed)
    n = PANE * WINDOWS
    w = np.arange(n) // PANE
    x = x_of(rng, w)
    score = _sigmoid(A + B * x)
    truth = _sigmoid(A + B * x + true_logit_shift(w))
    label = (rng.uniform(size=n) < truth) * 1.0
    t = np.arange(n, dtype=float)
    ids = np.char.add("e", np.arange(n).astype(str))
    pred = Batch.build("predictions", n=n, n_numeric=1, ids=ids, numeric=x[:, None],
                       score=score, event_time=t)
    out = Batch.build("outcomes", n=n, ids=ids, label=label, event_time=t + DELAY)
    return pred, out


def _run(mon: ModelMonitor, pred: Batch, out: Batch, step: int = 1000) -> list:  # type: ignore[type-arg]
    """Polls of ``step`` seconds: the predictions and the outcomes stamped in them."""
    results = []
    end = float(out.event_time.max()) + 1
    for a in np.arange(0.0, end, step):
        pm = (pred.event_time >= a) & (pred.event_time < a + step)
        om = (out.event_time >= a) & (out.event_time < a + step)
        batches = [b for b in (pred.take(pm), out.take(om)) if len(b)]
        if batches:
            results += mon.process(Polled(batches=batches))
    return results + mon.flush()


# -- a concept drift whose labels arrive late ----------------------------------------------

DRIFT = (4, 5, 6)  # the windows whose applicants default more at the same scores


def _concept(seed: int = 1) -> tuple[Batch, Batch]:
    return _stream(seed, x_of=lambda rng, w: rng.normal(size=w.size),
                   true_logit_shift=lambda w: np.where(np.isin(w, DRIFT), 0.8, 0.0))


def test_late_labels_of_a_drifted_cohort_judge_that_cohort_not_the_clean_window(
        profile: ReferenceProfile) -> None:
    policy = _policy("  - detector: cohort_bad_rate\n    measure: rel_change\n"
                     "    thresholds: {mild: 0.3, moderate: 0.6}\n"
                     "  - detector: psi\n    thresholds: {mild: 0.1}\n")
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    results = _run(mon, *_concept())
    # the flush closes a last window of late outcomes only (no prediction of its own)
    windows = [r for r in results if r.cohort is None and r.window.n_events]
    verdicts = [r for r in results if r.cohort is not None]
    assert [r.window.window_id for r in windows] == list(range(WINDOWS))
    assert sorted(r.window.window_id for r in verdicts) == list(range(WINDOWS))
    # the scenario is the issue's: outcomes of the drifted cohorts land in later windows
    # (where the window-level bad rate sees them), after the drift has ended
    late = next(r for r in windows if r.window.window_id == DRIFT[-1] + 2)
    bad = next(late.assessment.select(signal="bad_rate"))
    assert bad.details["rel_change"] > 0.3
    tiered = {r.window.window_id: str(r.decision.tier) for r in results
              if r.decision is not None and str(r.decision.tier) != "none"}
    assert set(tiered) == set(DRIFT), tiered
    for r in verdicts:
        if r.window.window_id in DRIFT:
            (reason,) = [x for x in r.decision.reasons if x.signal == "cohort_bad_rate"]
            assert reason.feature == f"window {r.window.window_id}"
            assert r.cohort["completeness"] >= 0.8
    # every window whose own predictions are clean stays untiered, verdict or not
    assert all(str(r.decision.tier) == "none" for r in results
               if r.window.window_id > DRIFT[-1])


# -- before the labels: a covariate shift that degrades the model ------------------------

SHIFT = 4  # first window of the shift: riskier applicants, less spread between them


def _covariate(seed: int = 2) -> tuple[Batch, Batch]:
    def x_of(rng: np.random.Generator, w: np.ndarray) -> np.ndarray:
        on = w >= SHIFT
        return np.where(on, rng.normal(0.8, 0.5, w.size), rng.normal(0.0, 1.0, w.size))

    return _stream(seed, x_of=x_of, true_logit_shift=lambda w: np.zeros(w.size))


def test_label_free_estimates_move_first_and_match_the_realised_values(
        profile: ReferenceProfile) -> None:
    policy = _policy("  - detector: cohort_bad_rate_gap\n    direction: abs\n"
                     "    thresholds: {mild: 0.5}\n")
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    results = _run(mon, *_covariate())
    windows = {r.window.window_id: r for r in results if r.cohort is None and r.window.n_events}
    verdicts = {r.window.window_id: r for r in results if r.cohort is not None}

    def sig(r, name):  # type: ignore[no-untyped-def]
        return next(r.assessment.select(signal=name))

    # the truth, from the model: E[P(bad)] before and after the shift
    rng = np.random.default_rng(9)
    true_before = _sigmoid(A + B * rng.normal(size=400_000)).mean()
    true_after = _sigmoid(A + B * rng.normal(0.8, 0.5, 400_000)).mean()
    for wid, r in windows.items():
        e = sig(r, "expected_bad_rate")
        want = true_after if wid >= SHIFT else true_before
        assert e.value == pytest.approx(want, rel=0.06), (wid, e.value, want)
        assert (e.value > e.threshold) == (wid >= SHIFT), wid
        g = sig(r, "expected_gini")
        assert (g.value < g.threshold) == (wid >= SHIFT), (wid, g.value, g.threshold)
    # when the shift's first window closes, the outcomes it has are older cohorts': the
    # window-level bad rate has not moved; its own cohort is judged windows later
    first = windows[SHIFT]
    assert not sig(first, "bad_rate").exceeds
    assert not any(s.signal.startswith("cohort_") for s in first.assessment.signals)
    order = [(r.window.window_id, r.cohort is not None) for r in results]
    assert order.index((SHIFT, True)) > order.index((SHIFT + 2, False))
    # once its outcomes are in, each shifted cohort's realised value is within the
    # interval of realised minus expected: the calibration held, the Gini really fell
    for wid in range(SHIFT, WINDOWS):
        v = verdicts[wid]
        gap = sig(v, "cohort_bad_rate_gap")
        assert gap.details["ci_low"] <= 0.0 <= gap.details["ci_high"], (wid, gap.details)
        expected_free = windows[wid]
        assert abs(sig(expected_free, "expected_bad_rate").value
                   - gap.details["realised"]) <= gap.details["z"] * gap.details["se"] * 1.5
        ggap = sig(v, "cohort_gini_gap")
        assert ggap.details["ci_low"] <= 0.0 <= ggap.details["ci_high"], (wid, ggap.details)
        gini = sig(v, "cohort_gini")
        assert gini.value < gini.details["reference"] - 0.1
        assert str(v.decision.tier) == "none"


# -- the same statistics whatever the interleaving --------------------------------------

def _small_stream() -> tuple[Batch, Batch]:
    rng = np.random.default_rng(5)
    n = 3000
    x = rng.normal(size=n)
    p = _sigmoid(A + B * x)
    ids = np.char.add("k", np.arange(n).astype(str))
    t = np.arange(n, dtype=float)
    dec = np.where(rng.uniform(size=n) < 0.8, 1, 0).astype(np.int8)  # 1: approve
    pred = Batch.build("predictions", n=n, n_numeric=1, ids=ids, numeric=x[:, None],
                       score=p, event_time=t, decision=dec)
    lab = rng.permutation(np.flatnonzero(dec == 1))[: int(0.7 * n)]  # outcomes, any order
    out = Batch.build("outcomes", n=lab.size, ids=ids[lab],
                      label=(rng.uniform(size=lab.size) < p[lab]) * 1.0,
                      event_time=t[lab] + rng.uniform(10, 5000, lab.size))
    return pred, out


SMALL = _small_stream()


def _interleaved(profile: ReferenceProfile, cuts_p: list[int], cuts_o: list[int],
                 outcomes_first: list[bool]) -> dict:  # type: ignore[type-arg]
    """Kafka-like polls: a slice of each topic per poll, no order across them."""
    policy = _policy("  - detector: psi\n    thresholds: {mild: 0.1}\n", pane=500)
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    pred, out = SMALL
    cp = [0, *sorted(cuts_p), len(pred)]
    co = [0, *sorted(cuts_o), len(out)]
    for i in range(max(len(cp), len(co)) - 1):
        parts = []
        if i < len(cp) - 1:
            parts.append(pred.take(slice(cp[i], cp[i + 1])))
        if i < len(co) - 1:
            parts.append(out.take(slice(co[i], co[i + 1])))
        parts = [b for b in parts if len(b)]
        if outcomes_first[i % len(outcomes_first)]:
            parts.reverse()
        if parts:
            mon.process(Polled(batches=parts))
    mon.flush()
    return mon.joiner.book.to_dict()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(cuts_p=st.lists(st.integers(0, 3000), max_size=8),
       cuts_o=st.lists(st.integers(0, 2100), max_size=8),
       first=st.lists(st.booleans(), min_size=1, max_size=4))
def test_interleavings_give_identical_cohort_statistics(
        profile: ReferenceProfile, cuts_p: list[int], cuts_o: list[int],
        first: list[bool]) -> None:
    one_poll = _interleaved(profile, [], [], [False])
    got = _interleaved(profile, cuts_p, cuts_o, first)
    assert got == one_poll
    assert sum(c["window_id"] >= 0 for c in got["cohorts"]) == 6


# -- bounded, checkpointed ------------------------------------------------------------------

def test_cohorts_are_bounded_and_survive_a_checkpoint(profile: ReferenceProfile) -> None:
    policy = _policy("  - detector: cohort_gini\n    thresholds: {mild: 0.2}\n",
                     extra="cohorts: {max_cohorts: 3, min_completeness: 0.9}\n")
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    pred, out = _concept()
    half = pred.event_time < PANE * 6
    mon.process(Polled(batches=[pred.take(half)]))
    book = mon.joiner.book
    assert book.keys() == [3, 4, 5] and book.dropped == 3
    state = mon.state_dict()
    again = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    again.load_state(state)
    assert again.joiner.book.to_dict() == book.to_dict()
    # outcomes of a dropped cohort are counted, not attributed
    again.process(Polled(batches=[out.take(out.event_time < DELAY + PANE)]))
    assert again.joiner.book.late_for_dropped == PANE
    assert again.joiner.book.keys() == [3, 4, 5]


def test_a_checkpoint_without_cohorts_still_loads() -> None:
    b = CohortBook()
    assert CohortBook.from_dict(b.to_dict()).to_dict() == b.to_dict()


def test_a_p_good_score_is_flipped_before_the_cohorts_see_it(profile: ReferenceProfile) -> None:
    """``score_is: p_good``: the book keeps P(bad), as for a P(bad) stream."""
    pred, out = SMALL
    books = []
    for flip in (False, True):
        policy = _policy("  - detector: psi\n    thresholds: {mild: 0.1}\n", pane=500,
                         extra="reference: {score_is: p_good}\n" if flip else "")
        mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
        p = pred if not flip else Batch.build(
            "predictions", n=len(pred), n_numeric=1, ids=pred.ids, numeric=pred.numeric,
            score=1.0 - pred.score, event_time=pred.event_time, decision=pred.decision)
        mon.process(Polled(batches=[p, out]))
        books.append(mon.joiner.book)
    a, b = books
    for ca, cb in zip(a.cohorts(), b.cohorts(), strict=True):
        # 1 - (1 - p) is p up to a rounding of the last bit: the same bins and sums
        assert (ca.pred_n == cb.pred_n).all() and (ca.lab_n == cb.lab_n).all()
        assert np.abs(ca.pred_pd - cb.pred_pd).max() <= 2 * 500
        assert cb.expected_bad_rate == pytest.approx(ca.expected_bad_rate, abs=1e-9)
    assert a.get(0).expected_bad_rate < 0.3  # P(bad), not P(good)


def test_time_panes_are_cohorts_by_event_time(profile: ReferenceProfile) -> None:
    policy = load_policy_text(
        "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: t}\n"
        "model: {name: m, reference: not-read.parquet}\n"
        "window: {kind: time, pane: 1000s}\n"
        "signals:\n  - detector: cohort_bad_rate\n    thresholds: {mild: 0.5}\n",
        file="t.yaml")
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    pred, out = SMALL
    res = mon.process(Polled(batches=[pred]))
    assert [r.window.window_id for r in res] == [0, 1]  # panes [0, 1000) and [1000, 2000)
    res = mon.process(Polled(batches=[out])) + mon.flush()
    verdicts = [r for r in res if r.cohort is not None]
    assert {r.cohort["cohort"]: r.window.window_id for r in verdicts} == {0: 0, 1: 1, 2: 2}
    book = mon.joiner.book
    assert [c.predicted for c in book.cohorts()] == [
        int(((pred.event_time >= k * 1000) & (pred.event_time < (k + 1) * 1000)
             & (pred.decision == 1)).sum()) for k in range(3)]


def test_a_verdict_leaves_the_window_view_and_tier_alone(profile: ReferenceProfile) -> None:
    from prometheus_client import CollectorRegistry

    from driftwatch.metrics import Metrics

    policy = _policy("  - detector: cohort_bad_rate\n    measure: rel_change\n"
                     "    thresholds: {mild: 0.3}\n")
    mon = ModelMonitor("m", profile, window_spec_from_policy(policy), policy=policy)
    results = _run(mon, *_concept())
    m = Metrics(CollectorRegistry())
    m.register_model("m", ["x"])
    for r in results:
        m.record_window("m", r)
    reg = m.registry
    last_window = [r for r in results if r.cohort is None][-1]
    assert reg.get_sample_value("driftwatch_tier", {"model": "m"}) == int(
        last_window.decision.tier)
    assert reg.get_sample_value("driftwatch_windows_closed_total", {"model": "m"}) == sum(
        r.cohort is None for r in results)
    verdicts = [r for r in results if r.cohort is not None]
    mild = sum(str(r.decision.tier) == "mild" for r in verdicts)
    assert mild == len(DRIFT)
    assert reg.get_sample_value("driftwatch_cohort_verdicts_total",
                                {"model": "m", "tier": "mild"}) == mild
    assert reg.get_sample_value("driftwatch_cohort_completeness_ratio", {"model": "m"}) == \
        pytest.approx(verdicts[-1].cohort["completeness"])


def test_a_final_cohort_with_too_few_outcomes_gets_no_verdict(profile: ReferenceProfile) -> None:
    from driftwatch.detectors.config import DetectorConfig
    from driftwatch.pipeline.cohorts import judge_cohorts
    from driftwatch.policy.state import EngineState

    policy = _policy("  - detector: cohort_bad_rate\n    thresholds: {mild: 0.5}\n")
    book = CohortBook()
    k = np.zeros(100, dtype=np.int64)
    book.add_predictions(k, np.full(100, 0.1), np.arange(100.0))
    book.set_window(0, 7, 0.0, 99.0)
    book.add_labelled(k[:95], np.full(95, 0.1), np.zeros(95))
    kw = dict(model="m", profile=profile, book=book, policy=policy,
              cohort_state=EngineState(), window_state=EngineState(), now=100.0, ttl=1e9)
    assert judge_cohorts(cfg=DetectorConfig(min_labelled=500), **kw) == []
    assert not book.get(0).judged  # 95% complete, but 95 < 500 outcomes: it waits
    book.add_lost("expired", k[:5])  # nothing pending: final, still too few
    assert judge_cohorts(cfg=DetectorConfig(min_labelled=500), **kw) == []
    assert book.get(0).judged
    book.get(0).judged = False
    (v,) = judge_cohorts(cfg=DetectorConfig(min_labelled=50), **kw)
    assert v.assessment.window_id == 7 and v.summary["resolved"] == 1.0


def test_a_joiner_saved_before_cohorts_loads_with_its_predictions_in_none() -> None:
    from driftwatch.labels.joiner import LabelJoiner
    from driftwatch.labels.store import KeyStore

    old = KeyStore({"score": np.float64, "decision": np.int8, "exposure": np.float64,
                    "time": np.float64})
    keys = Batch.build("predictions", n=2, ids=["a", "b"]).keys
    old.insert(keys, {"score": np.array([0.1, 0.2]), "decision": np.array([1, 1], np.int8),
                      "exposure": np.full(2, np.nan), "time": np.array([5.0, 6.0])})
    d = LabelJoiner(86400.0, 100).to_dict()
    j = LabelJoiner.from_dict({**d, "pending": old.to_dict()})
    assert j.backlog == 2
    got = j.add_outcomes(Batch.build("outcomes", n=1, ids=["b"], label=[1.0],
                                     event_time=[9.0]))
    assert got.score.tolist() == [0.2] and got.cohort.tolist() == [-1]
    assert len(j.book) == 0  # no cohort to attribute it to


@pytest.mark.parametrize(("clear_after", "clean_so_far"), [(1, 0), (2, 1)])
def test_a_closed_data_quality_gate_holds_a_cohort_verdicts_action(
        profile: ReferenceProfile, clear_after: int, clean_so_far: int) -> None:
    """A verdict is judged right after the window that makes its cohort ready, on the
    gate that window left: closed, the verdict's action waits like a window's. The
    verdict brings no data-quality signal, so it is no clean window either: counted as
    one, it opened the gate a window early (at the default clear_after 1, at once)."""
    from driftwatch.detectors.config import DetectorConfig
    from driftwatch.pipeline.cohorts import judge_cohorts
    from driftwatch.policy.state import EngineState

    policy = _policy("  - detector: cohort_bad_rate\n    thresholds: {mild: 0.5}\n",
                     extra=f"data_quality:\n  clear_after: {clear_after}\n"
                           "actions: {mild: alert}\n")
    book = CohortBook()
    k = np.zeros(100, dtype=np.int64)
    book.add_predictions(k, np.full(100, 0.1), np.arange(100.0))
    book.set_window(0, 7, 0.0, 99.0)
    book.add_labelled(k, np.full(100, 0.1), np.ones(100))  # every outcome bad
    closed = EngineState(dq_fault=True, dq_clean_windows=clean_so_far)
    (v,) = judge_cohorts(model="m", profile=profile, book=book, policy=policy,
                         cfg=DetectorConfig(min_labelled=50), cohort_state=EngineState(),
                         window_state=closed, now=100.0, ttl=1e9)
    d = v.decision
    assert str(d.tier) == "mild"
    assert d.action is None and d.suppressed_by == ("data_quality_gate",)
    assert d.data_quality_fault
    # the gate opens as the windows count their clean ones, not earlier
    book.get(0).judged = False
    (v,) = judge_cohorts(model="m", profile=profile, book=book, policy=policy,
                         cfg=DetectorConfig(min_labelled=50), cohort_state=EngineState(),
                         window_state=EngineState(), now=100.0, ttl=1e9)
    assert v.decision.action == "alert" and not v.decision.data_quality_fault
