"""The pool section of driftwatch.yaml: the Ray settings reach the backend, mistakes are located,
and what the Ray backend asks of Ray (the reserved resource, not GPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from driftwatch.clock import ManualClock
from driftwatch.errors import ConfigError
from driftwatch.gpupool import GpuPool, JobSpec
from driftwatch.gpupool.ray import RayBackend
from driftwatch.gpupool.ray_status import RayView
from driftwatch.service.config import load_service_config, parse_service_config

MINIMAL = "models:\n  - connector: c.yaml\n    policy: p.yaml\n"


def test_ray_settings_reach_the_backend_with_paths_from_the_config_folder(tmp_path: Path):
    (tmp_path / "jobs").mkdir()
    f = tmp_path / "svc.yaml"
    f.write_text(
        MINIMAL
        + "pool:\n  backend: ray\n  gpus: 10\n  ray:\n"
        "    address: https://ray-head.internal:8265\n    namespace: risk-prod\n"
        "    resource: dw_gpu\n    devices: [6, 7]\n    entrypoint_num_cpus: 2\n"
        "    runtime_env:\n      working_dir: jobs\n      pip: [lightgbm==4.3.0]\n"
        "      env_vars: {OMP_NUM_THREADS: '8'}\n"
    )
    options = load_service_config(f).pool.backend_options()
    assert options == {
        "address": "https://ray-head.internal:8265",
        "namespace": "risk-prod",
        "resource": "dw_gpu",
        "devices": ("6", "7"),
        "entrypoint_num_cpus": 2.0,
        "runtime_env": {
            "working_dir": str(tmp_path / "jobs"),
            "pip": ["lightgbm==4.3.0"],
            "env_vars": {"OMP_NUM_THREADS": "8"},
        },
    }


def test_the_local_backend_takes_no_options_and_ray_defaults_to_the_reserved_resource():
    assert parse_service_config(MINIMAL).pool.backend_options() == {}
    ray = parse_service_config(MINIMAL + "pool: {backend: ray}\n").pool.backend_options()
    assert ray["resource"] == "driftwatch_reserved_gpu"
    assert ray["address"] == "http://127.0.0.1:8265" and ray["runtime_env"] == {}


RAY = MINIMAL + "pool:\n  backend: ray\n  gpus: 4\n  ray:\n"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (MINIMAL + "pool: {backend: kubernetes}\n", "svc.yaml:4:17", "`driftwatch pool render`"),
        (RAY + "    address: ray-head:6379\n", "svc.yaml:8:14", "the Ray dashboard's URL"),
        (RAY + "    adress: http://h:8265\n", "svc.yaml:8:5", "unknown key 'adress'"),
        (RAY + "    resource: GPU\n", "svc.yaml:8:15", "custom Ray resource name"),
        (RAY + "    namespace: 'risk prod'\n", "svc.yaml:8:16", "namespace must be"),
        (RAY + "    runtime_env: {conda: env.yaml}\n", "svc.yaml:8:19", "unknown key 'conda'"),
        (RAY + "    runtime_env: {working_dir: /nonexistent/x}\n", "svc.yaml:8:32",
         "working_dir is not a folder"),
        (RAY + "    runtime_env: {env_vars: {DRIFTWATCH_JOB_ID: x}}\n", "svc.yaml:8:29",
         "the pool sets DRIFTWATCH_JOB_ID"),
        (RAY + "    devices: [0, 1]\n", "svc.yaml:8:14", "one device id per reserved GPU (1)"),
        (MINIMAL + "pool:\n  ray: {namespace: x}\n", "svc.yaml:5:3", "only with backend: ray"),
    ],
)
def test_mistakes_in_the_pool_section_say_where_and_what(text: str, where: str, message: str):
    with pytest.raises(ConfigError) as err:
        parse_service_config(text, file="svc.yaml")
    first = str(err.value).splitlines()[0]
    assert first.startswith(where + ":"), first
    assert message in first


class RecordingClient:
    """Stands in for Ray's JobSubmissionClient: records what would be submitted."""

    def __init__(self) -> None:
        self.submitted: list[dict[str, Any]] = []

    def submit_job(self, **options: Any) -> str:
        self.submitted.append(options)
        return str(options["submission_id"])


def _started(tmp_path: Path, backend: RayBackend, gpus: int = 1) -> dict[str, Any]:
    pool = GpuPool(tmp_path, clock=ManualClock(0.0), backend=backend, gpus=10)
    pool.submit(JobSpec("first", ["python", "a.py"]))
    pool.submit(JobSpec("second", ["python", "b.py"], gpus=gpus, env={"A": "spec"}))
    pool.dispatch()
    pool.close()
    return backend._client_instance.submitted  # type: ignore[no-any-return]


