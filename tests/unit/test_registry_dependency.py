"""The daemon's ``schema_registry`` dependency: down (why, which offsets) while a Kafka
source holds partitions for its registry, up once one answered, unknown before.

The probe reads the copies each runtime takes of its source's state in the loop's
thread, as ``/readyz`` and ``driftwatch_dependency_up`` read them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from driftwatch.clock import ManualClock
from driftwatch.service.daemon_views import ServiceViews
from driftwatch.service.dependencies import Dependencies
from driftwatch.service.model import ModelRuntime


def _runtime(name: str, source: Any) -> Any:
    rt = SimpleNamespace(name=name, connector=SimpleNamespace(kind="kafka"), done=False,
                         source=source, registry_up=None, registry_fault="")
    ModelRuntime.read_registry_state(rt)  # type: ignore[arg-type]
    return rt


def test_the_probe_says_down_with_the_sources_words_and_since_when() -> None:
    clock = ManualClock(100.0)
    fault = ("schema registry http://r:8081: cannot fetch schema id 3 (HTTP 503); "
             "unreachable since 2024-01-01T00:00:00Z; held: p:0 at offset 42")
    held = SimpleNamespace(registry_up=False, registry_fault=fault)
    fine = SimpleNamespace(registry_up=True, registry_fault="")
    views = SimpleNamespace(runtimes=[_runtime("credit", held), _runtime("fraud", fine)])
    deps = Dependencies(clock)
    deps.declare("schema_registry", probe=lambda: ServiceViews._registry_up(views))
    clock.advance(1)
    assert deps.gauges() == {"schema_registry": 0.0}  # seen down now, at 101 s
    assert not deps.ready()
    clock.advance(4)
    seen = deps.to_dict()["schema_registry"]
    assert seen == {"state": "down", "critical": True, "reason": f"credit: {fault}",
                    "since_seconds": 4.0}
    held.registry_up, held.registry_fault = True, ""  # the registry answered
    for rt in views.runtimes:
        ModelRuntime.read_registry_state(rt)  # type: ignore[arg-type]
    assert deps.gauges() == {"schema_registry": 1.0} and deps.ready()


def test_a_source_that_never_asked_its_registry_is_not_known_yet() -> None:
    views = SimpleNamespace(runtimes=[_runtime("credit", SimpleNamespace()),
                                      _runtime("file", SimpleNamespace(registry_up=False))])
    views.runtimes[1].connector.kind = "file"  # only Kafka sources hold
    assert ServiceViews._registry_up(views) == (None, "")  # type: ignore[arg-type]


def test_how_long_a_dependency_has_been_down_is_a_metric() -> None:
    """``driftwatch_dependency_down_seconds``: the since-when of /readyz, for Prometheus."""
    from prometheus_client import CollectorRegistry

    from driftwatch.service.metrics_live import LiveCollector, ServiceSnapshot

    clock = ManualClock(100.0)
    deps = Dependencies(clock)
    up: list[bool] = [False]
    deps.declare("schema_registry", probe=lambda: (up[0], "" if up[0] else "HTTP 503"))
    deps.declare("kafka", probe=lambda: (True, ""))
    deps.status()  # first seen down at 100 s
    clock.advance(42)
    reg = CollectorRegistry()
    reg.register(LiveCollector(lambda: ServiceSnapshot(
        started_monotonic=0.0, dependencies=deps.gauges(),
        dependency_down_seconds=deps.down_seconds()), clock))

    def value(name: str, dep: str) -> float | None:
        return reg.get_sample_value(name, {"dependency": dep})

    assert value("driftwatch_dependency_down_seconds", "schema_registry") == 42.0
    assert value("driftwatch_dependency_up", "schema_registry") == 0.0
    assert value("driftwatch_dependency_down_seconds", "kafka") == 0.0
    up[0] = True
    assert value("driftwatch_dependency_down_seconds", "schema_registry") == 0.0


def test_the_daemon_declares_the_registry_only_for_a_stream_that_reads_one() -> None:
    from driftwatch.connectors.config import parse_connector
    from driftwatch.service.daemon import _reads_registry

    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            "  kind: kafka\n  streams:\n    predictions:\n      topic: p\nAVRO"
            "      fields: {event_id: id, event_time: ts, score: score}\n")
    registry = parse_connector(text.replace("AVRO", "      avro: {registry: 'http://r:8081'}\n"))
    plain = parse_connector(text.replace("AVRO", ""))
    assert _reads_registry(SimpleNamespace(connector=registry))  # type: ignore[arg-type]
    assert not _reads_registry(SimpleNamespace(connector=plain))  # type: ignore[arg-type]
