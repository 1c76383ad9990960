"""SIGKILL ``driftwatch run`` while it consumes from a real Kafka broker; lose nothing.

The demo recording is produced into a predictions topic and an outcomes topic. One daemon
consumes it without interruption (the reference). Another is killed with SIGKILL at
several seeded random points and restarted each time; it resumes from its last checkpoint
and the offsets in it (committed offsets may lag: the checkpoint wins). At the end every
prediction and every outcome is counted exactly once, and the windows are the reference's.

Only what the predictions topic decides is compared window by window (bounds, counts,
per-feature sketches): how outcomes from the other topic interleave with predictions
depends on fetch timing, in the reference run as much as in the crashed one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from driftwatch.testing.recording import gz_lines, kafka_connector, produce

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
SEED = 20_240_229
KILLS = 3


def predictions_view(state: Path) -> list[tuple]:
    """What the predictions decide about each window: bounds, counts, feature sketches."""
    out = []
    for line in (state / "out" / MODEL / "timeline.jsonl").read_bytes().splitlines():
        if line.strip():
            r = orjson.loads(line)
            out.append((r["window_id"], r["first_index"], r["last_index"], r["n_events"],
                        r["n_bad"], orjson.dumps(r["features"], option=orjson.OPT_SORT_KEYS)))
    return out


def counted(daemon) -> tuple[int, int, int]:
    (m,) = daemon.status()["models"]
    return m["events"], m["outcomes"], m["labels"].get("joined", 0)


@pytest.fixture(scope="module")
def topics(kafka_endpoint, demo_recording):
    from driftwatch.testing.kafka import create_topic

    preds = gz_lines(demo_recording["predictions"])
    outs = gz_lines(demo_recording["outcomes"])
    suffix = np.random.default_rng(SEED).integers(1 << 30)
    names = {"predictions": create_topic(kafka_endpoint.bootstrap, f"dw-crash-p-{suffix}"),
             "outcomes": create_topic(kafka_endpoint.bootstrap, f"dw-crash-o-{suffix}")}
    produce(kafka_endpoint.bootstrap, names["predictions"], preds)
    produce(kafka_endpoint.bootstrap, names["outcomes"], outs)
    return names, len(preds), len(outs)


def _config(tmp: Path, bootstrap: str, topics: dict[str, str], group: str, demo, factory):
    conn = kafka_connector(tmp / "kafka.yaml", bootstrap, topics, group, name="crash-test")
    return factory(tmp / "svc.yaml", conn, demo["policy"], reference=demo["reference"],
                   batch_size=250)


def _run_to_the_end(daemon, n_pred: int, n_out: int) -> tuple[int, int, int]:
    daemon.wait_ready()
    daemon.wait_for("every message counted",
                    lambda: counted(daemon)[:2] == (n_pred, n_out) and counted(daemon),
                    timeout=180)
    got = counted(daemon)
    assert daemon.terminate() == 0
    return got


def test_sigkill_at_random_points_counts_every_event_exactly_once(
        tmp_path, kafka_endpoint, kafka_group, topics, demo_recording, driftwatch_daemon,
        service_config_factory):
    names, n_pred, n_out = topics
    bootstrap = kafka_endpoint.bootstrap

    ref_dir = tmp_path / "reference"
    ref_dir.mkdir()
    ref_cfg = _config(ref_dir, bootstrap, names, kafka_group("ref"), demo_recording,
                      service_config_factory)
    reference = _run_to_the_end(driftwatch_daemon(ref_cfg, ref_dir / "state"), n_pred, n_out)
    expected = predictions_view(ref_dir / "state")
    assert reference[:2] == (n_pred, n_out) and len(expected) > 5

    crash_dir = tmp_path / "crashed"
    crash_dir.mkdir()
    cfg = _config(crash_dir, bootstrap, names, kafka_group("crash"), demo_recording,
                  service_config_factory)
    state = crash_dir / "state"
    rng = np.random.default_rng(SEED)
    points = np.sort(rng.uniform(0.1, 0.8, KILLS)) * (n_pred + n_out)
    seen, restored = [], 0
    for point in points:
        d = driftwatch_daemon(cfg, state)
        d.wait_ready()
        d.wait_for(f"{int(point)} messages counted", lambda d=d, p=point: sum(counted(d)[:2]) >= p,
                   timeout=180)
        seen.append(sum(counted(d)[:2]))
        d.kill()
        restored += "restored checkpoint" in d.log()
    # killed mid-stream each time (a restart goes back to its checkpoint, not to zero)
    assert all(p <= c < n_pred + n_out for p, c in zip(points, seen, strict=True)), seen
    assert restored >= 1, "a restart should have resumed from a checkpoint"

    last = driftwatch_daemon(cfg, state)
    final = _run_to_the_end(last, n_pred, n_out)
    assert "restored checkpoint" in last.log()
    assert final == reference  # predictions, outcomes and joins: each once
    assert predictions_view(state) == expected
