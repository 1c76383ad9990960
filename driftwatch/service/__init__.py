"""The daemon (``driftwatch run``): the composition root that wires every layer.

One module per concern: :mod:`~driftwatch.service.config` (``driftwatch.yaml``),
:mod:`~driftwatch.service.model` (one model's runtime: source, monitor, reference),
:mod:`~driftwatch.service.actions` (the outbox executor, registry and GPU pool),
:mod:`~driftwatch.service.checkpoint` (state and offsets), :mod:`~driftwatch.service.http`,
:mod:`~driftwatch.service.scheduler` (APScheduler jobs), :mod:`~driftwatch.service.metrics_live`,
:mod:`~driftwatch.service.live_source` and :mod:`~driftwatch.service.daemon` (the loop).
``Service`` is imported on first use, so reading a configuration does not load the daemon.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Service"]


def __getattr__(name: str) -> Any:
    if name == "Service":
        from driftwatch.service.daemon import Service

        return Service
    raise AttributeError(f"module 'driftwatch.service' has no attribute {name!r}")
