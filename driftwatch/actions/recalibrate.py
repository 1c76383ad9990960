"""Online recalibration of any champion (the mild tier's update for a model that cannot learn).

The champion version scores the exported labelled window; a
:class:`~driftwatch.registry.recalibrated.LogitCalibrator` learns the first part of it (in
window order) and is judged on the rest, against the champion on the same rows (log loss,
Brier score, observed/expected bad rate); one that does not lower the log loss there is
discarded unregistered. Otherwise it learns the rest too, and the result is a
:class:`~driftwatch.registry.recalibrated.RecalibratedPyfunc` wrapping
``models:/<name>/<champion version>``: a new version whose lineage names its parent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from driftwatch.actions.context import ActionEnv
from driftwatch.errors import ActionError

if TYPE_CHECKING:  # MLflow is a heavy import: only an action that recalibrates pays for it
    from driftwatch.registry.recalibrated import RecalibratedPyfunc

__all__ = [
    "HOLDOUT", "calibration_metrics", "recalibrated_candidate", "recalibration_loses",
    "river_champion",
]

#: The newest share of the window that judges the calibrator before it learns it.
HOLDOUT = 0.3
_EPS = 1e-12


def calibration_metrics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Log loss, Brier score and observed/expected bad rate of scores ``p``.

    >>> m = calibration_metrics(np.array([0.2, 0.2]), np.array([0.0, 1.0]))
    >>> round(m["log_loss"], 4), round(m["brier"], 2), m["calibration_ratio"]
    (0.9163, 0.34, 2.5)
    """
    p, y = np.asarray(p, np.float64), np.asarray(y, np.float64)
    if len(p) == 0:
        return {"log_loss": math.nan, "brier": math.nan, "calibration_ratio": math.nan}
    q = np.clip(p, _EPS, 1 - _EPS)
    return {
        "log_loss": float(-(y * np.log(q) + (1 - y) * np.log(1 - q)).mean()),
        "brier": float(((p - y) ** 2).mean()),
        "calibration_ratio": float(y.mean() / p.mean()) if p.mean() > 0 else math.nan,
    }


def recalibrated_candidate(
    env: ActionEnv, model: str, champion_version: str, window: pd.DataFrame
) -> tuple[RecalibratedPyfunc, dict[str, float]]:
    """Fit a recalibration layer on ``window`` for ``model`` v``champion_version``."""
    from driftwatch.registry.recalibrated import LogitCalibrator, RecalibratedPyfunc

    if "label" not in window.columns or not len(window):
        raise ActionError("recalibration needs a labelled window, and the export is empty")
    scorer = env.scorer(model, champion_version)
    p = scorer.score(window)
    y = window["label"].to_numpy(np.float64)
    ok = np.isfinite(p) & np.isfinite(y)
    p, y = p[ok], y[ok]
    cut = int(len(p) * (1 - HOLDOUT))
    cal = LogitCalibrator()
    cal.learn(p[:cut], y[:cut])
    metrics: dict[str, float] = {"rows": float(len(p)), "holdout_rows": float(len(p) - cut)}
    for who, scores in (("champion", p[cut:]), ("recalibrated", cal.transform(p[cut:]))):
        for k, v in calibration_metrics(scores, y[cut:]).items():
            metrics[f"{who}_holdout_{k}"] = v
    cal.learn(p[cut:], y[cut:])
    metrics.update({f"calibrator_{k}": v for k, v in cal.coefficients.items()})
    base = f"models:/{model}/{champion_version}"
    # served outside driftwatch, it reads its base as the scorer did: the champion's
    # declaration where it applied (not to a version driftwatch made, nor to classes
    # that name themselves)
    return RecalibratedPyfunc(base, cal, base_score_is=scorer.meta.get("score_is", "p_bad"),
                              base_score_scale=scorer.meta.get("score_scale")), metrics


def recalibration_loses(metrics: Mapping[str, float | None]) -> str | None:
    """Why the calibrator is not registered (its holdout log loss is no better than the
    champion's on the same rows), or None when it wins.

    >>> print(recalibration_loses({"champion_holdout_log_loss": 0.50,
    ...                            "recalibrated_holdout_log_loss": 0.51, "holdout_rows": 300}))
    the recalibrated score does not beat the champion on the newest 300 rows (log loss 0.5100 \
vs 0.5000): no version registered
    >>> recalibration_loses({"champion_holdout_log_loss": 0.50,
    ...                      "recalibrated_holdout_log_loss": 0.45, "holdout_rows": 300.0})
    """
    champ = metrics.get("champion_holdout_log_loss")
    recal = metrics.get("recalibrated_holdout_log_loss")
    champ, recal = (math.nan if v is None else float(v) for v in (champ, recal))
    if math.isfinite(champ) and math.isfinite(recal) and recal < champ:
        return None
    return (f"the recalibrated score does not beat the champion on the newest "
            f"{metrics.get('holdout_rows', 0):.0f} rows (log loss {recal:.4f} vs {champ:.4f}): "
            "no version registered")


def river_champion(env: ActionEnv, model: str, version: str | None) -> Any:
    """The champion's :class:`~driftwatch.registry.river_model.RiverModel` when it is one
    (it can learn online itself), else None."""
    if version is None:
        return None
    return env.scorer(model, version).meta.get("river")
