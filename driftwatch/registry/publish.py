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

import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
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

__all__ = ["pointed_at", "publish_flavour"]


_URI_VARS = ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI")


@contextmanager
def pointed_at(registry: MlflowRegistry) -> Iterator[None]:
    """MLflow's fluent API pointed at ``registry`` for the block, and put back after.

    ``mlflow.set_tracking_uri`` also writes ``$MLFLOW_TRACKING_URI`` so that subprocesses
    inherit it; left in place, every process this one starts later (a retraining job, a
    daemon under test) would talk to this registry, even after it is gone.
    """
    import mlflow
    from mlflow.tracking._model_registry import utils as registry_utils
    from mlflow.tracking._tracking_service import utils as tracking_utils

    env = {k: os.environ.get(k) for k in _URI_VARS}
    globals_ = [(tracking_utils, "_tracking_uri"), (registry_utils, "_registry_uri")]
    saved = [(m, a, getattr(m, a, None)) for m, a in globals_]
    try:
        mlflow.set_tracking_uri(registry.tracking_uri)
        mlflow.set_registry_uri(registry.registry_uri)
        yield
    finally:
        for m, a, v in saved:
            if hasattr(m, a):
                setattr(m, a, v)
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
    exp = registry.experiment_id(model)
    with pointed_at(registry), mlflow.start_run(
            experiment_id=exp, run_name=action_key.replace(":", "-")) as run:
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
    # still pointed at it: a SQLite registry finds the logged model through the tracking
    # URI of the process, not the client's
    with pointed_at(registry):
        return registry.register(
            model,
            run_id,
            action_key=action_key,
            parent_version=parent_version,
            data_window=data_window,
            source=logged.model_uri,
            model_id=getattr(logged, "model_id", None),
        )
