"""The GPU pool: a reserved share of the cluster's GPUs for retraining jobs.

The pool reserves ``floor(gpus × fraction)`` GPUs (default fraction 0.2), but at least one
when the cluster has any GPU and the fraction is above zero. Jobs lease whole GPUs, queue
by severity (severe, moderate, mild) and then age, and deferrable ones wait for off-peak
windows given in a timezone:

>>> reserved_gpu_count(10, 0.2), reserved_gpu_count(4, 0.2), reserved_gpu_count(0, 0.2)
(2, 1, 0)
>>> from datetime import datetime, timezone
>>> offpeak = OffPeakWindows(["22:00-06:00"], weekends=True, tz="UTC")
>>> tuesday_2330 = datetime(2024, 5, 7, 23, 30, tzinfo=timezone.utc).timestamp()
>>> tuesday_1200 = datetime(2024, 5, 7, 12, 0, tzinfo=timezone.utc).timestamp()
>>> saturday_1200 = datetime(2024, 5, 11, 12, 0, tzinfo=timezone.utc).timestamp()
>>> [offpeak.contains(t) for t in (tuesday_2330, tuesday_1200, saturday_1200)]
[True, False, True]

Contracts live in :mod:`~driftwatch.gpupool.base`, backends in ``local`` (subprocesses,
the default) and ``ray`` (Ray jobs, the reserved share held by a Ray custom resource),
chosen by name through :func:`~driftwatch.gpupool.registry.create_backend`;
:mod:`~driftwatch.gpupool.kubernetes` only renders Job and Kueue manifests
(``driftwatch pool render``): driftwatch does not submit them.
"""

from driftwatch.gpupool.base import (
    CHECKPOINT_ENV,
    Backend,
    Exit,
    JobRecord,
    JobSpec,
    JobState,
    Launch,
)
from driftwatch.gpupool.capacity import detect_gpu_ids, reserved_gpu_count, reserved_gpu_ids
from driftwatch.gpupool.offpeak import OffPeakWindows
from driftwatch.gpupool.pool import GpuPool
from driftwatch.gpupool.registry import backend_names, create_backend, register_backend
from driftwatch.gpupool.status import PoolStatus

__all__ = [
    "CHECKPOINT_ENV",
    "Backend",
    "Exit",
    "GpuPool",
    "JobRecord",
    "JobSpec",
    "JobState",
    "Launch",
    "OffPeakWindows",
    "PoolStatus",
    "backend_names",
    "create_backend",
    "detect_gpu_ids",
    "register_backend",
    "reserved_gpu_count",
    "reserved_gpu_ids",
]
