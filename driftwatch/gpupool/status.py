"""A snapshot of the pool for ``driftwatch status``, the HTTP status page and metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftwatch.gpupool.base import JobRecord, JobState

__all__ = ["PoolStatus"]

# Backend internals that mean nothing to a reader of the status page.
_INTERNAL = ("handle", "stop_requested_at", "killed")


@dataclass(frozen=True)
class PoolStatus:
    """A snapshot: GPU counts, job counts, leases and the jobs themselves (all active jobs
    plus the most recent finished ones)."""

    capacity: int
    reserved: int
    in_use: int
    queued: int
    deferred: int
    running: int
    reserved_ids: tuple[str, ...]
    leases: Mapping[str, tuple[str, ...]]
    jobs: tuple[JobRecord, ...] = field(repr=False)

    @classmethod
    def of(
        cls,
        gpu_ids: Sequence[str],
        reserved_ids: Sequence[str],
        active: Sequence[JobRecord],
        recent_final: Sequence[JobRecord] = (),
    ) -> PoolStatus:
        """Summarise the active (not final) records and some recently finished ones."""
        running = [r for r in active if r.state is JobState.RUNNING]
        return cls(
            capacity=len(gpu_ids),
            reserved=len(reserved_ids),
            in_use=sum(len(r.lease) for r in running),
            queued=sum(r.state is JobState.QUEUED for r in active),
            deferred=sum(r.state is JobState.DEFERRED for r in active),
            running=len(running),
            reserved_ids=tuple(reserved_ids),
            leases={r.job_id: r.lease for r in running},
            jobs=(*active, *recent_final),
        )

    @property
    def free(self) -> int:
        return self.reserved - self.in_use

    def to_dict(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity,
            "reserved": self.reserved,
            "in_use": self.in_use,
            "free": self.free,
            "queued": self.queued,
            "deferred": self.deferred,
            "running": self.running,
            "reserved_ids": list(self.reserved_ids),
            "leases": {k: list(v) for k, v in self.leases.items()},
            "jobs": [_public(r) for r in self.jobs],
        }


def _public(record: JobRecord) -> dict[str, Any]:
    out = record.to_dict()
    for internal in _INTERNAL:
        out.pop(internal, None)
    return out
