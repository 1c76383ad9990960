"""Any registered model version as a scorer: a DataFrame of connector features in, P(bad) out.

driftwatch never needs a model's internals. A version is loaded by its flavour: scikit-learn,
XGBoost and LightGBM classifiers answer ``predict_proba`` (the pyfunc ``predict`` of those
flavours returns class labels), anything else answers the pyfunc ``predict`` (a column of
probabilities, or a frame whose last column is the bad class). driftwatch's own river models
and recalibrated versions are pyfuncs too, unwrapped here so they score without MLflow's
schema checks.

The input columns come from the model's signature (or, for a river model, its encoder);
each is read from the connector feature of the same name unless ``columns`` maps it to
another one. A column the connector does not provide is an error that names it.

>>> import numpy as np, pandas as pd
>>> s = Scorer("pd", "3", "custom", ("income",), lambda x: np.full(len(x), 0.2),
...            columns={"income": "annual_income"})
>>> s.score(pd.DataFrame({"annual_income": [1.0, 2.0]})).tolist()
[0.2, 0.2]
>>> s.check(["age"])
Traceback (most recent call last):
...
driftwatch.errors.ActionError: model pd v3 needs input column 'income' (read from connector \
feature 'annual_income'), which the connector does not provide; features: age
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.errors import ActionError

__all__ = ["Scorer", "load_scorer", "probabilities"]

#: Signature column types read as numbers; the others are passed as text.
_NUMERIC = {"double", "float", "long", "integer", "boolean"}
_PROBA_FLAVOURS = ("sklearn", "xgboost", "lightgbm")


@dataclass
class Scorer:
    """One model version that scores features (see the module doc)."""

    name: str
    version: str
    flavor: str
    inputs: tuple[str, ...]
    predict: Callable[[pd.DataFrame], np.ndarray]
    types: Mapping[str, str] = field(default_factory=dict)
    columns: Mapping[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"

    def feature_of(self, column: str) -> str:
        """The connector feature a model input column is read from."""
        return self.columns.get(column, column)

    def check(self, features: Iterable[str]) -> None:
        """Raise :class:`ActionError` naming the first input column that ``features``
        (the connector's) cannot fill."""
        have = list(features)
        for col in self.inputs:
            if self.feature_of(col) not in have:
                via = "" if col not in self.columns else (
                    f" (read from connector feature {self.feature_of(col)!r})")
                raise ActionError(
                    f"model {self.label} needs input column {col!r}{via}, which the connector "
                    f"does not provide; features: {', '.join(have) or 'none'}"
                )

    def model_input(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The model's input columns, in the signature's order and types, from ``frame``."""
        self.check(frame.columns)
        out: dict[str, Any] = {}
        for col in self.inputs:
            values = frame[self.feature_of(col)]
            kind = self.types.get(col)
            if kind in _NUMERIC or (kind is None and pd.api.types.is_numeric_dtype(values)):
                out[col] = pd.to_numeric(values, errors="coerce").to_numpy(np.float64)
            else:
                s = values.astype(object)
                out[col] = s.where(s.notna(), None).to_numpy(object)
        return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        """P(bad) per row of ``frame`` (connector feature names)."""
        if len(frame) == 0:
            return np.zeros(0)
        x = self.model_input(frame)
        try:
            raw = self.predict(x)
        except ActionError:
            raise
        except Exception as exc:
            raise ActionError(f"model {self.label} ({self.flavor}) failed to score: {exc}") \
                from exc
        p = probabilities(raw, len(x))
        return np.clip(np.nan_to_num(p, nan=math.nan), 0.0, 1.0)


def probabilities(raw: Any, n: int) -> np.ndarray:
    """The bad-class probability out of what a model's predict returned.

    >>> probabilities(np.array([[0.9, 0.1], [0.3, 0.7]]), 2).tolist()
    [0.1, 0.7]
    >>> probabilities(pd.DataFrame({"p": [0.4, 0.6]}), 2).tolist()
    [0.4, 0.6]
    """
    if isinstance(raw, pd.DataFrame):
        raw = raw.iloc[:, -1].to_numpy()
    elif isinstance(raw, pd.Series):
        raw = raw.to_numpy()
    a = np.asarray(raw, dtype=np.float64)
    if a.ndim == 2:
        a = a[:, -1]
    if a.shape != (n,):
        raise ActionError(f"the model returned {a.shape} values for {n} rows")
    return a


def _signature(path: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    from mlflow.models import Model

    sig = Model.load(str(path)).signature
    if sig is None or sig.inputs is None:
        return (), {}
    names, types = [], {}
    for spec in sig.inputs.inputs:
        name = getattr(spec, "name", None)
        if name is None:
            raise ActionError(
                f"the model at {path} has a tensor signature without column names: log it with "
                "a signature inferred from a DataFrame of the connector's features"
            )
        names.append(str(name))
        t = getattr(spec, "type", None)
        types[str(name)] = str(getattr(t, "name", t)).lower()
    return tuple(names), types


def _flavour_predict(flavor: str, path: Path) -> Callable[[pd.DataFrame], np.ndarray]:
    import importlib

    module = importlib.import_module(f"mlflow.{flavor}")
    model = module.load_model(str(path))
    if hasattr(model, "predict_proba"):
        return lambda x: model.predict_proba(x)
    if flavor == "xgboost":  # a bare Booster: predict gives probabilities for binary:logistic
        import xgboost

        return lambda x: model.predict(xgboost.DMatrix(x, enable_categorical=True))
    return lambda x: model.predict(x)


def load_scorer(
    path: str | Path,
    *,
    name: str,
    version: str,
    columns: Mapping[str, str] | None = None,
    resolve: Callable[[str], Scorer] | None = None,
) -> Scorer:
    """A :class:`Scorer` for the model directory at ``path`` (an ``MLmodel`` inside).

    ``resolve(uri)`` loads the version a recalibrated model wraps.
    """
    import mlflow.pyfunc
    from mlflow.models import Model

    local = Path(path)
    try:
        flavors = Model.load(str(local)).flavors
    except Exception as exc:
        raise ActionError(f"{name} v{version}: no MLflow model at {local}: {exc}") from exc
    inputs, types = _signature(local)
    cols = dict(columns or {})
    for flavor in _PROBA_FLAVOURS:
        if flavor in flavors:
            if not inputs:
                raise ActionError(
                    f"model {name} v{version} ({flavor}) has no signature: log it with "
                    "signature=infer_signature(features) so driftwatch knows its input columns"
                )
            return Scorer(name, version, flavor, inputs, _flavour_predict(flavor, local),
                          types, cols)
    try:
        pyfunc = mlflow.pyfunc.load_model(str(local))
    except Exception as exc:
        raise ActionError(f"cannot load {name} v{version}: {exc}") from exc
    return _from_pyfunc(pyfunc, name, version, inputs, types, cols, resolve)


def _from_pyfunc(
    pyfunc: Any,
    name: str,
    version: str,
    inputs: Sequence[str],
    types: Mapping[str, str],
    cols: Mapping[str, str],
    resolve: Callable[[str], Scorer] | None,
) -> Scorer:
    from driftwatch.registry.river_model import RiverModel

    try:
        inner = pyfunc.unwrap_python_model()
    except Exception:  # not a python_function model of ours
        inner = None
    river = getattr(inner, "model", None)
    if isinstance(river, RiverModel):
        feats = tuple(river.encoder.features)
        return Scorer(name, version, "river", feats, river.predict_proba, {}, cols,
                      {"river": river})
    base_uri = getattr(inner, "base_uri", None)
    if base_uri is not None and hasattr(inner, "calibrate"):
        if resolve is None:
            raise ActionError(f"{name} v{version} wraps {base_uri}: no registry to load it from")
        base = resolve(str(base_uri))
        return Scorer(name, version, "recalibrated", base.inputs,
                      lambda x, b=base, c=inner: c.calibrate(probabilities(b.predict(x), len(x))),
                      dict(base.types), dict(base.columns),
                      {"base_uri": base_uri, "base_version": base.version})
    if not inputs:
        raise ActionError(
            f"model {name} v{version} has no signature: log it with a signature so "
            "driftwatch knows its input columns"
        )
    return Scorer(name, version, "pyfunc", tuple(inputs),
                  lambda x: pyfunc.predict(x), dict(types), dict(cols))
