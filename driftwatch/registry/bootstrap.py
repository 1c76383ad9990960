"""The champion: the user's registered model (``require_champion``), or, for the demo, a
stand-in given to an empty registry (``ensure_champion``).

The stand-in is registered as version 1 with alias ``champion``: a river logistic
pipeline distilled from the scores in the reference data (see
:mod:`~driftwatch.registry.champion`), logged with the reference profile the monitor
measures against. Later online updates start from it; a registry that already has a
champion is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from driftwatch.errors import ActionError
from driftwatch.registry.champion import distil_champion
from driftwatch.registry.folded import folded_note
from driftwatch.registry.mlflow_registry import MlflowRegistry, quoted
from driftwatch.registry.scorers import ChampionRef, ScorerCache
from driftwatch.registry.trial import trial_score
from driftwatch.registry.versions import (
    CHAMPION,
    TAG_ACTION_KEY,
    TAG_MADE_BY,
    ModelVersionInfo,
)
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.yamlio import nearest

__all__ = ["bootstrap_key", "ensure_champion", "require_champion"]


def bootstrap_key(model: str) -> str:
    """The action key the bootstrap version is registered under."""
    return f"{model}:bootstrap:0"


def ensure_champion(
    registry: MlflowRegistry,
    model: str,
    reference: pd.DataFrame,
    *,
    at: float,
    profile: ReferenceProfile | None = None,
    numeric: Sequence[str] | None = None,
    categorical: Sequence[str] | None = None,
    log: Sequence[str] | None = None,
) -> ModelVersionInfo:
    """Return the champion of ``model``, registering one from ``reference`` if there is none.

    The features come from ``profile`` (the monitor's) or are named; ``profile`` is what is
    logged beside the model, built from ``reference`` when not given.
    """
    current = registry.by_alias(model, CHAMPION)
    if current is not None:
        return current
    existing = registry.versions(model)
    foreign = [v for v in existing if v.tags.get(TAG_ACTION_KEY) != bootstrap_key(model)]
    if foreign:
        raise ActionError(
            f"model {model!r} has {len(existing)} versions but no {CHAMPION!r} alias: point the "
            "alias at the version in production before driftwatch acts on it"
        )
    if profile is None:
        profile = ReferenceProfile.build(
            reference, numeric=numeric, categorical=categorical, meta={"source": "bootstrap"}
        )
    num = list(numeric) if numeric is not None else list(profile.schema.numeric)
    cat = list(categorical) if categorical is not None else list(profile.schema.categorical)
    champion = distil_champion(reference, numeric=num, categorical=cat, log=log)
    info = registry.publish(
        model,
        champion,
        action_key=bootstrap_key(model),
        profile=profile,
        metrics={"distil_r2": float(champion.meta.get("r2", float("nan")))},
        params={"learner": champion.learner, "fit": champion.meta.get("fit", "")},
        tags={TAG_MADE_BY: "bootstrap"},
    )
    registry.set_alias(model, CHAMPION, info.version, at=at, by="bootstrap")
    return registry.get_version(model, info.version)


def require_champion(
    registry: MlflowRegistry,
    ref: ChampionRef,
    features: Sequence[str],
    scorers: ScorerCache,
    reference: pd.DataFrame | None = None,
    note: Callable[[str], None] | None = None,
    profile: ReferenceProfile | None = None,
) -> ModelVersionInfo:
    """The user's champion named by ``ref``: it must exist, load, have every column its
    ``columns`` map, find every input column of its signature among the connector's
    ``features``, and pass its trial on
    rows of the ``reference`` table when given (:mod:`driftwatch.registry.trial`); a clear
    error otherwise. What is worth saying without stopping (scores that disagree with the
    reference's, a declaration its classes make needless, inputs the ``profile`` folds
    into ``__other__``: :mod:`~driftwatch.registry.folded`) goes to ``note``."""
    info = registry.by_alias(ref.name, ref.alias)
    if info is None:
        known = registry.versions(ref.name) if _registered(registry, ref.name) else []
        what = (
            f"registered model {ref.name!r} has {_versions(known)} but none is aliased "
            f"{ref.alias!r}: point the alias at the version in production, e.g. "
            f"MlflowClient().set_registered_model_alias({ref.name!r}, {ref.alias!r}, "
            f"{known[-1].version})"
            if known
            else f"no registered model {ref.name!r}"
            + ("; no database file was at that path when driftwatch started, so MLflow "
               "made an empty store there: check the path"
               if registry.created_store and registry.embedded_db is None else "")
        )
        raise ActionError(f"{ref.uri}: {what} (tracking URI {registry.tracking_uri})")
    try:
        scorer = scorers.get(ref.name, info.version)
    except ActionError as exc:  # it does not load, or its classes say no bad one
        raise ActionError(f"{ref.uri}: {exc}") from None
    for col in ref.columns:  # a misspelt mapping would be ignored, its column read as is
        if col not in scorer.inputs:
            near = nearest(col, scorer.inputs)
            raise ActionError(
                f"{ref.uri}: the champion's columns map {col!r}, which is no input column of "
                f"{scorer.label}" + (f" (did you mean {near!r}?)" if near else "")
                + f"; its inputs: {', '.join(scorer.inputs)}")
    try:
        scorer.check(features)
    except ActionError as exc:
        raise ActionError(f"{ref.uri}: {exc}") from None
    if note is not None and scorer.meta.get("note"):  # a declaration that does not apply
        note(f"{ref.uri}: {scorer.meta['note']}")
    made_by = info.tags.get(TAG_MADE_BY)
    if note is not None and made_by and ref.declared():  # a promoted version of driftwatch's
        note(f"{ref.uri}: version {info.version} was made by driftwatch ({TAG_MADE_BY}="
             f"{made_by}) and answers P(bad): what the champion declares ({ref.declared()}) "
             "describes your own versions and is not applied to it")
    if note is not None and profile is not None:
        said = folded_note(map(scorer.feature_of, scorer.inputs), profile.schema)
        if said is not None:
            note(f"{ref.uri}: {said}")
    if reference is not None:
        trial_score(scorer, reference, ref.uri, note)
    return info


def _versions(known: Sequence[ModelVersionInfo]) -> str:
    """``1 version (1)``, ``3 versions (1 to 3)``: what a model without the alias has."""
    if len(known) == 1:
        return f"1 version ({known[0].version})"
    return f"{len(known)} versions ({known[0].version} to {known[-1].version})"


def _registered(registry: MlflowRegistry, name: str) -> bool:
    return bool(registry.client.search_registered_models(f"name = {quoted(name)}"))
