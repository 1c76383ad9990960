"""The Ray GPU pool backend on a real two-node Ray cluster: Ray enforces the reserved share.

The cluster (``driftwatch.testing.ray_cluster``) is two ``ray start`` processes on loopback:
a head with 8 logical GPUs anyone may use, and a reserved node whose 2 GPUs Ray knows only
as ``driftwatch_reserved_gpu``. Two daemons' pools (their Ray backends built from a
``driftwatch.yaml``) and someone else's jobs and task share it. Jobs record what they saw
and wait until the test releases them, so the order of events does not depend on timing.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from driftwatch.cli import main
from driftwatch.clock import SystemClock
from driftwatch.gpupool import GpuPool, JobSpec, JobState, create_backend
from driftwatch.service.config import load_service_config
from driftwatch.testing.ray_cluster import RayCluster, ray_cluster

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
               "namespace": os.environ.get("DRIFTWATCH_RAY_NAMESPACE")}, f)
os.replace(path + ".tmp", path)
go, give_up = os.path.join(out, name + ".go"), time.time() + 150
while not os.path.exists(go) and time.time() < give_up:
    time.sleep(0.05)
print("job", name, "done")
"""

#: Someone else's driver: one Ray task that asks for a plain GPU, and says where it ran.
FOREIGN_TASK = r"""
import json, os, ray
ray.init()

@ray.remote(num_gpus=1, num_cpus=0)
def foreign_gpu_task(out):
    node = ray.get_runtime_context().get_node_id()
    with open(os.path.join(out, "task.tmp"), "w") as f:
        json.dump({"node": node, "cuda": os.environ.get("CUDA_VISIBLE_DEVICES")}, f)
    os.replace(os.path.join(out, "task.tmp"), os.path.join(out, "task.start"))
    return node

print("task ran on", ray.get(foreign_gpu_task.remote(os.environ["OUT"])))
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    with ray_cluster(reserved_gpus=2, head_gpus=8) as c:
        yield c


def until(condition: Callable[[], Any], *, tick: Callable[[], None] = lambda: None,
          timeout: float = 90.0) -> Any:
    give_up = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < give_up, "the cluster did not get there"
        tick()
        time.sleep(0.2)
    return value


@pytest.mark.timeout(300)
def test_ray_keeps_the_reserved_gpus_for_retraining(
    cluster: RayCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(cluster.address)
    out = tmp_path / "out"
    out.mkdir()

    def seen(name: str) -> dict[str, Any] | None:
        path = out / f"{name}.start"
        return json.loads(path.read_text()) if path.exists() else None

    def release(name: str) -> None:
        (out / f"{name}.go").touch()

    def ray_job(sid: str) -> Any:
        return client.get_job_info(sid)

    def node_of(sid: str) -> str:
        return str(until(lambda: ray_job(sid).driver_node_id))

    def foreign(name: str, script: str, gpus: int = 0) -> str:
        """Someone else's job on the cluster: it asks Ray for plain GPUs."""
        return str(client.submit_job(
            entrypoint=shlex.join([sys.executable, "-c", script]),
            submission_id=f"foreign-{name}-{uuid.uuid4().hex[:6]}",
            runtime_env={"env_vars": {"OUT": str(out), "NAME": name}},
            entrypoint_num_gpus=gpus))

    def task_state() -> str | None:
        from ray.util.state import list_tasks

        tasks = list_tasks(address=cluster.address,
                           filters=[("name", "=", "foreign_gpu_task")])
        return str(tasks[-1].state) if tasks else None

    def pool(name: str) -> GpuPool:
        """A daemon's pool, its Ray backend built from a driftwatch.yaml as the daemon does."""
        (tmp_path / f"{name}.yaml").write_text(
            "models: [{connector: c.yaml, policy: p.yaml}]\n"
            f"pool:\n  backend: ray\n  gpus: 10\n  ray:\n    address: {cluster.address}\n"
            f"    namespace: {name}\n    resource: {cluster.resource}\n"
            f"    runtime_env: {{env_vars: {{OUT: '{out}'}}}}\n")
        cfg = load_service_config(tmp_path / f"{name}.yaml").pool
        backend = create_backend(cfg.backend, **cfg.backend_options())
        return GpuPool(tmp_path / f"state-{name}" / "pool", clock=SystemClock(),
                       backend=backend, gpus=cfg.gpus, reserve_fraction=cfg.reserve_fraction)

    def spec(name: str) -> JobSpec:
        env = {"NAME": name}  # OUT comes from the configured runtime_env
        return JobSpec(name, [sys.executable, "-c", JOB], env=env, time_limit_s=300)

    def drive(*pools: GpuPool) -> Callable[[], None]:
        def tick() -> None:
            for p in pools:
                p.poll()
                p.dispatch()
        return tick

    def sid_of(p: GpuPool, job_id: str) -> str:
        return str(p.get(job_id).handle["submission_id"])  # type: ignore[index]

    pool_a, pool_b = pool("a"), pool("b")
    foreign_ids: list[str] = []
    try:
        # Someone takes every plain GPU (the head's 8); their next GPU task has nowhere to go,
        # though the reserved node's 2 GPUs are idle: to Ray that node has no GPU.
        foreign_ids.append(f_all := foreign("f_all", JOB, gpus=cluster.head_gpus))
        until(lambda: seen("f_all"))
        assert node_of(f_all) == cluster.head_node_id
        foreign_ids.append(foreign("f_task", FOREIGN_TASK))
        assert until(task_state) == "PENDING_NODE_ASSIGNMENT"

        # driftwatch's retraining jobs land where the reserved resource is.
        a1, a2 = pool_a.submit(spec("a1")), pool_a.submit(spec("a2"))
        assert pool_a.dispatch() == [a1, a2]
        until(lambda: seen("a1") and seen("a2"), tick=drive(pool_a))
        assert {node_of(sid_of(pool_a, j)) for j in (a1, a2)} == {cluster.reserved_node_id}
        assert sorted(seen(n)["cuda"] for n in ("a1", "a2")) == ["0", "1"]  # type: ignore[index]
        assert seen("a1")["namespace"] == "a"  # type: ignore[index]
        assert task_state() == "PENDING_NODE_ASSIGNMENT" and not seen("task")

        # Another daemon's count says it has 2 free GPUs; Ray makes its job wait.
        b1 = pool_b.submit(spec("b1"))
        assert pool_b.dispatch() == [b1]
        assert ray_job(sid_of(pool_b, b1)).status.value == "PENDING" and not seen("b1")

        # `driftwatch pool status` shows Ray's view next to the leases, from a relative folder.
        monkeypatch.chdir(tmp_path)
        (tmp_path / "svc.yaml").write_text(
            "models: [{connector: c.yaml, policy: p.yaml}]\nstate_dir: elsewhere\n"
            f"pool:\n  backend: ray\n  gpus: 10\n  ray:\n    address: {cluster.address}\n"
            "    namespace: a\n")
        status_argv = ["pool", "status", "--config", "svc.yaml", "--state-dir", "state-a"]

        def ray_used() -> bool:
            capsys.readouterr()
            assert main([*status_argv, "--json"]) == 0
            doc = json.loads(capsys.readouterr().out)
            return doc["ray"]["reserved"]["used"] == 2 and doc  # type: ignore[return-value]

        doc: Any = until(ray_used)
        assert (doc["running"], doc["reserved"], sorted(doc["leases"])) == (2, 2, [a1, a2])
        assert doc["ray"]["reserved"]["total"] == 2
        assert doc["ray"]["reserved"]["nodes"] == [cluster.reserved_node_id]
        assert {j["node_id"] for j in doc["ray"]["jobs"]} == {cluster.reserved_node_id}
        assert len(doc["ray"]["jobs"]) == 2 and doc["ray"]["other_jobs"] == 3
        assert doc["ray"]["problems"] == []
        assert main(status_argv) == 0
        text = capsys.readouterr().out
        assert "reserved driftwatch_reserved_gpu: 2 of 2 in use" in text
        assert "2 running, 0 queued" in text

        # When one retraining job ends, the waiting one runs, on the reserved node.
        release("a1")
        until(lambda: pool_a.get(a1).state.is_final, tick=drive(pool_a, pool_b))
        until(lambda: seen("b1"), tick=drive(pool_a, pool_b))
        assert node_of(sid_of(pool_b, b1)) == cluster.reserved_node_id
        assert task_state() == "PENDING_NODE_ASSIGNMENT" and not seen("task")

        # The foreign GPU task runs once a plain GPU is free: on the head, never the reserved one.
        release("f_all")
        assert until(lambda: seen("task"))["node"] == cluster.head_node_id

        for name in ("a2", "b1"):
            release(name)
        until(lambda: pool_a.get(a2).state.is_final and pool_b.get(b1).state.is_final,
              tick=drive(pool_a, pool_b))
        for p, job in ((pool_a, a1), (pool_a, a2), (pool_b, b1)):
            record = p.get(job)
            assert (record.state, record.exit_code) == (JobState.SUCCEEDED, 0)
            assert "done" in Path(record.log_path or "").read_text()
    finally:
        for name in ("a1", "a2", "b1", "f_all"):
            release(name)
        for sid in foreign_ids:
            client.stop_job(sid)
        for p in (pool_a, pool_b):
            for record in p.status().jobs:
                p.cancel(record.job_id)
        until(lambda: pool_a.status().running == 0 and pool_b.status().running == 0,
              tick=drive(pool_a, pool_b), timeout=60)
        pool_a.close()
        pool_b.close()


def test_pool_status_says_when_ray_cannot_be_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.yaml").write_text(
        "models: [{connector: c.yaml, policy: p.yaml}]\n"
        f"pool:\n  backend: ray\n  gpus: 10\n  ray: {{address: 'http://127.0.0.1:{port}'}}\n")
    assert main(["pool", "status", "--config", "svc.yaml"]) == 1
    captured = capsys.readouterr()
    assert "2 reserved" in captured.out  # driftwatch's own part still prints
    assert captured.err.startswith(f"error: Ray dashboard at http://127.0.0.1:{port}/")
