"""Prediction cohorts: what each window's own predictions turned into, beside what their
scores promised before any label (expected bad rate, if the champion stays calibrated).

Reads ``summary.json``'s ``window_cohorts`` (every cohort kept: completeness, expected and
realised bad rate) and the cohort verdicts of the timeline (``cohort`` lines).

>>> from pathlib import Path
>>> from driftwatch.report.inputs import RunData
>>> from driftwatch.report.sections import Budget, Context
>>> run = RunData(Path("."), [{"window_id": 0}], {"window_cohorts": [
...     {"window_id": 0, "predicted": 700, "labelled": 650, "completeness": 0.93,
...      "expected_bad_rate": 0.08, "expected_bad_rate_labelled": 0.081,
...      "realised_bad_rate": 0.12, "matured": 1.0}]})
>>> s = cohort_section(Context(run, None, Budget()))
>>> s.id, "12.00%" in str(s.body)
('cohorts', True)
"""

from __future__ import annotations

from typing import Any

from driftwatch.report.charts import Series
from driftwatch.report.html import el, join, pct, table
from driftwatch.report.sections import Context, Section, series_chart

__all__ = ["cohort_section"]

_MAX_ROWS = 60


def _tiers(ctx: Context) -> dict[int, str]:
    return {int(r["window_id"]): str(r.get("tier") or "none") for r in ctx.run.cohorts}


def cohort_section(ctx: Context) -> Section | None:
    """Expected and realised bad rate per cohort, completeness, and each verdict's tier."""
    cohorts: list[dict[str, Any]] = list(ctx.run.summary.get("window_cohorts") or [])
    if not cohorts and not ctx.run.cohorts:
        return None
    tiers = _tiers(ctx)
    parts: list[Any] = [el("p", "A cohort is the approved predictions of one window, followed "
                                "until their outcomes arrive. Expected: the mean P(bad) of "
                                "their scores, known at once; realised: the bad share of the "
                                "outcomes joined so far.", class_="note")]
    if len(cohorts) > 1:  # on the windows' axis: a cohort sits at the window it came from
        by_id = {c.get("window_id"): c for c in cohorts}
        ids = [r.get("window_id", i) for i, r in enumerate(ctx.run.records)]
        exp = [by_id.get(w, {}).get("expected_bad_rate") for w in ids]
        real = [by_id.get(w, {}).get("realised_bad_rate") for w in ids]
        parts.append(el("figure", series_chart(
            ctx, "Bad rate per cohort: expected from scores, realised on outcomes",
            "expected", exp, extra=[Series("realised", real, "#d64545")], zero=True)))
    rows = []
    for c in cohorts[-_MAX_ROWS:]:
        wid = c.get("window_id")
        rows.append([wid, c.get("predicted"), pct(c.get("completeness")),
                     pct(c.get("matured")), pct(c.get("expected_bad_rate"), 2),
                     pct(c.get("expected_bad_rate_labelled"), 2),
                     pct(c.get("realised_bad_rate"), 2),
                     tiers.get(int(wid), "not judged") if isinstance(wid, int) else "—"])
    parts.append(table(["window", "predictions", "complete", "matured (TTL)",
                        "expected bad rate", "expected (labelled rows)", "realised",
                        "verdict"], rows, class_="cohorts"))
    return Section("cohorts", "Prediction cohorts: expected and realised", join(parts),
                   "Each window's outcomes, attributed to the window that scored them.")
