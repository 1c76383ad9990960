"""``driftwatch run`` on an Avro topic whose schema registry goes down for a while.

The source holding a partition, ``/readyz`` and ``driftwatch_dependency_up`` are each
tested on their own elsewhere; here the real daemon reads the demo's applications as
Confluent-framed Avro values with ``avro: {registry: ...}``. Schema 3 is read (and
cached) while the registry is up; then it stops and values of schema 4, not cached,
arrive among schema-3 ones. The daemon must hold the stream at the first schema-4 value
(nothing dead-lettered), say so on ``/readyz`` (503, naming the registry and the held
offset) and on ``/metrics`` (``driftwatch_dependency_up{dependency="schema_registry"}``
0); once the registry is back it must be ready again and have counted every application
exactly once.
"""

from __future__ import annotations

import gzip
import io
import itertools
from pathlib import Path
from typing import Any

import fastavro
import orjson
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from driftwatch.testing.kafka import create_topic
from driftwatch.testing.recording import kafka_connector, produce
from driftwatch.testing.schema_registry import LocalRegistry

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"
BEFORE = 600  # schema 3, read while the registry is up
DURING = 900  # produced while it is down: schema 3, then every third one schema 4
FIRST_V4 = 200  # the first schema-4 value among those, counted from BEFORE

_NUM = ["null", "double"]
_STR = ["null", "string"]
SCHEMA = {"type": "record", "name": "Application", "fields": [
    {"name": "application_id", "type": "string"},
    {"name": "ts", "type": "long"},
    {"name": "applicant", "type": {"type": "record", "name": "Applicant", "fields": [
        *({"name": n, "type": _NUM} for n in (
            "age", "income", "credit_history_months", "num_open_accounts", "debt_to_income",
            "utilization")),
        {"name": "employment_type", "type": _STR}, {"name": "home_ownership", "type": _STR}]}},
    {"name": "loan", "type": {"type": "record", "name": "Loan", "fields": [
        {"name": "amount", "type": _NUM}, {"name": "purpose", "type": _STR},
        {"name": "fee", "type": _NUM}]}},
    {"name": "model", "type": {"type": "record", "name": "Model", "fields": [
        {"name": "score", "type": "double"}, {"name": "version", "type": "string"}]}},
    {"name": "decision", "type": _STR},
    {"name": "channel", "type": _STR}]}
# a later version: one more field, first
SCHEMA_V4 = {**SCHEMA, "fields": [{"name": "region", "type": "string"}, *SCHEMA["fields"]]}
PARSED = {3: fastavro.parse_schema(SCHEMA), 4: fastavro.parse_schema(SCHEMA_V4)}


def _numbers_as_doubles(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _numbers_as_doubles(v) for k, v in obj.items()}
    return float(obj) if isinstance(obj, int) and not isinstance(obj, bool) else obj


def framed(app: dict[str, Any], schema_id: int) -> bytes:
    """``app`` as a Confluent-framed Avro value of schema ``schema_id``."""
    rec = {**_numbers_as_doubles(app), "ts": int(app["ts"])}
    rec["model"]["version"] = str(app["model"]["version"])
    if schema_id == 4:
        rec["region"] = "eu"
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, PARSED[schema_id], rec)
    return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()


def _sample(metrics: bytes, name: str, **labels: str) -> float | None:
    """The value of ``name`` with ``labels`` in a /metrics answer (None: not there)."""
    for family in text_string_to_metric_families(metrics.decode()):
        for s in family.samples:
            if s.name == name and labels.items() <= s.labels.items():
                return s.value
    return None


