"""Segments: per-segment sketches and signals, caught and named where the whole window
sees nothing; checkpoints carry them; odd segment values never break a window."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.detectors.assess import assess, segment_windows
from driftwatch.detectors.registry import CALIBRATED_LEVELS
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy import Tier, load_policy_text
from driftwatch.policy.levels import CalibratorCache
from driftwatch.windows.panes import PaneWindow, WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.segments import OTHER, SegmentCoder
from driftwatch.windows.sketch import Sketch

N_REF = 20_000
CHANNELS = ("web", "branch", "broker")
PURPOSES = ("car", "home", "boat")
POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: segmented}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 4000}
signals:
  - detector: psi
    thresholds: {mild: {calibrated: {false_alarm_rate: 0.01}}}
detectors: {calibration: {draws: 400}}
segments: {top_k: 2, min_events: 300}
persistence: 1
"""


def _frame(rng: np.random.Generator, n: int, mix: dict[str, tuple[float, ...]] | None = None
           ) -> pd.DataFrame:
    """``x`` normal, ``purpose`` (0.5, 0.3, 0.2) in every channel unless ``mix`` says."""
    ch = rng.choice(CHANNELS, n, p=[0.45, 0.45, 0.10])
    purpose = rng.choice(PURPOSES, n, p=[0.5, 0.3, 0.2])
    for name, p in (mix or {}).items():
        rows = ch == name
        purpose[rows] = rng.choice(PURPOSES, int(rows.sum()), p=p)
    return pd.DataFrame({"x": rng.normal(size=n), "purpose": purpose, "channel": ch,
                         "score": rng.beta(2, 5, n)})


def _profile(segmented: bool) -> ReferenceProfile:
    df = _frame(np.random.default_rng(1), N_REF)
    if not segmented:
        df = df.drop(columns="channel")
    return ReferenceProfile.build(df, numeric=["x"], categorical=["purpose"],
                                  segment="channel" if segmented else None, segment_top_k=2)


@pytest.fixture(scope="module")
def segmented() -> ReferenceProfile:
    return _profile(True)


@pytest.fixture(scope="module")
def whole_only() -> ReferenceProfile:
    return _profile(False)


def _batch(prof: ReferenceProfile, df: pd.DataFrame, start: int = 0,
           segment: np.ndarray | None = None) -> Batch:
    n = len(df)
    cat = np.stack([prof.schema.encode_categorical(0, df["purpose"].to_numpy())], axis=1)
    return Batch.build("predictions", n=n, n_numeric=1, n_categorical=1,
                       ids=[f"e{start + i}" for i in range(n)],
                       event_time=np.arange(start, start + n, dtype=float),
                       numeric=df[["x"]].to_numpy(), categorical=cat,
                       score=df["score"].to_numpy(),
                       segment=df["channel"].to_numpy() if segment is None else segment)


_POLICY = load_policy_text(POLICY, file="seg.yaml")
#: Levels are seeded by the reference: monitors of one test module may share them.
_LEVELS = CalibratorCache(capacity=64)


def _monitor(prof: ReferenceProfile) -> ModelMonitor:
    mon = ModelMonitor("credit", prof, WindowSpec(kind="count", pane_size=4000),
                       policy=_POLICY)
    mon.calibrators = _LEVELS
    return mon


