"""The Ray GPU pool backend against a real local Ray head with 10 logical GPUs.

The test starts its own head (``ray.init(address="local")``, dashboard and job server on
loopback) and shuts it down afterwards. Jobs record what they saw and wait until the test
releases them, so the order of events does not depend on timing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from driftwatch.clock import SystemClock
from driftwatch.gpupool import GpuPool, JobSpec, JobState, create_backend
from driftwatch.gpupool.ray import POOL_RESOURCE, pool_resources

if os.environ.get("CI") == "true":
    import ray  # under CI a missing Ray is a failure, never a skip
else:
    ray = pytest.importorskip("ray")

pytestmark = pytest.mark.integration

JOB = r"""
import json, os, time
out, name = os.environ["OUT"], os.environ["NAME"]
path = os.path.join(out, name + ".start")
with open(path + ".tmp", "w") as f:
    json.dump({"cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
               "ckpt": os.environ["DRIFTWATCH_CHECKPOINT_DIR"]}, f)
os.replace(path + ".tmp", path)
go, give_up = os.path.join(out, name + ".go"), time.time() + 120
while not os.path.exists(go) and time.time() < give_up:
    time.sleep(0.05)
print("job", name, "done")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    temp = tempfile.mkdtemp(prefix="dwray")  # short: Ray puts unix sockets in it
    context = ray.init(
        address="local",
        num_cpus=2,
        num_gpus=10,
        resources=pool_resources(10, 0.2),
        include_dashboard=True,
        dashboard_host="127.0.0.1",
        dashboard_port=free_port(),
        _temp_dir=temp,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield f"http://{context.dashboard_url}"
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def drive(pool: GpuPool, until: Any, timeout: float = 90.0) -> None:
    give_up = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < give_up, "the pool did not get there"
        pool.poll()
        pool.dispatch()
        time.sleep(0.1)


@pytest.mark.timeout(240)
def test_ray_jobs_beyond_the_reserved_gpus_wait_for_a_free_one(ray_address, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    backend = create_backend("ray", address=ray_address, resource=POOL_RESOURCE)
    pool = GpuPool(tmp_path / "state", clock=SystemClock(), backend=backend, gpus=10)

    def seen(name: str) -> dict[str, Any] | None:
        path = out / f"{name}.start"
        return json.loads(path.read_text()) if path.exists() else None

    def spec(name: str) -> JobSpec:
        env = {"OUT": str(out), "NAME": name}
        return JobSpec(name, [sys.executable, "-c", JOB], env=env, time_limit_s=300)

    try:
        a, b, c = (pool.submit(spec(n)) for n in "abc")
        assert pool.dispatch() == [a, b]
        status = pool.status()
        assert (status.reserved, status.running, status.queued, status.in_use) == (2, 2, 1, 2)
        drive(pool, lambda: seen("a") and seen("b"))
        pool.dispatch()
        assert pool.get(c).state is JobState.QUEUED and not seen("c")
        from ray.job_submission import JobSubmissionClient

        submitted = JobSubmissionClient(ray_address).list_jobs()
        ours = [j for j in submitted if (j.submission_id or "").startswith("driftwatch-")]
        assert len(ours) == 2  # Ray was never asked for more than the reserved share

        assert pool.cancel(a).state is JobState.RUNNING  # stopping
        drive(pool, lambda: seen("c"))
        assert pool.get(a).state is JobState.CANCELLED
        for name in "bc":
            (out / f"{name}.go").touch()
        drive(pool, lambda: pool.get(b).state.is_final and pool.get(c).state.is_final)
        for job in (b, c):
            record = pool.get(job)
            assert (record.state, record.exit_code) == (JobState.SUCCEEDED, 0)
            assert "done" in Path(record.log_path).read_text()
        assert all(len(seen(n)["cuda"].split(",")) == 1 for n in "abc")  # one GPU each
        assert pool.status().in_use == 0
    finally:
        for record in pool.status().jobs:
            pool.cancel(record.job_id)
        drive(pool, lambda: pool.status().running == 0, timeout=60)
        pool.close()
