"""Avro Kafka values (``avro: {schema: ...}``): decoded through the same field mapping as JSON.

Every body is written by fastavro's writer, independently of the reading code; the expected
values are the ones written.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import Connector, parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonblock import Lines
from driftwatch.connectors.kafka_sample import FirstRecords
from driftwatch.schema import FeatureSchema

SCHEMA: dict[str, Any] = {
    "type": "record", "name": "Prediction", "namespace": "bank.credit", "fields": [
        {"name": "note", "type": ["null", "string"], "default": None},  # first: may be null
        {"name": "id", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "applicant", "type": {"type": "record", "name": "Applicant", "fields": [
            {"name": "income", "type": ["null", "double"]},
            {"name": "purpose", "type": {"type": "enum", "name": "Purpose",
                                         "symbols": ["car", "home", "other"]}},
            {"name": "opened", "type": {"type": "int", "logicalType": "date"}},
        ]}},
        {"name": "loan", "type": {"type": "record", "name": "Loan", "fields": [
            {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                        "precision": 12, "scale": 2}},
        ]}},
        {"name": "score", "type": "double"},
        {"name": "channel", "type": ["null", "string"]},
    ]}
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)  # 1704067200


def record(i: int, **kw: Any) -> dict[str, Any]:
    r = {"note": None, "id": f"a{i}", "ts": T0 + dt.timedelta(seconds=i, milliseconds=250),
         "applicant": {"income": 1000.0 * (i + 1), "purpose": ["car", "home", "other"][i % 3],
                       "opened": dt.date(2020, 1, 1 + i)},
         "loan": {"amount": decimal.Decimal(f"{1500 + i}.25")}, "score": 0.125 * (i % 8),
         "channel": "web" if i % 2 else None}
    r.update(kw)
    return r


def body(rec: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), rec)
    return buf.getvalue()


def framed(rec: dict[str, Any], schema_id: int = 42) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body(rec)


def connector(tmp_path: Path, unit: str = "auto", avro: str = "{schema: p.avsc}",
              extra: str = "") -> Connector:
    (tmp_path / "p.avsc").write_text(json.dumps(SCHEMA))
    text = f"""apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: t}}
