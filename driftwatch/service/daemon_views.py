"""What HTTP and the metrics read of the daemon, and the HTTP server that serves it.

:meth:`ServiceViews.snapshot` (metrics), :meth:`ServiceViews.ready` (``/readyz``: the
loop running, a fresh checkpoint, every source ready, the state folder writable, each
dependency's state, and a new champion's profile still pending, which does not make the
daemon unready) and :meth:`ServiceViews.status` (``/status``) read state taken under
the loop's lock; :meth:`ServiceViews._make_http` wires them and the admin calls into the
server. :class:`ServiceViews` is mixed into :class:`~driftwatch.service.daemon.Service`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Any

from driftwatch import __version__
from driftwatch.service.http import Endpoints, HttpServer
from driftwatch.service.metrics_live import ServiceSnapshot

__all__ = ["ServiceViews"]

# the daemon's logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.daemon")


class ServiceViews:
    """The readers' side of :class:`~driftwatch.service.daemon.Service` (see the module
    docstring); a mixin, it holds no state of its own."""

    # -- what HTTP and metrics read -------------------------------------------------------------
    def snapshot(self) -> ServiceSnapshot:
        with self.lock:
            models = tuple(rt.snapshot() for rt in self.runtimes)
        pool = self.actions.pool_snapshot() if self.actions else None
        shadows = self.actions.shadow_snapshots() if self.actions else {}
        models = tuple(replace(m, **shadows[m.model]) if m.model in shadows else m
                       for m in models)
        pending = self.actions.adoption_pending_seconds() if self.actions else {}
        models = tuple(replace(m, reference_adoption_pending_s=pending[m.model])
                       if pending.get(m.model) else m for m in models)
        kw: dict[str, Any] = {"pool": pool} if pool is not None else {}
        cp = self.checkpoints
        return ServiceSnapshot(
            started_monotonic=self._started, models=models,
            checkpoint_monotonic=cp.last_monotonic if cp else None,
            checkpoint_bytes=cp.size_bytes if cp else 0,
            restore_seconds=self._restore_s, stale_after_s=self.config.stale_after_s,
            dependencies=self.deps.gauges(), dependency_down_seconds=self.deps.down_seconds(),
            **kw)

    def ready(self) -> tuple[bool, dict[str, Any]]:
        now = self.clock.monotonic()
        last = self.checkpoints.last_monotonic if self.checkpoints else None
        since = last if last is not None else self._started
        age = now - since
        fresh = age <= self.config.checkpoint.max_age_s
        sources = {rt.name: rt.ready or rt.done for rt in self.runtimes}
        writable, why = self.disk.readiness()
        ok = self._running and fresh and all(sources.values()) and writable and self.deps.ready()
        out = {"running": self._running, "checkpoint_age_seconds": round(age, 3),
               "checkpoint_fresh": fresh, "sources": sources,
               "state_writable": writable, "state_reason": why,
               "dependencies": self.deps.to_dict()}
        pending = self.actions.adoptions_status() if self.actions else {}
        if pending:  # not unready: the monitor judges on, against the previous profile
            out["profile_adoption"] = pending
        groups = {rt.name: rt.readiness() for rt in self.runtimes if hasattr(rt, "readiness")}
        if groups:  # members of a consumer group: their partitions, the idle ones
            out["group"] = groups
        return ok, out

    def _state_dir_up(self) -> tuple[bool | None, str]:
        writable, why = self.disk.readiness()
        return writable, why or ""

    def _kafka_up(self) -> tuple[bool | None, str]:
        kafka = [rt for rt in self.runtimes if rt.connector.kind == "kafka" and not rt.done]
        down = [rt for rt in kafka if not rt.ready]
        return not down, "; ".join(
            f"{rt.name}: {getattr(rt, 'not_ready_reason', '') or 'no broker connection'}"
            for rt in down)

    def _registry_up(self) -> tuple[bool | None, str]:
        """Down while a Kafka source holds partitions for its schema registry (the reason
        names the error, since when, and the held offsets); up once one answered."""
        kafka = [rt for rt in self.runtimes if rt.connector.kind == "kafka" and not rt.done]
        down = [rt for rt in kafka if rt.registry_up is False]
        if down:
            return False, "; ".join(f"{rt.name}: {rt.registry_fault}" for rt in down)
        return (True if any(rt.registry_up for rt in kafka) else None), ""

    def status(self) -> dict[str, Any]:
        ok, details = self.ready()
        with self.lock:
            models = [rt.status() for rt in self.runtimes]
        return {
            "version": __version__,
            "pid": os.getpid(),
            "uptime_seconds": round(self.clock.monotonic() - self._started, 3),
            "ready": ok,
            "readiness": details,
            "models": models,
            "checkpoint": {**(self.checkpoints.info() if self.checkpoints else {}),
                           "restore_seconds": round(self._restore_s, 6)},
            "actions": self.actions.status() if self.actions else {},
        }

    def _make_http(self) -> HttpServer:
        cfg = self.config.http
        token = self.environ.get(cfg.admin_token_env, "") if cfg.admin_token_env else ""
        acts = self.actions
        endpoints = Endpoints(
            registry=self.registry, ready=self.ready, status=self.status,
            reports_dir=self.config.state_dir / "out",
            admin=acts.admin if acts else None, admin_token=token or None,
            admin_token_env=cfg.admin_token_env,
            audit=acts.audit if acts else None, on_admin=self.metrics.record_admin)
        if not token:
            log.info("admin API disabled (%s is not set)", cfg.admin_token_env)
        return HttpServer(endpoints, host=cfg.host, port=cfg.port)
