"""The ``change_point`` signal: river's ADWIN / Page-Hinkley on approval and bad-rate series."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.detectors.change import MetricChange
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy import Tier, load_policy_text
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: change}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 1000}
signals:
  - detector: change_point
    features: [approval_rate]
    thresholds: {moderate: 1}
detectors: {change: {method: METHOD}}
"""
PANE = 1000


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame({"x": rng.normal(size=n), "score": rng.uniform(size=n),
                       "decision": np.where(rng.uniform(size=n) < 0.7, "approve", "decline")})
    return ReferenceProfile.build(df, numeric=["x"])


def _poll(i: int, approval: float, rng: np.random.Generator) -> Polled:
    t0 = i * PANE
    b = Batch.build("predictions", n=PANE, n_numeric=1, numeric=rng.normal(size=(PANE, 1)),
                    ids=[f"e{t0 + k}" for k in range(PANE)],
                    event_time=np.arange(t0, t0 + PANE, dtype=float),
                    score=rng.uniform(size=PANE),
                    decision=(rng.uniform(size=PANE) < approval).astype(np.int8))
    return Polled(batches=[b])


def _stream(n_before: int, n_after: int, seed: int = 1) -> list[Polled]:
    rng = np.random.default_rng(seed)
    return [_poll(i, 0.7 if i < n_before else 0.76, rng) for i in range(n_before + n_after)]


@pytest.mark.parametrize("method", ["adwin", "page_hinkley"])
def test_an_approval_rate_step_raises_change_point_once(profile, method) -> None:
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=PANE),
                       policy=load_policy_text(POLICY.replace("METHOD", method), file="c.yaml"))
    results = [r for p in _stream(40, 30) for r in mon.process(p)]
    fired = [r.window.window_id for r in results
             if next(r.assessment.select(signal="change_point")).value == 1.0]
    assert len(fired) == 1 and 40 <= fired[0] < 60, fired  # a 0.06 step: ~4 standard errors
    hit = next(r for r in results if r.window.window_id == fired[0])
    assert hit.decision.raw_tier == Tier.MODERATE
    assert hit.decision.reasons[0].signal == "change_point"
    assert hit.decision.reasons[0].feature == "approval_rate"
    assert all(r.decision.raw_tier == Tier.NONE for r in results if r.window.window_id < 40)


def test_change_state_survives_a_checkpoint_mid_stream(profile) -> None:
    policy = load_policy_text(POLICY.replace("METHOD", "adwin"), file="c.yaml")
    spec = WindowSpec(kind="count", pane_size=PANE)
    polls = _stream(40, 30, seed=2)
    a = ModelMonitor("credit", profile, spec, policy=policy)
    out_a = [r.assessment.to_dict() for p in polls for r in a.process(p)]
    b = ModelMonitor("credit", profile, spec, policy=policy)
    out_b = [r.assessment.to_dict() for p in polls[:45] for r in b.process(p)]
    state = json.loads(json.dumps(b.state_dict()))
    c = ModelMonitor("credit", profile, spec, policy=policy)
    c.load_state(state)
    out_b += [r.assessment.to_dict() for p in polls[45:] for r in c.process(p)]
    assert json.dumps(out_a) == json.dumps(out_b)  # (NaN != NaN: compare the text)
    assert any(s["value"] == 1.0 for d in out_a for s in d["signals"]
               if s["signal"] == "change_point")


def test_without_the_signal_in_the_policy_nothing_is_tracked(profile) -> None:
    policy = load_policy_text(POLICY.replace("change_point", "approval_rate")
                              .replace("[approval_rate]", "all")
                              .replace("{moderate: 1}", "{moderate: 0.1}")
                              .replace("METHOD", "adwin"), file="c.yaml")
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=PANE),
                       policy=policy)
    (r,) = mon.process(_stream(1, 0)[0])
    assert not list(r.assessment.select(signal="change_point")) and mon.changes == {}


def test_metric_change_validates_and_ignores_nan() -> None:
    t = MetricChange()
    assert t.update(float("nan")) is False and t.history == []
    with pytest.raises(ValueError, match="method must be one of"):
        MetricChange("cusum")


def test_a_restored_checkpoint_follows_the_policy_s_change_settings(profile) -> None:
    """A checkpoint made under ADWIN, restored under a Page-Hinkley policy, judges with
    Page-Hinkley from the next window on: the trackers were restored with the settings
    they were saved with, so an edited ``detectors.change`` reached no existing series."""
    spec = WindowSpec(kind="count", pane_size=PANE)
    adwin = load_policy_text(POLICY.replace("METHOD", "adwin"), file="c.yaml")
    ph_text = POLICY.replace("METHOD", "page_hinkley, threshold: 7, min_windows: 5")
    ph = load_policy_text(ph_text, file="c.yaml")
    polls = _stream(20, 30, seed=4)
    a = ModelMonitor("credit", profile, spec, policy=adwin)
    for p in polls[:20]:
        a.process(p)
    b = ModelMonitor("credit", profile, spec, policy=ph)
    b.load_state(json.loads(json.dumps(a.state_dict())))
    (t,) = b.changes.values()
    assert t.settings == ("page_hinkley", 0.002, 7.0, 5) and len(t.history) == 20
    # the same history fed from the start under Page-Hinkley gives the same verdicts
    fresh = ModelMonitor("credit", profile, spec, policy=ph)
    seen_b = [next(r.assessment.select(signal="change_point")).value
              for p in polls[20:] for r in b.process(p)]
    seen_f = [next(r.assessment.select(signal="change_point")).value
              for p in polls for r in fresh.process(p)][20:]
    assert seen_b == seen_f and 1.0 in seen_b


def test_a_reloaded_policy_retunes_the_trackers(profile) -> None:
    spec = WindowSpec(kind="count", pane_size=PANE)
    mon = ModelMonitor("credit", profile, spec,
                       policy=load_policy_text(POLICY.replace("METHOD", "adwin"), file="c.yaml"))
    for p in _stream(12, 0, seed=5):
        mon.process(p)
    mon.policy = load_policy_text(POLICY.replace("METHOD", "page_hinkley"), file="c.yaml")
    mon.apply_change_settings()  # what the daemon's hot reload does (ModelRuntime.apply_policy)
    (t,) = mon.changes.values()
    assert t.method == "page_hinkley" and len(t.history) == 12
