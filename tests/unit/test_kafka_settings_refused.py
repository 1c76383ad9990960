"""Settings the Kafka client refuses stop the start at once; a cluster away is retried.

Before, every exception from building the consumer read as "Kafka not reachable", so a
key the client does not know (``KafkaConsumer`` raises ``KafkaConfigurationError``) or a
value of the wrong type retried forever with a misleading log line. The consumers here are
kafka-python's own, built with the configuration the source gives them plus one key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer
from kafka.errors import KafkaTimeoutError

from driftwatch.clock import ManualClock
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.kafka import KafkaSource
from driftwatch.connectors.kafka_settings import KafkaConnection, KafkaSourceSettings, KafkaTopic
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.errors import SourceError
from driftwatch.schema import FeatureSchema


def _source(tmp_path: Path, factory: Any) -> KafkaSource:
    stream = StreamMapping(name="predictions", event_id=FieldPath.parse("id"), role="predictions",
                           event_time=TimeField(None, source="kafka_timestamp"), features=())
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=("127.0.0.1:9",), group_id="g"),
        topics=(KafkaTopic("preds", "predictions"),),
        dead_letter_path=str(tmp_path / "dead.jsonl"))
    return KafkaSource(settings, {"predictions": Decoder(stream, FeatureSchema())},
                       clock=ManualClock(0.0), consumer_factory=factory)


@pytest.mark.parametrize(("extra", "said"), [
    ({"bogus_key": 1}, "Unrecognized configs: {'bogus_key'}"),
    ({"fetch_max_wait_ms": "500ms"}, "TypeError"),
])
def test_settings_the_client_refuses_stop_the_start_with_its_words(
        tmp_path: Path, extra: dict[str, Any], said: str) -> None:
    src = _source(tmp_path, lambda **c: KafkaConsumer(**{**c, **extra}))
    with pytest.raises(SourceError, match="the Kafka client refused the connector's settings") \
            as err:
        src.poll(timeout_s=0.0)
    assert said in str(err.value)
    src.close()


def test_a_cluster_away_is_still_retried(tmp_path: Path) -> None:
    calls = []

    def away(**c: Any) -> Any:
        calls.append(c)
        raise KafkaTimeoutError("Unable to bootstrap from 127.0.0.1:9")

    src = _source(tmp_path, away)
    polled = src.poll(timeout_s=0.0)
    assert polled is None or polled.n_events == 0
    assert len(calls) == 1
    src.close()
