"""Pytest fixtures for tests that need a real Kafka broker.

Fixture *factories*: a ``conftest.py`` calls them to make fixtures under the names it wants::

    from driftwatch.testing import kafka as kafka_testing

    kafka_endpoint = kafka_testing.endpoint_fixture()        # session: the broker
    kafka_topic = kafka_testing.topic_fixture()              # kafka_topic(partitions=3) -> name
    kafka_group = kafka_testing.group_fixture()              # kafka_group() -> unique group id
    kafka_broker_factory = kafka_testing.broker_factory_fixture()  # a broker of a test's own

The session broker is a real single-node Kafka 4 (KRaft) started from
``scripts/kafka_broker.py``, unless ``DRIFTWATCH_KAFKA_BOOTSTRAP`` names one already running.
If it cannot start, the tests that need it are skipped with the reason, except under
``CI=true`` where they fail: CI never passes by skipping.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

__all__ = [
    "KafkaEndpoint",
    "bootstrap_or_broker",
    "broker_factory_fixture",
    "broker_module",
    "create_topic",
    "endpoint_fixture",
    "group_fixture",
    "topic_fixture",
    "unavailable",
]

BOOTSTRAP_ENV = "DRIFTWATCH_KAFKA_BOOTSTRAP"
_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kafka_broker.py"
_MODULE = "_driftwatch_kafka_broker"


def broker_module() -> ModuleType:
    """``scripts/kafka_broker.py`` imported as a module (it is a script, not a package)."""
    if _MODULE in sys.modules:
        return sys.modules[_MODULE]
    spec = importlib.util.spec_from_file_location(_MODULE, _SCRIPT)
    if spec is None or spec.loader is None or not _SCRIPT.exists():
        raise FileNotFoundError(f"broker script not found at {_SCRIPT}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE] = mod
    spec.loader.exec_module(mod)
    return mod


@contextmanager
def bootstrap_or_broker(bootstrap: str | None) -> Iterator[str]:
    """``bootstrap`` when one is given, else a fresh local broker's (closed on exit), for
    benchmarks that take ``--bootstrap``."""
    if bootstrap:
        yield bootstrap
        return
    broker = broker_module().KafkaBroker()
    started = broker.start()
    try:
        yield started
    finally:
        broker.close()


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it under ``CI=true``."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Kafka broker unavailable under CI: {reason}", pytrace=False)
    pytest.skip(f"Kafka broker unavailable: {reason}")


@dataclass(frozen=True)
class KafkaEndpoint:
    """A broker the tests can reach; ``broker`` is None when it was started elsewhere."""

    bootstrap: str
    broker: Any = None

    @property
    def external(self) -> bool:
        return self.broker is None


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> str:
    """Create a topic (replication 1) and wait until its partitions have leaders."""
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="dw-test-admin")
    try:
        admin.create_topics([NewTopic(name, partitions, 1)], timeout_ms=30_000)
    finally:
        admin.close()
    probe = KafkaConsumer(bootstrap_servers=bootstrap, client_id="dw-test-probe")
    try:
        for _ in range(100):  # bounded: metadata normally shows it on the first try
            if len(probe.partitions_for_topic(name) or ()) == partitions:
                break
            probe.poll(timeout_ms=100)
        else:
            raise RuntimeError(f"topic {name} not visible after creation")
    finally:
        probe.close()
    return name


def endpoint_fixture(*, num_partitions: int = 1, name: str = "kafka_endpoint") -> Any:
    """A session fixture yielding a :class:`KafkaEndpoint`."""

    @pytest.fixture(scope="session", name=name)
    def _endpoint() -> Iterator[KafkaEndpoint]:
        external = os.environ.get(BOOTSTRAP_ENV)
        if external:
            yield KafkaEndpoint(external)
            return
        broker = None
        try:
            broker = broker_module().KafkaBroker(num_partitions=num_partitions)
            broker.start()
        except Exception as exc:  # no java, no maven, no network for the first fetch...
            if broker is not None:
                broker.close()  # removes its temporary folder
            unavailable(f"{type(exc).__name__}: {exc}")
        try:
            yield KafkaEndpoint(broker.bootstrap, broker)
        finally:
            broker.close()

    return _endpoint


def broker_factory_fixture(*, name: str = "kafka_broker_factory") -> Any:
    """A fixture returning ``start(**kwargs) -> KafkaBroker``: brokers a test may stop.

    For tests that restart or kill a broker; each one is stopped and removed afterwards.
    """

    @pytest.fixture(name=name)
    def _factory() -> Iterator[Callable[..., Any]]:
        started: list[Any] = []

        def start(**kwargs: Any) -> Any:
            try:
                broker = broker_module().KafkaBroker(**kwargs)
                started.append(broker)
                broker.start()
            except Exception as exc:
                unavailable(f"{type(exc).__name__}: {exc}")
            return broker

        try:
            yield start
        finally:
            for broker in started:
                broker.close()

    return _factory


def topic_fixture(*, endpoint: str = "kafka_endpoint", name: str = "kafka_topic") -> Any:
    """A fixture returning ``make(prefix="t", partitions=1) -> topic name``, created and ready."""

    @pytest.fixture(name=name)
    def _topic(request: pytest.FixtureRequest) -> Callable[..., str]:
        ep: KafkaEndpoint = request.getfixturevalue(endpoint)

        def make(prefix: str = "t", partitions: int = 1) -> str:
            topic = f"dw-{prefix}-{uuid.uuid4().hex[:12]}"
            return create_topic(ep.bootstrap, topic, partitions)

        return make

    return _topic


def group_fixture(*, name: str = "kafka_group") -> Any:
    """A fixture returning ``make(prefix="g") -> unique consumer group id``."""

    @pytest.fixture(name=name)
    def _group() -> Callable[..., str]:
        return lambda prefix="g": f"dw-{prefix}-{uuid.uuid4().hex[:12]}"

    return _group
