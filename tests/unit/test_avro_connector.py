"""A stream's ``avro:`` in a connector file: checked where it is written, and a recording of
Avro values replayed end to end."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import gzip
import io
import json
import sys
from pathlib import Path

import fastavro
import orjson
import pytest

from driftwatch.connectors.config import load_connector
from driftwatch.errors import ConnectorError, MissingExtraError
from driftwatch.extras import missing_extra
from tests.unit._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = {"type": "record", "name": "R", "fields": [
    {"name": "id", "type": "string"}, {"name": "ts", "type": "long"},
    {"name": "score", "type": "double"}]}


def write(tmp_path: Path, avro: str, kind: str = "kafka", fmt: str = "") -> Path:
    (tmp_path / "schemas").mkdir(exist_ok=True)
    (tmp_path / "schemas" / "r.avsc").write_text(json.dumps(SCHEMA))
    where = "      topic: p\n" if kind == "kafka" else "      paths: [x.jsonl]\n"
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            f"  kind: {kind}\n  streams:\n    predictions:\n{where}{fmt}"
            f"      avro: {avro}\n"
            "      fields: {event_id: id, event_time: ts, score: score}\n")
    f = tmp_path / "conf" / "c.yaml"
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    return f


def error(path: Path) -> str:
    with pytest.raises(ConnectorError) as got:
        load_connector(path)
    return got.value.render()


def test_the_schema_file_is_found_beside_the_connector_file(tmp_path: Path) -> None:
    c = load_connector(write(tmp_path, "{schema: ../schemas/r.avsc}"))
    a = c.streams[0].avro
    assert a is not None and json.loads(a.schema_text or "") == SCHEMA
    assert a.schema_file == "../schemas/r.avsc"


@pytest.mark.parametrize(("avro", "where", "says"), [
    ("{schem: ../schemas/r.avsc}", "c.yaml:9:14", "unknown key 'schem'"),
    ("{schema: r.avsc}", "c.yaml:9:22", "expected a readable Avro schema file"),
    ("{schema: ../schemas/r.avsc, registry: 'http://h:8081'}", "c.yaml:9:13",
     "found both"),
    ("{}", "c.yaml:9:13", "found neither"),
    ("{registry: 'h:8081'}", "c.yaml:9:24", "expected the registry's http:// or https:// URL"),
    ("{schema: ../conf/c.yaml}", "c.yaml:9:22", "expected an Avro schema (JSON)"),
])
def test_mistakes_are_located(tmp_path: Path, avro: str, where: str, says: str) -> None:
    text = error(write(tmp_path, avro))
    assert text.startswith(str(tmp_path / "conf" / where)), text
    assert says in text
    if "schem:" in avro:
        assert "did you mean 'schema'?" in text


def test_a_schema_that_is_json_but_not_avro(tmp_path: Path) -> None:
    f = write(tmp_path, "{schema: ../schemas/r.avsc}")
    (tmp_path / "schemas" / "r.avsc").write_text(
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "strnig"}]}')
    assert "expected an Avro schema (JSON)" in error(f)


def test_avro_is_for_kafka_values_only(tmp_path: Path) -> None:
    text = error(write(tmp_path, "{schema: ../schemas/r.avsc}", kind="file",
                       fmt="      format: jsonl\n"))
    assert "avro is for Kafka values" in text and "not format: jsonl" in text
    rec = load_connector(write(tmp_path, "{schema: ../schemas/r.avsc}", kind="file",
                               fmt="      format: kafka-recording\n"))
    assert rec.streams[0].avro is not None


def test_a_core_install_names_the_extra(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    f = write(tmp_path, "{schema: ../schemas/r.avsc}")
    monkeypatch.setitem(sys.modules, "fastavro", None)  # every import of it fails
    with pytest.raises(MissingExtraError) as got:
        load_connector(f)
    assert "pip install 'driftwatch[avro]'" in str(got.value)
    plain = missing_extra(ModuleNotFoundError("No module named 'fastavro'", name="fastavro"))
    assert str(plain) == "fastavro is not installed: pip install 'driftwatch[avro]'"


# -- a recording replayed -----------------------------------------------------------------

N = 6000  # six panes of the demo policy's windows


def _recording(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """The demo's first predictions as a recording of Confluent-framed Avro values
    (base64, as ``driftwatch record`` writes bytes that are not UTF-8) and the same
    messages as JSON; outcomes are JSON in both."""
    with gzip.open(ROOT / "data" / "demo" / "predictions.jsonl.gz") as f:
        preds = [orjson.loads(line) for _, line in zip(range(N), f, strict=False)]
    ids = {p["application_id"] for p in preds}
    with gzip.open(ROOT / "data" / "demo" / "outcomes.jsonl.gz") as f:
        outs = [o for o in map(orjson.loads, f) if o["application_id"] in ids]
    num = {"type": ["null", "double"], "default": None}
    schema = {"type": "record", "name": "Prediction", "fields": [
        {"name": "application_id", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "applicant", "type": {"type": "record", "name": "Applicant", "fields": [
            *({"name": n, **num} for n in ("age", "income", "credit_history_months",
                                            "num_open_accounts", "debt_to_income",
                                            "utilization")),
            {"name": "employment_type", "type": "string"},
            {"name": "home_ownership", "type": "string"}]}},
        {"name": "loan", "type": {"type": "record", "name": "Loan", "fields": [
            {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                        "precision": 12, "scale": 2}},
            {"name": "purpose", "type": {"type": "enum", "name": "Purpose", "symbols": sorted(
                {p["loan"]["purpose"] for p in preds})}},
            {"name": "fee", "type": "double"}]}},
        {"name": "model", "type": {"type": "record", "name": "Model", "fields": [
            {"name": "score", "type": "double"}, {"name": "version", "type": "string"}]}},
        {"name": "decision", "type": "string"},
        {"name": "channel", "type": ["null", "string"]}]}
    (tmp_path / "prediction.avsc").write_text(json.dumps(schema))
    parsed = fastavro.parse_schema(schema)

    def avro(p: dict) -> bytes:
        r = json.loads(json.dumps(p))
        r["ts"] = dt.datetime.fromtimestamp(p["ts"], dt.UTC)
        r["loan"]["amount"] = decimal.Decimal(p["loan"]["amount"])
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        return b"\x00\x00\x00\x00\x07" + buf.getvalue()

    events = sorted([(p["ts"], "credit.predictions", p) for p in preds]
                    + [(o["outcome_ts"], "credit.outcomes", o) for o in outs],
                    key=lambda e: e[0])
    rec_avro, rec_json = tmp_path / "avro.jsonl", tmp_path / "json.jsonl"
    offsets = {"credit.predictions": 0, "credit.outcomes": 0}
    with rec_avro.open("w") as fa, rec_json.open("w") as fj:
        for ts, topic, r in events:
            off = offsets[topic]
            offsets[topic] += 1
            env = {"topic": topic, "partition": 0, "offset": off, "timestamp": ts * 1000,
                   "key": None}
            if topic == "credit.predictions" and off == 100:  # one bad message in each
                fj.write(json.dumps({**env, "value": '{"oops'}) + "\n")
                bad = base64.b64encode(avro(r)[:-4]).decode()  # a cut body
                fa.write(json.dumps({**env, "value": bad, "value_encoding": "base64"}) + "\n")
                env = {**env, "offset": offsets[topic]}
                offsets[topic] += 1
            fj.write(json.dumps({**env, "value": json.dumps(r)}) + "\n")
            if topic == "credit.predictions":
                line = {**env, "value": base64.b64encode(avro(r)).decode(),
                        "value_encoding": "base64"}
            else:
                line = {**env, "value": json.dumps(r)}
            fa.write(json.dumps(line) + "\n")
    demo = (ROOT / "connectors" / "demo-kafka.yaml").read_text()
    conn_json = tmp_path / "json.yaml"
    conn_json.write_text(demo)
    conn_avro = tmp_path / "avro.yaml"
    conn_avro.write_text(demo.replace("      topic: credit.predictions\n",
                                      "      topic: credit.predictions\n"
                                      "      avro: {schema: prediction.avsc}\n"))
    return rec_avro, rec_json, conn_avro, conn_json


def test_a_recording_of_avro_values_replays_as_its_json_twin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DRIFTWATCH_KAFKA_BOOTSTRAP", "127.0.0.1:9")
    rec_avro, rec_json, conn_avro, conn_json = _recording(tmp_path)
    policy = str(ROOT / "policies" / "credit-risk-demo.yaml")
    code, _, err = run_cli(["replay", "-q", "-c", str(conn_avro), "-p", policy, "-i",
                            str(rec_avro), "-o", str(tmp_path / "avro")], capsys)
    assert code == 0, err
    code, _, err = run_cli(["replay", "-q", "-c", str(conn_json), "-p", policy, "-i",
                            str(rec_json), "-o", str(tmp_path / "json")], capsys)
    assert code == 0, err
    avro = (tmp_path / "avro" / "timeline.jsonl").read_text()
    twin = (tmp_path / "json" / "timeline.jsonl").read_text()
    summary = json.loads((tmp_path / "avro" / "summary.json").read_text())
    assert summary["bad_by_reason"] == {"invalid_avro": 1}, summary
    assert json.loads((tmp_path / "json" / "summary.json").read_text())["bad_by_reason"] == {
        "invalid_json": 1}
    assert avro.count("\n") >= 3
    # the same events in the same windows: the same timeline to the byte
    assert avro == twin


def test_a_replay_stops_at_a_value_whose_registry_is_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replay reads every record or stops: with the registry answering 503 it exits 1,
    naming the recording's line and the registry's error, and dead-letters nothing (a
    timeline that depended on the registry being up would not be the recording's)."""
    import driftwatch.connectors.readers as readers
    from driftwatch.testing.schema_registry import LocalRegistry

    monkeypatch.setenv("DRIFTWATCH_KAFKA_BOOTSTRAP", "127.0.0.1:9")
    monkeypatch.setattr(readers, "RECORDED_REGISTRY_WAIT_S", 2.5)  # two tries, 1 s apart
    rec_avro, _, conn_avro, _ = _recording(tmp_path)
    registry = LocalRegistry({7: json.loads((tmp_path / "prediction.avsc").read_text())})
    registry.start()
    try:
        registry.failing = 503
        conn_avro.write_text(conn_avro.read_text().replace(
            "avro: {schema: prediction.avsc}", f"avro: {{registry: '{registry.url}'}}"))
        policy = str(ROOT / "policies" / "credit-risk-demo.yaml")
        first = next(i for i, line in enumerate(rec_avro.read_text().splitlines(), 1)
                     if '"credit.predictions"' in line)
        code, _, err = run_cli(["replay", "-q", "-c", str(conn_avro), "-p", policy, "-i",
                                str(rec_avro), "-o", str(tmp_path / "down")], capsys)
        assert code == 1, err
        assert len(registry.hits) == 2  # asked again once the backoff (1 s) ran out
        assert f"{rec_avro}:{first}: schema registry {registry.url}: cannot fetch schema " \
               "id 7 (HTTP 503)" in err, err
        assert "Traceback" not in err
        dead = tmp_path / "down" / "dead_letter.jsonl"
        assert not dead.exists() or "schema_unavailable" not in dead.read_text()
        registry.failing = None  # up: the same replay reads every record
        code, _, err = run_cli(["replay", "-q", "-c", str(conn_avro), "-p", policy, "-i",
                                str(rec_avro), "-o", str(tmp_path / "up")], capsys)
        assert code == 0, err
        summary = json.loads((tmp_path / "up" / "summary.json").read_text())
        assert summary["bad_by_reason"] == {"invalid_avro": 1}, summary
    finally:
        registry.stop()


