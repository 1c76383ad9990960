"""Poison messages through the live path: ``driftwatch run`` on a file source.

The recording gets messages that once crashed or bloated the daemon (categorical values
missing, null, empty or new to the reference; a 100,000-character id; a 2 MiB message;
broken or deeply nested JSON; values of the wrong type). The daemon must dead-letter what
it cannot read, measure the rest exactly as ``replay`` does on the same input, keep
running, and come back after a restart on the same state (no crash loop).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from driftwatch.connectors.deadletter import read_dead_letters
from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline

from .test_service import MODEL, metric

pytestmark = pytest.mark.integration


def _poisons(good: dict) -> list[tuple[bytes, str | None]]:
    """(line, the dead-letter reason it must get, or None when it is a valid event)."""
    def with_purpose(i: int, value: object) -> bytes:
        r = orjson.loads(orjson.dumps(good))
        r["application_id"] = f"POISON-{i}"
        if value is KeyError:
            del r["loan"]["purpose"]
        else:
            r["loan"]["purpose"] = value
        return orjson.dumps(r)

    big = dict(good, application_id="POISON-big", pad="x" * (2 << 20))
    return [
        (with_purpose(0, KeyError), None),
        (with_purpose(1, None), None),
        (with_purpose(2, ""), None),
        (with_purpose(3, "time_machine"), None),
        (orjson.dumps(dict(good, application_id="x" * 100_000)), "id_too_long"),
        (orjson.dumps(big), "message_too_large"),
        (b'{"application_id": "POISON-broken", "ts": ', "invalid_json"),
        (b"[" * 5000 + b"]" * 5000, "invalid_json"),
        (orjson.dumps(dict(good, application_id={"a": 1})), "wrong_type"),
        (orjson.dumps(dict(good, application_id="POISON-score",
                           model={"score": "high", "version": "1"})), "wrong_type"),
    ]


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory, demo_recording) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("poisoned")
    with gzip.open(demo_recording["predictions"], "rb") as f:
        lines = f.read().splitlines()
    extra = _poisons(orjson.loads(lines[6000]))
    for k, (line, _) in enumerate(extra):  # spread over a few windows
        lines.insert(6001 + 700 * k, line)
    preds = out / "predictions.jsonl.gz"
    with gzip.open(preds, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    text = demo_recording["connector"].read_text()
    connector = out / "connector.yaml"
    connector.write_text(text.replace(str(demo_recording["predictions"]), str(preds)))
    return {"connector": connector, "predictions": preds,
            "outcomes": demo_recording["outcomes"], "reference": demo_recording["reference"],
            "policy": demo_recording["policy"], "expected": [r for _, r in extra]}


def test_poison_messages_are_dead_lettered_and_the_daemon_goes_on(
        tmp_path, poisoned, driftwatch_daemon, service_config_factory):
    cfg = service_config_factory(tmp_path / "svc.yaml", poisoned["connector"],
                                 poisoned["policy"], reference=poisoned["reference"])
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state)
    d.wait_ready()
    d.wait_for("the recording consumed",
               lambda: metric(d, "driftwatch_source_done", model=MODEL) == 1.0, timeout=180)
    assert d.proc.poll() is None
    assert "Traceback" not in d.log()

    dead = read_dead_letters(state / "out" / MODEL / "dead_letter.jsonl")
    want = sorted(r for r in poisoned["expected"] if r is not None)
    assert sorted(x["reason"] for x in dead) == want
    for reason in set(want):
        assert metric(d, "driftwatch_bad_events_total", model=MODEL,
                      reason=reason) == want.count(reason)
    big = next(x for x in dead if x["reason"] == "message_too_large")
    assert len(big["raw"]) <= 1 << 16

    # what was read is measured exactly as replay measures the same input
    rep = replay(poisoned["connector"], [poisoned["predictions"], poisoned["outcomes"]],
                 tmp_path / "replay", policy=poisoned["policy"],
                 reference=poisoned["reference"], progress=False, report=False,
                 batch_size=500)
    live = read_timeline(state / "out" / MODEL / "timeline.jsonl")
    assert [r["signals"] for r in live] == [r["signals"] for r in
                                            read_timeline(tmp_path / "replay" / "timeline.jsonl")]
    errors = [r for r in live if "error" in r]
    assert metric(d, "driftwatch_window_errors_total", model=MODEL, stage="detectors") == \
        sum(r["error"]["stage"] == "detectors" for r in errors)
    assert rep.summary["bad_records"] == len(want)
    assert d.terminate() == 0

    again = driftwatch_daemon(cfg, state)  # restart on the same state: no crash loop
    again.wait_ready()
    again.wait_for("the restarted daemon serving",
                   lambda: metric(again, "driftwatch_source_done", model=MODEL) == 1.0)
    assert again.proc.poll() is None
    assert again.terminate() == 0


def test_poison_messages_in_kafka_are_dead_lettered_and_a_restart_does_not_crash_loop(
        tmp_path, kafka_endpoint, kafka_group, demo_recording, driftwatch_daemon,
        service_config_factory):
    """The same poisons (but the 2 MiB one, over the broker's message limit) on a topic."""
    from driftwatch.testing.kafka import create_topic
    from driftwatch.testing.recording import gz_lines as lines
    from driftwatch.testing.recording import kafka_connector, produce

    from .test_kafka_crash import counted

    preds, outs = lines(demo_recording["predictions"]), lines(demo_recording["outcomes"])
    extra = [(m, r) for m, r in _poisons(orjson.loads(preds[6000]))
             if r != "message_too_large"]
    for k, (line, _) in enumerate(extra):
        preds.insert(6001 + 700 * k, line)
    suffix = tmp_path.name[-12:].replace("_", "-").lower()
    names = {"predictions": create_topic(kafka_endpoint.bootstrap, f"dw-poison-p-{suffix}"),
             "outcomes": create_topic(kafka_endpoint.bootstrap, f"dw-poison-o-{suffix}")}
    produce(kafka_endpoint.bootstrap, names["predictions"], preds)
    produce(kafka_endpoint.bootstrap, names["outcomes"], outs)
    conn = kafka_connector(tmp_path / "kafka.yaml", kafka_endpoint.bootstrap, names,
                           kafka_group("poison"))
    cfg = service_config_factory(tmp_path / "svc.yaml", conn, demo_recording["policy"],
                                 reference=demo_recording["reference"], batch_size=250)
    state = tmp_path / "state"
    want = sorted(r for _, r in extra if r is not None)
    n_good = len(preds) - len(want)

    d = driftwatch_daemon(cfg, state)
    d.wait_ready()
    d.wait_for("every message read", lambda: counted(d)[:2] == (n_good, len(outs)),
               timeout=240)
    assert d.proc.poll() is None and "Traceback" not in d.log()
    d.wait_for("the dead letters written", lambda: sorted(
        x["reason"] for x in _dead(state)) == want)
    windows = d.status()["models"][0]["windows"]
    assert windows > 5
    assert d.terminate() == 0

    again = driftwatch_daemon(cfg, state)  # resumes from the checkpoint: nothing re-read
    again.wait_ready()
    assert counted(again)[:2] == (n_good, len(outs))
    assert again.proc.poll() is None
    assert sorted(x["reason"] for x in _dead(state)) == want  # not dead-lettered twice
    assert again.terminate() == 0


def _dead(state: Path) -> list[dict]:
    path = state / "out" / MODEL / "dead_letter.jsonl"
    return read_dead_letters(path) if path.exists() else []
