"""The champion's trial compares its scores with the reference's score column (the
production model's, when the sample was taken): a ``champion`` alias on another model, or
columns fed in the wrong mapping, is said at start, without stopping it. Before, the trial
scored 2,000 reference rows and never looked at the scores they already carried.

The daemon's check also warns of a policy whose online update asks for ``method: learner``
for such a champion (a river model would replace it)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import mlflow.sklearn
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from driftwatch.registry.bootstrap import require_champion
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.publish import pointed_at
from driftwatch.registry.scorers import ChampionRef, ScorerCache
from driftwatch.registry.trial import reference_sample
from driftwatch.windows.conventions import TableConventions

NAME = "bank-pd"
REF = ChampionRef.parse(f"models:/{NAME}@champion")
FEATURES = ["income", "utilization"]


def _table(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Applications, the production model's P(bad) as ``score`` and the outcome as ``y``."""
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"income": rng.lognormal(10.5, 0.5, n), "utilization": rng.uniform(0, 1, n)})
    z = -2.0 + 3.0 * x["utilization"] - (x["income"] - 40_000) / 40_000
    p = 1 / (1 + np.exp(-z))
    other = 1 / (1 + np.exp((x["income"] - 40_000) / 20_000))  # another target: income alone
    return x.assign(score=p, y=(rng.random(n) < p).astype(int),
                    other=(rng.random(n) < other).astype(int))


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, pd.DataFrame]:
    """A store with v1 trained on the reference's outcome and v2 on another target; the
    reference table written as a bank would (score column ``p``, label ``y``)."""
    import mlflow
    from mlflow.models import infer_signature
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    tmp = tmp_path_factory.mktemp("bank")
    store = f"sqlite:///{tmp / 'mlflow.db'}"
    table = _table()
    where = mlflow.MlflowClient(store).create_experiment(
        "bank", artifact_location=(tmp / "artifacts").as_uri())
    for target in ("y", "other"):
        model = make_pipeline(StandardScaler(), LogisticRegression())
        model.fit(table[FEATURES], table[target])
        with pointed_at(MlflowRegistry(store)), mlflow.start_run(experiment_id=where):
            mlflow.sklearn.log_model(model, name="model", registered_model_name=NAME,
                                     signature=infer_signature(table[FEATURES]))
    path = tmp / "reference.csv"
    table.drop(columns=["other"]).rename(columns={"score": "p"}).to_csv(path, index=False)
    return store, path, table


def _sample(path: Path) -> pd.DataFrame:
    sample = reference_sample(path, TableConventions(score="p", label="y"))
    assert sample is not None and "score" in sample.columns
    return sample


def _start(store: str, path: Path, version: str, cache: Path) -> list[str]:
    reg = MlflowRegistry(store)
    reg.client.set_registered_model_alias(NAME, "champion", version)
    notes: list[str] = []
    require_champion(reg, REF, FEATURES, ScorerCache(reg, cache), _sample(path), notes.append)
    return notes


def test_a_champion_that_scores_like_the_reference_says_nothing(bank, tmp_path: Path) -> None:
    store, path, _ = bank
    assert _start(store, path, "1", tmp_path) == []


def test_a_champion_aliased_to_another_model_is_named_with_the_figures(
        bank, tmp_path: Path) -> None:
    store, path, _ = bank
    [said] = _start(store, path, "2", tmp_path)
    sample = _sample(path)
    with pointed_at(MlflowRegistry(store)):
        model = mlflow.sklearn.load_model(f"models:/{NAME}/2")
    p = model.predict_proba(sample[FEATURES])[:, 1]
    rho = spearmanr(p, sample["score"]).statistic
    gap = np.median(np.abs(p - sample["score"]))
    assert rho < 0.8  # the premise: a model of another target ranks otherwise
    assert said == (
        f"models:/{NAME}@champion: its scores disagree with the reference's score column on "
        f"{len(sample)} rows (rank correlation {rho:.2f}, median absolute difference "
        f"{gap:.3f} in P(bad)): check that the champion alias points at the version that "
        "scored the reference and that its columns map the right connector features; "
        "expected only if another version scored the reference")


def test_the_daemon_logs_the_note_as_a_warning_and_starts(
        bank, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from driftwatch.service.action_champion import ChampionCheck
    from driftwatch.service.actions import ModelActions

    store, path, _ = bank
    reg = MlflowRegistry(store)
    reg.client.set_registered_model_alias(NAME, "champion", "2")
    check = ChampionCheck()
    check.registry = reg  # type: ignore[attr-defined]
    ma = ModelActions(NAME, outbox=None, reference=str(path),  # type: ignore[arg-type]
                      executor=SimpleNamespace(env=SimpleNamespace(
                          scorers=lambda: ScorerCache(reg, tmp_path))),
                      champion=REF, features=FEATURES,
                      policy=SimpleNamespace(reference=SimpleNamespace(
                          conventions=lambda: TableConventions(score="p", label="y"))))
    with caplog.at_level(logging.WARNING, "driftwatch.service.actions"):
        check._ensure_champion(ma)
    assert ma.has_champion
    [rec] = [r for r in caplog.records if "disagree" in r.getMessage()]
    assert rec.levelno == logging.WARNING
    assert rec.getMessage().startswith(f"{NAME}: models:/{NAME}@champion: its scores disagree")


def test_the_daemon_warns_of_a_learner_update_for_a_model_that_is_no_river_one(
        bank, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from driftwatch.service.action_champion import ChampionCheck
    from driftwatch.service.actions import ModelActions

    store = bank[0]
    reg = MlflowRegistry(store)
    reg.client.set_registered_model_alias(NAME, "champion", "1")
    check = ChampionCheck()
    check.registry = reg  # type: ignore[attr-defined]
    update = SimpleNamespace(type="online_update", method="learner", learner="PAClassifier")
    ma = ModelActions(NAME, outbox=None, reference=None,  # type: ignore[arg-type]
                      executor=SimpleNamespace(env=SimpleNamespace(
                          scorers=lambda: ScorerCache(reg, tmp_path))),
                      champion=REF, features=FEATURES,
                      policy=SimpleNamespace(actions=SimpleNamespace(
                          mild=SimpleNamespace(type="alert"), moderate=update)))
    with caplog.at_level(logging.WARNING, "driftwatch.service.actions"):
        check._ensure_champion(ma)
    assert ma.has_champion  # the other tiers act
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"{NAME}: moderate tier: online_update method: learner needs a river champion, and "
        f"models:/{NAME}@champion is a sklearn model: a fresh PAClassifier would be "
        "registered in its place instead of updating it; set method: recalibrate (or auto) "
        "to recalibrate its score"]
