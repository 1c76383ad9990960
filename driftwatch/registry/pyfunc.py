"""The models driftwatch itself makes are MLflow pyfuncs: a :class:`RiverModel` (the demo's
stand-in champion, online updates, the demo's retrained challengers) or a recalibration layer
(:mod:`~driftwatch.registry.recalibrated`). A user's own champion may be any flavour; see
:mod:`~driftwatch.registry.scorer` for how every version is scored alike. ``predict``
takes a DataFrame of raw features
and returns the probability of the bad class, one per row.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import mlflow.pyfunc
except ModuleNotFoundError as exc:  # an optional integration: say how to get it
    raise ModuleNotFoundError(
        "driftwatch's models need MLflow: pip install 'driftwatch[mlflow]'", name=exc.name
    ) from exc
import numpy as np
import pandas as pd

from driftwatch.errors import ActionError
from driftwatch.registry.river_model import RiverModel

__all__ = ["PIP_REQUIREMENTS", "RiverPyfunc", "load_river_model", "save_model", "save_river_model"]

#: Declared, not inferred: inferring requirements starts a subprocess on every save.
PIP_REQUIREMENTS = ["driftwatch", "river==0.26.*", "pandas", "numpy"]


class RiverPyfunc(mlflow.pyfunc.PythonModel):
    """The pyfunc face of a :class:`RiverModel`."""

    def __init__(self, model: RiverModel) -> None:
        self.model = model

    def predict(
        self, context: object, model_input: pd.DataFrame, params: dict | None = None
    ) -> list[float]:
        return np.asarray(self.model.predict_proba(pd.DataFrame(model_input))).tolist()


def save_river_model(model: RiverModel, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` as a pyfunc model directory at ``path`` (which must not exist)."""
    out = Path(path)
    mlflow.pyfunc.save_model(
        path=str(out), python_model=RiverPyfunc(model), pip_requirements=PIP_REQUIREMENTS
    )
    return out


def save_model(model: object, path: str | os.PathLike[str]) -> Path:
    """Write a :class:`RiverModel` or any pyfunc ``PythonModel`` as a model directory."""
    if isinstance(model, RiverModel):
        return save_river_model(model, path)
    if not isinstance(model, mlflow.pyfunc.PythonModel):
        raise ActionError(f"cannot save a {type(model).__name__} as an MLflow pyfunc model")
    out = Path(path)
    mlflow.pyfunc.save_model(path=str(out), python_model=model, pip_requirements=PIP_REQUIREMENTS)
    return out


def load_river_model(path: str | os.PathLike[str]) -> RiverModel:
    """The :class:`RiverModel` inside a local pyfunc model directory."""
    try:
        wrapper = mlflow.pyfunc.load_model(str(path)).unwrap_python_model()
    except Exception as exc:
        raise ActionError(f"cannot load the model at {path}: {exc}") from exc
    model = getattr(wrapper, "model", None)
    if not isinstance(model, RiverModel):
        raise ActionError(
            f"the model at {path} is a {type(wrapper).__name__}, not a driftwatch river model"
        )
    return model
