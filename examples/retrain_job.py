"""A real retraining job for the demo credit model, as the GPU pool runs it.

It reads the training data driftwatch exported (``$DRIFTWATCH_TRAINING_DATA``: reference
rows plus the recent labelled window, column ``origin``), trains a river
``StandardScaler | LogisticRegression`` pipeline for a few epochs of shuffled mini-batches,
checkpoints every ``--checkpoint-every`` epochs to ``$DRIFTWATCH_CHECKPOINT_DIR`` and
resumes from the last checkpoint when started again (a preempted or retried attempt).
Then it logs the model (MLflow pyfunc) with the reference profile of its training data to
``$MLFLOW_TRACKING_URI`` and registers a version tagged ``driftwatch.action_key`` — once,
even when run twice for the same key. SIGTERM (a polite stop) writes a checkpoint first.

Run by hand::

    python examples/retrain_job.py --reference data/demo/reference.parquet \\
        --model-name credit-risk --tracking-uri sqlite:///state/mlflow.db
"""

from __future__ import annotations

import argparse
import os
import pickle
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from river import compose, linear_model, optim, preprocessing

from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.river_model import FeatureEncoder, RiverModel
from driftwatch.windows.profile import ReferenceProfile, read_reference_table

__all__ = ["main", "train"]

SPECIAL = {"label", "score", "decision", "event_time", "exposure", "seq", "origin"}
CHECKPOINT = "checkpoint.pkl"
_stop = {"requested": False}


