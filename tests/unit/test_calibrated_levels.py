"""Calibrated levels end to end: the key the policy reads is the key the detectors write,
the monitor builds the Calibrator itself, reasons cite the level as a number, and a small
shift in large windows is caught where the rule of thumb misses it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.detectors.assess import assess
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.registry import (
    CALIBRATED,
    CALIBRATED_LEVELS,
    SIGNALS,
    THRESHOLD_CALIBRATED,
    rate_key,
)
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy import Tier, evaluate, load_policy_text
from driftwatch.policy.catalog import DETECTORS
from driftwatch.policy.severity import compile_rules, resolve
from driftwatch.policy.state import EngineState
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

N_REF = 20_000
NUM = ("x0", "x1", "x2", "x3")
HEAD = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: calibrated}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 2000}
"""
CAL = "{calibrated: {false_alarm_rate: 0.01}}"


def _frame(rng: np.random.Generator, n: int, shift: float = 0.0) -> pd.DataFrame:
    df = pd.DataFrame({f: rng.normal(size=n) for f in NUM})
    df["x0"] += shift
    df["c"] = rng.choice(list("abc"), n, p=[0.5, 0.3, 0.2])
    df["score"] = rng.beta(2, 5, n)
    df["decision"] = np.where(rng.uniform(size=n) < 0.7, "approve", "decline")
    return df


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    return ReferenceProfile.build(_frame(np.random.default_rng(1), N_REF), numeric=list(NUM),
                                  categorical=["c"])


def _every_calibrated_signal() -> str:
    rules = []
    for name in sorted(CALIBRATED):
        spec = SIGNALS[name]
        extra = "" if spec.calibrated_measure == "value" else (
            f"\n    measure: {spec.calibrated_measure}")
        rules.append(f"  - detector: {name}{extra}\n    thresholds: {{mild: {CAL}}}")
    return "signals:\n" + "\n".join(rules) + "\n"


def _policy(signals: str, extra: str = ""):  # type: ignore[no-untyped-def]
    return load_policy_text(HEAD + signals + extra, file="cal.yaml")


def _polled(prof: ReferenceProfile, df: pd.DataFrame, start: int = 0) -> Polled:
    n = len(df)
    cat = np.stack([prof.schema.encode_categorical(0, df["c"].to_numpy())], axis=1)
    b = Batch.build("predictions", n=n, n_numeric=len(NUM), n_categorical=1,
                    ids=[f"e{start + i}" for i in range(n)],
                    event_time=np.arange(start, start + n, dtype=float),
                    numeric=df[list(NUM)].to_numpy(), categorical=cat,
                    score=df["score"].to_numpy(),
                    decision=np.where(df["decision"] == "approve", 1, 0))
    return Polled(batches=[b])


def test_registry_is_the_policy_catalogue() -> None:
    assert DETECTORS is SIGNALS
    assert {n for n, s in DETECTORS.items() if s.calibrated} == CALIBRATED


def test_every_calibrated_key_the_policy_reads_is_written_by_the_detectors(profile) -> None:
    """A policy calibrating every calibratable detector finds a level for each of them in
    what ``assess`` wrote: no tier is skipped for want of a level."""
    policy = _policy(_every_calibrated_signal())
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=2000),
                       policy=policy)
    (res,) = mon.process(_polled(profile, _frame(np.random.default_rng(2), 2000)))
    assert not [n for n in res.decision.notes if "no calibrated level" in n]
    seen = {r.signal for r in res.assessment.signals}
    assert seen >= CALIBRATED
    rules = {r.detector: r for r in compile_rules(policy)}
    for r in res.assessment.signals:
        if r.signal not in CALIBRATED:
            continue
        level = resolve(rules[r.signal].levels[0], r)
        assert level is not None and level > 0, r
        assert level == r.details[CALIBRATED_LEVELS][rate_key(0.01)]
        assert r.details[THRESHOLD_CALIBRATED] == level  # the detectors' alpha is 0.01 too
    assert {r.signal for r in res.assessment.signals} <= set(SIGNALS)


def test_reasons_cite_the_calibrated_number_and_the_monitor_is_deterministic(profile) -> None:
    policy = _policy(f"signals:\n  - detector: ks\n    thresholds: {{mild: {CAL}}}\n")
    spec = WindowSpec(kind="count", pane_size=2000)
    drifted = _frame(np.random.default_rng(3), 2000, shift=0.3)
    a = ModelMonitor("credit", profile, spec, policy=policy)
    b = ModelMonitor("credit", profile, spec, policy=policy)
    (ra,) = a.process(_polled(profile, drifted))
    (rb,) = b.process(_polled(profile, drifted))
    assert a.calibrator is not b.calibrator
    assert ra.assessment.to_dict() == rb.assessment.to_dict()  # seeded from the profile
    (reason,) = [x for x in ra.decision.reasons if x.feature == "x0"]
    ks = next(ra.assessment.select(signal="ks", feature="x0"))
    assert reason.threshold == ks.details[CALIBRATED_LEVELS]["0.01"]
    assert 0.02 < reason.threshold < 0.06  # not the rule of thumb's 0.1
    assert reason.false_alarm_rate == 0.01 and ra.decision.tier == Tier.MILD
    assert a.calibrator.sizes == frozenset({2000})