def test_the_daemon_holds_an_avro_stream_while_the_registry_is_down_and_counts_each_once(
        tmp_path: Path, kafka_endpoint, kafka_group, driftwatch_daemon,
        service_config_factory) -> None:
    with gzip.open(DEMO / "predictions.jsonl.gz", "rb") as fh:
        apps = [orjson.loads(line) for line in itertools.islice(fh, BEFORE + DURING)]
    registry = LocalRegistry({3: SCHEMA, 4: SCHEMA_V4})
    registry.start()
    suffix = tmp_path.name[-12:].replace("_", "-").lower()
    topic = create_topic(kafka_endpoint.bootstrap, f"dw-avro-reg-p-{suffix}")
    outcomes = create_topic(kafka_endpoint.bootstrap, f"dw-avro-reg-o-{suffix}")
    conn = kafka_connector(tmp_path / "kafka.yaml", kafka_endpoint.bootstrap,
                           {"predictions": topic, "outcomes": outcomes}, kafka_group("avro"))
    doc = yaml.safe_load(conn.read_text())
    doc["source"]["streams"]["predictions"]["avro"] = {"registry": registry.url}
    conn.write_text(yaml.safe_dump(doc, sort_keys=False))
    cfg = service_config_factory(tmp_path / "svc.yaml", conn,
                                 ROOT / "policies" / "credit-risk-demo.yaml",
                                 reference=DEMO / "reference.parquet", batch_size=250)
    schema_ids = [3] * (BEFORE + FIRST_V4) + [
        4 if i % 3 == 0 else 3 for i in range(DURING - FIRST_V4)]
    held_at = BEFORE + FIRST_V4  # the offset of the first schema-4 value
    d = driftwatch_daemon(cfg, tmp_path / "state")

    def model() -> dict[str, Any]:
        (m,) = d.status()["models"]
        return m

    def registry_down() -> dict[str, Any] | None:
        """The registry's entry on /readyz when it answers 503 and says it is down."""
        code, body = d.get("/readyz")
        dep = orjson.loads(body)["dependencies"].get("schema_registry", {})
        return dep if code == 503 and dep.get("state") == "down" else None

    try:
        produce(kafka_endpoint.bootstrap, topic,
                [framed(a, s) for a, s in zip(apps[:BEFORE], schema_ids[:BEFORE], strict=True)])
        d.wait_ready()
        d.wait_for("the schema-3 values counted", lambda: model()["events"] == BEFORE,
                   timeout=120)
        d.wait_for("/readyz to be ready", lambda: d.get("/readyz")[0] == 200, timeout=60)

        registry.stop()
        produce(kafka_endpoint.bootstrap, topic,
                [framed(a, s) for a, s in zip(apps[BEFORE:], schema_ids[BEFORE:], strict=True)])
        dep = d.wait_for("/readyz to say the registry is down", registry_down, timeout=60)
        assert dep["state"] == "down" and dep["critical"], dep
        assert registry.url in dep["reason"] and "unreachable since" in dep["reason"], dep
        assert f"held: {topic}:0 at offset {held_at}" in dep["reason"], dep
        assert _sample(d.get("/metrics")[1], "driftwatch_dependency_up",
                       dependency="schema_registry") == 0.0
        # everything before the held value is counted, nothing at or after it
        d.wait_for("the values before the held one counted",
                   lambda: model()["events"] == held_at, timeout=60)
        assert model()["source"]["positions"].get(f"{topic}:0") == held_at

        registry.start()  # up again, on the same port
        d.wait_for("/readyz to be ready again", lambda: d.get("/readyz")[0] == 200,
                   timeout=60)
        total = BEFORE + DURING
        last = d.wait_for(
            "every value read",
            lambda: (m := model())["source"]["positions"].get(f"{topic}:0") == total
            and m["events"] >= total and m, timeout=60)
        metrics = d.get("/metrics")[1]
        assert _sample(metrics, "driftwatch_dependency_up", dependency="schema_registry") == 1.0
    finally:
        registry.stop()
    assert last["events"] == total  # every application once: none lost, none twice
    assert _sample(metrics, "driftwatch_events_total", stream="predictions") == total
    assert last["bad_records"] == 0  # none dead-lettered as unreadable
    assert d.terminate() == 0
