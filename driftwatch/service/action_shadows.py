"""Live scoring for shadows: the monitor's hooks into the executor, and what they show.

A challenger in shadow is scored on the live prediction batches. :meth:`ShadowHooks.attach`
gives a model's monitor a hook that hands each batch to the ``mlflow`` lane (the loop's
thread never waits; a batch the busy lane refuses is counted as dropped) and one that
counts the pool's retrainings for ``max_concurrent_retrains``;
:meth:`ShadowHooks.shadow_snapshots` reads the running shadows' metrics for a scrape.
:class:`ShadowHooks` is mixed into :class:`~driftwatch.service.actions.ServiceActions`.
"""

from __future__ import annotations

import logging
from typing import Any

from driftwatch.actions.records import ActionState

__all__ = ["ShadowHooks"]

# the actions' logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.actions")


class ShadowHooks:
    """The shadows' side of :class:`~driftwatch.service.actions.ServiceActions` (see the
    module docstring); a mixin, it holds no state of its own."""

    def attach(self, model: str, monitor: Any) -> None:
        """Give the model's monitor the executor's hooks: live prediction batches go to the
        challengers in shadow, and ``max_concurrent_retrains`` counts the pool's jobs."""
        ma = self.models[model]
        if ma.executor is None:
            return
        executor = ma.executor

        def score(schema: Any, batch: Any, first: int, lineage: str) -> None:
            with self._lock:
                executor.observe_batch(model, schema, batch, first, lineage)

        def observe(batch: Any) -> None:  # the loop's thread: hand over, never wait
            # the monitor has counted the batch: its first event's index (checkpointed with
            # the offsets) and lineage, taken now, let a re-read batch count once
            first, lineage = monitor.n_events - len(batch), monitor.lineage
            executor.env.live_position = (lineage, monitor.n_events)  # where new shadows start
            if not len(batch) or not executor.shadows_running(model):
                return
            schema = monitor.profile.schema
            lane = self.lanes.get("mlflow")
            if lane is None:
                score(schema, batch, first, lineage)
            elif not lane.post(lambda: score(schema, batch, first, lineage)):
                self.metrics.record_shadow_dropped(model)
                self._dropped += 1
                if self._dropped in (1, 10, 100) or self._dropped % 1000 == 0:
                    log.warning("%s: the shadow scorer is busy (MLflow slow or down?): %d "
                                "live batches left unscored so far", model, self._dropped)

        def running() -> int:  # outbox and pool are thread-safe: no lock to wait for
            return int(executor.active_retrains(model))

        monitor.on_predictions = observe
        monitor.retrains_running = running

    def shadow_snapshots(self) -> dict[str, dict[str, Any]]:
        """Per model with a shadow running: fields of :class:`~driftwatch.metrics.ModelSnapshot`."""
        # The light module only: a scrape must never wait on importing MLflow.
        from driftwatch.actions.shadow_eval import SHADOW_KEY, ShadowEvaluation

        out: dict[str, dict[str, Any]] = {}
        for m, ma in self.models.items():
            for rec in ma.outbox.list(states=[ActionState.RUNNING], model=m):
                stored = rec.artifacts.get(SHADOW_KEY) if rec.action == "shadow" else None
                if not stored:
                    continue
                ev = ShadowEvaluation.from_dict(stored)
                champ, chall = ev.champion.metrics(), ev.challenger.metrics()
                out[m] = {"shadow_active": True,
                          "shadow_metrics": {"champion": champ, "challenger": chall},
                          "shadow_labelled": int(champ.get("labelled", 0))}
        return out
