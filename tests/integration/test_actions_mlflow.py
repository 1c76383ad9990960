"""Shadow deployments and retraining, end to end, on the embedded MLflow store and a real
local GPU pool running ``examples/retrain_job.py``.

The labelled stream is the demo generator's population with outcomes a little worse than
the champion predicts (concept drift), fed to the labelled buffer the way the pipeline
does; GPUs are logical ids (10 of them, 20 % reserved), so no GPU is needed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.actions.audit import AuditTrail
from driftwatch.actions.context import ActionContext
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock, SystemClock
from driftwatch.gpupool import GpuPool
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.bootstrap import ensure_champion
from driftwatch.registry.versions import (
    CHALLENGER,
    CHAMPION,
    TAG_ACTION_KEY,
    TAG_PROFILE,
    TAG_VERDICT,
)
from driftwatch.testing.generator import reference_table
from driftwatch.windows.profile import ReferenceProfile

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
REPO = Path(__file__).resolve().parents[2]
JOB = REPO / "examples" / "retrain_job.py"
CONTEXT = ActionContext(window_start=1_699_000_000.0, window_end=1_699_999_000.0)


def drifted(n: int, seed: int, shift: float = 0.8) -> pd.DataFrame:
    df = reference_table(n, seed=seed).to_pandas()
    logit = np.log(df["score"] / (1 - df["score"])) + shift
    df["label"] = (np.random.default_rng(seed + 7).random(n) < 1 / (1 + np.exp(-logit))) * 1.0
    return df


@pytest.fixture(scope="module")
def reference_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ref") / "reference.parquet"
    reference_table(4000, seed=0).to_pandas().to_parquet(path)
    return path


@pytest.fixture
def setup(tmp_path: Path, reference_file: Path) -> Iterator[tuple[ActionExecutor, list]]:
    reference = pd.read_parquet(reference_file)
    profile = ReferenceProfile.build(reference)
    buffer = LabelledBuffer(profile.schema, capacity=10_000)
    buffer.add_frame(drifted(1500, seed=1))
    promoted: list[tuple[str, str, str]] = []
    ex = ActionExecutor.open(
        tmp_path / "state",
        clock=ManualClock(1_700_000_000.0),
        buffer=buffer,
        cutoff=0.25,
        reference_path=str(reference_file),
        on_promote=lambda m, v, p: promoted.append((m, v, p.fingerprint)),
    )
    ensure_champion(ex.registry, MODEL, reference, at=0.0, profile=profile)
    yield ex, promoted
    ex.close()


def moderate(window_id: int, **settings: object) -> Decision:
    return Decision(
        MODEL,
        window_id,
        1_699_999_000.0,
        Tier.MODERATE,
        Tier.MODERATE,
        action="shadow",
        action_settings={"type": "shadow", **settings},
        requires_approval=bool(settings.get("require_approval", True)),
        policy="credit-risk-demo",
        policy_digest="sha256:feed",
    )


def test_a_winning_challenger_waits_for_approval_then_replaces_the_champion(setup):
    ex, promoted = setup
    action_id = ex.submit(moderate(5, metric="log_loss", margin=0.0, min_labelled=1000), CONTEXT)
    [rec] = ex.run_pending()
    assert rec.state is ActionState.RUNNING and rec.note == "0 of 1000 labelled outcomes"
    challenger = ex.registry.by_alias(MODEL, CHALLENGER)
    assert challenger is not None and challenger.tags[TAG_ACTION_KEY] == "credit-risk:moderate:5"

    live = reference_table(2000, seed=8).to_pandas()  # applications scored, no outcome yet
    ex.observe_predictions(MODEL, live, live["score"].to_numpy())
    ex.env.buffer.add_frame(drifted(1200, seed=2))  # outcomes the challenger never saw
    [rec] = ex.run_pending()
    assert rec.state is ActionState.AWAITING_APPROVAL, rec.error
    assert "beats" in (rec.note or "")
    assert ex.registry.by_alias(MODEL, CHAMPION).version == "1"  # nothing changed yet
    ev = rec.artifacts["shadow"]["metrics"]
    assert ev["challenger"]["log_loss"] < ev["champion"]["log_loss"]
    assert ev["champion"]["labelled"] == 1200
    # approval rate and expected loss at the cut-off come from the live traffic, both
    # versions scoring the same rows
    champion_approves = float((ex.env.scorer(MODEL, "1").score(live) <= 0.25).mean())
    assert ev["champion"]["live"] == ev["challenger"]["live"] == len(live)
    assert ev["champion"]["approval_rate"] == pytest.approx(champion_approves)
    assert ev["challenger"]["approval_rate"] < ev["champion"]["approval_rate"]  # more cautious
    assert ev["challenger"]["expected_loss"] > 0

    ex.approve(action_id, "ana.risk")
    [rec] = ex.run_pending()
    assert rec.state is ActionState.SUCCEEDED and rec.outcome["verdict"] == "promoted"
    v = challenger.version
    assert ex.registry.by_alias(MODEL, CHAMPION).version == v
    assert ex.registry.by_alias(MODEL, CHALLENGER) is None
    # the monitor is handed the new champion's reference profile
    assert promoted == [(MODEL, v, ex.registry.get_version(MODEL, v).tags[TAG_PROFILE])]

    assert ex.rollback(MODEL, "ops") == "1"
    assert ex.registry.by_alias(MODEL, CHAMPION).version == "1"
    entry = AuditTrail(ex.outbox).entry(action_id)
    assert entry["approver"] == "ana.risk"
    assert {"challenger", "verdict", "promote", "adopt_profile"} <= {
        s["step"] for s in entry["steps"] if s["status"] == "done"
    }
    assert [a["command"] for a in AuditTrail(ex.outbox).admin_calls()] == ["approve", "rollback"]


def test_a_challenger_that_does_not_win_by_the_margin_is_discarded(setup):
    ex, promoted = setup
    ex.submit(moderate(6, metric="auc", margin=0.2, min_labelled=500, require_approval=False))
    ex.run_pending()
    version = ex.registry.by_alias(MODEL, CHALLENGER).version
    ex.env.buffer.add_frame(drifted(800, seed=3))
    [rec] = ex.run_pending()
    assert rec.state is ActionState.SUCCEEDED and rec.outcome["verdict"] == "discarded"
    assert "does not beat" in rec.outcome["reason"]
    assert ex.registry.by_alias(MODEL, CHALLENGER) is None
    assert ex.registry.get_version(MODEL, version).tags[TAG_VERDICT] == "discarded"
    assert ex.registry.by_alias(MODEL, CHAMPION).version == "1" and promoted == []


def test_cancelling_a_shadow_takes_the_challenger_out(setup):
    ex, _ = setup
    action_id = ex.submit(moderate(7, min_labelled=5000))
    ex.run_pending()
    version = ex.registry.by_alias(MODEL, CHALLENGER).version
    ex.cancel(action_id, "ops", "wrong population")
    assert ex.outbox.get(action_id).state is ActionState.CANCELLED
    assert ex.registry.by_alias(MODEL, CHALLENGER) is None
    assert ex.registry.get_version(MODEL, version).tags[TAG_VERDICT] == "cancelled"


def test_retraining_runs_on_the_pool_and_its_model_goes_to_shadow(setup, reference_file):
    ex, _ = setup
    pool = GpuPool(ex.outbox.state_dir / "gpupool", clock=SystemClock(), gpus=10)
    ex.env.pool = pool
    ex.env.shadow_defaults = {"metric": "log_loss", "min_labelled": 600, "require_approval": False}
    settings = {
        "type": "retrain",
        "gpus": 1,
        "time_limit": "10m",
        "retries": 0,
        "argv": [
            "python",
            str(JOB),
            "--reference",
            str(reference_file),
            "--model-name",
            MODEL,
            "--epochs",
            "2",
        ],
    }
    decision = Decision(
        MODEL,
        9,
        1_699_999_000.0,
        Tier.SEVERE,
        Tier.SEVERE,
        action="retrain",
        action_settings=settings,
    )
    action_id = ex.submit(decision, CONTEXT)
    still_open = ex.drain(timeout_s=240, interval_s=0.5)
    rec = ex.outbox.get(action_id)
    job = pool.get(rec.artifacts["job_id"])
    log = Path(job.log_path).read_text() if job.log_path else ""
    assert rec.state is ActionState.SUCCEEDED, f"{rec.error}\n{log[-3000:]}"
    assert job.state.value == "succeeded" and job.key == "credit-risk:severe:9"
    assert job.lease == () and "epoch 2/2 done" in log

    version = ex.registry.find_version(MODEL, "credit-risk:severe:9")
    assert version is not None and rec.outcome["version"] == version.version
    assert ex.registry.by_alias(MODEL, CHALLENGER).version == version.version
    assert ex.registry.by_alias(MODEL, CHAMPION).version == "1"  # shadow first
    run = ex.registry.client.get_run(version.run_id)
    assert run.data.params["action"] == "retrain" and "holdout_auc" in run.data.metrics
    assert run.data.metrics["window_rows"] == 1500.0  # the exported window was trained on

    [shadow] = [r for r in still_open if r.action == "shadow"]
    assert shadow.parent_id == action_id and shadow.key == "credit-risk:severe:9:shadow"
    assert shadow.context["extra"]["challenger_version"] == version.version
    ex.env.buffer.add_frame(drifted(700, seed=4))
    [shadow] = ex.run_pending()
    assert shadow.state is ActionState.SUCCEEDED, shadow.error
    assert shadow.outcome["verdict"] in ("promoted", "discarded")
    expected_champion = version.version if shadow.outcome["verdict"] == "promoted" else "1"
    assert ex.registry.by_alias(MODEL, CHAMPION).version == expected_champion
    pool.close()


def test_the_example_job_resumes_from_its_checkpoint(tmp_path: Path, reference_file: Path):
    import subprocess

    env = {
        "PYTHONPATH": str(REPO),
        "PATH": os.environ.get("PATH", ""),
        "DRIFTWATCH_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "DRIFTWATCH_ACTION_KEY": "credit-risk:severe:1",
        "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}",
    }
    argv = [sys.executable, str(JOB), "--reference", str(reference_file), "--model-name", MODEL]
    first = subprocess.run(
        [*argv, "--epochs", "1"], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert first.returncode == 0, first.stderr[-2000:]
    second = subprocess.run(
        [*argv, "--epochs", "2"], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert second.returncode == 0, second.stderr[-2000:]
    assert "resuming from the checkpoint after epoch 1" in second.stdout
    assert "epoch 1/2" not in second.stdout and "epoch 2/2 done" in second.stdout
    # both runs share the action key: one registered version, not two
    assert "registered credit-risk v1" in first.stdout
    assert "registered credit-risk v1" in second.stdout
