"""Retrain a scikit-learn HistGradientBoostingClassifier champion, as the GPU pool runs it.

It reads the training data driftwatch exported (``$DRIFTWATCH_TRAINING_DATA``: the
reference rows plus the recent matured labels, column ``origin``; only approved applications
carry outcomes, so the model learns from the approved population, as every credit model
does), fits a ``ColumnTransformer(OrdinalEncoder) | HistGradientBoostingClassifier``
pipeline, and logs it with ``mlflow.sklearn.log_model`` with a signature inferred from the
features, the reference profile of its training data (``reference_profile.json``) and the
holdout metrics. The version is registered under ``$DRIFTWATCH_ACTION_KEY``, once.

The same script registers a first champion from a reference dataset::

    python examples/sklearn_retrain_job.py --reference data/demo/reference.parquet \\
        --model-name credit-risk --tracking-uri http://127.0.0.1:5000 --alias champion

XGBoost or LightGBM: swap :func:`build_model` for an ``xgboost.XGBClassifier`` or
``lightgbm.LGBMClassifier`` and log it with ``mlflow.xgboost.log_model`` /
``mlflow.lightgbm.log_model``; driftwatch scores any of them through ``predict_proba``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np
import pandas as pd

SPECIAL = {"label", "score", "decision", "event_time", "exposure", "seq", "origin"}
#: Types MLflow's skops format does not load unless told: this pipeline's own, made here.
TRUSTED_TYPES = [
    "functools.partial",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.utils.validation.check_array",
]

__all__ = ["build_model", "features_of", "main", "register", "train"]


def features_of(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Numeric and categorical feature columns (everything but labels and bookkeeping)."""
    cols = [c for c in df.columns if c not in SPECIAL]
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(df[c])]
    return numeric, [c for c in cols if c not in numeric]


def build_model(numeric: list[str], categorical: list[str], *, seed: int = 0) -> Any:
    """Ordinal-encoded categoricals and raw numerics into a histogram gradient boosting."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    encode = ColumnTransformer(
        [("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1,
                                encoded_missing_value=-1), categorical)],
        remainder="passthrough",
    )
    hgb = HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0,
        categorical_features=list(range(len(categorical))), random_state=seed,
    )
    return Pipeline([("encode", encode), ("hgb", hgb)])


def _inputs(df: pd.DataFrame, numeric: list[str], categorical: list[str]) -> pd.DataFrame:
    x = pd.DataFrame({c: pd.to_numeric(df[c], errors="coerce").astype("float64")
                      for c in numeric})
    for c in categorical:
        s = df[c].astype(object)
        x[c] = s.where(s.notna(), None)
    return x[[*numeric, *categorical]]


def train(df: pd.DataFrame, *, seed: int = 0) -> tuple[Any, pd.DataFrame, dict[str, float]]:
    """Fit on the labelled rows of ``df``; returns the model, its input frame and holdout
    metrics."""
    df = df[pd.to_numeric(df["label"], errors="coerce").notna()].reset_index(drop=True)
    numeric, categorical = features_of(df)
    x = _inputs(df, numeric, categorical)
    y = df["label"].to_numpy(np.float64) > 0.5
    holdout = np.random.default_rng(seed).random(len(df)) < 0.2
    model = build_model(numeric, categorical, seed=seed)
    model.fit(x[~holdout], y[~holdout])
    from sklearn.metrics import log_loss, roc_auc_score

    p = model.predict_proba(x[holdout])[:, 1]
    metrics = {
        "holdout_auc": float(roc_auc_score(y[holdout], p)),
        "holdout_log_loss": float(log_loss(y[holdout], p)),
        "train_rows": float((~holdout).sum()),
        "window_rows": float((df.get("origin", pd.Series(dtype=object)) == "window").sum()),
    }
    model.fit(x, y)  # the registered model learns every row
    return model, x, metrics


def register(
    df: pd.DataFrame, *, tracking_uri: str, model_name: str, action_key: str,
    parent: str | None = None, data_window: str | None = None, seed: int = 0,
) -> Any:
    """Train on ``df`` and register the version (signature and reference profile logged)."""
    import mlflow.sklearn
    from mlflow.models import infer_signature

    from driftwatch.registry.mlflow_registry import MlflowRegistry
    from driftwatch.registry.publish import publish_flavour
    from driftwatch.windows.profile import ReferenceProfile

    model, x, metrics = train(df, seed=seed)
    numeric, categorical = features_of(df)
    profile = ReferenceProfile.build(
        df.drop(columns=["origin", "seq", "event_time", "exposure"], errors="ignore"),
        numeric=numeric, categorical=categorical,
        meta={"source": "sklearn-retrain", "action_key": action_key},
    )
    signature = infer_signature(x.head(500), model.predict_proba(x.head(500))[:, 1])
    registry = MlflowRegistry(tracking_uri)
    return publish_flavour(
        registry, model_name,
        lambda: mlflow.sklearn.log_model(
            model, name="model", signature=signature, pip_requirements=["scikit-learn"],
            skops_trusted_types=TRUSTED_TYPES,
        ),
        action_key=action_key, profile=profile, metrics=metrics,
        params={"learner": "HistGradientBoostingClassifier", "action": "retrain",
                "job_id": os.environ.get("DRIFTWATCH_JOB_ID", "")},
        parent_version=parent, data_window=data_window,
    )


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=env.get("DRIFTWATCH_TRAINING_DATA"))
    p.add_argument("--reference", help="reference dataset, used when no training data is given")
    p.add_argument("--model-name", default=env.get("DRIFTWATCH_MODEL_NAME"))
    p.add_argument("--action-key", default=env.get("DRIFTWATCH_ACTION_KEY", "manual:sklearn:0"))
    p.add_argument("--tracking-uri", default=env.get("MLFLOW_TRACKING_URI"))
    p.add_argument("--alias", help="point this alias at the new version (e.g. champion)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.model_name or not args.tracking_uri:
        p.error("--model-name and --tracking-uri (or their variables) are required")
    if not args.data and not args.reference:
        p.error("no training data: give --data, --reference or $DRIFTWATCH_TRAINING_DATA")
    if args.data:
        df = pd.read_parquet(args.data)
    else:
        from driftwatch.windows.profile import read_reference_table

        df = read_reference_table(args.reference)
    info = register(
        df, tracking_uri=args.tracking_uri, model_name=args.model_name,
        action_key=args.action_key, parent=env.get("DRIFTWATCH_PARENT_VERSION") or None,
        data_window=env.get("DRIFTWATCH_DATA_WINDOW") or None, seed=args.seed,
    )
    if args.alias:
        from driftwatch.registry.mlflow_registry import MlflowRegistry

        MlflowRegistry(args.tracking_uri).set_alias(
            args.model_name, args.alias, info.version, at=time.time(), by="sklearn_retrain_job")
    print(f"registered {args.model_name} v{info.version} (run {info.run_id})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
