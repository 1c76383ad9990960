"""``limits.max_concurrent_retrains``, per-day limits and cooldowns are enforced from the
pool's job records, across restarts.

The pool runs on a scripted backend (a job ends when the test says so) and a ManualClock;
the executor and its MLflow store are real (embedded SQLite).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.actions.retrain_limits import DECIDED_AT_ENV, RetrainLimits
from driftwatch.clock import ManualClock
from driftwatch.gpupool import Backend, Exit, GpuPool, Launch
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.versions import TAG_ACTION_KEY
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

MODEL = "credit-risk"
DAY = 86400.0


class Scripted(Backend):
    name = "scripted"

    def __init__(self) -> None:
        self.exits: dict[str, Exit] = {}
        self.running: list[str] = []

    def start(self, launch: Launch) -> dict[str, Any]:
        self.running.append(launch.job_id)
        return {"run": launch.job_id}

    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        return self.exits.get(handle["run"])

    def stop(self, handle: Mapping[str, Any], *, force: bool) -> None:
        self.exits.setdefault(handle["run"], Exit(-15))

    def end_all(self) -> None:
        for job in self.running:
            self.exits.setdefault(job, Exit(0))


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    path = tmp_path / "ref.parquet"
    pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4] * 10, "label": [0, 1] * 20}).to_parquet(path)
    return path


def _executor(state: Path, clock: ManualClock, backend: Backend, reference: Path,
              limit: int, limits: RetrainLimits | None = None) -> ActionExecutor:
    pool = GpuPool(state / "pool", clock=clock, backend=backend, gpus=10)
    return ActionExecutor(Outbox(state, clock=clock), MlflowRegistry.embedded(state), pool,
                          clock, reference_path=str(reference), max_concurrent_retrains=limit,
                          retrain_limits=limits)


def _severe(window: int, at: float) -> Decision:
    settings = {"type": "retrain", "argv": ["python", "train.py"], "gpus": 1,
                "time_limit": "2h", "retries": 0}
    return Decision(MODEL, window, at, Tier.SEVERE, Tier.SEVERE, action="retrain",
                    action_settings=settings)


def test_five_severe_episodes_never_overlap_on_the_pool(tmp_path: Path, reference: Path) -> None:
    clock = ManualClock(1_700_000_000.0)
    backend = Scripted()
    ex = _executor(tmp_path / "state", clock, backend, reference, limit=1)
    # the worst case: five decisions recorded at once (the engine's own gate bypassed, as
    # manual retrains are); the executor still runs their jobs one at a time
    ids = [ex.submit(_severe(10 * i, clock.now())) for i in range(5)]
    notes = set()
    for _ in range(30):
        ex.run_pending()
        notes |= {r.note for r in ex.outbox.list() if r.note}
        if all(ex.outbox.get(i).state.value in ("succeeded", "failed") for i in ids):  # type: ignore[arg-type]
            break
        clock.advance(600.0)
        backend.end_all()
    jobs = sorted((j for j in ex.env.pool.status().jobs), key=lambda j: j.started_at or 0)
    assert len(jobs) == 5 and all(j.state.is_final for j in jobs)
    for before, after in itertools.pairwise(jobs):
        assert before.ended_at is not None and after.started_at is not None
        assert after.started_at >= before.ended_at, (before.job_id, after.job_id)
    assert any(n.startswith("waits for a retraining slot: 1 of 1 in use") for n in notes)
    ex.close()


def test_a_restarted_daemon_counts_the_job_it_left_running(
    tmp_path: Path, reference: Path
) -> None:
    clock = ManualClock(1_700_000_000.0)
    backend = Scripted()
    state = tmp_path / "state"
    ex = _executor(state, clock, backend, reference, limit=1)
    first = ex.submit(_severe(3, clock.now()))
    ex.run_pending()
    assert ex.outbox.get(first).state is ActionState.RUNNING  # type: ignore[arg-type]
    assert ex.active_retrains(MODEL) == 1
    ex.env.pool.close()  # type: ignore[union-attr]
    ex.close()

    # a new process: the job is still running in the pool's durable records
    ex2 = _executor(state, clock, backend, reference, limit=1)
    assert ex2.active_retrains(MODEL) == 1
    assert ex2.active_retrains("another-model") == 0
    monitor = ModelMonitor(MODEL, ReferenceProfile.build(pd.read_parquet(reference)),
                           WindowSpec(kind="count", pane_size=10))
    assert monitor.running_retrains == 0  # actions not wired: nothing runs
    monitor.retrains_running = lambda: ex2.active_retrains(MODEL)
    assert monitor.running_retrains == 1  # what the policy engine's gate reads
    second = ex2.submit(_severe(9, clock.now() + DAY))
    ex2.run_pending()
    assert "waits for a retraining slot" in ex2.outbox.get(second).note  # type: ignore[arg-type]
    backend.end_all()
    clock.advance(60.0)
    ex2.run_pending()  # the first job ends (it registered no version: failed)
    ex2.run_pending()  # now the second one gets the slot
    jobs = ex2.env.pool.status().jobs  # type: ignore[union-attr]
    assert sorted(j.key for j in jobs) == [f"{MODEL}:severe:3", f"{MODEL}:severe:9"]
    ex2.close()


def _restart(ex: ActionExecutor, state: Path, clock: ManualClock, backend: Backend,
             reference: Path, limits: RetrainLimits) -> ActionExecutor:
    """Close ``ex`` and open a new executor on the same folders (a restarted daemon, whose
    policy engine starts from nothing)."""
    ex.env.pool.close()  # type: ignore[union-attr]
    ex.close()
    return _executor(state, clock, backend, reference, limit=5, limits=limits)


def _keys(ex: ActionExecutor) -> list[str]:
    return sorted(j.key or "" for j in ex.env.pool.status().jobs)  # type: ignore[union-attr]


def test_the_per_day_limit_is_read_from_the_pools_records_after_a_restart(
    tmp_path: Path, reference: Path
) -> None:
    t0 = 1_700_000_000.0
    clock, backend, state = ManualClock(t0), Scripted(), tmp_path / "state"
    limits = RetrainLimits(per_day={"severe": 1})
    ex = _executor(state, clock, backend, reference, limit=5, limits=limits)
    ex.submit(_severe(3, t0))
    ex.run_pending()
    (job,) = ex.env.pool.status().jobs  # type: ignore[union-attr]
    assert float(job.spec.env[DECIDED_AT_ENV]) == t0  # the decision's time, in the record

    # a restarted daemon whose engine forgot the first one decides again 3 hours later
    ex = _restart(ex, state, clock, backend, reference, limits)
    clock.set(t0 + 3 * 3600)
    second = ex.submit(_severe(9, t0 + 3 * 3600))
    ex.run_pending()
    rec = ex.outbox.get(second)
    assert rec is not None and rec.state is ActionState.CANCELLED
    assert rec.note == ("held back by the pool's job records: 1 severe retraining job(s) "
                        "decided in the 24 hours before; limits.max_actions_per_day.severe is 1")
    assert rec.outcome == {"held_back": rec.note}
    assert _keys(ex) == [f"{MODEL}:severe:3"]
    third = ex.submit(_severe(20, t0 + DAY))  # the first job's day is over
    ex.run_pending()
    assert ex.outbox.get(third).state is ActionState.RUNNING  # type: ignore[union-attr]
    assert _keys(ex) == [f"{MODEL}:severe:20", f"{MODEL}:severe:3"]
    ex.close()


def test_a_cooldown_is_read_from_the_pools_records_after_a_restart(
    tmp_path: Path, reference: Path
) -> None:
    t0 = 1_700_000_000.0
    clock, backend, state = ManualClock(t0), Scripted(), tmp_path / "state"
    limits = RetrainLimits(cooldown={"severe": 14 * DAY})
    ex = _executor(state, clock, backend, reference, limit=5, limits=limits)
    ex.submit(_severe(3, t0))
    ex.run_pending()
    backend.end_all()  # the job ends (it registered no version: the action fails)
    clock.advance(60.0)
    ex.run_pending()

    ex = _restart(ex, state, clock, backend, reference, limits)
    second = ex.submit(_severe(9, t0 + 3 * DAY))
    ex.run_pending()
    rec = ex.outbox.get(second)
    assert rec is not None and rec.state is ActionState.CANCELLED
    assert rec.note == ("held back by the pool's job records: cooldown: job credit-risk:severe:3 "
                        "(severe) was decided 3.0 days before; the policy's cooldown.severe is "
                        "14.0 days")
    assert _keys(ex) == [f"{MODEL}:severe:3"]
    ex.submit(_severe(30, t0 + 14 * DAY))
    ex.run_pending()
    assert _keys(ex) == [f"{MODEL}:severe:3", f"{MODEL}:severe:30"]
    ex.close()


def test_the_limits_come_from_the_policy() -> None:
    from driftwatch.policy.loader import load_policy

    policy = load_policy(Path(__file__).resolve().parents[2] / "policies/credit-risk-demo.yaml")
    limits = RetrainLimits.from_policy(policy)
    assert limits.per_day == {"mild": 4, "moderate": 1, "severe": 1}
    assert limits.cooldown == {"mild": 7 * DAY, "moderate": 21 * DAY, "severe": 14 * DAY}


class RegistersElsewhere(Scripted):
    """A job that succeeds and registers its version under a name of its own (a policy's
    argv copied with ``--model-name credit-risk`` for another model)."""

    def __init__(self, registry: MlflowRegistry) -> None:
        super().__init__()
        self.registry = registry

    def start(self, launch: Launch) -> dict[str, Any]:
        client = self.registry.client
        client.create_registered_model("credit-risk-copy")
        client.create_model_version("credit-risk-copy", source="file:///nowhere/model",
                                    tags={TAG_ACTION_KEY: launch.env["DRIFTWATCH_ACTION_KEY"]})
        self.exits[launch.job_id] = Exit(0)
        return {"run": launch.job_id}


def test_a_job_that_registers_under_another_name_is_told_so(
    tmp_path: Path, reference: Path
) -> None:
    clock = ManualClock(1_700_000_000.0)
    state = tmp_path / "state"
    registry = MlflowRegistry.embedded(state)
    pool = GpuPool(state / "pool", clock=clock, backend=RegistersElsewhere(registry), gpus=10)
    ex = ActionExecutor(Outbox(state, clock=clock), registry, pool, clock,
                        reference_path=str(reference))
    action_id = ex.submit(_severe(3, clock.now()))
    for _ in range(5):
        ex.run_pending()
        clock.advance(60.0)
    rec = ex.outbox.get(action_id)
    assert rec is not None and rec.state is ActionState.FAILED
    assert rec.error is not None and rec.error.endswith(
        f"registered no version of '{MODEL}' tagged driftwatch.action_key={MODEL}:severe:3; "
        "it registered 'credit-risk-copy' v1 with that tag: the job must register under "
        f"$DRIFTWATCH_MODEL_NAME ('{MODEL}'), not a model name of its own (its argv's "
        "--model-name?)"), rec.error
    ex.close()