def test_a_replay_waits_out_a_brief_registry_outage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One 503 from the registry does not end a replay: the value is asked again when the
    registry's backoff (1 s) runs out, and every record is read as with the registry up."""
    from driftwatch.testing.schema_registry import LocalRegistry

    monkeypatch.setenv("DRIFTWATCH_KAFKA_BOOTSTRAP", "127.0.0.1:9")
    rec_avro, _, conn_avro, _ = _recording(tmp_path)
    registry = LocalRegistry({7: json.loads((tmp_path / "prediction.avsc").read_text())})
    registry.start()
    try:
        conn_avro.write_text(conn_avro.read_text().replace(
            "avro: {schema: prediction.avsc}", f"avro: {{registry: '{registry.url}'}}"))
        policy = str(ROOT / "policies" / "credit-risk-demo.yaml")
        registry.fail_next = 1
        code, _, err = run_cli(["replay", "-q", "-c", str(conn_avro), "-p", policy, "-i",
                                str(rec_avro), "-o", str(tmp_path / "blip")], capsys)
        assert code == 0, err
        assert len(registry.hits) == 2 and registry.fail_next == 0
        summary = json.loads((tmp_path / "blip" / "summary.json").read_text())
        assert summary["bad_by_reason"] == {"invalid_avro": 1}, summary
    finally:
        registry.stop()
