"""Backends by name: the built-ins plus plugins from the ``driftwatch.gpupool_backends``
entry-point group (``name = "package.module:BackendClass"``).

Built-ins are imported only when asked for, so ``ray`` stays an optional dependency.

>>> backend_names()[:2]
['local', 'ray']
>>> create_backend("slurm")
Traceback (most recent call last):
...
driftwatch.gpupool.errors.UnknownBackendError: unknown GPU pool backend 'slurm'; valid backends: \
local, ray
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from driftwatch.gpupool.base import Backend
from driftwatch.gpupool.errors import UnknownBackendError

__all__ = ["ENTRY_POINT_GROUP", "backend_names", "create_backend", "register_backend"]

ENTRY_POINT_GROUP = "driftwatch.gpupool_backends"
BackendFactory = Callable[..., Backend]

_BUILTIN: dict[str, str] = {
    "local": "driftwatch.gpupool.local:LocalBackend",
    "ray": "driftwatch.gpupool.ray:RayBackend",
}
_registered: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``factory(**options)`` available as backend ``name`` (replacing any other)."""
    _registered[name] = factory


def backend_names() -> list[str]:
    """Every backend name that :func:`create_backend` accepts; built-ins first."""
    plugins = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    extra = sorted((plugins | set(_registered)) - set(_BUILTIN))
    return [*_BUILTIN, *extra]


def create_backend(name: str, **options: Any) -> Backend:
    """Build the backend registered under ``name`` with ``options``."""
    return _factory(name)(**options)


def _factory(name: str) -> BackendFactory:
    if name in _registered:
        return _registered[name]
    if name in _BUILTIN:
        module, _, attr = _BUILTIN[name].partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()  # type: ignore[no-any-return]
    message = f"unknown GPU pool backend {name!r}; valid backends: {', '.join(backend_names())}"
    if name in ("kubernetes", "k8s"):
        message += (
            " (Kubernetes jobs are rendered, not run: `driftwatch pool render` writes the Job "
            "and Kueue manifests, driftwatch does not submit them)"
        )
    raise UnknownBackendError(message)
