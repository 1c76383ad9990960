"""A recalibration layer for any champion: a river logistic regression on the logit of its score.

Concept drift (the same applicants now default more often) breaks calibration long before it
breaks the ranking, and the fix that model-risk teams accept for a scorecard is the smallest
one: re-map the score, leave the model alone. :class:`LogitCalibrator` learns
``p' = sigmoid(a + b * logit(p))`` from a labelled window, starting from the identity
(``a = 0``, ``b = 1``) so a window without evidence leaves scores as they were.
(Per-segment offsets are not learned yet.)
:class:`RecalibratedPyfunc` is the registered form: the champion version it wraps, by URI,
plus the calibrator, so lineage is explicit and the wrapped model is never copied or changed.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> p = rng.uniform(0.02, 0.4, 4000)
>>> y = (rng.random(4000) < np.clip(p * 1.8, 0, 1)).astype(float)  # twice the defaults
>>> cal = LogitCalibrator()
>>> cal.learn(p, y)
>>> bool(abs(cal.transform(p).mean() - y.mean()) < abs(p.mean() - y.mean()) / 4)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

try:
    import mlflow.pyfunc
except ModuleNotFoundError as exc:  # an optional integration: say how to get it
    raise ModuleNotFoundError(
        "driftwatch's models need MLflow: pip install 'driftwatch[mlflow]'", name=exc.name
    ) from exc
from river import linear_model, optim

__all__ = ["LogitCalibrator", "RecalibratedPyfunc"]

_EPS = 1e-6


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, np.float64), _EPS, 1 - _EPS)
    return np.log(q / (1 - q))


@dataclass
class LogitCalibrator:
    """``sigmoid(a + b·logit(p))`` learned online by a river logistic regression."""

    learning_rate: float = 0.01
    epochs: int = 2
    seed: int = 0
    rows: int = 0
    #: the logit the feature is centred on (the first window's mean): SGD on a centred
    #: feature moves intercept and slope independently, so it converges in a few passes
    center: float | None = None
    lr: Any = field(default=None, repr=False)

    def _start(self, center: float) -> None:
        self.center = center
        self.lr = linear_model.LogisticRegression(
            optimizer=optim.SGD(self.learning_rate), intercept_init=center,
            intercept_lr=self.learning_rate,
        )
        self.lr._weights["z"] = 1.0  # start from the identity map

    @property
    def coefficients(self) -> dict[str, float]:
        """``p' = sigmoid(intercept + slope * logit(p))``."""
        if self.lr is None or self.center is None:
            return {"intercept": 0.0, "slope": 1.0}
        slope = float(self.lr._weights["z"])
        return {"intercept": float(self.lr.intercept) - slope * self.center, "slope": slope}

    def learn(self, score: np.ndarray, label: np.ndarray) -> None:
        """Learn labelled scores, ``epochs`` shuffled passes, one row at a time (online)."""
        z = _logit(score)
        y = np.asarray(label, np.float64)
        ok = np.isfinite(z) & np.isfinite(y)
        z, y = z[ok], y[ok] > 0.5
        if not len(z):
            return
        if self.lr is None or self.center is None:
            self._start(float(z.mean()))
        zc = z - float(self.center)  # type: ignore[arg-type]
        for epoch in range(max(1, self.epochs)):
            order = np.random.default_rng([self.seed, epoch]).permutation(len(zc))
            for i in order.tolist():
                self.lr.learn_one({"z": float(zc[i])}, bool(y[i]))
        self.rows += len(z)

    def transform(self, score: np.ndarray) -> np.ndarray:
        c = self.coefficients
        return 1.0 / (1.0 + np.exp(-(c["intercept"] + c["slope"] * _logit(score))))


class RecalibratedPyfunc(mlflow.pyfunc.PythonModel):
    """The registered recalibrated version: ``base_uri`` (``models:/name/version``) scored,
    then re-mapped by the calibrator. Served outside driftwatch, it loads the base version
    from ``$MLFLOW_TRACKING_URI`` on first use, reading its output as ``base_score_is``
    and ``base_score_scale`` say (the champion's ``score_is`` and ``score_scale`` where
    they applied to the base)."""

    def __init__(self, base_uri: str, calibrator: LogitCalibrator,
                 base_score_is: str = "p_bad", base_score_scale: Any = None) -> None:
        self.base_uri = base_uri
        self.calibrator = calibrator
        self.base_score_is = base_score_is
        #: a ScoreScale; None: probabilities
        self.base_score_scale = base_score_scale
        self._base: Any = None

    def calibrate(self, score: np.ndarray) -> np.ndarray:
        return self.calibrator.transform(score)

    def predict(self, context: object, model_input: Any, params: dict | None = None) -> Any:
        if self._base is None:
            import tempfile

            from mlflow.artifacts import download_artifacts

            from driftwatch.registry.scorer import load_scorer
            from driftwatch.registry.scorers import parse_models_uri
            from driftwatch.scorescale import PROBABILITY

            name, _, version = parse_models_uri(self.base_uri)
            local = download_artifacts(self.base_uri, dst_path=tempfile.mkdtemp())
            self._base = load_scorer(
                local, name=name, version=str(version),
                score_is=getattr(self, "base_score_is", "p_bad"),
                score_scale=getattr(self, "base_score_scale", None) or PROBABILITY)
        return self.calibrate(self._base.score(model_input)).tolist()

    def __getstate__(self) -> dict[str, Any]:
        return {"base_uri": self.base_uri, "calibrator": self.calibrator,
                "base_score_is": getattr(self, "base_score_is", "p_bad"),
                "base_score_scale": getattr(self, "base_score_scale", None), "_base": None}
