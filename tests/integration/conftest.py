"""Fixtures for integration tests: real services, started once per session.

Each service's fixtures come from a factory in ``driftwatch.testing``; add other services
(MLflow, Prometheus, ...) the same way, one block each. Mark test modules with
``pytestmark = pytest.mark.integration``.
"""

from __future__ import annotations

from driftwatch.testing import kafka as kafka_testing

# -- Kafka: a real KRaft broker, or the one named by $DRIFTWATCH_KAFKA_BOOTSTRAP -------------
kafka_endpoint = kafka_testing.endpoint_fixture(num_partitions=1)
kafka_topic = kafka_testing.topic_fixture()
kafka_group = kafka_testing.group_fixture()
kafka_broker_factory = kafka_testing.broker_factory_fixture()
