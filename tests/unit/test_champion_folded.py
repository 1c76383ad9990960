"""A champion's categorical input whose reference holds more levels than ``detectors.top_k``
keeps: live rows give the model ``__other__`` for the rest, which a bank's own model,
trained on every level, reads as a level it never saw. Before, nothing said so; the start
now notes it, with the ``top_k`` that keeps every level, and that setting does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from driftwatch.registry.bootstrap import require_champion
from driftwatch.registry.folded import folded_note
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.scorers import ChampionRef, ScorerCache
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import ReferenceProfile

from .test_champion_declarations import sklearn_champion

URI = "models:/bank-pd@champion"
#: the organisation types of a Home Credit application (58 in the real table)
ORGS = [f"Business Entity Type {i}" for i in range(1, 31)]


def _reference(n: int = 3_000) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    org = rng.choice(ORGS, n, p=np.linspace(2, 1, len(ORGS)) / np.linspace(2, 1, len(ORGS)).sum())
    income = rng.lognormal(11, 0.5, n)
    bad = rng.random(n) < 0.05 + 0.10 * (np.char.endswith(org.astype(str), "7"))
    return pd.DataFrame({"income": income.round(0), "org": org, "label": bad.astype(int)})


def _registered(tmp_path: Path, df: pd.DataFrame) -> MlflowRegistry:
    x = df[["income", "org"]]
    model = make_pipeline(
        ColumnTransformer([("org", OneHotEncoder(handle_unknown="ignore"), ["org"])],
                          remainder="passthrough"),
        LogisticRegression(max_iter=300)).fit(x, df["label"])
    return sklearn_champion(tmp_path, model, x, "bank-pd")


@pytest.mark.parametrize("top_k", [20, 30])
def test_the_start_says_which_levels_reach_the_champion_folded(tmp_path: Path,
                                                               top_k: int) -> None:
    df = _reference()
    reg = _registered(tmp_path, df)
    profile = ReferenceProfile.build(df, numeric=["income"], categorical=["org"],
                                     score=None, label="label", top_k=top_k)
    notes: list[str] = []
    require_champion(reg, ChampionRef.parse(URI), ["income", "org"],
                     ScorerCache(reg, tmp_path / "cache"), df, notes.append, profile=profile)
    folded = [n for n in notes if "__other__" in n]
    if top_k == 20:
        assert folded == [f"{URI}: its input 'org' has 30 levels in the reference, 10 of them "
                          "outside its 20 most frequent: those reach the model as '__other__' "
                          "on live rows; detectors.top_k: 30 in the policy keeps every level"]
    else:  # the setting it names keeps every level: nothing to say
        assert folded == []


@settings(max_examples=60, deadline=None)
@given(kept=st.lists(st.integers(1, 40), min_size=1, max_size=5),
       beyond=st.lists(st.integers(0, 40), min_size=5, max_size=5))
def test_the_note_names_every_folded_input_and_a_top_k_that_keeps_them(
        kept: list[int], beyond: list[int]) -> None:
    names = tuple(f"c{j}" for j in range(len(kept)))
    schema = FeatureSchema(
        categorical=names,
        levels=tuple(tuple(f"v{i}" for i in range(k)) for k in kept),
        other=tuple(frozenset(f"w{i}" for i in range(o)) for o in beyond[: len(kept)]))
    said = folded_note([*names, "income"], schema)
    folded = [(n, k, o) for n, k, o in zip(names, kept, beyond, strict=False) if o]
    if not folded:
        assert said is None
        return
    assert said is not None
    for n, _, _ in folded:
        assert repr(n) in said
    widest = max(k + o for _, k, o in folded)
    assert said.endswith(f"detectors.top_k: {widest} in the policy keeps every level")