def test_a_drift_in_one_channels_mix_is_caught_and_named_where_the_whole_sees_none(
        segmented: ReferenceProfile, whole_only: ReferenceProfile) -> None:
    """Web moves to cars and branch to homes: the mixture of the two is the reference's
    own, so the whole window's PSI is noise; each channel's PSI is 0.2 to 0.3."""
    drifted = _frame(np.random.default_rng(2), 4000,
                     mix={"web": (0.7, 0.1, 0.2), "branch": (0.3, 0.5, 0.2)})
    (seg,) = _monitor(segmented).process(Polled(batches=[_batch(segmented, drifted)]))
    (whole,) = _monitor(whole_only).process(Polled(batches=[_batch(whole_only, drifted)]))

    # the whole-window rule misses it: the same policy, the same events, no segments
    assert whole.decision.tier == Tier.NONE and whole.decision.reasons == ()
    overall = next(whole.assessment.select(signal="psi", feature="purpose"))
    assert overall.value < overall.details[CALIBRATED_LEVELS]["0.01"]

    assert seg.decision.tier == Tier.MILD
    named = {(r.feature, r.segment) for r in seg.decision.reasons}
    assert named == {("purpose", "web"), ("purpose", "branch")}
    for r in seg.decision.reasons:
        s = next(seg.assessment.select(signal="psi", feature="purpose", segment=r.segment))
        assert r.value == s.value and r.value > 0.15
        # the level is the segment's own: drawn at its reference rows and window size
        assert r.threshold == s.details[CALIBRATED_LEVELS]["0.01"]
        assert r.threshold > overall.details[CALIBRATED_LEVELS]["0.01"]
        assert r.false_alarm_rate == 0.01 and s.n_ref < N_REF and s.n_cur < 4000
        assert r.to_dict()["segment"] == r.segment
    # broker holds 10% (about 400 events) of the window: over min_events, so measured
    assert {s.segment for s in seg.assessment.signals} == {None, "web", "branch", OTHER}


def test_segment_tests_join_the_whole_windows_bh_family(segmented: ReferenceProfile) -> None:
    df = _frame(np.random.default_rng(4), 4000)
    cur = Sketch.empty(segmented.layout)
    parts = [Sketch.empty(segmented.layout) for _ in segmented.segments.names]
    batch = _batch(segmented, df)
    cur.add_batch(batch)
    for code, rows in segmented.segments.coder.split(batch):
        parts[code].add_batch(rows)
    segs = segment_windows(segmented, parts, min_events=1)
    a = assess(segmented, cur, model="m", window_id=0, start_time=0.0, end_time=1.0,
               segments=segs)
    alone = assess(segmented, cur, model="m", window_id=0, start_time=0.0, end_time=1.0)
    chi = [s for s in a.signals if s.signal == "chi2"]
    assert len(chi) == 2 * 4  # two features, on the whole window and three segments
    p = np.array([s.p_value for s in chi])
    m = len(p)
    # BH over all eight: the adjusted p of the smallest is m * p / 1, not 2 * p / 1
    smallest = chi[int(np.argmin(p))]
    assert smallest.details["p_adjusted"] == pytest.approx(min(1.0, p.min() * m))
    whole_chi = next(alone.select(signal="chi2", feature="x"))
    assert whole_chi.threshold <= next(a.select(signal="chi2", feature="x",
                                                segment=None)).threshold


def test_checkpoints_round_trip_segment_state(segmented: ReferenceProfile) -> None:
    df = _frame(np.random.default_rng(5), 8000, mix={"web": (0.7, 0.1, 0.2)})
    straight = _monitor(segmented)  # the same polls, without the restart
    expect = straight.process(Polled(batches=[_batch(segmented, df.iloc[:2500])]))
    expect += straight.process(Polled(batches=[_batch(segmented, df.iloc[2500:], start=2500)]))
    first = _monitor(segmented)
    assert first.process(Polled(batches=[_batch(segmented, df.iloc[:2500])])) == []
    saved = orjson.loads(orjson.dumps(first.state_dict()))
    assert "segments" in saved["window"]
    again = _monitor(segmented)
    again.load_state(saved)
    got = again.process(Polled(batches=[_batch(segmented, df.iloc[2500:], start=2500)]))
    assert [r.assessment.to_dict() for r in got] == [r.assessment.to_dict() for r in expect]
    assert [r.decision.to_dict() for r in got] == [r.decision.to_dict() for r in expect]
    assert any(r.segment == "web" for r in got[0].decision.reasons)


def test_profile_with_segments_round_trips_and_keeps_old_fingerprints(
        segmented: ReferenceProfile, whole_only: ReferenceProfile) -> None:
    back = ReferenceProfile.from_json(segmented.to_json())
    assert back.fingerprint == segmented.fingerprint
    assert back.segments.names == ("web", "branch", OTHER)
    assert [s.n for s in back.segments.sketches] == [s.n for s in segmented.segments.sketches]
    assert sum(s.n for s in back.segments.sketches) == N_REF
    assert "segments" not in whole_only.to_dict()
    assert "channel" not in segmented.schema.categorical  # the segment is not a feature


