"""``init --kafka-topic`` on a topic of schema-registry binary values (Avro, Protobuf): init
samples JSON only, and says what to do instead of "no JSON messages"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from driftwatch.errors import SourceError
from driftwatch.onboard import sample


class _Consumer:
    def __init__(self, values: list[bytes]) -> None:
        self.values = values

    def topics(self) -> set[str]:
        return {"credit.predictions"}

    def subscribe(self, topics: list[str]) -> None:
        pass

    def __iter__(self) -> Any:
        return iter(SimpleNamespace(value=v) for v in self.values)

    def close(self) -> None:
        pass


@pytest.mark.parametrize(("values", "says"), [
    ([b"\x00\x00\x00\x00\x07\x02\x12A000"] * 3, "init samples JSON only"),
    ([b"not json"] * 3, "no JSON messages on topic"),
])
def test_a_binary_topic_is_named_with_the_way_round(
    monkeypatch: pytest.MonkeyPatch, values: list[bytes], says: str,
) -> None:
    pytest.importorskip("kafka")
    monkeypatch.setattr("driftwatch.connectors.kafka_client.build_client",
                        lambda *a, **kw: _Consumer(values))
    with pytest.raises(SourceError) as got:
        sample.kafka_sample("credit.predictions", "127.0.0.1:9092")
    assert says in str(got.value)
    if "JSON only" in says:
        assert "--sample" in str(got.value) and "avro:" in str(got.value)
