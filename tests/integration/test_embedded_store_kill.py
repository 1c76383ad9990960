"""SIGKILL at random points of the embedded MLflow store's creation: the next start recovers.

Each try kills a real process that is creating ``<state>/mlflow.db`` after a random delay
(spread over the whole creation, measured once), then opens the store with the daemon's
own code (``MlflowRegistry.embedded``) and uses it. Half the tries create the store the
way driftwatch does (whole, under a temporary name); the other half the way MLflow does
by itself (in place, table by table: what an older driftwatch or another tool leaves),
which the start must repair. The processes come from a fork server that has MLflow
imported already, so a try costs one creation, not an interpreter start.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from driftwatch.errors import StateError
from driftwatch.registry.embedded_store import create_store, ensure_store, inspect_store

pytestmark = pytest.mark.integration

TRIES = 20


@pytest.fixture(scope="module")
def forks():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["driftwatch.registry.embedded_store",
                                "mlflow.store.tracking.sqlalchemy_store"])
    return ctx


def _creation_seconds(ctx, root: Path) -> float:
    root.mkdir()
    start = time.monotonic()
    p = ctx.Process(target=ensure_store, args=(root / "mlflow.db",))
    p.start()
    p.join(120)
    assert p.exitcode == 0
    assert inspect_store(root / "mlflow.db").complete
    return time.monotonic() - start


def _usable(state: Path) -> None:
    from driftwatch.registry.mlflow_registry import MlflowRegistry

    reg = MlflowRegistry.embedded(state)
    exp = reg.experiment_id("credit-risk")
    assert exp == reg.experiment_id("credit-risk")  # found again, not created twice
    assert reg.find_run("credit-risk", "credit-risk:mild:1") is None
    assert reg.versions("credit-risk") == []
    assert inspect_store(state / "mlflow.db").complete
    assert not list(state.glob("mlflow.db.creating-*"))  # leftovers of the kill are gone


def test_a_kill_at_any_point_of_creation_leaves_a_store_the_next_start_can_use(
        tmp_path, forks):
    rng = random.Random(15)
    span = _creation_seconds(forks, tmp_path / "probe") * 1.2  # some kills land after it
    outcomes = {"absent": 0, "complete": 0, "incomplete": 0}
    for i in range(TRIES):
        state = tmp_path / f"try{i}"
        state.mkdir()
        # driftwatch's way (whole, then renamed), MLflow's own (in place)
        target = ensure_store if i % 2 == 0 else create_store
        args = (state / "mlflow.db",) if target is ensure_store else (state / "mlflow.db",
                                                                       state / "mlruns")
        p = forks.Process(target=target, args=args)
        p.start()
        time.sleep(rng.uniform(0.0, span))
        if p.is_alive():
            os.kill(p.pid, signal.SIGKILL)
        p.join(30)
        assert p.exitcode in (0, -signal.SIGKILL), (i, p.exitcode)  # killed, or it finished
        db = state / "mlflow.db"
        if not db.exists():
            outcomes["absent"] += 1
        else:
            outcomes["complete" if inspect_store(db).complete else "incomplete"] += 1
        if target is ensure_store:  # whole or not at all, never half
            assert not db.exists() or inspect_store(db).complete, i
        _usable(state)
    # the kills did land inside creations, not only before or after them
    assert outcomes["absent"] + outcomes["incomplete"] > 0, outcomes


def test_an_incomplete_store_that_holds_data_is_refused_not_rebuilt(tmp_path):
    db = ensure_store(tmp_path / "mlflow.db")
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO experiments (experiment_id, name, lifecycle_stage) "
                    "VALUES (7, 'kept', 'active')")
        con.execute("UPDATE alembic_version SET version_num = 'an-older-one'")
    con.close()
    before = db.read_bytes()
    with pytest.raises(StateError, match=r"incomplete \(schema version an-older-one.*holds 1 "
                                         r"rows.*mlflow db upgrade"):
        ensure_store(db)
    assert db.read_bytes() == before
