"""The ``local`` backend: each attempt is a subprocess on this machine (the embedded default).

The attempt runs under :mod:`driftwatch.gpupool.jobrunner` in its own process group with
``CUDA_VISIBLE_DEVICES`` set to the leased GPU ids; stdout and stderr go to the attempt's
log file. Stopping signals the whole group (SIGTERM, then SIGKILL), so a timeout ends the
job's whole process tree. When the attempt ends, whatever it left behind in its group is
killed, so its GPUs are really free. Handles carry the pid, its start time (against pid
reuse) and the exit-status file, so a new pool can adopt or settle an attempt that a
previous daemon process started.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from driftwatch.gpupool.base import Backend, Exit, Launch
from driftwatch.gpupool.errors import PoolError
from driftwatch.procs import pid_exists

__all__ = ["RUNNER", "LocalBackend"]

RUNNER = Path(__file__).with_name("jobrunner.py")


class LocalBackend(Backend):
    """Runs attempts as local subprocesses.

    ``base_env`` is the environment jobs start from (default: this process's environment
    when the backend is created); the job's own variables and the pool's are added on top.
    """

    name = "local"

    def __init__(
        self, *, base_env: Mapping[str, str] | None = None, python: str = sys.executable
    ) -> None:
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._python = python
        self._children: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, launch: Launch) -> dict[str, Any]:
        log_path = Path(launch.log_path).absolute()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        exit_file = log_path.with_suffix(".exit")
        exit_file.unlink(missing_ok=True)
        if launch.working_dir is not None and not Path(launch.working_dir).is_dir():
            raise PoolError(f"working directory {launch.working_dir!r} does not exist")
        env = {
            **self._base_env,
            **launch.env,
            "CUDA_VISIBLE_DEVICES": ",".join(launch.gpu_ids),
        }
        argv = [self._python, "-I", str(RUNNER), str(exit_file), "--", *launch.argv]
        with open(log_path, "ab") as log:
            log.write(
                f"driftwatch: job {launch.job_id} attempt {launch.attempt} on GPUs "
                f"{','.join(launch.gpu_ids)}: {shlex.join(launch.argv)}\n".encode()
            )
            log.flush()
            proc = subprocess.Popen(
                argv,
                env=env,
                cwd=launch.working_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        self._children[proc.pid] = proc
        return {
            "backend": self.name,
            "pid": proc.pid,
            "pgid": proc.pid,
            "start_ticks": _start_ticks(proc.pid),
            "exit_file": str(exit_file),
        }

    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        pid = int(handle["pid"])
        child = self._children.get(pid)
        runner_status: int | None = None
        if child is not None:
            runner_status = child.poll()
            if runner_status is None:
                return None
            del self._children[pid]
        elif _alive(pid, handle.get("start_ticks")):
            return None
        _signal_group(int(handle["pgid"]), signal.SIGKILL)  # leftovers of the job's tree
        code = _read_status(Path(handle["exit_file"]))
        if code is None and runner_status is not None and runner_status < 0:
            code = runner_status  # the whole group was killed, the runner with it
        if code is None:
            return Exit(None, "the job's process is gone and left no exit status")
        return Exit(code, _describe(code))

    def stop(self, handle: Mapping[str, Any], *, force: bool) -> None:
        _signal_group(int(handle["pgid"]), signal.SIGKILL if force else signal.SIGTERM)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, sig)


def _read_status(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _describe(code: int) -> str | None:
    if code >= 0:
        return None
    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks) from ``/proc``; None when there is no such pid."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        return None
    fields = raw.rsplit(")", 1)[1].split()
    return fields[0], fields[19]


def _start_ticks(pid: int) -> str | None:
    stat = _proc_stat(pid) if Path("/proc/self/stat").exists() else None
    return stat[1] if stat else None


def _alive(pid: int, start_ticks: object) -> bool:
    """Whether ``pid`` still runs and is the process we started (not a reused pid)."""
    if not Path("/proc/self/stat").exists():  # no procfs: signal 0 is the best we have
        return pid_exists(pid)
    stat = _proc_stat(pid)
    if stat is None or (start_ticks is not None and stat[1] != start_ticks):
        return False
    if stat[0] in ("Z", "X"):
        with contextlib.suppress(ChildProcessError):  # our child from an earlier pool: reap
            os.waitpid(pid, os.WNOHANG)
        return False
    return True
