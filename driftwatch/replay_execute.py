"""``driftwatch replay --execute``: run the decided actions while replaying.

Embedded defaults, as in the daemon: the outbox and a local MLflow store under the state
folder, and a local GPU pool (``gpus`` logical devices, 20% reserved for retraining;
a CPU-only job still leases one). Time is the replay's event time for decisions and
shadow deadlines, and the wall clock for the pool's real subprocesses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from driftwatch.clock import EventTimeClock, SystemClock
from driftwatch.pipeline import ModelMonitor, WindowResult

__all__ = ["ReplayActions"]

#: Logical GPUs of the embedded local pool (20% reserved: 2 for retraining).
DEFAULT_GPUS = 10


class ReplayActions:
    """Submits each decision's action to the outbox and runs what is pending."""

    def __init__(
        self,
        state_dir: str | Path,
        monitor: ModelMonitor,
        *,
        reference: str | Path,
        gpus: int = DEFAULT_GPUS,
        tracking_uri: str | None = None,
    ) -> None:
        from driftwatch.actions.context import shadow_defaults
        from driftwatch.actions.executor import ActionExecutor
        from driftwatch.gpupool import GpuPool
        from driftwatch.registry.bootstrap import ensure_champion
        from driftwatch.windows.profile import read_reference_table

        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.monitor = monitor
        self.clock = EventTimeClock()
        self.reference = str(reference)
        self.pool = GpuPool(self.state_dir / "pool", clock=SystemClock(), gpus=gpus)
        self.executor = ActionExecutor.open(
            self.state_dir,
            clock=self.clock,
            tracking_uri=tracking_uri,
            pool=self.pool,
            buffer=monitor.labelled_buffer,
            reference_path=self.reference,
            shadow_defaults=shadow_defaults(monitor.policy),
            on_promote=self._adopt,
        )
        df = read_reference_table(self.reference)
        if monitor.policy is not None:  # the champion reads columns score, label, decision
            df = monitor.policy.reference.conventions().canonical(df)
        ensure_champion(
            self.executor.env.registry, monitor.model, df, at=0.0, profile=monitor.profile
        )

    def _adopt(self, model: str, version: str, profile: Any) -> None:
        self.monitor.set_profile(profile)
        self.executor.set_buffer(self.monitor.labelled_buffer)

    def on_window(self, res: WindowResult) -> None:
        self.clock.observe(res.window.end_time)
        d = res.decision
        if d is None or not d.action:
            return
        from driftwatch.actions.context import ActionContext

        ctx = ActionContext(
            window_start=res.window.start_time,
            window_end=res.window.end_time,
            reference=self.reference,
            extra={"first_index": res.window.first_index, "last_index": res.window.last_index},
        )
        self.executor.submit(d, ctx)

    def step(self) -> None:
        """Between polls: move pending actions on (training, pool jobs, shadows)."""
        self.executor.set_buffer(self.monitor.labelled_buffer)
        self.executor.run_pending()

    def finish(self, timeout_s: float = 900.0) -> list[Any]:
        """At the end of the recording: wait for pool jobs; returns actions still open."""
        return self.executor.drain(timeout_s)

    def export(self, path: str | Path) -> Path:
        """The audit trail, one action a line (what the report reads)."""
        import orjson

        from driftwatch.actions.audit import AuditTrail

        out = Path(path)
        with out.open("wb") as fh:
            for entry in AuditTrail(self.executor.outbox).entries():
                fh.write(
                    orjson.dumps(
                        entry,
                        option=orjson.OPT_SORT_KEYS
                        | orjson.OPT_APPEND_NEWLINE
                        | orjson.OPT_NON_STR_KEYS,
                    )
                )
        return out

    def close(self) -> None:
        self.executor.close()
        self.pool.close()
