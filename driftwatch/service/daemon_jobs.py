"""The daemon's scheduled jobs: checkpoints, staleness, policy and reference refreshes.

APScheduler runs these jobs in its own thread (:meth:`ScheduledJobs._make_scheduler`);
what they would change in a monitor (a reloaded policy, a changed or promoted reference)
is posted to the loop's inbox and applied there under the loop's lock. A reloaded policy
that reads the reference otherwise (another ``model.reference`` file, its ``reference:``
block or bins changed) comes with the profile it reads, adopted with it, as a changed
reference file is, unless a champion's profile adopted from the registry is judged on:
the champion's profile overrides the reference file (``champion_start.py``).
:class:`ScheduledJobs` is mixed into :class:`~driftwatch.service.daemon.Service`.
"""

from __future__ import annotations

import logging
from typing import Any

from driftwatch.service.actions import labelled_buffer
from driftwatch.service.model import ModelRuntime
from driftwatch.service.reload import refresh_model
from driftwatch.service.scheduler import ServiceScheduler

__all__ = ["ScheduledJobs"]

# the daemon's logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.daemon")


class ScheduledJobs:
    """The scheduler's side of :class:`~driftwatch.service.daemon.Service` (see the module
    docstring); a mixin, it holds no state of its own."""

    def _make_scheduler(self) -> ServiceScheduler:
        s = self.config.scheduler
        sched = ServiceScheduler(misfire_grace_time_s=s.misfire_grace_time_s,
                                 coalesce=s.coalesce, clock=self.clock,
                                 report=self.metrics.record_job)
        sched.add("checkpoint", self.config.checkpoint.interval_s, self._request_checkpoint)
        sched.add("staleness", s.staleness_check_s, self._check_staleness)
        sched.add("policy_reload", s.policy_reload_s, self._reload_policies)
        sched.add("reference_refresh", s.reference_refresh_s, self._refresh_references)
        if self.config.reports.rolling_s:
            sched.add("reports", self.config.reports.rolling_s, self._rolling_reports)
        return sched  # actions and off-peak dispatch run in the actions' own threads

    def _request_checkpoint(self) -> None:
        if self.checkpoints is not None:
            self.checkpoints.due = True
        self.inbox.wake.set()

    def _check_staleness(self) -> None:
        now = self.clock.monotonic()
        for m in self.snapshot().models:
            last = m.last_event_monotonic if m.last_event_monotonic is not None \
                else self._started
            stale = not m.source_done and now - last > self.config.stale_after_s
            if stale and m.model not in self._stale:
                self._stale.add(m.model)
                self.metrics["staleness_alarms_total"].labels(model=m.model).inc()
                log.warning("%s: no events for %.0fs", m.model, now - last)
            elif not stale:
                self._stale.discard(m.model)

    def _reload_policies(self) -> None:
        for rt in self.runtimes:
            got = refresh_model(rt.name, rt.watcher, self.metrics, rt.reference_for_policy)
            if got is not None:
                self.inbox.post(lambda rt=rt, p=got[0], prof=got[1]:
                                self._apply_policy(rt, p, prof))

    def _apply_policy(self, rt: ModelRuntime, policy: Any, profile: Any = None) -> None:
        """A reloaded policy, and the reference profile it reads when it reads the
        reference otherwise: that one first, so the open window is closed and judged as it
        was sketched (the running policy, the old bins)."""
        if profile is not None:
            self.metrics["reference_refreshes_total"].labels(model=rt.name).inc()
            self._adopt(rt, profile)
        with self.lock:
            self._handle(rt, rt.apply_policy(policy))
        if self.actions is not None:
            ref = str(rt.reference_path) if rt.reference_path is not None else None
            self.actions.set_policy(rt.name, policy, reference=ref)

    def _refresh_references(self) -> None:
        for rt in self.runtimes:
            profile = rt.changed_reference()
            if profile is not None:
                self.metrics["reference_refreshes_total"].labels(model=rt.name).inc()
                log.info("%s: reference changed (%s); adopting it", rt.name,
                         profile.fingerprint)
                self.inbox.post(lambda rt=rt, p=profile: self._adopt(rt, p))

    def _adopt(self, rt: ModelRuntime, profile: Any, champion: str | None = None) -> None:
        if profile.fingerprint == rt.monitor.profile.fingerprint and champion is None:
            return  # the same profile again: the open window stays open
        with self.lock:
            self._handle(rt, rt.adopt_reference(profile, champion=champion))
        if self.actions is not None:
            self.actions.set_buffer(rt.name, labelled_buffer(rt.monitor))
        self._request_checkpoint()

    def _on_promote(self, model: str, version: str, profile: Any) -> None:
        """A new champion: measure drift against the data it was trained on (in the loop)."""
        rt = next((r for r in self.runtimes if r.name == model), None)
        if rt is None or profile is None:
            return
        self._keep_promoted(rt, version, profile)
        log.info("%s: version %s promoted; adopting its reference profile", model, version)
        self.metrics["reference_refreshes_total"].labels(model=model).inc()
        self.inbox.post(lambda: self._adopt(rt, profile, champion=version))