source:
  kind: kafka
  connection: {{bootstrap_servers: [localhost:9092]}}
  streams:
    predictions:
      topic: p
      avro: {avro}
      fields:
        event_id: id
        event_time: {{path: ts, unit: {unit}}}
        features:
          income: applicant.income
          purpose: applicant.purpose
          amount: loan.amount
        score: score
        segment: channel
{extra}"""
    f = tmp_path / "c.yaml"
    f.write_text(text)
    from driftwatch.connectors.config import load_connector

    return load_connector(f)


SCHEMA_F = FeatureSchema(numeric=("income", "amount"), categorical=("purpose",),
                         levels=(("car", "home", "other"),))


def decode(c: Connector, payloads: list[bytes]):
    dec = Decoder(c.streams[0], SCHEMA_F)
    return dec.decode(payloads, source="p", positions=np.arange(len(payloads)) + 100,
                      partition=0)


@pytest.mark.parametrize("unit", ["auto", "s", "ms", "iso"])
def test_framed_records_fill_the_mapped_fields(tmp_path: Path, unit: str) -> None:
    c = connector(tmp_path, unit)
    recs = [record(0), record(1, applicant={"income": None, "purpose": "other",
                                            "opened": dt.date(2020, 2, 1)})]
    batch, bad = decode(c, [framed(r) for r in recs])
    assert bad == []
    assert batch.ids.tolist() == ["a0", "a1"]
    # a logical timestamp keeps its own instant whatever the unit says
    assert batch.event_time.tolist() == [1704067200.25, 1704067201.25]
    assert batch.numeric[:, 0].tolist()[0] == 1000.0 and np.isnan(batch.numeric[1, 0])
    assert batch.numeric[:, 1].tolist() == [1500.25, 1501.25]  # decimal -> float
    assert batch.categorical[:, 0].tolist() == [0, 2]  # enum symbols as text levels
    assert batch.score.tolist() == [0.0, 0.125]
    assert batch.segment.tolist() == ["", "web"]


def test_bare_bodies_and_a_bare_body_starting_with_a_zero_byte(tmp_path: Path) -> None:
    c = connector(tmp_path)
    plain = body(record(3))  # note is null: the union's branch 0, a zero first byte
    assert plain[0] == 0
    noted = body(record(4, note="x"))
    assert noted[0] != 0
    batch, bad = decode(c, [plain, noted, framed(record(5))])
    assert bad == []
    assert batch.ids.tolist() == ["a3", "a4", "a5"]


def test_a_corrupt_body_is_dead_lettered_and_the_rest_flows(tmp_path: Path) -> None:
    c = connector(tmp_path)
    good = framed(record(1))
    cut = good[:-3]  # ends inside the record
    longer = good + b"\x02\x04"  # bytes after the record: not this writer schema
    batch, bad = decode(c, [good, cut, framed(record(2)), longer, b""])
    assert batch.ids.tolist() == ["a1", "a2"]
    assert [(b.reason, b.position) for b in bad] == [
        ("invalid_avro", 101), ("invalid_avro", 103), ("invalid_avro", 104)]
    assert bad[0].raw == cut  # the dead letter keeps the value as it came
    assert "schema id 42" in bad[0].detail
    assert "2 bytes left after the record" in bad[1].detail


def test_a_date_outside_the_event_time_is_its_iso_text(tmp_path: Path) -> None:
    c = connector(tmp_path)
    m = c.streams[0]
    from dataclasses import replace

    from driftwatch.connectors.mapping import FieldPath

    dec = Decoder(replace(m, segment=FieldPath.parse("applicant.opened")), SCHEMA_F)
    batch, bad = dec.decode([framed(record(0))], source="p", positions=np.arange(1))
    assert bad == [] and batch.segment.tolist() == ["2020-01-01"]


def test_a_date_event_time_is_its_midnight(tmp_path: Path) -> None:
    c = connector(tmp_path)
    from dataclasses import replace

    from driftwatch.connectors.mapping import FieldPath

    m = c.streams[0]
    m = replace(m, event_time=replace(m.event_time, path=FieldPath.parse("applicant.opened")))
    batch, bad = Decoder(m, SCHEMA_F).decode([framed(record(0))], source="p",
                                             positions=np.arange(1))
    assert bad == [] and batch.event_time.tolist() == [1577836800.0]  # 2020-01-01


def test_micros_timestamps_keep_their_fraction(tmp_path: Path) -> None:
    schema = {"type": "record", "name": "R", "fields": [
        {"name": "id", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "score", "type": "double"}]}
    (tmp_path / "r.avsc").write_text(json.dumps(schema))
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            "  kind: kafka\n  streams:\n    predictions:\n      topic: p\n"
            "      avro: {schema: r.avsc}\n      fields: {event_id: id, event_time: "
            "{path: ts, unit: ms}, score: score}\n")
    c = parse_connector(text, base_dir=tmp_path)
    value = body({"id": "x", "ts": T0 + dt.timedelta(microseconds=1500), "score": 0.5}, schema)
    batch, bad = Decoder(c.streams[0], FeatureSchema()).decode(
        [value], source="p", positions=np.arange(1))
    assert bad == [] and batch.event_time.tolist() == [1704067200.0015]


_text = st.text(max_size=12)


@settings(max_examples=60, deadline=None)
@given(note=st.none() | _text, i=st.integers(0, 27), schema_id=st.integers(0, 2**32 - 1),
       bare=st.booleans())
def test_framing_is_told_by_the_first_byte_framed_or_bare(
    tmp_path_factory: pytest.TempPathFactory, note: str | None, i: int, schema_id: int,
    bare: bool,
) -> None:
    """A value is read whole whether it is framed (any id) or bare, even when a bare body
    starts with a zero byte (a null first field)."""
    c = connector(tmp_path_factory.mktemp("f"))
    rec = record(i, note=note)
    value = body(rec) if bare else framed(rec, schema_id)
    batch, bad = decode(c, [value])
    assert bad == []
    assert batch.ids.tolist() == [f"a{i}"]
    assert batch.numeric[0, 1] == float(rec["loan"]["amount"])


def test_the_source_keeps_decoded_avro_records_to_probe(tmp_path: Path) -> None:
    c = connector(tmp_path)
    dec = Decoder(c.streams[0], SCHEMA_F)
    first = FirstRecords(["predictions"], n=2, wait_s=60.0)
    assert dec.avro is not None
    first.keep("predictions", [b"\x00\x00\x00\x00\x01junk", framed(record(1)), body(record(2))],
               now=0.0, read=dec.avro.read)
    got = first.take(now=1.0)["predictions"]
    assert [r["id"] for r in got] == ["a1", "a2"]
    assert got[0]["applicant"]["purpose"] == "home" and got[0]["loan"]["amount"] == 1501.25


def test_lines_of_a_kafka_poll_are_read_as_avro(tmp_path: Path) -> None:
    """The live source hands the decoder spans of the fetched buffer (decode_lines)."""
    c = connector(tmp_path)
    values = [framed(record(i)) for i in range(3)]
    buf = b"XX" + b"".join(values)  # a record batch holds more than the values
    starts = np.array([2, 2 + len(values[0]), 2 + len(values[0]) + len(values[1])])
    ends = starts + np.array([len(v) for v in values])
    dec = Decoder(c.streams[0], SCHEMA_F)
    batch, bad = dec.decode_lines(Lines(buf, starts, ends, whole=False), source="p",
                                  positions=np.arange(3))
    assert bad == [] and batch.ids.tolist() == ["a0", "a1", "a2"]
