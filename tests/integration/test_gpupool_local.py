"""The local GPU pool backend with real subprocesses.

Each job is ``sys.executable -c JOB``: it records what it saw (start time, pid,
CUDA_VISIBLE_DEVICES, checkpoint dir) in a file, then waits until the test releases it, so
the order of events is decided by the test, not by timing. GPUs are logical ids (10 of
them, 20 % reserved → ids 8 and 9): no GPU is needed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from driftwatch.clock import Clock, ManualClock, SystemClock
from driftwatch.gpupool import GpuPool, JobSpec, JobState

pytestmark = pytest.mark.integration

JOB = r"""
import json, os, signal, subprocess, sys, time
out, name = os.environ["OUT"], os.environ["NAME"]
mode, attempt = os.environ.get("MODE", ""), os.environ["DRIFTWATCH_ATTEMPT"]
ckpt = os.environ["DRIFTWATCH_CHECKPOINT_DIR"]
state = os.path.join(ckpt, "state.json")

def write(kind, data):
    path = os.path.join(out, f"{name}.{attempt}.{kind}")
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.replace(path + ".tmp", path)

def checkpoint_and_exit(signum, frame):
    with open(state, "w") as f:
        json.dump({"step": 7}, f)
    sys.exit(143)

if "ignore_term" in mode:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "checkpoint_on_term" in mode:
    signal.signal(signal.SIGTERM, checkpoint_and_exit)
record = {
    "start": time.time(), "pid": os.getpid(), "pgid": os.getpgid(0), "ckpt": ckpt,
    "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "resumed_from": json.load(open(state)) if os.path.exists(state) else None,
}
if "grandchild" in mode:
    record["grandchild"] = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"]).pid
write("start", record)
go, give_up = os.path.join(out, name + ".go"), time.time() + 120
while not os.path.exists(go) and time.time() < give_up:
    time.sleep(0.02)
write("end", {"end": time.time()})
"""


def gone(pid: int) -> bool:
    """No such process, or only its zombie left."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


class Harness:
    def __init__(self, root: Path) -> None:
        self.out = root / "out"
        self.out.mkdir()
        self.state = root / "state"
        self.pools: list[GpuPool] = []

    def pool(self, clock: Clock | None = None, **kw: Any) -> GpuPool:
        kw.setdefault("gpus", 10)
        kw.setdefault("kill_grace_s", 1.0)
        pool = GpuPool(self.state, clock=clock or SystemClock(), **kw)
        self.pools.append(pool)
        return pool

    def spec(self, name: str, severity: str = "severe", mode: str = "", **kw: Any) -> JobSpec:
        env = {"OUT": str(self.out), "NAME": name, "MODE": mode}
        return JobSpec(name, [sys.executable, "-c", JOB], env=env, severity=severity, **kw)

    def seen(self, name: str, kind: str = "start", attempt: int = 1) -> dict[str, Any] | None:
        path = self.out / f"{name}.{attempt}.{kind}"
        return json.loads(path.read_text()) if path.exists() else None

    def release(self, name: str) -> None:
        (self.out / f"{name}.go").touch()

    def drive(self, pool: GpuPool, until: Callable[[], Any], timeout: float = 60.0) -> None:
        """Poll and dispatch until ``until()`` holds (a bound against hanging, not a check)."""
        give_up = time.monotonic() + timeout
        while not until():
            assert time.monotonic() < give_up, "the pool did not get there"
            pool.poll()
            pool.dispatch()
            time.sleep(0.02)

    def close(self) -> None:
        for pool in self.pools:
            pool.close()
        if not self.state.exists():
            return
        # A fresh pool adopts whatever still runs and kills it at once.
        with GpuPool(self.state, clock=SystemClock(), gpus=10, kill_grace_s=0) as last:
            for record in last.status().jobs:
                last.cancel(record.job_id)
            self.drive(last, lambda: last.status().running == 0, timeout=30)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    yield h
    h.close()


def test_five_jobs_on_two_reserved_gpus_run_two_at_a_time_in_priority_order(harness):
    pool = harness.pool()
    submitted = [("a", "mild"), ("b", "moderate"), ("c", "severe"), ("d", "mild"), ("e", "severe")]
    ids = {name: pool.submit(harness.spec(name, severity)) for name, severity in submitted}
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("c") and harness.seen("e"))
    assert not any(harness.seen(n) for n in "abd")
    for release, next_up, still_waiting in [("c", "b", "ad"), ("e", "a", "d"), ("b", "d", "")]:
        harness.release(release)
        harness.drive(pool, lambda n=next_up: harness.seen(n))
        assert pool.get(ids[release]).state is JobState.SUCCEEDED
        assert not any(harness.seen(n) for n in still_waiting)
        assert pool.status().in_use == 2
    harness.release("a")
    harness.release("d")
    harness.drive(pool, lambda: all(pool.get(i).state.is_final for i in ids.values()))

    assert all(pool.get(i).state is JobState.SUCCEEDED for i in ids.values())
    runs = {n: {**harness.seen(n), **harness.seen(n, "end")} for n in "abcde"}
    by_start = sorted(runs, key=lambda n: runs[n]["start"])
    assert set(by_start[:2]) == {"c", "e"} and by_start[2:] == ["b", "a", "d"]
    assert {run["cuda"] for run in runs.values()} == {"8", "9"}  # one reserved GPU each
    for n, run in runs.items():
        running_then = [m for m in runs if runs[m]["start"] <= run["start"] < runs[m]["end"]]
        assert len(running_then) <= 2  # never more than two at once
        overlapping = [
            m
            for m in runs
            if m != n and runs[m]["start"] < run["end"] and run["start"] < runs[m]["end"]
        ]
        assert all(runs[m]["cuda"] != run["cuda"] for m in overlapping)  # distinct GPUs
    assert pool.status().in_use == 0


