"""Values written by a schema registry's JSON serializer (Confluent's wire format: a zero
byte, a 4-byte schema id, the JSON) decode as the JSON alone; a registry's binary value
(Avro, Protobuf) is dead-lettered with what it is."""

from __future__ import annotations

import struct

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.decode import Decoder
from driftwatch.testing.credit import credit_connector, credit_schema


def _decoder(**kw: bool) -> Decoder:
    return Decoder(credit_connector("p.jsonl", "o.jsonl").stream("predictions"),
                   credit_schema(), **kw)


def _record(i: int) -> bytes:
    return orjson.dumps({"application_id": f"A{i}", "ts": 1_700_000_000 + i,
                         "applicant": {"income": 30000 + i, "age": 30},
                         "model": {"score": 0.25}, "decision": "approve"})


def _framed(payload: bytes, schema_id: int) -> bytes:
    return b"\x00" + struct.pack(">I", schema_id) + payload


@pytest.mark.parametrize("kw", [{}, {"scan": False}, {"block_parse": False}])
@settings(max_examples=12, deadline=None)
@given(framed=st.lists(st.booleans(), min_size=1, max_size=70),
       schema_id=st.integers(0, 2**32 - 1))
def test_framed_json_decodes_as_the_json_alone(kw: dict[str, bool], framed: list[bool],
                                               schema_id: int) -> None:
    plain = [_record(i) for i in range(len(framed))]
    values = [_framed(p, schema_id) if f else p for p, f in zip(plain, framed, strict=True)]
    dec = _decoder(**kw)
    got, bad = dec.decode(values, source="t", positions=list(range(len(values))))
    want, _ = _decoder(**kw).decode(plain, source="t", positions=list(range(len(plain))))
    assert not bad
    assert got.ids.tolist() == want.ids.tolist()
    np.testing.assert_array_equal(got.numeric, want.numeric)
    np.testing.assert_array_equal(got.event_time, want.event_time)


def test_a_binary_registry_value_is_dead_lettered_with_what_it_is() -> None:
    avro = _framed(b"\x02\x10A00000001\xd2\x0f", 42)
    batch, bad = _decoder().decode([_record(0), avro], source="t", positions=[0, 1])
    assert len(batch) == 1
    assert [(b.reason, b.position) for b in bad] == [("invalid_json", 1)]
    assert "schema id 42" in bad[0].detail and "Avro or Protobuf" in bad[0].detail


def test_samples_read_framed_values_too() -> None:
    from driftwatch.connectors.kafka_sample import FirstRecords

    first = FirstRecords(["predictions"], n=2, wait_s=60.0)
    first.keep("predictions", [_framed(_record(0), 9), b"\x00\x00\x00\x00\x09\x02", _record(1)],
               now=0.0)
    got = first.take(now=1.0)["predictions"]
    assert [r["application_id"] for r in got] == ["A0", "A1"]
