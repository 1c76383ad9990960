"""Contracts of the GPU pool: what a job is, what the pool records, what a backend does.

A :class:`JobSpec` is what a caller asks for; a :class:`JobRecord` is what the pool knows
about it (state, lease, attempts, times, exit code). A :class:`Backend` starts one attempt
of a job somewhere (a local process, a Ray job) and reports when it has ended; the pool
does the queueing, leasing, time limits and retries, so every backend behaves alike.

>>> spec = JobSpec(name="retrain-pd", argv=["python", "train.py"], severity="severe")
>>> spec.gpus, spec.retries, spec.severity
(1, 1, 'severe')
>>> JobSpec(name="x", argv="python train.py")
Traceback (most recent call last):
...
driftwatch.gpupool.errors.JobSpecError: argv must be a list of strings, not a shell string: \
write ['python', 'train.py'] instead of 'python train.py'
"""

from __future__ import annotations

import os
import re
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, ClassVar, Literal

from driftwatch.gpupool.errors import JobSpecError

__all__ = [
    "CHECKPOINT_ENV",
    "RESERVED_ENV",
    "SEVERITY_RANK",
    "Backend",
    "Exit",
    "JobRecord",
    "JobSpec",
    "JobState",
    "Launch",
    "Severity",
    "severity_rank",
]

Severity = Literal["mild", "moderate", "severe"]
#: Higher runs first.
SEVERITY_RANK: Mapping[str, int] = {"severe": 3, "moderate": 2, "mild": 1}
#: The directory a job writes checkpoints to; the same one on every attempt.
CHECKPOINT_ENV = "DRIFTWATCH_CHECKPOINT_DIR"
#: Variables the pool sets for every job; a spec may not override them.
RESERVED_ENV = frozenset(
    {"CUDA_VISIBLE_DEVICES", CHECKPOINT_ENV, "DRIFTWATCH_JOB_ID", "DRIFTWATCH_ATTEMPT"}
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
DEFAULT_TIME_LIMIT_S = 6 * 3600.0


def severity_rank(severity: object) -> int:
    """Rank of a severity given as a string or a string enum (``Tier.SEVERE``).

    >>> severity_rank("severe") > severity_rank("moderate") > severity_rank("mild")
    True
    """
    key = str(getattr(severity, "value", severity)).lower()
    try:
        return SEVERITY_RANK[key]
    except KeyError:
        valid = ", ".join(SEVERITY_RANK)
        raise JobSpecError(f"unknown severity {severity!r}; valid: {valid}") from None


class JobState(StrEnum):
    """Where a job stands. ``succeeded`` … ``cancelled`` are final."""

    QUEUED = "queued"
    DEFERRED = "deferred"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"

    @property
    def is_final(self) -> bool:
        return self in _FINAL

    @property
    def is_waiting(self) -> bool:
        return self in (JobState.QUEUED, JobState.DEFERRED)


_FINAL = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.TIMED_OUT, JobState.CANCELLED})


@dataclass(frozen=True)
class JobSpec:
    """What to run on the pool.

    ``argv`` is a list: it is never given to a shell. ``time_limit_s`` applies to each
    attempt; ``retries`` bounds how many failed attempts are started again (a timed-out or
    cancelled job is not retried; a preempted one resumes without using a retry).
    ``deferrable`` jobs wait for the pool's off-peak windows; ``preemptible`` jobs may be
    stopped for a more severe job and resume from ``$DRIFTWATCH_CHECKPOINT_DIR``.
    """

    name: str
    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    gpus: int = 1
    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    retries: int = 1
    severity: Severity = "severe"
    deferrable: bool = False
    preemptible: bool = False
    working_dir: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise JobSpecError(
                f"job name must be 1-63 letters, digits, '.', '_' or '-', found {self.name!r}"
            )
        set_ = object.__setattr__
        set_(self, "argv", _check_argv(self.argv))
        set_(self, "env", _check_env(self.env))
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise JobSpecError(f"gpus must be a whole number >= 1, found {self.gpus!r}")
        set_(self, "time_limit_s", _positive_seconds(self.time_limit_s))
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise JobSpecError(f"retries must be a whole number >= 0, found {self.retries!r}")
        severity_rank(self.severity)
        set_(self, "severity", str(getattr(self.severity, "value", self.severity)).lower())
        set_(self, "deferrable", bool(self.deferrable))
        set_(self, "preemptible", bool(self.preemptible))
        if self.working_dir is not None:
            set_(self, "working_dir", os.fspath(self.working_dir))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["argv"] = list(self.argv)
        out["env"] = dict(self.env)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobSpec:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise JobSpecError(f"job spec has unknown keys: {', '.join(unknown)}")
        return cls(**data)


