"""A state folder that fills up and is freed again: the Kafka-fed daemon pauses and resumes.

The state folder sits on a small tmpfs (see :mod:`smallfs`). The daemon consumes the first
half of (most of) the demo recording from a real broker; the test fills the tmpfs and
produces the second half, and checks that the daemon stopped at its first refused write:
``/readyz`` is 503 and names the full state folder, ``driftwatch_state_writable`` is 0,
and while its retries keep failing it counts and commits nothing more. Then the filler is
deleted; the daemon resumes by itself from its last durable checkpoint, reads the rest, and
ends with exactly the counts and the per-window view of an uninterrupted daemon that read
the same topics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from driftwatch.testing.recording import gz_lines, kafka_connector, produce
from tests.integration.smallfs import small_fs

pytestmark = pytest.mark.integration

MODEL = "credit-risk"


def _view(timeline: bytes) -> list[tuple]:
    """What the predictions decide about each window (outcomes interleave by fetch timing)."""
    out = []
    for line in timeline.splitlines():
        if line.strip():
            r = orjson.loads(line)
            out.append((r["window_id"], r["first_index"], r["last_index"], r["n_events"],
                        r["n_bad"], orjson.dumps(r["features"], option=orjson.OPT_SORT_KEYS)))
    return out


def _counted(daemon) -> tuple[int, int, int]:
    code, body = daemon.get("/status", timeout=60)
    assert code == 200, body
    (m,) = orjson.loads(body)["models"]
    return m["events"], m["outcomes"], m["labels"].get("joined", 0)


def _metric(daemon, name: str, **labels: str) -> float:
    code, body = daemon.get("/metrics", timeout=60)  # a loaded CI machine is slow to answer
    assert code == 200
    for fam in text_string_to_metric_families(body.decode()):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise AssertionError(f"{name} {labels} not in /metrics")


def _commits(daemon) -> float:
    return _metric(daemon, "driftwatch_source_commits_total", model=MODEL, outcome="ok")


def _config(work: Path, bootstrap: str, topics: dict[str, str], group: str, demo,
            factory) -> Path:
    conn = kafka_connector(work / "kafka.yaml", bootstrap, topics, group, name="disk-test")
    cfg = factory(work / "svc.yaml", conn, demo["policy"], reference=demo["reference"],
                  batch_size=250)
    text = cfg.read_text()  # retries at most 2 s apart: the test waits less after the free
    cfg.write_text(text.replace("checkpoint: {interval: 1s, max_age: 1m}",
                                "checkpoint: {interval: 1s, max_age: 1m, disk_retry_max: 2s}"))
    assert "disk_retry_max" in cfg.read_text()
    return cfg


def _ready(daemon) -> tuple[int, dict]:
    code, body = daemon.get("/readyz", timeout=60)
    return code, orjson.loads(body)


def test_full_state_folder_pauses_consumption_and_resumes_without_loss(
        tmp_path, kafka_endpoint, kafka_group, demo_recording, driftwatch_daemon,
        service_config_factory):
    from driftwatch.testing.kafka import create_topic

    bootstrap = kafka_endpoint.bootstrap
    preds, outs = gz_lines(demo_recording["predictions"]), gz_lines(demo_recording["outcomes"])
    preds, outs = preds[: len(preds) * 3 // 5], outs[: len(outs) * 3 // 5]  # ~12 windows
    suffix = np.random.default_rng().integers(1 << 30)
    topics = {"predictions": create_topic(bootstrap, f"dw-disk-p-{suffix}"),
              "outcomes": create_topic(bootstrap, f"dw-disk-o-{suffix}")}
    half_p, half_o = len(preds) // 2, len(outs) // 2
    produce(bootstrap, topics["predictions"], preds[:half_p])
    produce(bootstrap, topics["outcomes"], outs[:half_o])

    work, ref = tmp_path / "full", tmp_path / "reference"
    work.mkdir()
    ref.mkdir()
    cfg = _config(work, bootstrap, topics, kafka_group("disk"), demo_recording,
                  service_config_factory)
    with small_fs(work / "state", size="48m") as fs:
        d = driftwatch_daemon(cfg, fs.root, prefix=fs.prefix, reader=fs.read_bytes,
                              log_dir=work)
        # beside it, an uninterrupted daemon reads the same topics: what to compare with
        r = driftwatch_daemon(_config(ref, bootstrap, topics, kafka_group("disk-ref"),
                                      demo_recording, service_config_factory), ref / "state")
        d.wait_ready(timeout=180)  # a loaded machine starts Python slowly
        d.wait_for("the first half counted",
                   lambda: _counted(d)[:2] == (half_p, half_o), timeout=120)
        assert _ready(d)[0] == 200
        assert _metric(d, "driftwatch_state_writable") == 1.0

        fs.fill()
        # a daemon at rest may need no new blocks (the outbox reuses its SQLite pages):
        # new events make it write timeline lines and new checkpoint segments
        produce(bootstrap, topics["predictions"], preds[half_p:])
        produce(bootstrap, topics["outcomes"], outs[half_o:])
        _, why = d.wait_for("/readyz to fail", lambda: (r := _ready(d))[0] == 503 and r,
                            timeout=60)
        assert why["state_writable"] is False, why
        assert "state folder full" in why["state_reason"], why
        assert _metric(d, "driftwatch_state_writable") == 0.0
        paused_at, commits = _counted(d), _commits(d)
        failures = _metric(d, "driftwatch_state_write_failures_total", reason="full")
        # two more refused retries (2 s apart at most), and nothing read or committed
        d.wait_for("failed retries", lambda: _metric(
            d, "driftwatch_state_write_failures_total", reason="full") >= failures + 2,
            timeout=60)
        assert _counted(d) == paused_at
        assert _commits(d) == commits
        assert d.proc.poll() is None
        assert d.log().count("consumption paused") == 1  # once per change, not per retry

        fs.free()
        d.wait_for("/readyz to pass", lambda: _ready(d)[0] == 200, timeout=60)
        d.wait_for("every message counted",
                   lambda: _counted(d)[:2] == (len(preds), len(outs)), timeout=120)
        assert _metric(d, "driftwatch_state_writable") == 1.0
        assert _commits(d) > commits
        final = _counted(d)
        assert d.terminate() == 0
        assert d.log().count("state folder writable again") == 1
        view = _view(fs.read_bytes(fs.root / "out" / MODEL / "timeline.jsonl"))

    r.wait_ready(timeout=180)
    r.wait_for("every message counted",
               lambda: _counted(r)[:2] == (len(preds), len(outs)), timeout=120)
    expected = _counted(r)
    assert r.terminate() == 0
    assert final == expected  # predictions, outcomes and joins: each exactly once
    assert view == _view((ref / "state" / "out" / MODEL / "timeline.jsonl").read_bytes())
    assert len(view) > 5
