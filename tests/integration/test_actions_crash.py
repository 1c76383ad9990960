"""Crash safety: a process running the executor is killed (SIGKILL, as a power cut would)
between "decision recorded" and "action finished", again and again, at a different point
each time; after each restart it resumes, and in the end every action has completed
exactly once: one model version per action, one MLflow run, one pool job.

The points come from the executor's test hook ``DRIFTWATCH_CRASH_AT`` (see
:mod:`driftwatch.actions.steps`): the process kills itself when it reaches the point, so
the test decides where it dies, not a timer.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlflow import MlflowClient

from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.versions import CHALLENGER, TAG_ACTION_KEY
from driftwatch.testing.generator import reference_table

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
MODEL = "credit-risk"
ONLINE_KEY = "credit-risk:mild:1"
RETRAIN_KEY = "credit-risk:severe:2"

# Where each run dies, in order; the last run (no point) finishes what is left.
CRASHES = [
    "recorded",  # the online update's decision is durable, nothing else happened
    "export:effect",  # its window was written, the step not marked done
    "train:effect",  # the candidate model was trained and saved, not marked done
    "publish:effect",  # the version is registered in MLflow, not marked done
    "finish",  # every step done, the outcome not yet written
    "submit_job:effect",  # the retraining job is queued in the pool, not marked done
    "submit_job:done",  # the job was started by the pool; the daemon dies while it runs
    "challenger:effect",  # the job's version got the challenger alias, not marked done
    None,
]

DRIVER = r"""
import json, sys, time
from pathlib import Path
import pandas as pd
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.clock import SystemClock
from driftwatch.gpupool import GpuPool
from driftwatch.policy.decision import Decision
from driftwatch.registry.bootstrap import ensure_champion
from driftwatch.windows.profile import ReferenceProfile

state, reference_path, window_path = (Path(a) for a in sys.argv[1:4])
decisions = [Decision.from_dict(d) for d in json.loads(sys.argv[4])]
clock = SystemClock()
reference = pd.read_parquet(reference_path)
profile = ReferenceProfile.build(reference)
buffer = LabelledBuffer(profile.schema, capacity=5000)
buffer.add_frame(pd.read_parquet(window_path))
pool = GpuPool(state / "gpupool", clock=clock, gpus=10)
ex = ActionExecutor.open(state, clock=clock, pool=pool, buffer=buffer,
                         reference_path=str(reference_path),
                         shadow_defaults={"min_labelled": 100000, "require_approval": False})
ensure_champion(ex.registry, "credit-risk", reference, at=clock.now(), profile=profile)
ex.resume()
for d in decisions:
    ex.submit(d, {"window_start": 0.0, "window_end": 1.0})
deadline = time.monotonic() + 150
keys = [d.key for d in decisions]
while time.monotonic() < deadline:
    ex.run_pending()
    if all(ex.outbox.by_key(k).state.is_final for k in keys):
        break
    time.sleep(0.3)
print(json.dumps({r.key: r.state.value for r in ex.outbox.list()}))
"""


def _decisions(reference: Path) -> str:
    online = Decision(
        MODEL,
        1,
        1.0,
        Tier.MILD,
        Tier.MILD,
        action="online_update",
        action_settings={"type": "online_update", "opt_in": True, "min_labelled": 200},
    )
    retrain = Decision(
        MODEL,
        2,
        1.0,
        Tier.SEVERE,
        Tier.SEVERE,
        action="retrain",
        action_settings={
            "type": "retrain",
            "time_limit": "10m",
            "argv": [
                "python",
                str(REPO / "examples/retrain_job.py"),
                "--reference",
                str(reference),
                "--model-name",
                MODEL,
                "--epochs",
                "1",
            ],
        },
    )
    return json.dumps([online.to_dict(), retrain.to_dict()])


def _run(
    state: Path, reference: Path, window: Path, crash_at: str | None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DRIFTWATCH_CRASH_AT"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"
    if crash_at:
        env["DRIFTWATCH_CRASH_AT"] = crash_at
    argv = [
        sys.executable,
        "-c",
        DRIVER,
        str(state),
        str(reference),
        str(window),
        _decisions(reference),
    ]
    return subprocess.run(
        argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=240, check=False
    )


def test_every_action_completes_exactly_once_across_crashes(tmp_path: Path):
    reference = tmp_path / "reference.parquet"
    reference_table(3000, seed=0).to_pandas().to_parquet(reference)
    window = tmp_path / "window.parquet"
    labelled = reference_table(800, seed=11).to_pandas()
    labelled["label"] = (np.random.default_rng(3).random(800) < 0.3) * 1.0
    labelled.to_parquet(window)
    state = tmp_path / "state"

    for point in CRASHES:
        done = _run(state, reference, window, point)
        where = f"run crashing at {point!r}:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        if point is None:
            assert done.returncode == 0, where
        else:
            assert done.returncode == -signal.SIGKILL, where  # it did reach the point

    final = json.loads(done.stdout.strip().splitlines()[-1])
    assert final[ONLINE_KEY] == "succeeded"
    assert final[RETRAIN_KEY] == "succeeded"
    assert final[f"{RETRAIN_KEY}:shadow"] == "running"  # the retrained model is in shadow

    uri = f"sqlite:///{state / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    versions = client.search_model_versions(f"name = '{MODEL}'")
    keys = sorted(v.tags.get(TAG_ACTION_KEY, "") for v in versions)
    assert keys == ["credit-risk:bootstrap:0", ONLINE_KEY, RETRAIN_KEY]  # one each
    experiment = client.get_experiment_by_name(f"driftwatch/{MODEL}")
    for key in (ONLINE_KEY, RETRAIN_KEY):
        runs = client.search_runs(
            [experiment.experiment_id], filter_string=f"tags.`{TAG_ACTION_KEY}` = '{key}'"
        )
        assert [r.info.status for r in runs] == ["FINISHED"], key
    retrained = next(v for v in versions if v.tags.get(TAG_ACTION_KEY) == RETRAIN_KEY)
    assert client.get_model_version_by_alias(MODEL, CHALLENGER).version == retrained.version

    pool_db = sqlite3.connect(state / "gpupool" / "gpupool.sqlite3")
    jobs = pool_db.execute("SELECT key, state, record FROM jobs").fetchall()
    pool_db.close()
    assert [(k, s) for k, s, _ in jobs] == [(RETRAIN_KEY, "succeeded")]  # one job, once
    assert json.loads(jobs[0][2])["attempts"] == 1

    box = sqlite3.connect(state / "outbox.sqlite3")
    done_steps = box.execute(
        "SELECT a.key, s.step, COUNT(*) FROM steps s JOIN actions a ON a.id = s.action_id "
        "WHERE s.status = 'done' AND s.step NOT IN ('state') GROUP BY a.key, s.step"
    ).fetchall()
    box.close()
    assert all(count == 1 for _, _, count in done_steps), done_steps
    assert {(k, s) for k, s, _ in done_steps} >= {
        (ONLINE_KEY, "export"),
        (ONLINE_KEY, "train"),
        (ONLINE_KEY, "publish"),
        (ONLINE_KEY, "alias"),
        (RETRAIN_KEY, "submit_job"),
        (RETRAIN_KEY, "find_version"),
        (RETRAIN_KEY, "challenger"),
        (RETRAIN_KEY, "shadow"),
    }