def test_jobs_ask_ray_for_the_reserved_resource_and_get_their_devices(tmp_path: Path):
    client = RecordingClient()
    backend = RayBackend(  # the default resource: driftwatch_reserved_gpu
        "http://h:8265", namespace="risk",
        devices=["6", "7"], runtime_env={"pip": ["x"], "env_vars": {"A": "config", "B": "b"}},
        client=client,
    )
    first, second = _started(tmp_path, backend)
    assert first["entrypoint_resources"] == {"driftwatch_reserved_gpu": 1.0}
    assert "entrypoint_num_gpus" not in first  # the reserved node has no GPU resource in Ray
    assert first["submission_id"] == "driftwatch-risk-000001-first-a1"
    assert first["metadata"]["driftwatch_namespace"] == "risk"
    env1, env2 = first["runtime_env"]["env_vars"], second["runtime_env"]["env_vars"]
    assert (env1["CUDA_VISIBLE_DEVICES"], env2["CUDA_VISIBLE_DEVICES"]) == ("6", "7")
    assert (env1["A"], env2["A"], env2["B"]) == ("config", "spec", "b")  # the job's env wins
    assert env1["DRIFTWATCH_RAY_NAMESPACE"] == "risk" and first["runtime_env"]["pip"] == ["x"]


def test_without_a_resource_jobs_ask_ray_for_gpus_and_ray_picks_them(tmp_path: Path):
    client = RecordingClient()
    (first,) = _started(tmp_path, RayBackend(resource=None, client=client), gpus=2)[:1]
    assert first["entrypoint_num_gpus"] == 1 and "entrypoint_resources" not in first
    assert "CUDA_VISIBLE_DEVICES" not in first["runtime_env"]["env_vars"]
    assert first["submission_id"] == "driftwatch-000001-first-a1"


def test_ray_view_names_what_keeps_the_reservation_from_holding():
    nodes = [
        {"node_id": "a", "state": "ALIVE", "resources_total": {"GPU": 8.0}},
        {"node_id": "b", "state": "ALIVE",
         "resources_total": {"GPU": 2.0, "driftwatch_reserved_gpu": 2.0}},
    ]
    view = RayView("http://h:8265", "driftwatch_reserved_gpu", None, {}, nodes)
    assert view.reserved_nodes == ("b",)
    assert view.problems() == [
        "node b advertises both GPU and driftwatch_reserved_gpu: other users' GPU tasks can "
        "take GPUs meant for retraining"
    ]
    usage = {"driftwatch_reserved_gpu": (0.0, 2.0)}
    fewer = RayView("http://h:8265", "driftwatch_reserved_gpu", None, usage, nodes[1:])
    assert fewer.problems(reserved=2) == [
        "node b advertises both GPU and driftwatch_reserved_gpu: other users' GPU tasks can "
        "take GPUs meant for retraining"
    ]
    assert fewer.problems(reserved=4)[0] == (
        "the pool reserves 4 GPUs, Ray advertises 2 driftwatch_reserved_gpu: jobs beyond that "
        "wait inside Ray"
    )
    missing = RayView("http://h:8265", "dw_gpu", None, {}, nodes[:1]).problems()
    assert len(missing) == 1 and "no alive node advertises dw_gpu" in missing[0]


def test_the_commented_ray_example_in_driftwatch_yaml_is_valid(tmp_path: Path):
    from driftwatch.service.config import DEFAULT_CONFIG

    lines = []
    for line in DEFAULT_CONFIG.splitlines():
        if line.startswith("  # ray:") or line.startswith("  #   "):
            line = "  " + line[4:]
        lines.append(line.replace("backend: local", "backend: ray"))
    (tmp_path / "jobs").mkdir()
    f = tmp_path / "driftwatch.yaml"
    f.write_text("\n".join(lines) + "\n")
    ray = load_service_config(f).pool.ray
    assert ray is not None and ray.namespace == "risk-prod" and ray.devices == ("0", "1")
    assert ray.runtime_env["working_dir"] == str(tmp_path / "jobs")


def test_the_daemons_pool_talks_to_the_configured_ray(tmp_path: Path):
    """ServiceActions builds its pool's backend from pool.ray: a job waits, queued, for the
    Ray named in the file (nobody listens there), not for a local default."""
    import socket

    from prometheus_client import CollectorRegistry

    from driftwatch.metrics import Metrics
    from driftwatch.service.actions import ServiceActions

    pytest.importorskip("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f = tmp_path / "svc.yaml"
    f.write_text(MINIMAL + f"pool:\n  backend: ray\n  gpus: 10\n  ray:\n"
                 f"    address: http://127.0.0.1:{port}\n    namespace: risk\n")
    actions = ServiceActions(load_service_config(f), clock=ManualClock(0.0),
                             metrics=Metrics(CollectorRegistry()))
    try:
        job = actions.pool.submit(JobSpec("retrain", ["python", "train.py"]))
        assert actions.pool.dispatch() == []
        record = actions.pool.get(job)
        assert record.state.value == "queued" and record.attempts == 0
        assert f"waiting for the backend: Ray at http://127.0.0.1:{port}" in (record.message or "")
    finally:
        actions.close()