def _on_sigterm(signum: int, frame: Any) -> None:
    _stop["requested"] = True


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data",
        default=env.get("DRIFTWATCH_TRAINING_DATA"),
        help="training Parquet (default: $DRIFTWATCH_TRAINING_DATA)",
    )
    p.add_argument("--reference", help="reference dataset, used when no training data is given")
    p.add_argument("--model-name", default=env.get("DRIFTWATCH_MODEL_NAME"))
    p.add_argument("--action-key", default=env.get("DRIFTWATCH_ACTION_KEY", "manual:retrain:0"))
    p.add_argument("--tracking-uri", default=env.get("MLFLOW_TRACKING_URI"))
    p.add_argument("--checkpoint-dir", default=env.get("DRIFTWATCH_CHECKPOINT_DIR"))
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--learning-rate", type=float, default=0.02)
    p.add_argument("--checkpoint-every", type=int, default=1, help="epochs between checkpoints")
    p.add_argument(
        "--window-weight",
        type=float,
        default=1.0,
        help="weight of the recent window's rows against reference rows",
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.model_name:
        p.error("--model-name (or $DRIFTWATCH_MODEL_NAME) is required")
    if not args.data and not args.reference:
        p.error("no training data: give --data, --reference or $DRIFTWATCH_TRAINING_DATA")
    return args


def load_training(args: argparse.Namespace) -> pd.DataFrame:
    df = pd.read_parquet(args.data) if args.data else read_reference_table(args.reference)
    df = df[pd.to_numeric(df["label"], errors="coerce").notna()].reset_index(drop=True)
    if "origin" not in df.columns:
        df["origin"] = "reference"
    return df


def _save_checkpoint(folder: Path | None, state: dict[str, Any]) -> None:
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (CHECKPOINT + ".tmp")
    tmp.write_bytes(pickle.dumps(state))
    tmp.replace(folder / CHECKPOINT)


def _load_checkpoint(folder: Path | None) -> dict[str, Any] | None:
    if folder is None or not (folder / CHECKPOINT).exists():
        return None
    return pickle.loads((folder / CHECKPOINT).read_bytes())


def train(df: pd.DataFrame, args: argparse.Namespace) -> tuple[RiverModel, dict[str, float]]:
    """Train (or resume training) on ``df``; returns the model and holdout metrics."""
    folder = Path(args.checkpoint_dir) if args.checkpoint_dir else None
    cols = [c for c in df.columns if c not in SPECIAL]
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(df[c])]
    categorical = [c for c in cols if c not in numeric]
    rng = np.random.default_rng(args.seed)
    holdout = rng.random(len(df)) < 0.2
    fit, test = df[~holdout].reset_index(drop=True), df[holdout].reset_index(drop=True)

    state = _load_checkpoint(folder)
    if state is not None:
        model, start = state["model"], state["epoch"] + 1
        print(f"resuming from the checkpoint after epoch {state['epoch']}", flush=True)
    else:
        encoder = FeatureEncoder.fit(fit, numeric=numeric, categorical=categorical)
        pipe = compose.Pipeline(
            preprocessing.StandardScaler(),
            linear_model.LogisticRegression(optimizer=optim.Adam(args.learning_rate)),
        )
        model, start = RiverModel(encoder, pipe, "StandardScaler|LogisticRegression"), 1
        # the scaler learns the whole training set first, so early batches are scaled well
        pipe["StandardScaler"].learn_many(encoder.transform(fit))

    x = model.encoder.transform(fit)
    y = pd.Series(fit["label"].to_numpy(np.float64) > 0.5)
    w = pd.Series(np.where(fit["origin"] == "window", args.window_weight, 1.0))
    lr = model.pipeline["LogisticRegression"]
    scaler = model.pipeline["StandardScaler"]
    for epoch in range(start, args.epochs + 1):
        order = np.random.default_rng([args.seed, epoch]).permutation(len(fit))
        for i in range(0, len(order), args.batch_size):
            idx = order[i : i + args.batch_size]
            xb = scaler.transform_many(x.iloc[idx])
            lr.learn_many(xb, y.iloc[idx], w.iloc[idx].reset_index(drop=True).set_axis(xb.index))
            if _stop["requested"]:
                _save_checkpoint(folder, {"epoch": epoch - 1, "model": model})
                print("stop requested: checkpoint written", flush=True)
                sys.exit(143)
        if epoch % args.checkpoint_every == 0 or epoch == args.epochs:
            _save_checkpoint(folder, {"epoch": epoch, "model": model})
        print(f"epoch {epoch}/{args.epochs} done", flush=True)

    from driftwatch.actions.scoring import auc_exact

    p = model.predict_proba(test)
    yt = test["label"].to_numpy(np.float64)
    q = np.clip(p, 1e-12, 1 - 1e-12)
    metrics = {
        "holdout_auc": auc_exact(p, yt),
        "holdout_log_loss": float(-(yt * np.log(q) + (1 - yt) * np.log(1 - q)).mean()),
        "train_rows": float(len(fit)),
        "window_rows": float((df["origin"] == "window").sum()),
    }
    return model, metrics


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _on_sigterm)
    args = parse_args(argv)
    df = load_training(args)
    model, metrics = train(df, args)
    profile = ReferenceProfile.build(
        df.drop(columns=["origin", "seq", "event_time", "exposure"], errors="ignore"),
        numeric=list(model.encoder.numeric),
        categorical=list(model.encoder.categorical),
        meta={"source": "retrain", "action_key": args.action_key},
    )
    if args.tracking_uri:
        registry = MlflowRegistry(args.tracking_uri)
    else:
        registry = MlflowRegistry.embedded("state")
    parent = os.environ.get("DRIFTWATCH_PARENT_VERSION") or None
    info = registry.publish(
        args.model_name,
        model,
        action_key=args.action_key,
        profile=profile,
        metrics={k: v for k, v in metrics.items() if v == v},
        params={
            "learner": model.learner,
            "epochs": args.epochs,
            "action": "retrain",
            "job_id": os.environ.get("DRIFTWATCH_JOB_ID", ""),
            "gpus": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        },
        parent_version=parent,
        data_window=os.environ.get("DRIFTWATCH_DATA_WINDOW") or None,
    )
    print(f"registered {args.model_name} v{info.version} (run {info.run_id}): {metrics}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
