"""A stream score that is neither a probability nor a percentage: log-odds, or points.

``init`` finds the stream's score by the reference's name. When its sample values run
outside [0, 1] and outside 0 to 100, :func:`unscaled_kind` tells log-odds (every value
within about [-30, 30]) from a scorecard's points (whole numbers, or mostly 100 to 1000).
Log-odds are proposed (``log_odds: true``) only when the labels in the sample show the
values ordering outcomes as the reference's score does (higher = bad for P(bad)); points
are left out, since no sample tells a scorecard's base, odds and pdo, and ``init`` prints
the connector line to add.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.onboard.infer import leaf
from driftwatch.onboard.matching import stream_path
from driftwatch.onboard.outputs import separation
from driftwatch.onboard.plandata import Plan
from driftwatch.onboard.roles import present
from driftwatch.onboard.sample import Sample
from driftwatch.windows.conventions import norm_value

__all__ = ["LOG_ODDS_BOUND", "POINTS_EXAMPLE", "sample_labels", "unscaled_kind",
           "unscaled_line"]

#: Log-odds beyond this are probabilities within 1e-13 of 0 or 1: no model writes them all.
LOG_ODDS_BOUND = 30.0
#: The common scorecard scaling, given as an example (odds 50:1 at 600, doubling every 20).
POINTS_EXAMPLE = "base: 600, odds: 50, pdo: 20"
#: Labels in the sample that must agree before init proposes log-odds.
_CLEAR_Z = 3.0


def unscaled_kind(values: Sequence[float]) -> str | None:
    """``"log_odds"`` (every value within ±:data:`LOG_ODDS_BOUND`), ``"points"`` (whole
    numbers, or at least 80% of the values in 100 to 1000) or None, for numbers that are
    neither probabilities nor percentages.

    >>> unscaled_kind([-3.2, 0.4, 2.5]), unscaled_kind([512, 648, 790]), \\
    ...     unscaled_kind([-250.5, 1e4])
    ('log_odds', 'points', None)
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if not len(v):
        return None
    if (np.abs(v) <= LOG_ODDS_BOUND).all():
        return "log_odds"
    if (v == np.round(v)).all() or ((v >= 100) & (v <= 1000)).mean() >= 0.8:
        return "points"
    return None


def sample_labels(plan: Plan, preds: Sample, outcomes: Sample | None) -> list[bool | None]:
    """Per predictions-sample row: True bad, False good, None unknown, read off the label
    in the record, else off the outcomes sample joined by id (the reference's label name
    and bad values)."""
    n = len(preds.rows)
    if not plan.ref_label:
        return [None] * n
    bad = {norm_value(v) for v in plan.ref_bad}

    def read(v: Any) -> bool | None:
        return norm_value(v) in bad if present(v) else None

    if lab := stream_path(plan.ref_label, preds.paths()):
        return [read(v) for v in preds.values(lab)]
    if outcomes is None:
        return [None] * n
    pid = plan.predictions.id_path
    opaths = outcomes.paths()
    oid = pid if pid in opaths else stream_path(leaf(pid), opaths)
    olab = stream_path(plan.ref_label, opaths)
    if oid is None or olab is None:
        return [None] * n
    by_id = {norm_value(r.get(oid)): read(r.get(olab)) for r in outcomes.rows
             if present(r.get(oid))}
    return [by_id.get(norm_value(v)) if present(v) else None for v in preds.values(pid)]


def unscaled_line(path: str, values: list[Any], labels: list[bool | None], score_is: str,
                  span: str) -> tuple[str | None, str]:
    """``("log_odds", why)`` when ``init`` maps the stream's score as log-odds, else
    ``(None, why)``: why it is left out, with the connector line to add for points."""
    x = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(np.float64)
    kind = unscaled_kind(x)
    if kind == "points":
        return None, (f"its values run {span}, scorecard points by the look: init cannot "
                      "know the card's scaling; add it to the connector's fields as "
                      f"`score: {{path: {path}, points: {{base: ..., odds: ..., pdo: ...}}}}` "
                      f"(the common one: `{POINTS_EXAMPLE}`, good:bad odds 50:1 at 600 "
                      "points, doubling every 20; higher points = safer)")
    if kind is None:
        return None, (f"its values run {span}, neither a probability in [0, 1], a "
                      "percentage, log-odds within ±30 nor scorecard points: left out, "
                      "replay would reject every record as score_out_of_range")
    y = np.array([lab if lab is not None else np.nan for lab in labels], dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    auc, z = separation(x[ok & (y == 1)], x[ok & (y == 0)])
    want = "bad" if score_is == "p_bad" else "good"
    if (z >= _CLEAR_Z) if want == "bad" else (z <= -_CLEAR_Z):
        return "log_odds", (f"log-odds in the sample ({span}): higher values go with {want} "
                            f"outcomes (AUC {auc:.2f} for bad), as the reference's P({want});"
                            " read as 1 / (1 + exp(-x)) (log_odds: true)")
    told = ("no labels in the sample to check it against" if not ok.any() else
            f"the sample's labels do not show higher values going with {want} outcomes "
            f"(AUC {auc:.2f} for bad)")
    return None, (f"its values run {span}, log-odds by the look, but {told}: left out; "
                  f"if they are the log-odds of P({want}), add `score: {{path: {path}, "
                  "log_odds: true}` to the connector's fields")
