"""The ``ray`` backend: each attempt is a job on a Ray cluster (Ray Job Submission API).

For users past one machine. The pool still does the queueing and leasing, so no more than
the reserved share is ever asked of Ray; each attempt is submitted with
``entrypoint_num_gpus`` equal to its lease, so Ray places it on a node with free GPUs and
sets ``CUDA_VISIBLE_DEVICES`` there. With ``resource=`` the attempt also asks for that
many units of a custom resource: start the cluster with
``ray start --resources '{"driftwatch_pool": 2}'`` (see :func:`pool_resources`) and Ray
itself enforces the reserved share, even against another pool on the same cluster.

Ray's entrypoint is a shell command: the argv list is quoted with :func:`shlex.join`, so no
argument is ever interpreted by the shell. The checkpoint directory is passed as is: on a
cluster it must be on storage every node sees. The time limit counts from submission, so
an attempt waiting inside Ray for a node uses its time too. Ray stays an optional
dependency: ``pip install 'driftwatch[ray]'``.

>>> pool_resources(10, 0.2)
{'driftwatch_pool': 2}
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from driftwatch.gpupool.base import Backend, Exit, Launch
from driftwatch.gpupool.capacity import DEFAULT_RESERVE_FRACTION, reserved_gpu_count
from driftwatch.gpupool.errors import BackendUnavailableError, BackendUnreachableError

__all__ = ["DEFAULT_ADDRESS", "POOL_RESOURCE", "RayBackend", "pool_resources", "submission_id"]

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
POOL_RESOURCE = "driftwatch_pool"
_INSTALL_HINT = "the ray GPU pool backend needs Ray: pip install 'driftwatch[ray]'"
_WAITING = frozenset({"PENDING", "RUNNING"})


def pool_resources(
    cluster_gpus: int,
    fraction: float = DEFAULT_RESERVE_FRACTION,
    name: str = POOL_RESOURCE,
) -> dict[str, int]:
    """The custom resource to give the Ray head (``ray start --resources``) so that Ray
    caps retraining at the reserved share."""
    return {name: reserved_gpu_count(cluster_gpus, fraction)}


def submission_id(job_id: str, attempt: int) -> str:
    """Ray submission id of one attempt; stable, so a resubmission after a crash is
    recognised instead of run twice.

    >>> submission_id("000001-retrain", 2)
    'driftwatch-000001-retrain-a2'
    """
    return f"driftwatch-{job_id}-a{attempt}"


def _job_submission_module() -> Any:
    try:
        from ray import job_submission
    except ImportError as exc:
        raise BackendUnavailableError(_INSTALL_HINT) from exc
    return job_submission


class RayBackend(Backend):
    """Submits attempts to the Ray cluster whose dashboard (job server) is at ``address``.

    ``client`` replaces the ``JobSubmissionClient`` (for a client with custom headers or
    TLS settings). ``entrypoint_num_cpus`` reserves CPUs for the entrypoint as well. The
    client connects on first use; while Ray cannot be reached, jobs stay queued.
    """

    name = "ray"

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        resource: str | None = None,
        entrypoint_num_cpus: float | None = None,
        client: Any = None,
    ) -> None:
        self._module = _job_submission_module() if client is None else None
        self.address = address
        self.resource = resource
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
        sid = submission_id(launch.job_id, launch.attempt)
        command = shlex.join(launch.argv)
        if launch.working_dir is not None:
            command = f"cd {shlex.quote(launch.working_dir)} && {command}"
        options: dict[str, Any] = {
            "entrypoint": command,
            "submission_id": sid,
            "runtime_env": {"env_vars": dict(launch.env)},
            "metadata": {"driftwatch_job_id": launch.job_id, "attempt": str(launch.attempt)},
            "entrypoint_num_gpus": launch.gpus,
        }
        if self.resource is not None:
            options["entrypoint_resources"] = {self.resource: float(launch.gpus)}
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
