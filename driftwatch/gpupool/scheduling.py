"""Which waiting jobs start now, on which GPUs, and whom to preempt: pure functions.

Order: severity (severe, moderate, mild), then submission time, then submission order.
The queue is strict: when the first job in order does not fit, nothing behind it starts
(no backfilling), so a 2-GPU severe job is never starved by a stream of 1-GPU jobs. If
that job could fit by stopping running *preemptible* jobs of lower severity, the plan
names them (least severe first, then the most recently started, whose checkpoint loses the
least work); their GPUs go to the waiting job once they have exited.

>>> from driftwatch.gpupool.base import JobRecord, JobSpec, JobState
>>> def job(seq, severity, at):
...     spec = JobSpec(name=f"j{seq}", argv=["true"], severity=severity)
...     return JobRecord(f"j{seq}", spec, JobState.QUEUED, seq=seq, submitted_at=at)
>>> waiting = [job(1, "mild", 0.0), job(2, "severe", 5.0), job(3, "moderate", 1.0)]
>>> plan = plan_dispatch(waiting, running=[], free_ids=["8", "9"])
>>> plan.starts
(('j2', ('8',)), ('j3', ('9',)))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from driftwatch.gpupool.base import JobRecord, severity_rank

__all__ = ["DispatchPlan", "plan_dispatch", "queue_order_key"]


@dataclass(frozen=True)
class DispatchPlan:
    """``starts``: (job id, leased GPU ids) in start order; ``preempt``: job ids to stop."""

    starts: tuple[tuple[str, tuple[str, ...]], ...] = ()
    preempt: tuple[str, ...] = ()


def queue_order_key(record: JobRecord) -> tuple[int, float, int]:
    """Sort key: most severe first, then oldest, then first submitted."""
    return (-severity_rank(record.spec.severity), record.submitted_at, record.seq)


def plan_dispatch(
    waiting: Sequence[JobRecord],
    running: Sequence[JobRecord],
    free_ids: Sequence[str],
    max_concurrent: int | None = None,
) -> DispatchPlan:
    """Plan one dispatch round.

    ``waiting`` are the jobs eligible to start now (deferred ones left out), ``running``
    every job holding a lease (including those already asked to stop), ``free_ids`` the
    reserved GPUs no job holds.
    """
    free = list(free_ids)
    active = len(running)
    starts: list[tuple[str, tuple[str, ...]]] = []
    for record in sorted(waiting, key=queue_order_key):
        slot_ok = max_concurrent is None or active < max_concurrent
        if slot_ok and record.spec.gpus <= len(free):
            lease, free = tuple(free[: record.spec.gpus]), free[record.spec.gpus :]
            starts.append((record.job_id, lease))
            active += 1
            continue
        victims = _victims(record, running, len(free), active, max_concurrent)
        return DispatchPlan(tuple(starts), victims)
    return DispatchPlan(tuple(starts), ())


def _victims(
    blocked: JobRecord,
    running: Sequence[JobRecord],
    free: int,
    active: int,
    max_concurrent: int | None,
) -> tuple[str, ...]:
    """Running jobs to preempt so that ``blocked`` fits; empty when that cannot work."""
    stopping = [r for r in running if r.stop_reason is not None]
    gpus_short = blocked.spec.gpus - free - sum(len(r.lease) for r in stopping)
    slots_short = 0 if max_concurrent is None else active - len(stopping) - max_concurrent + 1
    if gpus_short <= 0 and slots_short <= 0:
        return ()  # enough is already on its way out
    rank = severity_rank(blocked.spec.severity)
    candidates = sorted(
        (
            r
            for r in running
            if r.stop_reason is None
            and r.spec.preemptible
            and severity_rank(r.spec.severity) < rank
        ),
        key=lambda r: (severity_rank(r.spec.severity), -(r.started_at or 0.0), -r.seq),
    )
    chosen: list[str] = []
    for r in candidates:
        if gpus_short <= 0 and slots_short <= 0:
            break
        chosen.append(r.job_id)
        gpus_short -= len(r.lease)
        slots_short -= 1
    if gpus_short > 0 or slots_short > 0:
        return ()
    return tuple(chosen)
