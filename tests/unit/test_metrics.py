"""The metrics module: names, units, bounded labels, and what a scrape shows."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from driftwatch.clock import ManualClock
from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.metrics import CATALOGUE, Metrics
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.tiers import Tier
from driftwatch.service.metrics_live import (
    LiveCollector,
    ModelSnapshot,
    PoolSnapshot,
    ServiceSnapshot,
)

FEATURES = ["income", "age", "purpose", "utilization"]
UNITS = ("_total", "_seconds", "_bytes", "_ratio", "_gpus", "_jobs", "_events", "_messages")


def scrape(reg: CollectorRegistry) -> dict[str, list]:
    """Metric family name -> samples, parsed from the text exposition."""
    out: dict[str, list] = {}
    for fam in text_string_to_metric_families(generate_latest(reg).decode()):
        out.setdefault(fam.name, []).extend(fam.samples)
    return out


def window(signals, decision=None, n=1000):
    a = Assessment(model="credit", window_id=3, start_time=0.0, end_time=60.0, n_events=n,
                   signals=tuple(signals))
    return SimpleNamespace(assessment=a, decision=decision)


def test_catalogue_names_follow_prometheus_conventions():
    names = [s.name for s in CATALOGUE]
    assert len(names) == len(set(names))
    for s in CATALOGUE:
        assert re.fullmatch(r"driftwatch_[a-z0-9_]+", s.name), s.name
        assert s.help and s.help.endswith("."), s.name
        assert (s.kind == "counter") == s.name.endswith("_total"), s.name
        if s.kind == "histogram":
            assert s.name.endswith("_seconds"), s.name
    unitless = {s.name for s in CATALOGUE if not s.name.endswith(UNITS)}
    # 0/1 flags, 0-3 levels, statistics without a unit, and the info metric
    assert unitless == {
        "driftwatch_source_ready", "driftwatch_source_done", "driftwatch_input_stale",
        "driftwatch_feature_drift_score", "driftwatch_model_drift_score",
        "driftwatch_drift_level", "driftwatch_segment_drift_score",
        "driftwatch_segment_drift_level", "driftwatch_confidence_value",
        "driftwatch_business_value", "driftwatch_cohort_value",
        "driftwatch_signal_severity", "driftwatch_tier", "driftwatch_data_quality_fault",
        "driftwatch_shadow_active", "driftwatch_shadow_metric_value",
        "driftwatch_build_info", "driftwatch_dependency_up", "driftwatch_state_writable",
    }


def test_metrics_live_on_the_injected_registry_only():
    before = {m.name for m in REGISTRY.collect()}
    a, b = CollectorRegistry(), CollectorRegistry()
    Metrics(a).register_model("credit", FEATURES)
    Metrics(b).register_model("credit", FEATURES)  # a second instance does not clash
    assert {m.name for m in REGISTRY.collect()} == before
    assert a.get_sample_value("driftwatch_tier", {"model": "credit"}) == 0.0


def test_every_metric_has_a_series_before_the_first_event():
    """Dashboards and alerts read zeros, not gaps, right after start."""
    reg = CollectorRegistry()
    m = Metrics(reg, version="9.9")
    m.register_model("credit", FEATURES)
    m.declare_jobs(["checkpoint"])
    m.declare_admin(["approve"])
    levels = {"calibrated_thresholds": {"0.01": 0.03}}
    m.record_window("credit", window(
        [SignalResult("psi", "drift", 0.1, feature="income", details=levels),
         SignalResult("psi", "drift", 0.2, feature="income", details=levels, segment="web"),
         SignalResult("score_psi", "drift", 0.02),
         SignalResult("missing_rate", "data_quality", 0.0, feature="age"),
         SignalResult("variance_ratio", "confidence", 1.0),
         SignalResult("gini", "business", 0.6)],
        Decision(model="credit", window_id=3, time=60.0, tier=Tier.NONE, raw_tier=Tier.NONE)))
    # a daemon declares its dependencies at start (state unknown, NaN, until first seen)
    snap = ServiceSnapshot(started_monotonic=0.0, models=(ModelSnapshot("credit"),),
                           dependencies={"mlflow": math.nan})
    reg.register(LiveCollector(lambda: snap, ManualClock(5.0)))
    families = scrape(reg)
    missing = [s.name for s in CATALOGUE
               if s.name.removesuffix("_total") not in families
               or not families[s.name.removesuffix("_total")]]
    assert missing == []


def test_feature_cap_bounds_per_feature_series_and_counts_the_cut():
    reg = CollectorRegistry()
    m = Metrics(reg, feature_cap=2)
    kept = m.register_model("credit", FEATURES)
    assert kept == ("income", "age")
    m.record_window("credit", window(
        [SignalResult("psi", "drift", v, feature=f) for f, v in
         zip(FEATURES, (0.3, 0.1, 0.2, 0.4), strict=True)]))
    drift = {s.labels["feature"]: s.value
             for s in scrape(reg)["driftwatch_feature_drift_score"]}
    assert drift == {"income": 0.3, "age": 0.1}
    assert reg.get_sample_value("driftwatch_features_cut_total", {"model": "credit"}) == 2


def test_open_ended_labels_fold_into_other_past_the_cap():
    reg = CollectorRegistry()
    m = Metrics(reg)
    m.register_model("credit", FEATURES)
    reasons = [f"reason_{i}" for i in range(100)]
    m.record_poll("credit", predictions=0, outcomes=0, bad_reasons=reasons, nbytes=0,
                  seconds=0.0)
    samples = scrape(reg)["driftwatch_bad_events"]
    labels = {s.labels["reason"] for s in samples if s.name.endswith("_total")}
    assert len(labels) <= 33 and "other" in labels
    total = sum(s.value for s in samples if s.name.endswith("_total"))
    assert total == 100  # nothing lost by folding


def test_a_window_sets_scores_severity_tier_and_counts_the_decision():
    reg = CollectorRegistry()
    m = Metrics(reg)
    m.register_model("credit", FEATURES)
    reason = Reason("psi", "drift", "income", 0.3, 0.25, Tier.MODERATE, "above", "p.yaml:12")
    d = Decision(model="credit", window_id=3, time=60.0, tier=Tier.MODERATE,
                 raw_tier=Tier.MODERATE, action="shadow", reasons=(reason,),
                 data_quality_fault=True)
    m.record_window("credit", window(
        [SignalResult("psi", "drift", 0.3, feature="income"),
         SignalResult("ks", "drift", 0.05, feature="income"),
         SignalResult("bad_record_rate", "data_quality", 0.02)], d))
    get = reg.get_sample_value
    assert get("driftwatch_feature_drift_score",
               {"model": "credit", "feature": "income", "detector": "psi"}) == 0.3
    assert get("driftwatch_signal_severity", {"model": "credit", "detector": "psi"}) == 2
    assert get("driftwatch_signal_severity", {"model": "credit", "detector": "ks"}) == 0
    assert get("driftwatch_data_quality_ratio",
               {"model": "credit", "feature": "", "detector": "bad_record_rate"}) == 0.02
    assert get("driftwatch_tier", {"model": "credit"}) == 2
    assert get("driftwatch_data_quality_fault", {"model": "credit"}) == 1
    assert get("driftwatch_decisions_total",
               {"model": "credit", "tier": "moderate", "action": "shadow"}) == 1
    assert get("driftwatch_windows_closed_total", {"model": "credit"}) == 1


def test_scrape_time_values_come_from_the_latest_snapshot_and_the_clock():
    clock = ManualClock(100.0)
    snap = ServiceSnapshot(
        started_monotonic=0.0, checkpoint_monotonic=70.0, checkpoint_bytes=1234,
        restore_seconds=0.25, stale_after_s=60.0,
        pool=PoolSnapshot(capacity=8, reserved=2, in_use=1, queued=3, running=1),
        models=(
            ModelSnapshot("live", source_ready=True, last_event_monotonic=10.0,
                          label_counters={"predictions": 9, "joined": 4, "expired": 1},
                          label_delay=(((3600.0, 1), (86400.0, 3)), 200000.0, 4)),
            ModelSnapshot("replayed", source_done=True, last_event_monotonic=10.0,
                          shadow_active=True,
                          shadow_metrics={"champion": {"gini": 0.5},
                                          "challenger": {"gini": 0.55}}),
        ))
    reg = CollectorRegistry()
    reg.register(LiveCollector(lambda: snap, clock))
    get = reg.get_sample_value
    assert get("driftwatch_checkpoint_age_seconds") == 30.0
    assert get("driftwatch_restore_duration_seconds") == 0.25
    assert get("driftwatch_pool_queued_jobs") == 3
    assert get("driftwatch_last_event_age_seconds", {"model": "live"}) == 90.0
    assert get("driftwatch_input_stale", {"model": "live"}) == 1
    assert get("driftwatch_input_stale", {"model": "replayed"}) == 0  # finished, not stale
    assert get("driftwatch_label_joins_total", {"model": "live", "outcome": "joined"}) == 4
    assert get("driftwatch_label_joins_total",
               {"model": "live", "outcome": "predictions"}) is None
    assert get("driftwatch_label_join_delay_seconds_bucket",
               {"model": "live", "le": "86400.0"}) == 3
    assert get("driftwatch_label_join_delay_seconds_count", {"model": "live"}) == 4
    assert get("driftwatch_shadow_metric_value",
               {"model": "replayed", "role": "challenger", "metric": "gini"}) == 0.55
    assert math.isnan(get("driftwatch_shadow_metric_value",
                          {"model": "live", "role": "champion", "metric": "gini"}))
    clock.advance(10)
    assert get("driftwatch_checkpoint_age_seconds") == 40.0


@pytest.mark.parametrize("outcome", ["ok", "error"])
def test_checkpoint_outcomes_are_counted(outcome):
    reg = CollectorRegistry()
    m = Metrics(reg)
    m.record_checkpoint(0.5, ok=outcome == "ok")
    assert reg.get_sample_value("driftwatch_checkpoints_total", {"outcome": outcome}) == 1
    count = reg.get_sample_value("driftwatch_checkpoint_duration_seconds_count")
    assert count == (1 if outcome == "ok" else 0)


def test_levels_sit_beside_their_statistics_and_segments_are_bounded():
    reg = CollectorRegistry()
    m = Metrics(reg, feature_cap=2)
    m.register_model("credit", FEATURES)

    def sig(value, feature=None, segment=None, signal="psi", levels=None):
        details = {"calibrated_thresholds": levels or {"0.01": 0.03, "0.001": 0.05}}
        return SignalResult(signal, "drift", value, feature=feature, details=details,
                            segment=segment)

    segments = [f"s{i}" for i in range(60)]  # more than any top_k gives: folded
    values = [0.2 + i / 64 for i in range(60)]
    m.record_window("credit", window(
        [sig(0.1, "income"), sig(0.02, None, signal="score_psi", levels={"0.01": 0.01}),
         sig(0.3, "purpose")]  # over the feature cap: no series
        + [sig(v, "income", s) for v, s in zip(values, segments, strict=True)]))
    get = reg.get_sample_value
    assert get("driftwatch_drift_level", {"model": "credit", "feature": "income",
                                          "detector": "psi", "false_alarm_rate": "0.001"}) == 0.05
    assert get("driftwatch_drift_level", {"model": "credit", "feature": "",
                                          "detector": "score_psi",
                                          "false_alarm_rate": "0.01"}) == 0.01
    assert get("driftwatch_segment_drift_score", {
        "model": "credit", "segment": "s1", "feature": "income", "detector": "psi"}) == values[1]
    assert get("driftwatch_segment_drift_level",
               {"model": "credit", "segment": "s1", "feature": "income", "detector": "psi",
                "false_alarm_rate": "0.01"}) == 0.03
    # the whole window's gauge is the whole window's value, not a segment's
    assert get("driftwatch_feature_drift_score",
               {"model": "credit", "feature": "income", "detector": "psi"}) == 0.1
    fam = scrape(reg)
    seg = {x.labels["segment"] for x in fam["driftwatch_segment_drift_score"]}
    assert len(seg) <= 52 and "other" in seg
    assert not [x for x in fam["driftwatch_drift_level"] if x.labels["feature"] == "purpose"]
    # a segment the next window does not measure reads NaN, not its old value
    m.record_window("credit", window([sig(0.1, "income"), sig(0.4, "income", "s2")]))
    assert math.isnan(get("driftwatch_segment_drift_score", {
        "model": "credit", "segment": "s1", "feature": "income", "detector": "psi"}))
    assert get("driftwatch_segment_drift_score", {
        "model": "credit", "segment": "s2", "feature": "income", "detector": "psi"}) == 0.4