def test_a_killed_job_frees_its_gpu_and_fails_when_no_retry_is_left(harness):
    pool = harness.pool(reserve_fraction=0.1)  # one GPU: "9"
    victim = pool.submit(harness.spec("victim", "severe", retries=0))
    waiter = pool.submit(harness.spec("waiter", "mild"))
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("victim"))
    os.kill(harness.seen("victim")["pid"], signal.SIGKILL)
    harness.drive(pool, lambda: harness.seen("waiter"))
    record = pool.get(victim)
    assert (record.state, record.exit_code, record.lease) == (JobState.FAILED, -9, ())
    assert "SIGKILL" in record.message
    assert harness.seen("waiter")["cuda"] == "9"
    harness.release("waiter")
    assert pool.wait(waiter, timeout=60).state is JobState.SUCCEEDED


def test_a_killed_job_is_retried_with_the_same_checkpoint_dir(harness):
    pool = harness.pool()
    job = pool.submit(harness.spec("flaky", retries=1))
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("flaky"))
    first = harness.seen("flaky")
    Path(first["ckpt"], "state.json").write_text('{"step": 3}')  # progress so far
    os.kill(first["pid"], signal.SIGKILL)
    harness.drive(pool, lambda: harness.seen("flaky", attempt=2))
    second = harness.seen("flaky", attempt=2)
    assert second["ckpt"] == first["ckpt"] and second["resumed_from"] == {"step": 3}
    assert pool.get(job).failures == 1
    harness.release("flaky")
    record = pool.wait(job, timeout=60)
    assert (record.state, record.attempts) == (JobState.SUCCEEDED, 2)


def test_a_preempted_job_checkpoints_and_resumes_after_the_severe_one(harness):
    pool = harness.pool(reserve_fraction=0.1)
    mild = pool.submit(harness.spec("mild", "mild", mode="checkpoint_on_term", preemptible=True))
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("mild"))
    severe = pool.submit(harness.spec("severe", "severe"))
    harness.drive(pool, lambda: harness.seen("severe"))
    assert pool.get(mild).state is JobState.QUEUED and pool.get(mild).preemptions == 1
    harness.release("severe")
    harness.drive(pool, lambda: harness.seen("mild", attempt=2))
    resumed = harness.seen("mild", attempt=2)
    assert resumed["resumed_from"] == {"step": 7}
    assert resumed["ckpt"] == harness.seen("mild")["ckpt"]
    harness.release("mild")
    assert pool.wait(mild, timeout=60).state is JobState.SUCCEEDED
    assert pool.get(severe).state is JobState.SUCCEEDED and pool.get(mild).failures == 0


def test_the_queue_survives_a_restart_of_the_pool(harness):
    first = harness.pool()
    x, y, z = (first.submit(harness.spec(n, retries=1)) for n in "xyz")
    first.dispatch()
    harness.drive(first, lambda: harness.seen("x") and harness.seen("y"))
    first.close()
    os.killpg(harness.seen("x")["pgid"], signal.SIGKILL)  # x dies while no pool watches
    # no pool watches: wait for the kill without polling the closed one (its store is shut)
    pid, give_up = harness.seen("x")["pid"], time.monotonic() + 30
    while not gone(pid):
        assert time.monotonic() < give_up, "x outlived its SIGKILL"
        time.sleep(0.02)

    second = harness.pool()
    assert second.get(y).state is JobState.RUNNING  # adopted, still on its GPU
    assert second.get(z).state is JobState.QUEUED
    harness.drive(second, lambda: harness.seen("x", attempt=2) or harness.seen("z"))
    # x's GPU went back to the queue: x (severe, older) restarts before z
    assert harness.seen("x", attempt=2) and not harness.seen("z")
    assert second.get(x).failures == 1
    for name in "xyz":
        harness.release(name)
    for job in (x, y, z):
        assert second.wait(job, timeout=60).state is JobState.SUCCEEDED
    assert second.get(y).exit_code == 0  # learnt from the exit-status file


def test_the_time_limit_kills_the_whole_process_tree(harness):
    clock = ManualClock(1_000.0)
    pool = harness.pool(clock=clock)
    job = pool.submit(harness.spec("slow", mode="grandchild", time_limit_s=60, retries=2))
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("slow"))
    clock.advance(61)
    harness.drive(pool, lambda: pool.get(job).state.is_final)
    record = pool.get(job)
    assert (record.state, record.attempts, record.exit_code) == (JobState.TIMED_OUT, 1, -15)
    seen = harness.seen("slow")
    assert gone(seen["pid"])
    harness.drive(pool, lambda: gone(seen["grandchild"]), timeout=30)
    assert pool.status().in_use == 0


def test_a_job_ignoring_sigterm_is_killed_after_the_grace_period(harness):
    clock = ManualClock(1_000.0)
    pool = harness.pool(clock=clock, kill_grace_s=30)
    job = pool.submit(harness.spec("stubborn", mode="ignore_term", time_limit_s=60))
    pool.dispatch()
    harness.drive(pool, lambda: harness.seen("stubborn"))
    clock.advance(61)
    for _ in range(10):  # SIGTERM sent and ignored: it keeps running and keeps its GPU
        pool.poll()
        time.sleep(0.02)
    assert pool.get(job).state is JobState.RUNNING and pool.status().in_use == 1
    clock.advance(30)
    harness.drive(pool, lambda: pool.get(job).state.is_final)
    assert (pool.get(job).state, pool.get(job).exit_code) == (JobState.TIMED_OUT, -9)
    assert gone(harness.seen("stubborn")["pid"])
