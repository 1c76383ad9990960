"""How an ended attempt settles a job's state: a pure function of the record and the exit.

- a stop the pool asked for decides first: ``cancelled``, ``timed_out`` (never retried);
- exit code 0 → ``succeeded`` (also for a preempted job that finished before it stopped);
- preempted → back to the queue, no retry used, same checkpoint dir;
- anything else is a failed attempt: queued again while ``failures <= retries``, else
  ``failed``.

>>> from driftwatch.gpupool.base import Exit, JobRecord, JobSpec, JobState
>>> spec = JobSpec("r", ["train"], retries=1)
>>> running = JobRecord("1-r", spec, JobState.RUNNING, seq=1, submitted_at=0.0, attempts=1,
...                     lease=("9",))
>>> first = settle(running, Exit(-9), now=5.0, waiting_state=JobState.QUEUED)
>>> first.state.value, first.failures, first.lease
('queued', 1, ())
>>> again = first.evolve(state=JobState.RUNNING, attempts=2, lease=("9",))
>>> settle(again, Exit(1), now=9.0, waiting_state=JobState.QUEUED).state.value
'failed'
"""

from __future__ import annotations

from driftwatch.gpupool.base import Exit, JobRecord, JobState

__all__ = ["fail_attempt", "settle"]


def settle(record: JobRecord, result: Exit, now: float, waiting_state: JobState) -> JobRecord:
    """The record after its running attempt ended with ``result`` at ``now``.

    ``waiting_state`` is where a job that goes back to the queue lands (``deferred`` outside
    off-peak hours for a deferrable job).
    """
    ended = record.evolve(
        lease=(),
        handle=None,
        ended_at=now,
        exit_code=result.code,
        stop_reason=None,
        stop_requested_at=None,
        killed=False,
        message=result.detail,
    )
    reason = record.stop_reason
    if reason == "cancelled":
        return ended.evolve(state=JobState.CANCELLED)
    if reason == "timed_out":
        limit = f"exceeded its time limit of {record.spec.time_limit_s:g} s"
        return ended.evolve(state=JobState.TIMED_OUT, message=limit)
    if result.code == 0:
        return ended.evolve(state=JobState.SUCCEEDED)
    if reason == "preempted":
        return ended.evolve(
            state=waiting_state,
            preemptions=record.preemptions + 1,
            message="preempted for a more severe job; resumes from its checkpoint",
        )
    why = f"exit code {result.code}" if result.code is not None else "exit code unknown"
    return fail_attempt(ended, f"{why}: {result.detail}" if result.detail else why, waiting_state)


def fail_attempt(record: JobRecord, why: str, waiting_state: JobState) -> JobRecord:
    """Count a failed attempt: back to ``waiting_state`` while retries remain, else failed."""
    failures = record.failures + 1
    if failures <= record.spec.retries:
        state = waiting_state
        message = f"attempt {record.attempts} failed ({why}); retry {failures} of "
        message += str(record.spec.retries)
    else:
        state, message = JobState.FAILED, f"attempt {record.attempts} failed ({why})"
    return record.evolve(state=state, failures=failures, lease=(), handle=None, message=message)
