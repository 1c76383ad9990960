"""The ``ray`` backend: each attempt is a job on a Ray cluster (Ray Job Submission API).

For users past one machine. The pool still does the queueing and leasing; Ray enforces the
reserved share. The reserved GPUs sit on nodes that advertise them *only* as a custom
resource (``resource``, default ``driftwatch_reserved_gpu``), not as ``GPU``::

    ray start --address HEAD:6379 --num-gpus 0 --resources '{"driftwatch_reserved_gpu": 2}'

Each attempt asks Ray for that many units of the resource (``entrypoint_resources``), so it
runs only where they are, and a job beyond what Ray has free waits inside Ray, whoever
submitted it. Anyone else's task that asks for ``num_gpus`` is never placed on them: to
Ray that node has no ``GPU``. Ray assigns devices only for ``GPU``, so this backend sets
``CUDA_VISIBLE_DEVICES`` from the lease: the n-th reserved GPU of the pool is the n-th of
``devices`` (default ``0, 1, …``) on the reserved node. That mapping holds for one reserved
node carrying the whole reserved share, the supported topology. With ``resource=None`` an
attempt asks for ``num_gpus`` instead and Ray picks any GPU: nothing is reserved in Ray.

Ray's entrypoint is a shell command: the argv list is quoted with :func:`shlex.join`, so no
argument is ever interpreted by the shell. ``runtime_env`` (``working_dir``, ``pip``,
``env_vars``) goes to Ray with every attempt; the pool's variables override its
``env_vars``. ``namespace`` keeps two daemons on one cluster apart: it is part of every
submission id (so neither adopts the other's attempts), filters ``driftwatch pool status``,
and reaches the job as ``$DRIFTWATCH_RAY_NAMESPACE`` (a job that uses Ray itself passes it
to ``ray.init(namespace=...)``; the Job API has no namespace of its own). The checkpoint
directory is passed as is: on a cluster it must be on storage every node sees. The time
limit counts from submission, so an attempt waiting inside Ray for a node uses its time
too. Ray stays an optional dependency: ``pip install 'driftwatch[ray]'``.

>>> pool_resources(10, 0.2)
{'driftwatch_reserved_gpu': 2}
>>> visible_devices((1,), devices=None), visible_devices((0, 1), devices=["6", "7"])
('1', '6,7')
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from driftwatch.gpupool.base import Backend, Exit, Launch
from driftwatch.gpupool.capacity import DEFAULT_RESERVE_FRACTION, reserved_gpu_count
from driftwatch.gpupool.errors import (
    BackendUnavailableError,
    BackendUnreachableError,
    JobSpecError,
    PoolConfigError,
)

__all__ = [
    "DEFAULT_ADDRESS",
    "NAMESPACE_ENV",
    "POOL_RESOURCE",
    "RUNTIME_ENV_KEYS",
    "RayBackend",
    "pool_resources",
    "submission_id",
    "visible_devices",
]

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
POOL_RESOURCE = "driftwatch_reserved_gpu"
NAMESPACE_ENV = "DRIFTWATCH_RAY_NAMESPACE"
#: The parts of a Ray runtime environment driftwatch passes on.
RUNTIME_ENV_KEYS = ("working_dir", "pip", "env_vars")
_INSTALL_HINT = "the ray GPU pool backend needs Ray: pip install 'driftwatch[ray]'"
_WAITING = frozenset({"PENDING", "RUNNING"})


def pool_resources(
    cluster_gpus: int,
    fraction: float = DEFAULT_RESERVE_FRACTION,
    name: str = POOL_RESOURCE,
) -> dict[str, int]:
    """The custom resource to give the reserved node (``ray start --num-gpus 0
    --resources``) so that Ray caps retraining at the reserved share."""
    return {name: reserved_gpu_count(cluster_gpus, fraction)}


def submission_id(job_id: str, attempt: int, namespace: str | None = None) -> str:
    """Ray submission id of one attempt; stable, so a resubmission after a crash is
    recognised instead of run twice.

    >>> submission_id("000001-retrain", 2), submission_id("000001-retrain", 2, "risk")
    ('driftwatch-000001-retrain-a2', 'driftwatch-risk-000001-retrain-a2')
    """
    scope = f"{namespace}-" if namespace else ""
    return f"driftwatch-{scope}{job_id}-a{attempt}"


def visible_devices(slots: tuple[int, ...], devices: Sequence[str] | None) -> str:
    """``CUDA_VISIBLE_DEVICES`` on the reserved node for the leased ``slots``."""
    if devices is None:
        return ",".join(str(s) for s in slots)
    if any(s >= len(devices) for s in slots):
        raise JobSpecError(
            f"the lease takes reserved GPU #{max(slots) + 1}, but the Ray pool lists "
            f"{len(devices)} devices: {', '.join(devices)}"
        )
    return ",".join(devices[s] for s in slots)


def _job_submission_module() -> Any:
    try:
        from ray import job_submission
    except ImportError as exc:
        raise BackendUnavailableError(_INSTALL_HINT) from exc
    return job_submission


class RayBackend(Backend):
    """Submits attempts to the Ray cluster whose dashboard (job server) is at ``address``.

    ``resource`` is the custom resource that holds the reserved share (``None``: ask Ray
    for ``num_gpus``, nothing reserved in Ray, for a cluster that is all yours);
    ``devices`` the reserved node's device ids (see the module docstring). ``client``
    replaces the ``JobSubmissionClient`` (for a client with custom headers or TLS
    settings). ``entrypoint_num_cpus`` reserves CPUs for the entrypoint as well. The
    client connects on first use; while Ray cannot be reached, jobs stay queued.
    """

    name = "ray"

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        resource: str | None = POOL_RESOURCE,
        namespace: str | None = None,
        runtime_env: Mapping[str, Any] | None = None,
        devices: Sequence[str] | None = None,
        entrypoint_num_cpus: float | None = None,
        client: Any = None,
    ) -> None:
        unknown = sorted(set(runtime_env or {}) - set(RUNTIME_ENV_KEYS))
        if unknown:
            raise PoolConfigError(
                f"runtime_env keys {', '.join(unknown)} are not passed on; "
                f"valid: {', '.join(RUNTIME_ENV_KEYS)}"
            )
        self._module = _job_submission_module() if client is None else None
        self.address = address
        self.resource = resource
        self.namespace = namespace
        self.runtime_env = dict(runtime_env or {})
        self.devices = tuple(str(d) for d in devices) if devices is not None else None
        self.entrypoint_num_cpus = entrypoint_num_cpus
        self._client_instance = client

    @property
    def _client(self) -> Any:
        """The job client, connected on first use so that a daemon starts while Ray is down."""
        if self._client_instance is None:
            try:
                self._client_instance = self._module.JobSubmissionClient(self.address)
            except (OSError, RuntimeError) as exc:  # requests' errors are OSErrors
                raise BackendUnreachableError(f"Ray at {self.address}: {exc}") from exc
        return self._client_instance

    def start(self, launch: Launch) -> dict[str, Any]:
        sid = submission_id(launch.job_id, launch.attempt, self.namespace)
        options: dict[str, Any] = {
            "entrypoint": self._entrypoint(launch),
            "submission_id": sid,
            "runtime_env": self._runtime_env(launch),
            "metadata": {"driftwatch_job_id": launch.job_id, "attempt": str(launch.attempt)},
        }
        if self.namespace:
            options["metadata"]["driftwatch_namespace"] = self.namespace
        if self.resource is not None:
            options["entrypoint_resources"] = {self.resource: float(launch.gpus)}
        else:
            options["entrypoint_num_gpus"] = launch.gpus
        if self.entrypoint_num_cpus is not None:
            options["entrypoint_num_cpus"] = self.entrypoint_num_cpus
        try:
            self._client.submit_job(**options)
        except OSError as exc:
            raise BackendUnreachableError(f"Ray at {self.address}: {exc}") from exc
        except RuntimeError as exc:
            if "already exists" not in str(exc):
                raise
            # An earlier daemon submitted this attempt but died before recording it: adopt.
        return {"backend": self.name, "submission_id": sid, "log_path": launch.log_path}

    def _entrypoint(self, launch: Launch) -> str:
        command = shlex.join(launch.argv)
        if launch.working_dir is not None:
            command = f"cd {shlex.quote(launch.working_dir)} && {command}"
        return command

    def _runtime_env(self, launch: Launch) -> dict[str, Any]:
        env = {str(k): str(v) for k, v in (self.runtime_env.get("env_vars") or {}).items()}
        env.update(launch.env)
        if self.namespace:
            env[NAMESPACE_ENV] = self.namespace
        if self.resource is not None:  # Ray sets it only for GPUs it assigns itself
            slots = launch.slots or tuple(range(launch.gpus))
            env["CUDA_VISIBLE_DEVICES"] = visible_devices(slots, self.devices)
        return {**self.runtime_env, "env_vars": env}

    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        sid = str(handle["submission_id"])
        try:
            info = self._client.get_job_info(sid)
        except RuntimeError as exc:
            if "does not exist" in str(exc) or "404" in str(exc):
                return Exit(None, f"Ray no longer knows job {sid}")
            raise
        status = str(getattr(info.status, "value", info.status))
        if status in _WAITING:
            return None
        self._save_logs(sid, handle.get("log_path"))
        code = getattr(info, "driver_exit_code", None)
        if status == "SUCCEEDED":
            return Exit(0 if code is None else int(code))
        detail = f"Ray job {status.lower()}" + (f": {info.message}" if info.message else "")
        return Exit(None if code is None else int(code), detail)

    def stop(self, handle: Mapping[str, Any], *, force: bool) -> None:
        # Ray escalates from SIGTERM to SIGKILL by itself; asking twice is harmless.
        with contextlib.suppress(RuntimeError):  # already ended or unknown to Ray
            self._client.stop_job(str(handle["submission_id"]))

    def _save_logs(self, sid: str, log_path: object) -> None:
        if not log_path:
            return
        try:
            text = self._client.get_job_logs(sid)
        except RuntimeError as exc:
            text = f"driftwatch: could not fetch the Ray job's logs: {exc}\n"
        path = Path(str(log_path))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"driftwatch: Ray job {sid}\n{text}", encoding="utf-8")
