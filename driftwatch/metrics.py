"""Every Prometheus metric driftwatch exposes, on a registry that is passed in.

:data:`CATALOGUE` is the one list of metrics: name (``driftwatch_*``, base units, counters
end in ``_total``), kind, help text and label names. Dashboards, alert rules and tests are
checked against it. Labels are bounded: ``model`` (configured), ``feature`` (the configured
list, capped; features over the cap are counted in ``driftwatch_features_cut_total``),
``detector``/``reason``/``job`` (capped per model, extra values fold into ``other``),
``segment`` (the reference's top-K segment values and ``other``: at most 51),
``false_alarm_rate`` (the rates a policy names, at most 8) and small enumerations
(``tier``, ``action``, ``outcome``, ``stream``, ``role``). Per-window series a window does
not measure (a segment under its ``min_events``) read NaN until one does.

Entries marked ``live`` (ages, readiness, lag, label joins, pool) are computed when
Prometheus scrapes, by :class:`driftwatch.service.metrics_live.LiveCollector`; everything else is
pushed by the run loop through :class:`Metrics`.

>>> from prometheus_client import CollectorRegistry
>>> reg = CollectorRegistry()
>>> m = Metrics(reg, feature_cap=2)
>>> m.register_model("credit", ["income", "age", "purpose"])
('income', 'age')
>>> reg.get_sample_value("driftwatch_features_cut_total", {"model": "credit"})
1.0
>>> m["events_total"].labels(model="credit", stream="predictions").inc(3)
>>> reg.get_sample_value("driftwatch_events_total", {"model": "credit", "stream": "predictions"})
3.0
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

from driftwatch.detectors.registry import CALIBRATED_LEVELS

__all__ = [
    "CATALOGUE",
    "DEFAULT_FEATURE_CAP",
    "DETECTOR_CAP",
    "PROCESS_PREFIXES",
    "WINDOW_ERROR_STAGES",
    "MetricSpec",
    "Metrics",
    "metric_names",
    "register_process_collectors",
]

DEFAULT_FEATURE_CAP = 50
_LABEL_CAP = 32  # distinct values of an open-ended label (reason, job) per model
_SEGMENT_CAP = 51  # segments.top_k is at most 50, plus other
#: Detector names come from the detectors' registry (a closed set): all of them fit.
DETECTOR_CAP = 64
OTHER = "other"
TIERS = ("none", "mild", "moderate", "severe")
#: The stages whose exceptions the daemon records and survives.
WINDOW_ERROR_STAGES = ("detectors", "policy", "timeline", "ingest")


@dataclass(frozen=True)
class MetricSpec:
    """One metric: exposition name, kind (counter/gauge/histogram), help, label names."""

    name: str
    kind: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] | None = None
    live: bool = False  # computed at scrape time by LiveCollector


_M = MetricSpec
CATALOGUE: tuple[MetricSpec, ...] = (
    # -- input ---------------------------------------------------------------------------------
    _M("driftwatch_events_total", "counter",
       "Events decoded and processed, by stream (predictions, outcomes).", ("model", "stream")),
    _M("driftwatch_bad_events_total", "counter",
       "Records that could not be decoded, by reason; each one is dead-lettered.",
       ("model", "reason")),
    _M("driftwatch_late_events_total", "counter",
       "Events that arrived after their window had closed (beyond allowed lateness).",
       ("model",)),
    _M("driftwatch_source_bytes_total", "counter", "Bytes read from the source.", ("model",)),
    _M("driftwatch_source_commits_total", "counter",
       "Source offset commits after a durable checkpoint, by outcome (ok, failed, deferred).",
       ("model", "outcome")),
    _M("driftwatch_batch_duration_seconds", "histogram",
       "Time to process one polled micro-batch (decode excluded).", ("model",),
       (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)),
    _M("driftwatch_source_ready", "gauge",
       "1 when the model's source is connected (Kafka: a live broker connection).", ("model",),
       live=True),
    _M("driftwatch_source_done", "gauge",
       "1 when a finite source (a recording) has been consumed to its end.", ("model",),
       live=True),
    _M("driftwatch_consumer_lag_messages", "gauge",
       "Messages behind the end of the assigned partitions (0 for file sources).", ("model",),
       live=True),
    _M("driftwatch_source_held_events", "gauge",
       "Kafka records fetched and held back to merge the partitions in event time (0 for "
       "file sources).", ("model",), live=True),
    _M("driftwatch_last_event_age_seconds", "gauge",
       "Wall-clock seconds since the model's source last delivered an event.", ("model",),
       live=True),
    _M("driftwatch_input_stale", "gauge",
       "1 when no event arrived for longer than the configured staleness limit.", ("model",),
       live=True),
    _M("driftwatch_staleness_alarms_total", "counter",
       "Times a model's input went stale (no events for the configured time).", ("model",)),
    _M("driftwatch_event_time_watermark_seconds", "gauge",
       "Largest event time seen by the model's windows (epoch seconds).", ("model",),
       live=True),
    # -- windows and signals --------------------------------------------------------------------
    _M("driftwatch_windows_closed_total", "counter", "Windows closed and assessed.", ("model",)),
    _M("driftwatch_window_events", "gauge", "Events in the last closed window.", ("model",)),
    _M("driftwatch_window_memory_bytes", "gauge",
       "Memory held by the model's open panes (independent of window length).", ("model",),
       live=True),
    _M("driftwatch_feature_drift_score", "gauge",
       "Drift statistic of a feature in the last closed window against the reference.",
       ("model", "feature", "detector")),
    _M("driftwatch_model_drift_score", "gauge",
       "Model-level drift statistic in the last closed window (e.g. score PSI).",
       ("model", "detector")),
    _M("driftwatch_drift_level", "gauge",
       "Calibrated level of a statistic in the last closed window: its null quantile at "
       "the window's size for a false-alarm rate the policy names (compare with "
       "driftwatch_feature_drift_score, or the model-level value when feature is empty).",
       ("model", "feature", "detector", "false_alarm_rate")),
    _M("driftwatch_segment_drift_score", "gauge",
       "Drift statistic of a feature within one segment (top-K values of the reference's "
       "segment column, then other) in the last closed window, against the same segment "
       "of the reference.", ("model", "segment", "feature", "detector")),
    _M("driftwatch_segment_drift_level", "gauge",
       "Calibrated level of a segment's drift statistic (its own reference and window "
       "sizes) for a false-alarm rate the policy names.",
       ("model", "segment", "feature", "detector", "false_alarm_rate")),
    _M("driftwatch_data_quality_ratio", "gauge",
       "Data-quality share in the last closed window (missing, out of range, new category, "
       "bad records); feature is empty for model-level signals.",
       ("model", "feature", "detector")),
    _M("driftwatch_confidence_value", "gauge",
       "Confidence signal of the model's scores in the last closed window "
       "(variance ratio, mean shift, entropy).", ("model", "detector")),
    _M("driftwatch_business_value", "gauge",
       "Business and performance metric on matured labels in the last closed window "
       "(approval rate, bad rate, AUC, Gini, calibration ratio, expected loss).",
       ("model", "detector")),
    _M("driftwatch_cohort_value", "gauge",
       "A cohort signal of the last judged prediction cohort (its window's own outcomes: "
       "cohort bad rate and Gini, realised minus expected).", ("model", "detector")),
    _M("driftwatch_cohort_completeness_ratio", "gauge",
       "Outcomes joined / approved predictions of the last judged cohort.", ("model",)),
    _M("driftwatch_cohort_verdicts_total", "counter",
       "Prediction cohorts judged on their own outcomes, by the tier decided.",
       ("model", "tier")),
    _M("driftwatch_signal_severity", "gauge",
       "Severity each detector reached in the last window: 0 none, 1 mild, 2 moderate, "
       "3 severe.", ("model", "detector")),
    _M("driftwatch_tier", "gauge",
       "Current tier after persistence and hysteresis: 0 none, 1 mild, 2 moderate, 3 severe.",
       ("model",)),
    _M("driftwatch_data_quality_fault", "gauge",
       "1 while the data-quality gate is open (a broken feed: alert, no model changes).",
       ("model",)),
    _M("driftwatch_features_cut_total", "counter",
       "Features left out of per-feature metrics because of the feature cap.", ("model",)),
    # -- labels ---------------------------------------------------------------------------------
    _M("driftwatch_label_joins_total", "counter",
       "Label-join outcomes since the state began: joined (late_predictions: of those, the "
       "outcome came first), expired (TTL), evicted (cap), orphan_outcomes, duplicates, "
       "declined_skipped, invalid records.", ("model", "outcome"),
       live=True),
    _M("driftwatch_label_join_backlog_events", "gauge",
       "Predictions held, waiting for their outcome.", ("model",), live=True),
    _M("driftwatch_label_join_delay_seconds", "histogram",
       "Event-time delay between a prediction and its outcome, since the state began "
       "(buckets at the joiner's log-spaced bin edges: about 1 h, 1 d, 9 d, 37 d, 65 d, "
       "116 d, 206 d).", ("model",), live=True),
    # -- decisions and actions ------------------------------------------------------------------
    _M("driftwatch_decisions_total", "counter",
       "Policy decisions per closed window, by tier and the action decided (none if none).",
       ("model", "tier", "action")),
    _M("driftwatch_actions_total", "counter",
       "Actions by outcome (submitted, succeeded, failed, cancelled, and skipped: an online "
       "update with fewer labelled rows than its policy's min_labelled).",
       ("model", "action", "outcome")),
    _M("driftwatch_shadow_active", "gauge",
       "1 while a challenger runs in shadow beside the champion.", ("model",), live=True),
    _M("driftwatch_shadow_metric_value", "gauge",
       "Champion and challenger metric on the same joined labels (NaN until there are any).",
       ("model", "role", "metric"), live=True),
    _M("driftwatch_shadow_labelled_events", "gauge",
       "Labelled events both champion and challenger were scored on.", ("model",), live=True),
    _M("driftwatch_shadow_batches_dropped_total", "counter",
       "Live prediction batches the challengers in shadow were not scored on, because the "
       "MLflow lane was still busy (MLflow slow or down).", ("model",)),
    # -- GPU pool -------------------------------------------------------------------------------
    _M("driftwatch_pool_capacity_gpus", "gauge", "GPUs in the cluster.", live=True),
    _M("driftwatch_pool_reserved_gpus", "gauge", "GPUs reserved for retraining.", live=True),
    _M("driftwatch_pool_in_use_gpus", "gauge", "Reserved GPUs leased by running jobs.",
       live=True),
    _M("driftwatch_pool_queued_jobs", "gauge", "Retraining jobs waiting for GPUs.", live=True),
    _M("driftwatch_pool_running_jobs", "gauge", "Retraining jobs running.", live=True),
    _M("driftwatch_pool_job_duration_seconds", "histogram",
       "Wall time of finished pool jobs, by outcome.", ("outcome",),
       (60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0)),
    # -- service --------------------------------------------------------------------------------
    _M("driftwatch_checkpoint_duration_seconds", "histogram",
       "Time to write a checkpoint durably (serialise, write, fsync).", (),
       (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)),
    _M("driftwatch_checkpoints_total", "counter", "Checkpoints written, by outcome (ok, error).",
       ("outcome",)),
    _M("driftwatch_checkpoint_age_seconds", "gauge",
       "Seconds since the last durable checkpoint (since start when there is none).",
       live=True),
    _M("driftwatch_checkpoint_size_bytes", "gauge", "Size of the last checkpoint.", live=True),
    _M("driftwatch_dependency_up", "gauge",
       "1 while a dependency (kafka, mlflow, ...) answers, 0 while it is down, NaN until "
       "its state is known.", ("dependency",), live=True),
    _M("driftwatch_dependency_down_seconds", "gauge",
       "Seconds a dependency has been down without a break (0 while it answers or its state "
       "is not known): since when /readyz has said so.", ("dependency",), live=True),
    _M("driftwatch_restore_duration_seconds", "gauge",
       "Time the last start took to restore state from its checkpoint (0: nothing to restore).",
       live=True),
    _M("driftwatch_state_writable", "gauge",
       "1 while the state folder takes writes; 0 while it is full or read-only and "
       "consumption is paused.", ()),
    _M("driftwatch_state_write_failures_total", "counter",
       "Writes to the state folder that failed, by reason (full, read_only).", ("reason",)),
    _M("driftwatch_window_errors_total", "counter",
       "Windows or polls a stage raised on (detectors, policy, timeline, ingest); the "
       "daemon records them and goes on.", ("model", "stage")),
    _M("driftwatch_policy_reloads_total", "counter", "Valid policy edits picked up.",
       ("model",)),
    _M("driftwatch_policy_reload_errors_total", "counter",
       "Invalid policy edits refused (the running policy is kept).", ("model",)),
    _M("driftwatch_reference_refreshes_total", "counter",
       "Reference profiles adopted after they changed.", ("model",)),
    _M("driftwatch_reference_adoption_pending_seconds", "gauge",
       "Seconds since a promotion or rollback moved the champion while its reference profile "
       "has not reached the monitor (MLflow failed to load it; retried on the actions' "
       "backoff); 0 while the monitor holds it.", ("model",), live=True),
    _M("driftwatch_scheduler_job_duration_seconds", "histogram",
       "Wall time of scheduled jobs.", ("job",),
       (0.001, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0)),
    _M("driftwatch_scheduler_job_errors_total", "counter", "Scheduled job runs that raised.",
       ("job",)),
    _M("driftwatch_admin_requests_total", "counter",
       "Admin API calls by outcome (ok, unauthorized, disabled, not_found, error).",
       ("action", "outcome")),
    _M("driftwatch_build_info", "gauge", "Always 1; the version as a label.", ("version",)),
)


def metric_names() -> list[str]:
    """Exposition names of every metric (histograms by their base name)."""
    return [s.name for s in CATALOGUE]


#: Name prefixes of prometheus-client's own collectors (CPU, memory, open files, GC).
PROCESS_PREFIXES = ("process_", "python_")


def register_process_collectors(registry: CollectorRegistry) -> None:
    """Add prometheus-client's process, platform and GC collectors to ``registry``.

    ``process_*`` (CPU seconds, resident memory, open file descriptors, start time) on
    Linux, ``python_info`` and ``python_gc_*``. Registering twice is harmless.

    >>> reg = CollectorRegistry()
    >>> register_process_collectors(reg)
    >>> register_process_collectors(reg)
    >>> reg.get_sample_value("process_resident_memory_bytes") > 0
    True
    """
    for make in (ProcessCollector, PlatformCollector, GCCollector):
        with contextlib.suppress(ValueError):  # already registered on this registry
            make(registry=registry)


class _Capped:
    """Folds label values past a cap into ``other`` so a label set stays bounded."""

    def __init__(self, cap: int = _LABEL_CAP) -> None:
        self.cap = cap
        self._seen: dict[str, set[str]] = {}

    def __call__(self, model: str, value: str) -> str:
        seen = self._seen.setdefault(model, set())
        if value in seen:
            return value
        if len(seen) >= self.cap:
            return OTHER
        seen.add(value)
        return value


class Metrics:
    """The pushed metrics (counters, histograms, window gauges) on an injected registry.

    The run loop calls the ``record_*`` methods; prometheus-client makes them thread-safe.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        feature_cap: int = DEFAULT_FEATURE_CAP,
        version: str = "",
    ) -> None:
        self.registry = registry
        self.feature_cap = int(feature_cap)
        self.features: dict[str, frozenset[str]] = {}
        self._reasons = _Capped()
        self._capped = _Capped(DETECTOR_CAP)  # detector names
        self._rates = _Capped(8)  # false-alarm rates (a policy names a few)
        self._segments = _Capped(_SEGMENT_CAP)  # the reference's top-K + other
        #: Per model, the per-window series last set (cleared when a window lacks them).
        self._window_series: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
        made: dict[str, Any] = {}
        for s in CATALOGUE:
            if s.live:
                continue
            base = s.name.removesuffix("_total") if s.kind == "counter" else s.name
            if s.kind == "counter":
                made[s.name] = Counter(base, s.help, s.labels, registry=registry)
            elif s.kind == "gauge":
                made[s.name] = Gauge(base, s.help, s.labels, registry=registry)
            else:
                made[s.name] = Histogram(base, s.help, s.labels, registry=registry,
                                         buckets=s.buckets or Histogram.DEFAULT_BUCKETS)
        self._m = made
        made["driftwatch_build_info"].labels(version=version or "unknown").set(1)
        for outcome in ("ok", "error"):
            self["checkpoints_total"].labels(outcome=outcome)
        self["state_writable"].set(1)
        for reason in ("full", "read_only"):
            self["state_write_failures_total"].labels(reason=reason)
        for outcome in ("succeeded", "failed", "timed_out", "cancelled"):
            self["pool_job_duration_seconds"].labels(outcome=outcome)

    def __getitem__(self, name: str) -> Any:
        """The metric object by name without its ``driftwatch_`` prefix:
        ``metrics["policy_reloads_total"].labels(model="credit").inc()``."""
        return self._m["driftwatch_" + name]

    # -- set-up ---------------------------------------------------------------------------------
    def register_model(self, model: str, features: Sequence[str]) -> tuple[str, ...]:
        """Declare a model and its features; returns the features that get metrics.

        Label sets are created at zero so that rates and alerts have a series to read
        before the first event of each kind.
        """
        kept = tuple(features[: self.feature_cap])
        cut = len(features) - len(kept)
        self.features[model] = frozenset(kept)
        self["features_cut_total"].labels(model=model).inc(max(0, cut))
        for stream in ("predictions", "outcomes"):
            self["events_total"].labels(model=model, stream=stream)
        for outcome in ("ok", "failed", "deferred"):
            self["source_commits_total"].labels(model=model, outcome=outcome)
        for name in ("late_events", "shadow_batches_dropped", "source_bytes",
                     "staleness_alarms", "windows_closed", "policy_reloads",
                     "policy_reload_errors", "reference_refreshes"):
            self[name + "_total"].labels(model=model)
        self["bad_events_total"].labels(model=model, reason=OTHER)
        for stage in WINDOW_ERROR_STAGES:
            self["window_errors_total"].labels(model=model, stage=stage)
        self["tier"].labels(model=model).set(0)
        self["data_quality_fault"].labels(model=model).set(0)
        self["decisions_total"].labels(model=model, tier="none", action="none")
        self["cohort_verdicts_total"].labels(model=model, tier="none")
        self["cohort_completeness_ratio"].labels(model=model).set(math.nan)
        for det in ("cohort_bad_rate", "cohort_bad_rate_gap", "cohort_gini", "cohort_gini_gap"):
            self["cohort_value"].labels(model=model, detector=det).set(math.nan)
        for action in ("online_update", "shadow", "retrain", "alert"):
            for outcome in ("submitted", "succeeded", "failed", "skipped"):
                self["actions_total"].labels(model=model, action=action, outcome=outcome)
        self["batch_duration_seconds"].labels(model=model)
        return kept

    def declare_jobs(self, jobs: Iterable[str]) -> None:
        for job in jobs:
            self["scheduler_job_duration_seconds"].labels(job=job)
            self["scheduler_job_errors_total"].labels(job=job)

    def declare_admin(self, actions: Iterable[str]) -> None:
        for action in actions:
            for outcome in ("ok", "unauthorized"):
                self["admin_requests_total"].labels(action=action, outcome=outcome)

    # -- recording ------------------------------------------------------------------------------
    def record_poll(
        self,
        model: str,
        *,
        predictions: int,
        outcomes: int,
        bad_reasons: Iterable[str],
        nbytes: int,
        seconds: float,
    ) -> None:
        if predictions:
            self["events_total"].labels(model=model, stream="predictions").inc(predictions)
        if outcomes:
            self["events_total"].labels(model=model, stream="outcomes").inc(outcomes)
        for reason in bad_reasons:
            self["bad_events_total"].labels(model=model, reason=self._reasons(model, reason)).inc()
        if nbytes:
            self["source_bytes_total"].labels(model=model).inc(nbytes)
        self["batch_duration_seconds"].labels(model=model).observe(max(0.0, seconds))

    def record_error(self, model: str, stage: str) -> None:
        """A stage raised on a window or a poll (``stage`` from WINDOW_ERROR_STAGES)."""
        self["window_errors_total"].labels(
            model=model, stage=stage if stage in WINDOW_ERROR_STAGES else OTHER).inc()

    def record_window(self, model: str, result: Any) -> None:
        """A closed window (:class:`driftwatch.pipeline.WindowResult`): counts and gauges.
        A cohort's verdict (``result.cohort`` set) has gauges of its own and leaves the
        last window's view and the tier as they are."""
        cohort = getattr(result, "cohort", None)
        if cohort is not None:
            self.record_cohort(model, result, cohort)
            return
        self["windows_closed_total"].labels(model=model).inc()
        error = getattr(result, "error", None)
        if error is not None:
            self.record_error(model, error.stage)
        a, d = result.assessment, result.decision
        self.set_view(model, a.n_events, a.signals, d)
        if d is not None:
            self["decisions_total"].labels(model=model, tier=str(d.tier),
                                           action=d.action or "none").inc()

    def set_view(self, model: str, n_events: int, signals: Iterable[Any],
                 decision: Any | None) -> None:
        """The gauges of a model's last window: size, every signal's value, severities, tier
        and data-quality state. After a restart they are set again from the last window
        the checkpoint covers, so a scrape does not read tier 0 until the next window."""
        signals = list(signals)
        self["window_events"].labels(model=model).set(n_events)
        features = self.features.get(model, frozenset())
        now: set[tuple[str, tuple[str, ...]]] = set()
        for s in signals:
            value = float(s.value) if s.value is not None else math.nan
            det = self._capped(model, s.signal)
            if s.feature is not None and s.feature not in features:
                pass  # over the feature cap
            else:
                self._levels(model, s, det, now)
            if s.segment is not None:
                if s.feature in features:
                    key = (model, self._segments(model, s.segment), s.feature, det)
                    self["segment_drift_score"].labels(*key).set(value)
                    now.add(("segment_drift_score", key))
            elif s.group == "drift":
                if s.feature is None:
                    self["model_drift_score"].labels(model=model, detector=det).set(value)
                elif s.feature in features:
                    self["feature_drift_score"].labels(model=model, feature=s.feature,
                                              detector=det).set(value)
            elif s.group == "data_quality":
                feat = s.feature or ""
                if not feat or feat in features:
                    self["data_quality_ratio"].labels(
                        model=model, feature=feat, detector=det).set(value)
            elif s.group == "confidence":
                self["confidence_value"].labels(model=model, detector=det).set(value)
            else:  # business, performance
                self["business_value"].labels(model=model, detector=det).set(value)
        for name, key in self._window_series.get(model, set()) - now:
            self[name].labels(*key).set(math.nan)  # not measured in this window
        self._window_series[model] = now
        d = decision
        if d is None:
            return
        levels: dict[str, int] = {self._capped(model, s.signal): 0 for s in signals}
        for r in d.reasons:
            det = self._capped(model, r.signal)
            levels[det] = max(levels.get(det, 0), int(r.tier))
        for det, level in levels.items():
            self["signal_severity"].labels(model=model, detector=det).set(level)
        self["tier"].labels(model=model).set(int(d.tier))
        self["data_quality_fault"].labels(model=model).set(1 if d.data_quality_fault else 0)

    def _levels(self, model: str, s: Any, det: str,
                now: set[tuple[str, tuple[str, ...]]]) -> None:
        """A signal's calibrated levels, one series per false-alarm rate."""
        table = s.details.get(CALIBRATED_LEVELS) if isinstance(s.details, dict) else None
        for rate, level in sorted((table or {}).items()):
            if not isinstance(level, int | float):
                continue
            r = self._rates(model, str(rate))
            if s.segment is None:
                name, key = "drift_level", (model, s.feature or "", det, r)
            else:
                name = "segment_drift_level"
                key = (model, self._segments(model, s.segment), s.feature or "", det, r)
            self[name].labels(*key).set(float(level))
            now.add((name, key))

    def record_cohort(self, model: str, result: Any, cohort: dict[str, Any]) -> None:
        """A cohort's verdict: its signals, completeness, and the tier decided."""
        for sig in result.assessment.signals:
            value = float(sig.value) if sig.value is not None else math.nan
            self["cohort_value"].labels(model=model, detector=self._capped(model, sig.signal)
                                        ).set(value)
        done = cohort.get("completeness")
        if isinstance(done, int | float):
            self["cohort_completeness_ratio"].labels(model=model).set(float(done))
        d = result.decision
        tier = str(d.tier) if d is not None else "none"
        self["cohort_verdicts_total"].labels(model=model, tier=tier).inc()
        if d is not None:
            self["decisions_total"].labels(model=model, tier=tier,
                                           action=d.action or "none").inc()

    def record_late(self, model: str, n: int) -> None:
        if n > 0:
            self["late_events_total"].labels(model=model).inc(n)

    def record_shadow_dropped(self, model: str) -> None:
        self["shadow_batches_dropped_total"].labels(model=model).inc()

    def record_action(self, model: str, action: str, outcome: str) -> None:
        self["actions_total"].labels(model=model, action=action, outcome=outcome).inc()

    def record_commit(self, model: str, outcome: str, n: int = 1) -> None:
        if n > 0:
            self["source_commits_total"].labels(model=model, outcome=outcome).inc(n)

    def record_checkpoint(self, seconds: float, *, ok: bool = True) -> None:
        self["checkpoints_total"].labels(outcome="ok" if ok else "error").inc()
        if ok:
            self["checkpoint_duration_seconds"].observe(max(0.0, seconds))

    def record_job(self, job: str, seconds: float, ok: bool = True) -> None:
        self["scheduler_job_duration_seconds"].labels(job=job).observe(max(0.0, seconds))
        if not ok:
            self["scheduler_job_errors_total"].labels(job=job).inc()

    def record_admin(self, action: str, outcome: str) -> None:
        self["admin_requests_total"].labels(action=action, outcome=outcome).inc()
