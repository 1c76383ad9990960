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

from driftwatch.lazy import lazy_attributes

__all__ = ["Service"]

__getattr__ = lazy_attributes(__name__, {"Service": "driftwatch.service.daemon"})
