"""Scrape-time metrics: the ``live`` entries of :data:`driftwatch.metrics.CATALOGUE`.

Ages, readiness, lag, label-join counts and the GPU pool are cheapest to read when
Prometheus asks. The run loop (and the actions layer) describe themselves in a
:class:`ServiceSnapshot` of plain values; :class:`LiveCollector` turns the latest one into
samples, computing ages with the injected clock. Names, help and labels come from the
catalogue, so this module defines no metric of its own.

>>> from prometheus_client import CollectorRegistry
>>> from driftwatch.clock import ManualClock
>>> clock = ManualClock(100.0)
>>> snap = ServiceSnapshot(started_monotonic=40.0, checkpoint_monotonic=90.0,
...                        models=(ModelSnapshot("credit", last_event_monotonic=95.0),),
...                        stale_after_s=3.0)
>>> reg = CollectorRegistry()
>>> reg.register(LiveCollector(lambda: snap, clock))
>>> reg.get_sample_value("driftwatch_checkpoint_age_seconds")
10.0
>>> reg.get_sample_value("driftwatch_input_stale", {"model": "credit"})
1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from driftwatch.clock import Clock
from driftwatch.metrics import CATALOGUE

__all__ = ["LiveCollector", "ModelSnapshot", "PoolSnapshot", "ServiceSnapshot"]

_FAMILIES = {"counter": CounterMetricFamily, "histogram": HistogramMetricFamily,
             "gauge": GaugeMetricFamily}


@dataclass(frozen=True)
class ModelSnapshot:
    """What the run loop last published about one model (plain values, no live objects)."""

    model: str
    source_ready: bool = False
    source_done: bool = False
    consumer_lag: int = 0
    source_held: int = 0
    last_event_monotonic: float | None = None
    label_backlog: int = 0
    label_counters: Mapping[str, int] = field(default_factory=dict)
    #: cumulative ``(le, count)`` pairs, sum and count of the label delays
    label_delay: tuple[tuple[tuple[float, int], ...], float, int] = ((), 0.0, 0)
    watermark: float | None = None
    window_bytes: int = 0
    shadow_active: bool = False
    shadow_metrics: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    shadow_labelled: int = 0
    #: seconds the champion's reference profile has waited to reach the monitor (0: none)
    reference_adoption_pending_s: float = 0.0


@dataclass(frozen=True)
class PoolSnapshot:
    capacity: int = 0
    reserved: int = 0
    in_use: int = 0
    queued: int = 0
    running: int = 0


@dataclass(frozen=True)
class ServiceSnapshot:
    """Everything :class:`LiveCollector` reads; replaced whole, so a scrape never sees half."""

    started_monotonic: float
    models: tuple[ModelSnapshot, ...] = ()
    checkpoint_monotonic: float | None = None
    checkpoint_bytes: int = 0
    restore_seconds: float = 0.0
    stale_after_s: float = math.inf
    pool: PoolSnapshot = field(default_factory=PoolSnapshot)
    shadow_metric_names: tuple[str, ...] = ("gini", "auc", "ks_score", "brier")
    #: 1 (up), 0 (down) or NaN (not known yet) per declared dependency (kafka, mlflow, ...)
    dependencies: Mapping[str, float] = field(default_factory=dict)
    #: seconds each of them has been down (0 while up or not known; absent: 0)
    dependency_down_seconds: Mapping[str, float] = field(default_factory=dict)


class LiveCollector(Collector):
    """Samples computed when Prometheus scrapes, from the latest :class:`ServiceSnapshot`."""

    def __init__(self, snapshot: Callable[[], ServiceSnapshot], clock: Clock) -> None:
        self._snapshot = snapshot
        self._clock = clock

    def describe(self) -> Iterator[Any]:
        return iter(())  # the series depend on the configured models

    def collect(self) -> Iterator[Any]:
        snap = self._snapshot()
        now = self._clock.monotonic()
        fam = {s.name: _FAMILIES[s.kind](s.name, s.help, labels=list(s.labels))
               for s in CATALOGUE if s.live}

        def add(name: str, value: float, *labels: str) -> None:
            fam[name].add_metric(list(labels), float(value))

        since = snap.checkpoint_monotonic if snap.checkpoint_monotonic is not None \
            else snap.started_monotonic
        add("driftwatch_checkpoint_age_seconds", max(0.0, now - since))
        add("driftwatch_checkpoint_size_bytes", snap.checkpoint_bytes)
        add("driftwatch_restore_duration_seconds", snap.restore_seconds)
        p = snap.pool
        add("driftwatch_pool_capacity_gpus", p.capacity)
        add("driftwatch_pool_reserved_gpus", p.reserved)
        add("driftwatch_pool_in_use_gpus", p.in_use)
        add("driftwatch_pool_queued_jobs", p.queued)
        add("driftwatch_pool_running_jobs", p.running)
        for name, up in sorted(snap.dependencies.items()):
            add("driftwatch_dependency_up", up, name)
            add("driftwatch_dependency_down_seconds",
                snap.dependency_down_seconds.get(name, 0.0), name)
        for m in snap.models:
            self._model(m, snap, now, add, fam)
        yield from fam.values()

    @staticmethod
    def _model(m: ModelSnapshot, snap: ServiceSnapshot, now: float,
               add: Callable[..., None], fam: dict[str, Any]) -> None:
        last = m.last_event_monotonic if m.last_event_monotonic is not None \
            else snap.started_monotonic
        age = max(0.0, now - last)
        add("driftwatch_source_ready", m.source_ready, m.model)
        add("driftwatch_source_done", m.source_done, m.model)
        add("driftwatch_consumer_lag_messages", m.consumer_lag, m.model)
        add("driftwatch_source_held_events", m.source_held, m.model)
        add("driftwatch_last_event_age_seconds", age, m.model)
        # a consumed recording is finished, not stale
        add("driftwatch_input_stale", age > snap.stale_after_s and not m.source_done, m.model)
        add("driftwatch_event_time_watermark_seconds",
            math.nan if m.watermark is None else m.watermark, m.model)
        add("driftwatch_window_memory_bytes", m.window_bytes, m.model)
        add("driftwatch_label_join_backlog_events", m.label_backlog, m.model)
        for outcome, n in sorted((m.label_counters or {"joined": 0}).items()):
            if outcome not in ("predictions", "outcomes"):
                add("driftwatch_label_joins_total", n, m.model, outcome)
        buckets, total, count = m.label_delay
        fam["driftwatch_label_join_delay_seconds"].add_metric(
            [m.model], [(repr(le), float(c)) for le, c in buckets] + [("+Inf", count)],
            float(total))
        add("driftwatch_shadow_active", m.shadow_active, m.model)
        add("driftwatch_shadow_labelled_events", m.shadow_labelled, m.model)
        add("driftwatch_reference_adoption_pending_seconds", m.reference_adoption_pending_s,
            m.model)
        for role in ("champion", "challenger"):
            values = m.shadow_metrics.get(role, {})
            for metric in snap.shadow_metric_names:
                add("driftwatch_shadow_metric_value", values.get(metric, math.nan),
                    m.model, role, metric)