def test_the_calibrator_follows_the_profile_policy_and_window_size(profile) -> None:
    policy = _policy(f"signals:\n  - detector: psi\n    thresholds: {{mild: {CAL}}}\n")
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=2000),
                       policy=policy)
    first = mon.calibrator
    assert first is mon.calibrator  # cached
    mon.spec = WindowSpec(kind="count", pane_size=1000, panes=4)
    assert mon.calibrator is not first and mon.calibrator.sizes == frozenset({4000})
    other = ReferenceProfile.build(_frame(np.random.default_rng(9), 5000), numeric=list(NUM),
                                   categorical=["c"])
    mon.set_profile(other)
    assert mon.calibrator.reference is other
    mon.policy = _policy("signals:\n  - detector: psi\n    thresholds: {mild: 0.1}\n")
    assert mon.calibrator is None  # no calibrated level asked for: nothing resampled


def test_a_tenth_of_an_sd_in_two_features_at_100k_is_mild_only_when_calibrated() -> None:
    """20 features, 100k-event windows: a 0.1 sd mean shift in two of them moves PSI by
    about 0.01 and KS by about 0.04, far under the rules of thumb, yet far above the
    null at this size."""
    rng = np.random.default_rng(13)
    feats = [f"f{j}" for j in range(20)]
    ref = pd.DataFrame(rng.normal(size=(200_000, 20)), columns=feats)
    ref["score"] = rng.uniform(size=len(ref))
    prof = ReferenceProfile.build(ref, numeric=feats)
    x = rng.normal(size=(100_000, 20))
    x[:, [3, 11]] += 0.1
    cur = Sketch.empty(prof.layout)
    cur.add_batch(Batch.build("predictions", n=len(x), n_numeric=20, numeric=x,
                              score=rng.uniform(size=len(x))))
    cal = Calibrator(prof, np.random.default_rng(0), rates=(0.01,), n_draws=1000,
                     sizes=(100_000,))
    a = assess(prof, cur, model="m", window_id=0, start_time=0.0, end_time=1.0,
               calibrator=cal)
    rules = "signals:\n" + "".join(
        f"  - detector: {d}\n    features: all\n    thresholds: {{mild: {{MILD}}, "
        "moderate: 0.25}\n" for d in ("psi", "ks"))
    calibrated = _policy(rules.replace("{MILD}", CAL))
    fixed = _policy(rules.replace("{MILD}", "0.10"))
    d_cal, _ = evaluate(calibrated, a, EngineState(), now=1.0)
    d_fix, _ = evaluate(fixed, a, EngineState(), now=1.0)
    assert d_cal.tier == Tier.MILD
    assert {"f3", "f11"} <= {r.feature for r in d_cal.reasons}
    assert d_fix.tier == Tier.NONE and not d_fix.reasons
    ks = next(a.select(signal="ks", feature="f3"))
    assert 0.02 < ks.value < 0.1 and ks.details[CALIBRATED_LEVELS]["0.01"] < 0.01


def test_the_report_prints_the_calibrated_levels_and_the_reasons_rate(profile, tmp_path) -> None:
    from driftwatch.replay.timeline import TimelineWriter, window_record
    from driftwatch.report import build_report, load_run

    policy = _policy(f"signals:\n  - detector: ks\n    thresholds: {{mild: {CAL}}}\n")
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=2000),
                       policy=policy)
    (res,) = mon.process(_polled(profile, _frame(np.random.default_rng(3), 2000, shift=0.3)))
    with TimelineWriter(tmp_path / "timeline.jsonl") as tl:
        tl.write(window_record(res))
    html = build_report(load_run(tmp_path, reference=profile), generated_at="t")
    ks = next(res.assessment.select(signal="ks", feature="x0"))
    level = ks.details[CALIBRATED_LEVELS]["0.01"]
    assert "calibrated level (false alarms)" in html
    assert f"{level:.4g}"[:5] in html and "calibrated, 0.01" in html


def test_warm_up_resamples_the_count_window_once_and_partial_windows_reuse_it(profile) -> None:
    policy = _policy(f"signals:\n  - detector: ks\n    thresholds: {{mild: {CAL}}}\n")
    mon = ModelMonitor("credit", profile, WindowSpec(kind="count", pane_size=500, panes=4),
                       policy=policy)
    mon.warm_up()
    cal = mon.calibrator
    assert sorted(cal._cache) == [2000]
    small = cal.thresholds(500).numeric["ks"]
    assert sorted(cal._cache) == [2000]  # a warm-up window is carried down, not resampled
    assert np.all(small > cal.thresholds(2000).numeric["ks"])
