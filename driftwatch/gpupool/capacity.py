"""Which GPUs the cluster has, and which of them are reserved for retraining.

The reserved count is ``floor(total × fraction)``, but at least one GPU when the cluster
has any and the fraction is above zero: a 3-GPU box at 20 % still gets one for retraining.
The reserved ids are the *last* ones (``8, 9`` of ``0 … 9``), so serving processes that
default to GPU 0 do not land on a retraining GPU.

>>> reserved_gpu_count(10, 0.2)
2
>>> reserved_gpu_count(3, 0.2), reserved_gpu_count(0, 0.2), reserved_gpu_count(4, 0.0)
(1, 0, 0)
>>> reserved_gpu_ids(resolve_gpu_ids(10), 0.2)
('8', '9')
"""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Callable, Sequence

from driftwatch.gpupool.errors import PoolConfigError

__all__ = [
    "DEFAULT_RESERVE_FRACTION",
    "NVIDIA_SMI_ARGV",
    "detect_gpu_ids",
    "reserved_gpu_count",
    "reserved_gpu_ids",
    "resolve_gpu_ids",
]

DEFAULT_RESERVE_FRACTION = 0.2
NVIDIA_SMI_ARGV = ("nvidia-smi", "--query-gpu=index", "--format=csv,noheader")
# Guards floor() against 0.29 * 100 == 28.999999999999996.
_EPS = 1e-9


def reserved_gpu_count(total: int, fraction: float = DEFAULT_RESERVE_FRACTION) -> int:
    """GPUs reserved for retraining out of ``total`` (see the module docstring)."""
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        raise PoolConfigError(f"GPU count must be a whole number >= 0, found {total!r}")
    if not 0.0 <= float(fraction) <= 1.0:
        raise PoolConfigError(f"reserve fraction must be within [0, 1], found {fraction!r}")
    if total == 0 or fraction == 0:
        return 0
    return max(1, math.floor(total * float(fraction) + _EPS))


def reserved_gpu_ids(
    gpu_ids: Sequence[str], fraction: float = DEFAULT_RESERVE_FRACTION
) -> tuple[str, ...]:
    """The last ``reserved_gpu_count(len(gpu_ids), fraction)`` ids, in their given order."""
    count = reserved_gpu_count(len(gpu_ids), fraction)
    return tuple(gpu_ids[len(gpu_ids) - count :]) if count else ()


def resolve_gpu_ids(
    configured: int | Sequence[int | str] | None,
    detect: Callable[[], list[str]] | None = None,
) -> tuple[str, ...]:
    """The cluster's GPU ids: ``range(n)`` for a count, the given ids, or detected ones.

    Ids are strings because ``CUDA_VISIBLE_DEVICES`` also takes UUIDs (``GPU-…``).

    >>> resolve_gpu_ids(3), resolve_gpu_ids(["GPU-a", 7])
    (('0', '1', '2'), ('GPU-a', '7'))
    >>> resolve_gpu_ids(None, detect=lambda: ["0", "1"])
    ('0', '1')
    """
    if configured is None:
        return tuple((detect or detect_gpu_ids)())
    if isinstance(configured, bool):
        raise PoolConfigError(f"gpus must be a count or a list of ids, found {configured!r}")
    if isinstance(configured, int):
        if configured < 0:
            raise PoolConfigError(f"GPU count must be >= 0, found {configured}")
        return tuple(str(i) for i in range(configured))
    if isinstance(configured, str) or not isinstance(configured, Sequence):
        raise PoolConfigError(f"gpus must be a count or a list of ids, found {configured!r}")
    ids = tuple(str(i).strip() for i in configured)
    if any(not i or "," in i for i in ids):
        raise PoolConfigError(f"GPU ids must be non-empty and comma-free, found {list(ids)}")
    if len(set(ids)) != len(ids):
        raise PoolConfigError(f"GPU ids must be unique, found {list(ids)}")
    return ids


def detect_gpu_ids(
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """GPU indices reported by ``nvidia-smi``; empty when it is absent or fails."""
    if which(NVIDIA_SMI_ARGV[0]) is None:
        return []
    try:
        done = run(list(NVIDIA_SMI_ARGV), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]