def _check_argv(argv: object) -> tuple[str, ...]:
    if isinstance(argv, str | bytes):
        text = argv.decode() if isinstance(argv, bytes) else argv
        try:
            suggestion = repr(shlex.split(text))
        except ValueError:
            suggestion = "a list of strings"
        raise JobSpecError(
            "argv must be a list of strings, not a shell string: "
            f"write {suggestion} instead of {text!r}"
        )
    if not isinstance(argv, Sequence) or not argv:
        raise JobSpecError(f"argv must be a non-empty list of strings, found {argv!r}")
    out = []
    for i, arg in enumerate(argv):
        if isinstance(arg, os.PathLike):
            arg = os.fspath(arg)
        if not isinstance(arg, str):
            raise JobSpecError(f"argv[{i}] must be a string, found {arg!r}")
        out.append(arg)
    return tuple(out)


def _positive_seconds(value: object) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = float("nan")
    if isinstance(value, bool) or not seconds > 0 or seconds == float("inf"):
        raise JobSpecError(f"time_limit_s must be a number of seconds > 0, found {value!r}")
    return seconds


def _check_env(env: object) -> dict[str, str]:
    if not isinstance(env, Mapping):
        raise JobSpecError(f"env must be a mapping of strings, found {env!r}")
    out: dict[str, str] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str) or not key or "=" in key:
            raise JobSpecError(f"env entries must be NAME: 'text', found {key!r}: {value!r}")
        if key in RESERVED_ENV:
            raise JobSpecError(f"env may not set {key}: the pool sets it for every job")
        out[key] = value
    return out


@dataclass(frozen=True)
class JobRecord:
    """What the pool knows about one job; a snapshot (the pool hands out copies).

    ``lease`` holds the GPU ids while the job runs and is empty otherwise. ``attempts``
    counts starts, ``failures`` the failed attempts that used up retries, ``preemptions``
    the times the pool stopped it to make room. ``handle`` is the backend's own reference
    to the running attempt.
    """

    job_id: str
    spec: JobSpec
    state: JobState
    seq: int
    submitted_at: float
    key: str | None = None
    lease: tuple[str, ...] = ()
    attempts: int = 0
    failures: int = 0
    preemptions: int = 0
    started_at: float | None = None
    ended_at: float | None = None
    exit_code: int | None = None
    log_path: str | None = None
    checkpoint_dir: str | None = None
    message: str | None = None
    handle: Mapping[str, Any] | None = None
    stop_reason: str | None = None
    stop_requested_at: float | None = None
    killed: bool = False

    def evolve(self, **changes: Any) -> JobRecord:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["spec"] = self.spec.to_dict()
        out["state"] = self.state.value
        out["lease"] = list(self.lease)
        out["handle"] = dict(self.handle) if self.handle is not None else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobRecord:
        values = dict(data)
        values["spec"] = JobSpec.from_dict(values["spec"])
        values["state"] = JobState(values["state"])
        values["lease"] = tuple(values.get("lease") or ())
        return cls(**values)


@dataclass(frozen=True)
class Launch:
    """One attempt of a job, as the pool hands it to a backend.

    ``env`` holds the spec's variables plus the pool's (checkpoint dir, job id, attempt);
    a backend that places processes itself (local) adds ``CUDA_VISIBLE_DEVICES`` from
    ``gpu_ids``, one whose scheduler assigns devices (Ray) lets that scheduler set it.
    """

    job_id: str
    attempt: int
    argv: tuple[str, ...]
    env: Mapping[str, str]
    gpu_ids: tuple[str, ...]
    log_path: str
    checkpoint_dir: str
    working_dir: str | None = None
    #: Position of each leased GPU among the pool's reserved ones (``(0,)`` for the first):
    #: a backend that sees a node's reserved GPUs only as a count (Ray) maps it to devices.
    slots: tuple[int, ...] = ()

    @property
    def gpus(self) -> int:
        return len(self.gpu_ids)


@dataclass(frozen=True)
class Exit:
    """How an attempt ended: ``code`` is the exit status (negative: killed by that
    signal), or ``None`` when the backend could not learn it."""

    code: int | None
    detail: str | None = None


class Backend(ABC):
    """Runs attempts of jobs. Handles must be JSON-serialisable: the pool persists them
    and gives them back to a new backend instance after a restart."""

    name: ClassVar[str]

    @abstractmethod
    def start(self, launch: Launch) -> dict[str, Any]:
        """Start the attempt; return a handle. Raise to report that it could not start."""

    @abstractmethod
    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        """``None`` while the attempt runs (or waits inside the backend), else how it ended.

        Must work on handles from an earlier process of the daemon.
        """

    @abstractmethod
    def stop(self, handle: Mapping[str, Any], *, force: bool) -> None:
        """Ask the attempt to end (``force=False``: SIGTERM-like, it may checkpoint) or end it
        now (``force=True``). Never raises for an attempt that has already ended."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release client resources; running attempts are left alone."""
