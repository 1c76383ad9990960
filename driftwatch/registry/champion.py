"""The first champion: a river ``StandardScaler | LogisticRegression`` fitted to the
production model's own scores on the reference data.

A fresh installation has a production model but nothing in the registry. The reference
dataset carries that model's scores, so a logistic model is *distilled* from them: a
least-squares fit of ``logit(score)`` on the encoded features gives weights that reproduce
a logistic scorecard exactly (and approximate any other model). The weights are written
into a river pipeline whose scaler holds the reference means and variances, so the
champion can go on learning online from where it stands. Without a score column the
pipeline learns the labels instead.

>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> x = rng.normal(size=500)
>>> df = pd.DataFrame({"x": x, "score": 1 / (1 + np.exp(-(0.5 + 2 * x)))})
>>> m = distil_champion(df, numeric=["x"])
>>> bool(np.allclose(m.predict_proba(df), df["score"], atol=1e-6)), round(m.meta["r2"], 6)
(True, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from river import linear_model, preprocessing

from driftwatch.errors import ActionError
from driftwatch.registry.river_model import FeatureEncoder, RiverModel

__all__ = ["LEARNER", "distil_champion", "linear_pipeline"]

LEARNER = "StandardScaler|LogisticRegression"
_EPS = 1e-6


def linear_pipeline(
    columns: Sequence[str], x: np.ndarray, weights: np.ndarray, intercept: float
) -> Any:
    """``StandardScaler | LogisticRegression`` that computes ``sigmoid(intercept + x·w)``
    on raw columns, with the scaler's statistics taken from ``x``."""
    n = len(x)
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    sd = np.sqrt(var)
    scaler = preprocessing.StandardScaler._from_state(
        counts={c: n for c in columns},
        means=dict(zip(columns, mean.tolist(), strict=True)),
        vars=dict(zip(columns, var.tolist(), strict=True)),
    )
    lr = linear_model.LogisticRegression()
    for c, w, s in zip(columns, weights.tolist(), sd.tolist(), strict=True):
        lr._weights[c] = w * s if s > 0 else 0.0
    live = sd > 0
    lr.intercept = float(intercept + float(weights[live] @ mean[live]))
    return scaler | lr


def _log_features(
    df: pd.DataFrame, numeric: Sequence[str], z: np.ndarray, rows: np.ndarray
) -> list[str]:
    out = []
    for name in numeric:
        x = pd.to_numeric(df[name], errors="coerce").to_numpy(np.float64)
        ok = rows & np.isfinite(x)
        if ok.sum() < 3 or x[ok].min() < 0 or x[ok].std() == 0:
            continue
        raw = abs(np.corrcoef(x[ok], z[ok])[0, 1])
        logged = abs(np.corrcoef(np.log1p(x[ok]), z[ok])[0, 1])
        if logged > raw:
            out.append(name)
    return out


def distil_champion(
    df: pd.DataFrame,
    *,
    numeric: Sequence[str],
    categorical: Sequence[str] = (),
    score: str = "score",
    label: str = "label",
    log: Sequence[str] | None = None,
    epochs: int = 3,
) -> RiverModel:
    """A river logistic model of the production model, fitted on ``df`` (see module doc).

    With ``log=None`` and scores present, each non-negative feature goes on a log scale
    when its log correlates better with the score's log-odds than the raw value does.
    """
    has_score = score in df.columns and df[score].notna().any()
    z_all = None
    if has_score:
        p = pd.to_numeric(df[score], errors="coerce").to_numpy(np.float64)
        rows = np.isfinite(p)
        clipped = np.clip(p, _EPS, 1 - _EPS)
        z_all = np.log(clipped / (1 - clipped))
        if log is None:
            log = _log_features(df, numeric, z_all, rows)
    enc = FeatureEncoder.fit(df, numeric=numeric, categorical=categorical, log=log)
    x_df = enc.transform(df)
    x = x_df.to_numpy(np.float64)
    if z_all is not None:
        z = z_all[rows]
        design = np.column_stack([np.ones(rows.sum()), x[rows]])
        coef, *_ = np.linalg.lstsq(design, z, rcond=None)
        fitted = design @ coef
        r2 = 1.0 - float(((z - fitted) ** 2).sum() / max(((z - z.mean()) ** 2).sum(), 1e-12))
        pipe = linear_pipeline(list(x_df.columns), x[rows], coef[1:], float(coef[0]))
        return RiverModel(
            enc, pipe, LEARNER, {"fit": "distilled from scores", "r2": r2, "rows": int(rows.sum())}
        )
    if label not in df.columns:
        raise ActionError(f"the reference data has neither a {score!r} nor a {label!r} column")
    y = pd.to_numeric(df[label], errors="coerce").to_numpy(np.float64)
    rows = np.isfinite(y)
    model = RiverModel.fresh(enc, LEARNER)
    xs, ys = x_df[rows].reset_index(drop=True), y[rows]
    for _ in range(max(1, epochs)):
        for start in range(0, len(xs), 256):
            model.learn_encoded(xs.iloc[start : start + 256], ys[start : start + 256])
    model.meta.update({"fit": "learned from labels", "rows": int(rows.sum())})
    return model
