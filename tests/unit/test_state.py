"""Checkpoints survive crashes, damaged rows fall back, outputs are cut back exactly."""

from __future__ import annotations

import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

import pytest

from driftwatch.errors import StateError
from driftwatch.service.checkpoint import CheckpointWriter
from driftwatch.state import CheckpointStore, OutputLog, StateDirLock


def test_a_checkpoint_reads_back_exactly_including_nan_and_infinity(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db")
    state = {"credit": {"positions": {"topic:0": 41}, "moments": [math.nan, math.inf, -1.5],
                        "nested": {"bins": list(range(50))}}}
    info = store.save(state, now=1234.5, meta={"version": "x"})
    assert info.seq == 1 and info.size_bytes > 0
    store.close()
    cp = CheckpointStore(tmp_path / "cp.db").load()  # a new process would open it afresh
    assert cp is not None and cp.seq == 1 and cp.created == 1234.5 and cp.meta == {"version": "x"}
    assert list(cp.models) == ["credit"]
    got = cp.models["credit"]
    assert got["positions"] == {"topic:0": 41}
    assert math.isnan(got["moments"][0]) and got["moments"][1:] == [math.inf, -1.5]
    assert got["nested"] == state["credit"]["nested"]


def test_only_the_last_checkpoints_are_kept_and_the_newest_wins(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db", keep=2)
    for i in range(5):
        store.save({"m": {"i": i}}, now=float(i))
    rows = sqlite3.connect(tmp_path / "cp.db").execute(
        "SELECT seq FROM checkpoints ORDER BY seq").fetchall()
    assert rows == [(4,), (5,)]
    assert store.load().models == {"m": {"i": 4}}
    store.save({"m": {"i": 5}}, now=5.0)
    assert store.seq == 6


def test_a_damaged_newest_checkpoint_falls_back_to_the_one_before(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db", keep=2)
    store.save({"m": {"i": 1}}, now=1.0)
    store.save({"m": {"i": 2}}, now=2.0)
    db = sqlite3.connect(tmp_path / "cp.db")
    db.execute("UPDATE parts SET payload = ? WHERE seq = 2", (b"garbage",))
    db.commit()
    assert store.load().models == {"m": {"i": 1}}
    db.execute("UPDATE parts SET payload = ? WHERE seq = 1", (b"garbage",))
    db.commit()
    with pytest.raises(StateError, match="no intact checkpoint"):
        store.load()


def test_a_file_that_is_not_a_database_is_a_state_error(tmp_path):
    p = tmp_path / "cp.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError, match="not a usable checkpoint database"):
        CheckpointStore(p).load()


def test_a_process_killed_while_checkpointing_leaves_a_whole_checkpoint(tmp_path):
    """SIGKILL in the middle of a stream of saves: the file opens, the newest row is whole."""
    script = textwrap.dedent(f"""
        import sys
        from driftwatch.state import CheckpointStore
        store = CheckpointStore({str(tmp_path / "cp.db")!r})
        big = list(range(200_000))
        i = 0
        while True:
            store.save({{"m": {{"i": i, "big": big}}}}, now=float(i))
            if i == 3:
                print("ready", flush=True)
            i += 1
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    cp = CheckpointStore(tmp_path / "cp.db").load()
    assert cp is not None and cp.models["m"]["i"] == cp.seq - 1
    assert len(cp.models["m"]["big"]) == 200_000


def test_output_log_is_cut_back_to_the_checkpointed_length(tmp_path):
    log = OutputLog(tmp_path / "timeline.jsonl")
    log.write(b'{"window": 0}\n')
    durable = log.sync()
    log.write(b'{"window": 1}\n{"window": 2')  # written after the checkpoint, then a crash
    log.close()
    again = OutputLog(tmp_path / "timeline.jsonl")
    again.truncate(durable)
    again.write(b'{"window": 1}\n')
    assert again.sync() == 2 * durable
    again.close()
    assert (tmp_path / "timeline.jsonl").read_bytes() == b'{"window": 0}\n{"window": 1}\n'


def test_output_log_shorter_than_its_checkpoint_is_a_state_error(tmp_path):
    log = OutputLog(tmp_path / "t.jsonl")
    log.write(b"abc\n")
    log.sync()
    with pytest.raises(StateError, match="checkpoint covers 100"):
        log.truncate(100)


def test_one_daemon_per_state_directory(tmp_path):
    with StateDirLock(tmp_path), pytest.raises(StateError, match="in use by another"):
        StateDirLock(tmp_path).acquire()
    with StateDirLock(tmp_path):  # released on exit
        pass


def test_the_writer_makes_a_checkpoint_durable_before_handing_back_its_positions(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db")
    writer = CheckpointWriter(store)
    for name, x in (("a", 1), ("b", float("nan"))):
        assert writer.encode(name, {"x": x})
        writer.wait()
    assert writer.completed() == []  # encoded is not durable
    assert writer.save({"a": {"t:0": 7}, "b": {}}, now=1.0, started=0.0)
    writer.wait()
    (done,) = writer.completed()
    assert done.positions == {"a": {"t:0": 7}, "b": {}} and done.info.seq == 1
    models = CheckpointStore(tmp_path / "cp.db").load().models
    assert models["a"] == {"x": 1} and math.isnan(models["b"]["x"])
    assert writer.completed() == []  # handed back once
    writer.close()


def test_the_writer_takes_one_job_at_a_time(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db")
    gate = threading.Event()
    real_save = store.save

    def slow_save(*a, **kw):
        gate.wait(10)
        return real_save(*a, **kw)

    store.save = slow_save  # type: ignore[method-assign]
    writer = CheckpointWriter(store)
    writer.encode("m", {"x": 1})
    writer.wait()
    assert writer.save({"m": {}}, now=1.0, started=0.0)
    assert writer.busy
    assert not writer.encode("m", {"x": 2})  # refused while in flight
    gate.set()
    writer.wait()
    assert [d.info.seq for d in writer.completed()] == [1]
    writer.close()


def test_a_checkpoint_missing_a_model_is_never_written(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db")
    writer = CheckpointWriter(store)
    writer.encode("a", {"x": 1})
    writer.wait()
    writer.save({"a": {}, "b": {}}, now=1.0, started=0.0)  # b was never encoded
    writer.wait()
    assert writer.completed() == [] and writer.failures == 1
    assert store.load() is None
    writer.close()


def test_a_failed_write_commits_nothing(tmp_path):
    store = CheckpointStore(tmp_path / "cp.db")
    store.close()  # every save now fails
    writer = CheckpointWriter(store)
    writer.encode("m", {})
    writer.wait()
    writer.save({"m": {"t:0": 9}}, now=1.0, started=0.0)
    writer.wait()
    assert writer.completed() == [] and writer.failures == 1
    assert isinstance(writer.error, StateError)
    writer.close()
