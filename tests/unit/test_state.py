"""Checkpoints survive crashes, damaged files fall back, outputs are cut back exactly."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from driftwatch.errors import StateError
from driftwatch.service.checkpoint import CheckpointWriter
from driftwatch.state import CheckpointStore, OutputLog, StateDirLock


def test_a_checkpoint_reads_back_exactly_including_nan_and_infinity(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    state = {"credit": {"positions": {"topic:0": 41}, "moments": [math.nan, math.inf, -1.5],
                        "nested": {"bins": list(range(50))}}}
    info = store.save(state, now=1234.5, meta={"version": "x"})
    assert info.seq == 1 and info.size_bytes > 0
    store.close()
    cp = CheckpointStore(tmp_path / "cp").load()  # a new process would open it afresh
    assert cp is not None and cp.seq == 1 and cp.created == 1234.5 and cp.meta == {"version": "x"}
    assert list(cp.models) == ["credit"]
    got = cp.models["credit"]
    assert got["positions"] == {"topic:0": 41}
    assert math.isnan(got["moments"][0]) and got["moments"][1:] == [math.inf, -1.5]
    assert got["nested"] == state["credit"]["nested"]


def test_only_the_last_checkpoints_are_kept_and_the_newest_wins(tmp_path):
    store = CheckpointStore(tmp_path / "cp", keep=2)
    for i in range(5):
        store.save({"m": {"i": i}}, now=float(i))
    assert CheckpointStore.manifest_seqs(tmp_path / "cp") == [5, 4]
    assert sorted(p.suffix for p in (tmp_path / "cp").iterdir()) == [".json"] * 2 + [".part"] * 2
    assert store.load().models == {"m": {"i": 4}}
    store.save({"m": {"i": 5}}, now=5.0)
    assert store.seq == 6


def _files_of_newest(folder):
    seq = CheckpointStore.manifest_seqs(folder)[0]
    body = (folder / f"cp-{seq:08d}.json").read_bytes().rsplit(b"\n", 2)[0]
    (entry,) = json.loads(body)["models"].values()
    return [folder / entry["part"]["file"]] + [folder / s["file"] for segs in
                                              entry["tables"].values() for s in segs]


def test_a_damaged_newest_checkpoint_falls_back_to_the_one_before(tmp_path):
    store = CheckpointStore(tmp_path / "cp", keep=2)
    store.save({"m": {"i": 1}}, now=1.0)
    store.save({"m": {"i": 2}}, now=2.0)
    part = _files_of_newest(tmp_path / "cp")[0]
    raw = bytearray(part.read_bytes())
    raw[20] ^= 0x01  # one flipped bit
    part.write_bytes(bytes(raw))
    assert store.load().models == {"m": {"i": 1}}
    (tmp_path / "cp" / "cp-00000001.json").write_bytes(b"garbage")
    with pytest.raises(StateError, match="no intact checkpoint"):
        store.load()


def test_a_torn_part_or_an_unrenamed_manifest_is_never_read(tmp_path):
    store = CheckpointStore(tmp_path / "cp", keep=3)
    store.save({"m": {"i": 1, "x": np.arange(1000.0)}}, now=1.0)
    store.save({"m": {"i": 2, "x": np.arange(1000.0)}}, now=2.0)
    part = _files_of_newest(tmp_path / "cp")[0]
    part.write_bytes(part.read_bytes()[:-100])  # cut short, as by a crash mid-write
    (tmp_path / "cp" / "cp-00000003.tmp").write_bytes(b'{"format": 3, "se')  # never renamed
    cp = CheckpointStore(tmp_path / "cp").load()
    assert cp.seq == 1 and cp.models["m"]["i"] == 1


def test_a_file_that_is_not_a_database_is_a_state_error(tmp_path):
    p = tmp_path / "cp.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError, match="not a usable checkpoint database"):
        CheckpointStore(tmp_path / "cp", legacy=p).load()


def test_a_process_killed_while_checkpointing_leaves_a_whole_checkpoint(tmp_path):
    """SIGKILL in the middle of a stream of saves: the file opens, the newest row is whole."""
    script = textwrap.dedent(f"""
        import numpy as np
        from driftwatch.state import CheckpointStore
        from driftwatch.statetree import Appended
        store = CheckpointStore({str(tmp_path / "cp")!r})
        big = list(range(200_000))
        i = 0
        while True:
            rows = Appended("t", 0, i + 1, store.capture("m").durable("t") or 0, {{}})
            rows = Appended("t", 0, i + 1, rows.base,
                            {{"v": np.arange(rows.base, i + 1) * 1e5 + np.zeros((1, 30))}})
            store.save({{"m": {{"i": i, "big": big, "arr": np.arange(1e6) + i, "rows": rows}}}},
                       now=float(i))
            if i == 3:
                print("ready", flush=True)
            i += 1
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    cp = CheckpointStore(tmp_path / "cp").load()
    m = cp.models["m"]
    assert cp is not None and m["i"] == cp.seq - 1
    assert len(m["big"]) == 200_000 and m["arr"][0] == m["i"] and m["arr"].size == 10**6
    assert m["rows"].columns["v"][:, 0].tolist() == [k * 1e5 for k in range(m["i"] + 1)]


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
    store = CheckpointStore(tmp_path / "cp")
    writer = CheckpointWriter(store)
    for name, x in (("a", 1), ("b", float("nan"))):
        assert writer.encode(name, {"x": x})
        writer.wait()
    assert writer.completed() == []  # encoded is not durable
    assert writer.save({"a": {"t:0": 7}, "b": {}}, now=1.0, started=0.0)
    writer.wait()
    (done,) = writer.completed()
    assert done.positions == {"a": {"t:0": 7}, "b": {}} and done.info.seq == 1
    models = CheckpointStore(tmp_path / "cp").load().models
    assert models["a"] == {"x": 1} and math.isnan(models["b"]["x"])
    assert writer.completed() == []  # handed back once
    writer.close()