_TEXTS = st.sampled_from(["web", "branch", "broker", "fax", "", "other", " ", "Web"])


@settings(max_examples=40, deadline=None)
@given(ref_segments=st.lists(st.one_of(st.none(), _TEXTS), min_size=1, max_size=60),
       live_segments=st.lists(_TEXTS, min_size=1, max_size=80),
       k=st.integers(1, 4))
def test_odd_segment_values_never_break_a_window(ref_segments: list[str | None],
                                                 live_segments: list[str], k: int) -> None:
    """Segments absent from the reference, one segment only, None and blank values, more
    values than K: every event lands in exactly one segment, the segments add up to the
    whole window, and assessing the window names only known segments."""
    rng = np.random.default_rng(len(ref_segments) * 100 + len(live_segments))
    n_ref, n = len(ref_segments), len(live_segments)
    ref = pd.DataFrame({"x": rng.normal(size=n_ref),
                        "seg": pd.Series(ref_segments, dtype=object)})
    prof = ReferenceProfile.build(ref, numeric=["x"], score=None, label=None, decision=None,
                                  segment="seg", segment_top_k=k)
    coder = prof.segments.coder
    assert len(coder.values) <= k and OTHER not in coder.values and "" not in coder.values
    assert sum(s.n for s in prof.segments.sketches) == n_ref
    codes = coder.code(np.array(live_segments))
    assert ((codes >= 0) & (codes <= len(coder.values))).all()
    for text, c in zip(live_segments, codes.tolist(), strict=True):
        assert coder.names[c] == (text if text in coder.values else OTHER)

    w = PaneWindow(prof.layout, WindowSpec(kind="count", pane_size=max(1, n // 2)),
                   segments=coder)
    batch = Batch.build("predictions", n=n, n_numeric=1, numeric=rng.normal(size=(n, 1)),
                        event_time=np.arange(n, dtype=float),
                        segment=np.array(live_segments))
    closed = w.add(batch) + w.flush()
    assert sum(c.n_events for c in closed) == n
    for cw in closed:
        assert cw.segments is not None and len(cw.segments) == len(coder)
        assert sum(s.n for s in cw.segments) == cw.n_events
        whole = Sketch.sum(prof.layout, cw.segments)
        assert np.array_equal(whole.num_fine, cw.sketch.num_fine)
        segs = segment_windows(prof, cw.segments, min_events=1)
        a = assess(prof, cw.sketch, model="m", window_id=cw.window_id, start_time=0.0,
                   end_time=1.0, segments=segs)
        assert {s.segment for s in a.signals} - {None} <= set(coder.names)
        if not coder.values:  # one segment only: it would repeat the whole window
            assert segs == []
        assert all(np.isfinite(s.threshold) for s in a.signals
                   if s.signal == "chi2" and s.threshold is not None)


def test_coder_round_trips_through_a_checkpoint_only_for_the_same_values(
        segmented: ReferenceProfile) -> None:
    coder = segmented.segments.coder
    w = PaneWindow(segmented.layout, WindowSpec(kind="count", pane_size=100), segments=coder)
    df = _frame(np.random.default_rng(6), 50)
    w.add(_batch(segmented, df))
    d = orjson.loads(orjson.dumps(w.to_dict()))
    same = PaneWindow.from_dict(segmented.layout, w.spec, d, segments=coder)
    assert [s.n for s in same._open[0].segments] == [s.n for s in w._open[0].segments]
    other = SegmentCoder(("fax", "mail"))
    rebuilt = PaneWindow.from_dict(segmented.layout, w.spec, d, segments=other)
    assert [s.n for s in rebuilt._open[0].segments] == [0, 0, 0]
    assert rebuilt._open[0].sketch.n == 50  # the whole window is kept either way
