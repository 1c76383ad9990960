"""driftwatch against a real ``mlflow server`` process on loopback.

The server (fixture ``mlflow_server``, from :mod:`driftwatch.testing.mlflow_server`) keeps
its runs and registry in SQLite and serves artifacts itself (``--serve-artifacts``), as a
team's shared tracking server would. Through it: the champion
is bootstrapped, an online update registers a challenger, a promotion and a rollback move
the aliases, and every run holds its model and reference profile.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient

from driftwatch.actions.context import ActionContext
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.bootstrap import ensure_champion
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.promotion import promote, rollback
from driftwatch.registry.retry import Retry
from driftwatch.registry.versions import (
    CHALLENGER,
    CHAMPION,
    PROFILE_ARTIFACT,
    TAG_ACTION_KEY,
    TAG_PARENT,
    TAG_PREVIOUS_CHAMPION,
    TAG_VERDICT,
)
from driftwatch.testing.generator import reference_table
from driftwatch.windows.profile import ReferenceProfile

pytestmark = pytest.mark.integration

MODEL = "credit-risk"


@pytest.fixture
def remote(mlflow_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> MlflowRegistry:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    return MlflowRegistry(mlflow_server[0], retry=Retry(attempts=3, base_delay=0.2))


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return reference_table(3000, seed=0).to_pandas()


def test_bootstrap_and_online_update_through_the_server(
    remote: MlflowRegistry,
    mlflow_server: tuple[str, Path],
    reference: pd.DataFrame,
    tmp_path: Path,
) -> None:
    url, artifacts = mlflow_server
    clock = ManualClock(1_700_000_000.0)
    profile = ReferenceProfile.build(reference)
    champion = ensure_champion(remote, MODEL, reference, at=clock.now(), profile=profile)
    assert champion.version == "1"

    window = reference_table(1200, seed=9).to_pandas()
    buffer = LabelledBuffer(profile.schema, capacity=2000)
    buffer.add_frame(window)
    box = Outbox(tmp_path / "state", clock=clock)
    ex = ActionExecutor(box, remote, None, clock, buffer=buffer)
    settings = {"type": "online_update", "opt_in": True, "min_labelled": 100}
    decision = Decision(
        MODEL,
        4,
        clock.now(),
        Tier.MILD,
        Tier.MILD,
        action="online_update",
        action_settings=settings,
    )
    ex.submit(decision, ActionContext(window_start=0.0, window_end=clock.now()))
    [rec] = ex.run_pending()
    assert rec.state is ActionState.SUCCEEDED, rec.error
    ex.close()

    # What anyone with the server's URL sees:
    client = MlflowClient(tracking_uri=url, registry_uri=url)
    assert client.get_model_version_by_alias(MODEL, CHAMPION).version == "1"
    v2 = client.get_model_version_by_alias(MODEL, CHALLENGER)
    assert v2.version == "2" and v2.tags[TAG_ACTION_KEY] == "credit-risk:mild:4"
    assert v2.tags[TAG_PARENT] == "1"
    assert [int(v.version) for v in client.search_model_versions(f"name='{MODEL}'")] == [2, 1]
    run = client.get_run(v2.run_id)
    assert run.info.status == "FINISHED" and "pv_auc" in run.data.metrics
    assert {a.path for a in client.list_artifacts(v2.run_id)} == {"model", PROFILE_ARTIFACT}
    # artifacts went through the server to its own store, not to this process's folder
    assert list(artifacts.rglob(PROFILE_ARTIFACT))
    assert remote.load_profile(MODEL, "2").fingerprint == profile.fingerprint
    scores = remote.load_model(MODEL, "2").predict_proba(window.head(20))
    assert scores.shape == (20,) and bool(np.all((scores > 0) & (scores < 1)))


def test_promotion_and_rollback_move_aliases_on_the_server(
    remote: MlflowRegistry, mlflow_server: tuple[str, Path]
) -> None:
    if remote.by_alias(MODEL, CHALLENGER) is None:
        pytest.fail("needs the challenger registered by the test before")
    previous = promote(remote, MODEL, "2", at=100.0, by="ana")
    client = MlflowClient(tracking_uri=mlflow_server[0], registry_uri=mlflow_server[0])
    assert previous == "1"
    assert client.get_model_version_by_alias(MODEL, CHAMPION).version == "2"
    assert CHALLENGER not in client.get_registered_model(MODEL).aliases
    assert client.get_model_version(MODEL, "2").tags[TAG_PREVIOUS_CHAMPION] == "1"

    assert rollback(remote, MODEL, at=200.0, by="ops") == "1"
    assert client.get_model_version_by_alias(MODEL, CHAMPION).version == "1"
    assert client.get_model_version(MODEL, "2").tags[TAG_VERDICT] == "rolled_back"
    moves = [(h["alias"], h["version"], h["by"]) for h in remote.alias_history(MODEL)]
    assert moves[-3:] == [
        ("champion", "2", "ana"),
        ("challenger", None, "ana"),
        ("champion", "1", "ops"),
    ]
