"""Avro values whose writer schema comes from a schema registry (``avro: {registry: URL}``).

A tiny registry (``http.server`` in a thread: driftwatch.testing.schema_registry) serves
``GET /schemas/ids/{id}``; the test clock decides when a registry that was down is asked
again.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import fastavro
import numpy as np
import pytest

from driftwatch.connectors.avro import AvroProblem, AvroReader
from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.mapping import AvroSettings
from driftwatch.connectors.schema_registry import RegistrySchemas
from driftwatch.schema import FeatureSchema
from driftwatch.testing.schema_registry import LocalRegistry

SCHEMA = {"type": "record", "name": "R", "fields": [
    {"name": "delta", "type": "long"}, {"name": "id", "type": "string"},
    {"name": "ts", "type": "long"}, {"name": "score", "type": "double"}]}
# the same record written by a later version of the schema: one more field, first
SCHEMA_V2 = {"type": "record", "name": "R", "fields": [
    {"name": "region", "type": "string"}, *SCHEMA["fields"]]}


@pytest.fixture
def registry() -> Iterator[LocalRegistry]:
    r = LocalRegistry({1: SCHEMA, 2: SCHEMA_V2, 9: {"schemaType": "PROTOBUF",
                                               "schema": "syntax = \"proto3\";"}})
    r.start()
    yield r
    r.stop()


def framed(rec: dict[str, Any], schema_id: int, schema: dict[str, Any] = SCHEMA) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def rec(i: int, **kw: Any) -> dict[str, Any]:
    return {"delta": i, "id": f"r{i}", "ts": 1704067200 + i, "score": 0.5, **kw}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def decoder(url: str, clock: _Clock | None = None) -> Decoder:
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            "  kind: kafka\n  streams:\n    predictions:\n      topic: p\n"
            f"      avro: {{registry: '{url}'}}\n      fields: {{event_id: id, event_time: "
            "ts, score: score, metrics: {delta: delta}}\n")
    dec = Decoder(parse_connector(text).streams[0], FeatureSchema())
    if clock is not None:
        assert dec.avro is not None
        dec.avro.registry = RegistrySchemas(url, monotonic=clock, timeout_s=2.0)
    return dec


def decode(dec: Decoder, values: list[bytes]):
    return dec.decode(values, source="p", positions=np.arange(len(values)), partition=0)


def test_each_message_is_read_with_its_own_writer_schema_fetched_once(
    registry: LocalRegistry,
) -> None:
    dec = decoder(registry.url)
    values = [framed(rec(i), 1) for i in range(5)] + [framed(rec(7, region="eu"), 2, SCHEMA_V2)]
    batch, bad = decode(dec, values)
    assert bad == []
    assert batch.ids.tolist() == ["r0", "r1", "r2", "r3", "r4", "r7"]
    _, bad = decode(dec, [framed(rec(8), 1)])
    assert bad == []
    assert sorted(registry.hits) == ["/schemas/ids/1", "/schemas/ids/2"]  # cached per id


def test_unknown_ids_unframed_values_and_other_schema_types_are_invalid_avro(
    registry: LocalRegistry,
) -> None:
    dec = decoder(registry.url)
    good = framed(rec(1), 1)
    batch, bad = decode(dec, [framed(rec(2), 5), good[5:], good, framed(rec(3), 9)])
    assert batch.ids.tolist() == ["r1"]
    assert [(b.reason, b.position) for b in bad] == [
        ("invalid_avro", 0), ("invalid_avro", 1), ("invalid_avro", 3)]
    assert "holds no schema id 5 (HTTP 404)" in bad[0].detail
    assert "expected a schema registry's framing" in bad[1].detail
    assert "PROTOBUF" in bad[2].detail


def test_a_json_header_lookalike_is_not_cut_from_an_avro_value(registry: LocalRegistry) -> None:
    """A JSON stream cuts a registry header before ``{``; an Avro body may start with that
    byte (a long of -62) and must keep its header: the id is needed."""
    value = framed(rec(-62), 1)
    assert value[5:6] == b"{"
    batch, bad = decode(decoder(registry.url), [value])
    assert bad == []
    assert (batch.ids.tolist(), batch.metrics["delta"].tolist()) == (["r-62"], [-62.0])


def test_a_registry_down_is_asked_again_with_backoff_then_read(
    registry: LocalRegistry,
) -> None:
    """Down: the values are ``schema_unavailable`` (the source holds them, a replay stops:
    neither reads them as bad); the registry is asked once per try, the tries 1, 2, 4 s
    apart (up to 30 s); up again, the same values read."""
    registry.stop()
    clock = _Clock()
    dec = decoder(registry.url, clock)
    reg = dec.avro.registry  # type: ignore[union-attr]
    values = [framed(rec(i), 1) for i in range(3)]
    batch, bad = decode(dec, values)
    assert len(batch) == 0
    assert [b.reason for b in bad] == ["schema_unavailable"] * 3
    assert f"schema registry {registry.url}: cannot fetch schema id 1" in bad[0].detail
    assert bad[0].raw == values[0]
    assert reg.requests == 1  # one try, not one per message
    assert (reg.outage.since, reg.outage.retry_at, reg.due()) == (0.0, 1.0, False)
    waits = []
    for _ in range(7):
        clock.now = reg.outage.retry_at
        assert reg.due()
        _, bad = decode(dec, values[:1])
        assert [b.reason for b in bad] == ["schema_unavailable"]
        waits.append(reg.outage.retry_at - clock.now)
    assert waits == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert reg.requests == 8 and reg.outage.since == 0.0
    registry.start()  # up again, on the same port
    clock.now = reg.outage.retry_at - 0.5  # the wait is not over: not asked
    _, bad = decode(dec, values[:1])
    assert [b.reason for b in bad] == ["schema_unavailable"] and reg.requests == 8
    clock.now += 0.5
    batch, bad = decode(dec, values)
    assert bad == [] and batch.ids.tolist() == ["r0", "r1", "r2"]
    assert registry.hits == ["/schemas/ids/1"]
    assert reg.outage is None and reg.answered


def test_a_server_error_is_unavailable_not_unknown(registry: LocalRegistry) -> None:
    registry.failing = 503
    reader = AvroReader(AvroSettings(registry=registry.url))
    with pytest.raises(AvroProblem) as got:
        reader.read(framed(rec(1), 1))
    assert got.value.reason == "schema_unavailable" and "HTTP 503" in str(got.value)
    assert reader.registry is not None and not reader.registry.answered
