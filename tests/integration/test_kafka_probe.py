"""The daemon checks a Kafka stream's first messages against the connector's paths.

A replay probes its files' first records and warns about a mapped path that matches
nothing (``applicant.incme``: every income comes out missing). The daemon on a Kafka
topic has no file to look at first; it must say the same from the first messages it
reads, and the windows must carry the ``field_absent`` signal, as a replay's do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.replay.timeline import read_timeline
from driftwatch.testing.kafka import create_topic
from driftwatch.testing.recording import gz_lines, kafka_connector, produce

from .test_service import MODEL

pytestmark = pytest.mark.integration

N = 8_000


def test_a_mistyped_path_on_kafka_is_named_and_raises_field_absent(
        tmp_path: Path, kafka_endpoint, kafka_group, demo_recording, driftwatch_daemon,
        service_config_factory) -> None:
    preds = gz_lines(demo_recording["predictions"])[:N]
    suffix = tmp_path.name[-12:].replace("_", "-").lower()
    topic = create_topic(kafka_endpoint.bootstrap, f"dw-probe-p-{suffix}")
    outs = create_topic(kafka_endpoint.bootstrap, f"dw-probe-o-{suffix}")
    produce(kafka_endpoint.bootstrap, topic, preds)
    conn = kafka_connector(tmp_path / "kafka.yaml", kafka_endpoint.bootstrap,
                           {"predictions": topic, "outcomes": outs}, kafka_group("probe"))
    text = conn.read_text()
    assert text.count("applicant.income") == 1
    conn.write_text(text.replace("applicant.income", "applicant.incme"))
    policy = tmp_path / "policy.yaml"
    policy.write_text(demo_recording["policy"].read_text().replace(
        "  signals:\n    - detector: missing_rate",
        "  signals:\n    - detector: field_absent\n      threshold: 0.5\n"
        "    - detector: missing_rate", 1))
    cfg = service_config_factory(tmp_path / "svc.yaml", conn, policy,
                                 reference=demo_recording["reference"], batch_size=250)
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state)
    d.wait_ready()
    said = ("'income' (applicant.incme) is absent from 100% of the first 1000 predictions "
            "records: check its path")
    d.wait_for("the warning", lambda: said in d.log(), timeout=120)
    assert d.log().count(said) == 1  # once, not per poll
    timeline = state / "out" / MODEL / "timeline.jsonl"
    d.wait_for("windows", lambda: timeline.exists() and len(read_timeline(timeline)) >= 2,
               timeout=120)
    assert d.terminate() == 0
    for rec in read_timeline(timeline):
        (s,) = [s for s in rec["signals"] if s["signal"] == "field_absent"]
        assert (s["feature"], s["value"], s["details"]["path"]) == (
            "income", 1.0, "applicant.incme")
        assert rec["features"]["income"]["missing"] == rec["n_events"]
    assert "absent from" not in d.log().replace(said, "")  # no other path was named