def test_the_writer_writes_one_job_while_at_most_one_more_waits(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
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
    assert writer.wait_ready(10)  # the save is being written (held at the gate)
    assert writer.busy and writer.ready
    assert writer.encode("m", {"x": 2})  # the next model's capture waits its turn
    assert not writer.ready
    assert not writer.encode("n", {"x": 3})  # refused: one is waiting already
    gate.set()
    writer.wait()
    assert [d.info.seq for d in writer.completed()] == [1]
    assert writer.save({"m": {}}, now=2.0, started=0.0)  # the waiting one was staged
    writer.wait()
    assert [d.info.seq for d in writer.completed()] == [2]
    assert CheckpointStore(tmp_path / "cp").load().models["m"] == {"x": 2}
    writer.close()


def test_a_checkpoint_missing_a_model_is_never_written(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    writer = CheckpointWriter(store)
    writer.encode("a", {"x": 1})
    writer.wait()
    writer.save({"a": {}, "b": {}}, now=1.0, started=0.0)  # b was never encoded
    writer.wait()
    assert writer.completed() == [] and writer.failures == 1
    assert store.load() is None
    writer.close()


def test_a_failed_write_commits_nothing(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    shutil.rmtree(tmp_path / "cp")
    (tmp_path / "cp").write_text("not a folder")  # every save now fails
    writer = CheckpointWriter(store)
    writer.encode("m", {})
    writer.wait()
    writer.save({"m": {"t:0": 9}}, now=1.0, started=0.0)
    writer.wait()
    assert writer.completed() == [] and writer.failures == 2  # the part, then the round
    assert isinstance(writer.error, StateError)
    writer.close()


class _Runtime:
    """What a checkpoint round asks of a model's runtime: its state, then a commit."""

    def __init__(self, name: str, captured: list[str]) -> None:
        self.name, self.source, self._captured = name, None, captured
        self.committed: list[dict[str, int]] = []

    def state(self, capture):
        self._captured.append(self.name)
        return {"positions": {f"{self.name}:0": 5}, "x": np.arange(3.0)}

    def commit(self, positions):
        self.committed.append(dict(positions))
        return "ok", 1


def test_a_round_captures_the_next_model_while_the_one_before_is_written(tmp_path):
    from prometheus_client import CollectorRegistry

    from driftwatch.clock import ManualClock
    from driftwatch.metrics import Metrics
    from driftwatch.service.checkpoint import Checkpoints

    store = CheckpointStore(tmp_path / "cp")
    gate, real_stage = threading.Event(), store.stage
    store.stage = lambda model, state: (gate.wait(10), real_stage(model, state))[1]
    captured: list[str] = []
    runtimes = [_Runtime(n, captured) for n in ("a", "b", "c")]
    cps = Checkpoints(store, runtimes, threading.RLock(), Metrics(CollectorRegistry()),
                      ManualClock())
    cps.due = True
    cps.tick()  # captures a; the writer takes it and waits at the gate
    assert cps.writer.wait_ready(10)
    cps.tick()  # b is captured while a is being written
    cps.tick()  # c is not: b waits its turn
    assert captured == ["a", "b"]
    gate.set()
    for _ in range(50):  # the loop goes on ticking until the round is durable
        cps.writer.wait_ready(10)
        cps.tick()
        if all(rt.committed for rt in runtimes):
            break
        cps.writer.wait(10)
    assert captured == ["a", "b", "c"]
    assert [rt.committed for rt in runtimes] == [[{"a:0": 5}], [{"b:0": 5}], [{"c:0": 5}]]
    assert CheckpointStore(tmp_path / "cp").load().models["c"]["x"].tolist() == [0.0, 1.0, 2.0]
    cps.close()
