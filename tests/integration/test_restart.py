"""Restarts lose nothing and count nothing twice.

Each test runs the demo recording through ``driftwatch run`` once without interruption
(the reference), then again with a stop in the middle, and compares the window timelines
and the outbox: the windows after a restart continue where they stopped, so the two runs
give the same windows with the same counts, and every decision is recorded once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from driftwatch.state import CheckpointStore

pytestmark = pytest.mark.integration

MODEL = "credit-risk"


# The same micro-batch size in every run: outcomes joined within a poll are credited to the
# pane being filled at the end of that poll, so polls must be cut the same way.
BATCH = 200


def timeline(state: Path) -> list[dict]:
    path = state / "out" / MODEL / "timeline.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]  # not a line the daemon is still writing
    return [orjson.loads(line) for line in lines if line.strip()]


def same_windows(got: list[dict], expected: list[dict]) -> None:
    """Equal timelines; on a difference, say where first (not 100 kB of JSON)."""
    brief = [(r["window_id"], r["n_events"], r["n_labelled"], r["tier"]) for r in got]
    want = [(r["window_id"], r["n_events"], r["n_labelled"], r["tier"]) for r in expected]
    assert brief == want
    for a, b in zip(got, expected, strict=True):
        assert a == b, f"window {b['window_id']} differs"


def decision_keys(state: Path) -> list[str]:
    db = sqlite3.connect(state / "models" / MODEL / "outbox.sqlite3")
    try:
        return [k for (k,) in db.execute("SELECT key FROM actions ORDER BY id")]
    finally:
        db.close()


def checkpoints(state: Path) -> int:
    seqs = CheckpointStore.manifest_seqs(state / "checkpoints")
    return seqs[0] if seqs else 0


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, demo_recording, driftwatch_daemon_module,
                  service_config_factory):
    """The uninterrupted run: timeline and decisions to compare against."""
    tmp = tmp_path_factory.mktemp("reference")
    cfg = service_config_factory(tmp / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"], batch_size=BATCH)
    d = driftwatch_daemon_module(cfg, tmp / "state", "--exit-when-done")
    assert d.wait_exit(120) == 0, d.log()[-3000:]
    records = timeline(tmp / "state")
    assert len(records) > 5
    return records, decision_keys(tmp / "state")


def _config(tmp_path, demo_recording, service_config_factory, speed):
    return service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                  demo_recording["policy"],
                                  reference=demo_recording["reference"], speed=speed,
                                  batch_size=BATCH)


# A paced run takes about 8 s for the 140-day recording, so the stop lands mid-stream.
SPEED = 140 * 86400 / 8


def test_sigterm_then_restart_continues_the_windows(tmp_path, demo_recording, reference_run,
                                                    driftwatch_daemon, service_config_factory):
    expected, expected_keys = reference_run
    cfg = _config(tmp_path, demo_recording, service_config_factory, SPEED)
    state = tmp_path / "state"
    first = driftwatch_daemon(cfg, state)
    first.wait_ready()
    first.wait_for("a few windows", lambda: len(timeline(state)) >= 3)
    assert first.terminate() == 0  # finish the batch, checkpoint, commit, exit 0
    stopped_at = timeline(state)
    assert 3 <= len(stopped_at) < len(expected), "the stop should land mid-stream"
    assert "checkpointing" in first.log()

    second = driftwatch_daemon(cfg, state, "--speed", "0", "--exit-when-done")
    assert second.wait_exit(120) == 0, second.log()[-3000:]
    got = timeline(state)
    assert got[: len(stopped_at)] == stopped_at  # nothing rewritten
    same_windows(got, expected)  # same windows, same counts, same decisions
    keys = decision_keys(state)
    assert keys == expected_keys and len(keys) == len(set(keys))


def test_sigkill_restores_the_last_checkpoint_and_counts_nothing_twice(
        tmp_path, demo_recording, reference_run, driftwatch_daemon, service_config_factory):
    expected, expected_keys = reference_run
    cfg = _config(tmp_path, demo_recording, service_config_factory, SPEED)
    state = tmp_path / "state"
    first = driftwatch_daemon(cfg, state)
    first.wait_ready()
    first.wait_for("a checkpoint after some windows",
                   lambda: len(timeline(state)) >= 4 and checkpoints(state) >= 2)
    first.kill()  # no chance to checkpoint: the windows after the last one are lost
    assert len(timeline(state)) < len(expected)

    second = driftwatch_daemon(cfg, state, "--speed", "0", "--exit-when-done")
    assert second.wait_exit(120) == 0, second.log()[-3000:]
    assert "restored checkpoint" in second.log()
    got = timeline(state)
    assert [r["window_id"] for r in got] == list(range(len(got)))  # no window twice
    same_windows(got, expected)
    assert sum(r["n_events"] for r in got) == sum(r["n_events"] for r in expected)
    keys = decision_keys(state)
    assert keys == expected_keys and len(keys) == len(set(keys))
