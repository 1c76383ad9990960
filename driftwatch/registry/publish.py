"""Register a model of any MLflow flavour the way driftwatch finds it again.

A training job (a retraining on the pool, or the first registration of a bank's own model)
logs its model with the flavour's own ``log_model`` (scikit-learn, XGBoost, LightGBM,
pyfunc), with a signature, inside the run this function opens; the run also gets the
reference profile of the training data (``reference_profile.json``) and the lineage tags,
and the version is registered under the action key. Idempotent: a second call with the same
key returns the version the first one made.

Example (scikit-learn)::

    info = publish_flavour(
        registry, "credit-risk",
        lambda: mlflow.sklearn.log_model(model, name="model", signature=sig),
        action_key=key, profile=profile, metrics={"holdout_auc": 0.81},
    )
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.versions import (
    PROFILE_ARTIFACT,
    TAG_ACTION_KEY,
    TAG_MODEL_LOGGED,
    TAG_PROFILE,
    ModelVersionInfo,
)
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["publish_flavour"]


def publish_flavour(
    registry: MlflowRegistry,
    model: str,
    log_model: Callable[[], Any],
    *,
    action_key: str,
    profile: ReferenceProfile | None = None,
    metrics: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    parent_version: str | None = None,
    data_window: str | None = None,
) -> ModelVersionInfo:
    """Run ``log_model()`` (a flavour's ``log_model``; it returns the ``ModelInfo``) in a new
    run and register the logged model as a version of ``model`` tagged
    ``driftwatch.action_key=action_key``."""
    import mlflow

    existing = registry.find_version(model, action_key)
    if existing is not None:
        return existing
    mlflow.set_tracking_uri(registry.tracking_uri)
    mlflow.set_registry_uri(registry.registry_uri)
    exp = registry.experiment_id(model)
    with mlflow.start_run(experiment_id=exp, run_name=action_key.replace(":", "-")) as run:
        mlflow.set_tag(TAG_ACTION_KEY, action_key)
        logged = log_model()
        if profile is not None:
            with tempfile.TemporaryDirectory(prefix="driftwatch-profile-") as tmp:
                path = Path(tmp) / PROFILE_ARTIFACT
                path.write_bytes(profile.to_json())
                mlflow.log_artifact(str(path))
            mlflow.set_tag(TAG_PROFILE, profile.fingerprint)
        for key, value in (params or {}).items():
            mlflow.log_param(key, value)
        for key, value in (metrics or {}).items():
            if value == value:  # NaN metrics are left out
                mlflow.log_metric(key, float(value))
        mlflow.set_tag(TAG_MODEL_LOGGED, "true")
        run_id = run.info.run_id
    return registry.register(
        model,
        run_id,
        action_key=action_key,
        parent_version=parent_version,
        data_window=data_window,
        source=logged.model_uri,
        model_id=getattr(logged, "model_id", None),
    )
