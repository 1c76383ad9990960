"""The GPU pool: a durable priority queue of jobs leasing whole GPUs from a reserved share.

The caller drives it: ``submit`` queues, ``dispatch(now)`` starts what fits, ``poll(now)``
reaps ended attempts and enforces time limits. The daemon calls the last two from its
scheduler (``next_due`` says when); tests and the CLI use ``wait``. Every change is written
to SQLite before the call returns, so a new pool on the same state directory resumes: queued
jobs stay queued, running ones whose process survived are adopted, and those whose process is
gone count as failed attempts (retried while retries remain).

Outcomes: exit 0 → ``succeeded``; time limit → ``timed_out`` (not retried); ``cancel`` →
``cancelled``; any other end → a failed attempt, started again while ``failures <= retries``,
then ``failed``. A preempted attempt goes back to the queue without using a retry and gets
the same ``$DRIFTWATCH_CHECKPOINT_DIR``. Stopping is two-step: a polite stop (SIGTERM for
local jobs), then after ``kill_grace_s`` a forced one; GPUs are released only once the
attempt has really ended. A deferrable job already running when off-peak hours end runs on
(preemptible ones can still be preempted by more severe work).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from driftwatch.clock import Clock
from driftwatch.gpupool.base import (
    CHECKPOINT_ENV,
    Backend,
    Exit,
    JobRecord,
    JobSpec,
    JobState,
    Launch,
)
from driftwatch.gpupool.capacity import (
    DEFAULT_RESERVE_FRACTION,
    reserved_gpu_ids,
    resolve_gpu_ids,
)
from driftwatch.gpupool.errors import (
    BackendUnreachableError,
    JobSpecError,
    PoolConfigError,
    PoolStateError,
    PoolTimeoutError,
    UnknownJobError,
)
from driftwatch.gpupool.offpeak import OffPeakWindows
from driftwatch.gpupool.outcomes import fail_attempt, settle
from driftwatch.gpupool.published import publish_capacity
from driftwatch.gpupool.scheduling import plan_dispatch
from driftwatch.gpupool.status import PoolStatus
from driftwatch.gpupool.store import JobStore

__all__ = ["GpuPool"]

# A later reason overrides an earlier one only when it ranks higher: a cancel wins.
_STOP_RANK = {"preempted": 1, "timed_out": 2, "cancelled": 3}
_RECENT_FINAL = 20
_FRESH_ATTEMPT = {
    "ended_at": None,
    "exit_code": None,
    "message": None,
    "stop_reason": None,
    "stop_requested_at": None,
    "killed": False,
}


class GpuPool:
    """Queue, lease and supervise retraining jobs on the reserved share of the GPUs.

    ``gpus`` is the cluster's GPUs: a count, explicit ids, or ``None`` to ask
    ``nvidia-smi`` (``detect`` replaces that probe). ``reserve_fraction`` of them are
    reserved (see :mod:`driftwatch.gpupool.capacity`). ``offpeak`` holds deferrable jobs
    back outside its windows; without it, deferrable jobs run like any other.
    """

    def __init__(
        self,
        state_dir: str | Path,
        *,
        clock: Clock,
        backend: Backend | None = None,
        gpus: int | Sequence[int | str] | None = None,
        reserve_fraction: float = DEFAULT_RESERVE_FRACTION,
        max_concurrent_jobs: int | None = None,
        offpeak: OffPeakWindows | None = None,
        kill_grace_s: float = 10.0,
        checkpoint_root: str | Path | None = None,
        detect: Callable[[], list[str]] | None = None,
    ) -> None:
        if max_concurrent_jobs is not None and max_concurrent_jobs < 1:
            raise PoolConfigError(f"max_concurrent_jobs must be >= 1, found {max_concurrent_jobs}")
        if kill_grace_s < 0:
            raise PoolConfigError(f"kill_grace_s must be >= 0, found {kill_grace_s}")
        if backend is None:
            from driftwatch.gpupool.local import LocalBackend

            backend = LocalBackend()
        self.state_dir = Path(state_dir).absolute()
        self._logs = self.state_dir / "logs"
        self._checkpoints = Path(checkpoint_root or self.state_dir / "checkpoints").absolute()
        for folder in (self.state_dir, self._logs, self._checkpoints):
            folder.mkdir(parents=True, exist_ok=True)
        self.gpu_ids = resolve_gpu_ids(gpus, detect)
        self.reserved_ids = reserved_gpu_ids(self.gpu_ids, reserve_fraction)
        publish_capacity(self.state_dir, self.gpu_ids, self.reserved_ids)  # for pool status
        self.max_concurrent_jobs = max_concurrent_jobs
        self.offpeak = offpeak
        self.kill_grace_s = float(kill_grace_s)
        self._clock = clock
        self._backend = backend
        self._lock = threading.RLock()
        self._store = JobStore(self.state_dir / "gpupool.sqlite3")
        self._jobs: dict[str, JobRecord] = {r.job_id: r for r in self._store.active()}
        self._recover(self._clock.now())

    # -- public API ---------------------------------------------------------------------

    def submit(self, spec: JobSpec, *, key: str | None = None) -> str:
        """Queue ``spec``; return its job id. With ``key``, submitting again returns the job
        already queued under that key (the actions layer's idempotency key)."""
        if not isinstance(spec, JobSpec):
            raise JobSpecError(f"submit takes a JobSpec, found {type(spec).__name__}")
        with self._lock:
            if key is not None and (existing := self._store.by_key(key)) is not None:
                return existing.job_id
            if not self.reserved_ids:
                raise PoolConfigError(
                    "the pool has no GPU reserved for retraining: none configured or detected "
                    f"(cluster GPUs: {len(self.gpu_ids)})"
                )
            if spec.gpus > len(self.reserved_ids):
                raise JobSpecError(
                    f"job {spec.name!r} needs {spec.gpus} GPUs, "
                    f"the pool reserves {len(self.reserved_ids)}"
                )
            now = self._clock.now()
            seq = self._store.next_seq()
            job_id = f"{seq:06d}-{spec.name}"
            record = JobRecord(
                job_id=job_id,
                spec=spec,
                state=self._waiting_state(spec, now),
                seq=seq,
                submitted_at=now,
                key=key,
                checkpoint_dir=str(self._checkpoints / job_id),
            )
            self._save(record)
            return job_id

    def dispatch(self, now: float | None = None) -> list[str]:
        """Start the waiting jobs that fit, in priority order; return their ids."""
        with self._lock:
            now = self._clock.now() if now is None else now
            for record in self._in(JobState.QUEUED, JobState.DEFERRED):
                state = self._waiting_state(record.spec, now)
                if state is not record.state:
                    self._save(record.evolve(state=state))
            running = self._in(JobState.RUNNING)
            leased = {gpu for r in running for gpu in r.lease}
            free = [g for g in self.reserved_ids if g not in leased]
            # Leases from before a smaller reservation still count against the new one.
            free = free[: max(0, len(self.reserved_ids) - len(leased))]
            plan = plan_dispatch(self._in(JobState.QUEUED), running, free, self.max_concurrent_jobs)
            for job_id in plan.preempt:
                self._request_stop(self._jobs[job_id], "preempted", now)
            started = []
            for job_id, lease in plan.starts:
                outcome = self._start(job_id, lease, now)
                if outcome is None:
                    break  # backend unreachable: the next dispatch tries again
                if outcome:
                    started.append(job_id)
            return started

    def poll(self, now: float | None = None) -> list[str]:
        """Reap ended attempts, enforce time limits; return ids of jobs whose attempt ended."""
        with self._lock:
            now = self._clock.now() if now is None else now
            ended = []
            for record in self._in(JobState.RUNNING):
                try:
                    result = self._backend.poll(record.handle or {})
                except Exception as exc:  # a backend outage must not stop the other jobs
                    self._note(record, f"backend poll failed: {exc}")
                    continue
                if result is not None:
                    self._finish(record, result, now)
                    ended.append(record.job_id)
                else:
                    self._enforce_limits(record, now)
            return ended

    def cancel(self, job_id: str) -> JobRecord:
        """Cancel a waiting job now, or stop a running one (it ends as ``cancelled`` once its
        process has exited). A finished job is left as it is."""
        with self._lock:
            record = self.get(job_id)
            now = self._clock.now()
            if record.state.is_waiting:
                record = record.evolve(state=JobState.CANCELLED, ended_at=now)
                self._save(record)
            elif record.state is JobState.RUNNING:
                self._request_stop(record, "cancelled", now)
            return self.get(job_id)

    def get(self, job_id: str) -> JobRecord:
        """The job's current record."""
        with self._lock:
            record = self._jobs.get(job_id) or self._store.get(job_id)
            if record is None:
                raise UnknownJobError(f"no job {job_id!r} in the pool at {self.state_dir}")
            return record

    def active(self) -> tuple[JobRecord, ...]:
        """The queued, deferred and running jobs, read without the pool's lock, which a
        backend call (a Ray cluster that is slow to answer) can hold: a snapshot of
        immutable records, for callers that must not wait, like the consume loop."""
        return tuple(self._jobs.values())

    def status(self) -> PoolStatus:
        """Capacity, reserved, in use, queued, deferred, running, leases and the jobs."""
        with self._lock:
            active = sorted(self._jobs.values(), key=lambda r: r.seq)
            recent = self._store.recent_final(_RECENT_FINAL)
            return PoolStatus.of(self.gpu_ids, self.reserved_ids, active, recent)

    def next_due(self, now: float) -> float | None:
        """When ``poll``/``dispatch`` next have timed work (a time limit, a forced kill, an
        off-peak window opening); ``None`` if none. Process exits still need polling."""
        with self._lock:
            due: list[float] = []
            for r in self._in(JobState.RUNNING):
                if r.stop_reason is None:
                    due.append((r.started_at or now) + r.spec.time_limit_s)
                elif not r.killed:
                    due.append((r.stop_requested_at or now) + self.kill_grace_s)
            if self.offpeak is not None and self._in(JobState.DEFERRED):
                opens = self.offpeak.next_start(now)
                if opens is not None:
                    due.append(opens)
            return min(due) if due else None

    def wait(
        self,
        job_id: str,
        timeout: float,
        *,
        interval: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> JobRecord:
        """Poll and dispatch until ``job_id`` is final; raise :class:`PoolTimeoutError` after
        ``timeout`` seconds of the pool's clock. For tests and the CLI."""
        deadline = self._clock.monotonic() + timeout
        while True:
            self.poll()
            self.dispatch()
            record = self.get(job_id)
            if record.state.is_final:
                return record
            if self._clock.monotonic() >= deadline:
                raise PoolTimeoutError(
                    f"job {job_id} still {record.state.value} after {timeout:g} s"
                )
            sleep(interval)

    def close(self) -> None:
        """Close the state store and the backend; running jobs keep running (a new pool on
        the same state directory adopts them)."""
        with self._lock:
            self._store.close()
            self._backend.close()

    def __enter__(self) -> GpuPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------

    def _recover(self, now: float) -> None:
        for record in self._in(JobState.RUNNING):
            owner = (record.handle or {}).get("backend")
            if owner is not None and owner != self._backend.name:
                raise PoolStateError(
                    f"{self.state_dir}: job {record.job_id} runs on backend {owner!r}, "
                    f"this pool uses {self._backend.name!r}"
                )
            try:
                result = self._backend.poll(record.handle) if record.handle else Exit(None)
            except Exception as exc:  # settled by a later poll once the backend answers
                self._note(record, f"backend poll failed: {exc}")
                continue
            if result is not None:
                detail = result.detail or "its process ended while the pool was down"
                self._finish(record, Exit(result.code, detail), now)
        for record in self._in(JobState.QUEUED, JobState.DEFERRED):
            if record.spec.gpus > len(self.reserved_ids):
                self._save(
                    record.evolve(
                        state=JobState.FAILED,
                        ended_at=now,
                        message=f"needs {record.spec.gpus} GPUs, "
                        f"the pool now reserves {len(self.reserved_ids)}",
                    )
                )

    def _start(self, job_id: str, lease: tuple[str, ...], now: float) -> bool | None:
        """True: started; False: the attempt failed to start; None: backend unreachable."""
        record = self._jobs[job_id]
        attempt = record.attempts + 1
        checkpoint_dir = Path(record.checkpoint_dir or self._checkpoints / job_id)
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        log_path = self._logs / f"{job_id}.{attempt}.log"
        launch = Launch(
            job_id=job_id,
            attempt=attempt,
            argv=tuple(record.spec.argv),
            env={
                **record.spec.env,
                CHECKPOINT_ENV: str(checkpoint_dir),
                "DRIFTWATCH_JOB_ID": job_id,
                "DRIFTWATCH_ATTEMPT": str(attempt),
            },
            gpu_ids=lease,
            log_path=str(log_path),
            checkpoint_dir=str(checkpoint_dir),
            working_dir=record.spec.working_dir,
            slots=tuple(self.reserved_ids.index(g) for g in lease if g in self.reserved_ids),
        )
        started = record.evolve(
            attempts=attempt, started_at=now, log_path=str(log_path), **_FRESH_ATTEMPT
        )
        try:
            handle = self._backend.start(launch)
        except BackendUnreachableError as exc:
            self._note(record, f"waiting for the backend: {exc}")
            return None
        except Exception as exc:  # a job that cannot start is a failed attempt
            self._fail_attempt(started.evolve(ended_at=now), f"could not start: {exc}")
            return False
        self._save(started.evolve(state=JobState.RUNNING, lease=lease, handle=handle))
        return True

    def _enforce_limits(self, record: JobRecord, now: float) -> None:
        if record.stop_reason is None:
            if now >= (record.started_at or now) + record.spec.time_limit_s:
                self._request_stop(record, "timed_out", now)
        elif not record.killed and now >= (record.stop_requested_at or now) + self.kill_grace_s:
            self._stop(record, force=True)
            self._save(self._jobs[record.job_id].evolve(killed=True))

    def _request_stop(self, record: JobRecord, reason: str, now: float) -> None:
        current = record.stop_reason
        if current is not None and _STOP_RANK[current] >= _STOP_RANK[reason]:
            return
        force = self.kill_grace_s == 0
        if current is None:
            self._stop(record, force=force)
        self._save(
            self._jobs[record.job_id].evolve(  # _stop may have noted a failure
                stop_reason=reason,
                stop_requested_at=record.stop_requested_at if current else now,
                killed=record.killed or force,
            )
        )

    def _stop(self, record: JobRecord, *, force: bool) -> None:
        try:
            self._backend.stop(record.handle or {}, force=force)
        except Exception as exc:  # retried on the next poll via the kill deadline
            self._note(record, f"backend stop failed: {exc}")

    def _finish(self, record: JobRecord, result: Exit, now: float) -> None:
        self._save(settle(record, result, now, self._waiting_state(record.spec, now)))

    def _fail_attempt(self, record: JobRecord, why: str) -> None:
        now = record.ended_at or self._clock.now()
        self._save(fail_attempt(record, why, self._waiting_state(record.spec, now)))

    def _waiting_state(self, spec: JobSpec, now: float) -> JobState:
        if spec.deferrable and self.offpeak is not None and not self.offpeak.contains(now):
            return JobState.DEFERRED
        return JobState.QUEUED

    def _in(self, *states: JobState) -> list[JobRecord]:
        return [r for r in sorted(self._jobs.values(), key=lambda r: r.seq) if r.state in states]

    def _note(self, record: JobRecord, message: str) -> None:
        if record.message != message:
            self._save(record.evolve(message=message))

    def _save(self, record: JobRecord) -> None:
        self._store.save(record)
        if record.state.is_final:
            self._jobs.pop(record.job_id, None)
        else:
            self._jobs[record.job_id] = record
