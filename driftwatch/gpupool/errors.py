"""Errors of the GPU pool: leaves under :class:`driftwatch.errors.PoolError`.

Each leaf also derives from the built-in exception a caller would expect, so
``except LookupError`` catches an unknown backend name as well as
``except PoolError`` does.

>>> issubclass(UnknownBackendError, LookupError) and issubclass(UnknownBackendError, PoolError)
True
"""

from __future__ import annotations

from driftwatch.errors import PoolError

__all__ = [
    "BackendUnavailableError",
    "BackendUnreachableError",
    "JobSpecError",
    "ManifestError",
    "PoolConfigError",
    "PoolStateError",
    "PoolTimeoutError",
    "UnknownBackendError",
    "UnknownJobError",
]


class JobSpecError(PoolError, ValueError):
    """A job specification is invalid (shell string for argv, too many GPUs, ...)."""


class PoolConfigError(PoolError, ValueError):
    """The pool's configuration is invalid (fraction out of range, bad off-peak window, ...)."""


class UnknownBackendError(PoolError, LookupError):
    """No backend is registered under the requested name."""


class UnknownJobError(PoolError, LookupError):
    """No job with this id is known to the pool."""


class BackendUnavailableError(PoolError, ImportError):
    """A backend's optional dependency is not installed."""


class BackendUnreachableError(PoolError, ConnectionError):
    """The backend's cluster cannot be reached now; the job stays queued, no retry is used."""


class PoolStateError(PoolError):
    """The pool's state directory is unreadable or was written by another backend."""


class PoolTimeoutError(PoolError, TimeoutError):
    """``GpuPool.wait`` gave up before the job finished."""


class ManifestError(PoolError, ValueError):
    """A rendered Kubernetes manifest misses a required field."""
