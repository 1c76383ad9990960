"""Avro values whose writer schema comes from a schema registry (``avro: {registry: URL}``).

A tiny registry (``http.server`` in a thread) serves ``GET /schemas/ids/{id}``; the test
clock decides when a registry that was down is asked again.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import fastavro
import numpy as np
import pytest

from driftwatch.connectors.avro import AvroReader
from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.mapping import AvroSettings
from driftwatch.connectors.schema_registry import RegistrySchemas
from driftwatch.schema import FeatureSchema

SCHEMA = {"type": "record", "name": "R", "fields": [
    {"name": "delta", "type": "long"}, {"name": "id", "type": "string"},
    {"name": "ts", "type": "long"}, {"name": "score", "type": "double"}]}
# the same record written by a later version of the schema: one more field, first
SCHEMA_V2 = {"type": "record", "name": "R", "fields": [
    {"name": "region", "type": "string"}, *SCHEMA["fields"]]}


class _Registry:
    """Schemas by id; ``up`` False answers nothing (the port is closed)."""

    def __init__(self, schemas: dict[int, Any]) -> None:
        self.schemas = schemas
        self.hits: list[str] = []
        self.server: ThreadingHTTPServer | None = None
        self.port = 0

    def start(self) -> None:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.hits.append(self.path)
                prefix = "/schemas/ids/"
                sid = self.path[len(prefix):]
                if not self.path.startswith(prefix) or not sid.isdigit() or (
                        int(sid) not in registry.schemas):
                    self.send_response(404)
                    self.end_headers()
                    self.wfile.write(b'{"error_code": 40403, "message": "Schema not found"}')
                    return
                answer = registry.schemas[int(sid)]
                data = json.dumps(answer if "schema" in answer else
                                  {"schema": json.dumps(answer)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def registry() -> Iterator[_Registry]:
    r = _Registry({1: SCHEMA, 2: SCHEMA_V2, 9: {"schemaType": "PROTOBUF",
                                               "schema": "syntax = \"proto3\";"}})
    r.start()
    yield r
    if r.server is not None:
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
    registry: _Registry,
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
    registry: _Registry,
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


def test_a_json_header_lookalike_is_not_cut_from_an_avro_value(registry: _Registry) -> None:
    """A JSON stream cuts a registry header before ``{``; an Avro body may start with that
    byte (a long of -62) and must keep its header: the id is needed."""
    value = framed(rec(-62), 1)
    assert value[5:6] == b"{"
    batch, bad = decode(decoder(registry.url), [value])
    assert bad == []
    assert (batch.ids.tolist(), batch.metrics["delta"].tolist()) == (["r-62"], [-62.0])


def test_a_registry_down_then_up(registry: _Registry) -> None:
    registry.stop()
    clock = _Clock()
    dec = decoder(registry.url, clock)
    values = [framed(rec(i), 1) for i in range(3)]
    batch, bad = decode(dec, values)
    assert len(batch) == 0
    assert [b.reason for b in bad] == ["schema_unavailable"] * 3
    assert f"schema registry {registry.url}: cannot fetch schema id 1" in bad[0].detail
    assert bad[0].raw == values[0]
    hits = dec.avro.registry.requests  # type: ignore[union-attr]
    assert hits == 1  # one try per pause, not one per message
    registry.start()  # up again, on the same port
    clock.now = 29.0  # still within the pause: not asked
    _, bad = decode(dec, values[:1])
    assert [b.reason for b in bad] == ["schema_unavailable"]
    assert dec.avro.registry.requests == hits  # type: ignore[union-attr]
    clock.now = 31.0
    batch, bad = decode(dec, values)
    assert bad == [] and batch.ids.tolist() == ["r0", "r1", "r2"]
    assert registry.hits == ["/schemas/ids/1"]


def test_a_server_error_is_unavailable_not_unknown() -> None:
    class Failing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(503)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        reader = AvroReader(AvroSettings(registry=url))
        from driftwatch.connectors.avro import AvroProblem

        with pytest.raises(AvroProblem) as got:
            reader.read(framed(rec(1), 1))
        assert got.value.reason == "schema_unavailable" and "HTTP 503" in str(got.value)
    finally:
        server.shutdown()
        server.server_close()
