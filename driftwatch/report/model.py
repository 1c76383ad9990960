"""The model's own behaviour: confidence (its scores) and, once outcomes arrive, its business
metrics and performance on labels.

Outcomes arrive weeks after the prediction, so a window's labelled events are outcomes that
*arrived* in it, for applications scored earlier; and only approved applications get one.
The panel shows how many labels each window had (label coverage) beside every label-based
metric, so a flat Gini on a handful of labels is not read as good news.

>>> details_text({"ci_low": 0.91234, "ci_high": 1.2, "n": 2000, "top_bins": [1, 2]})
'ci_low 0.9123 · ci_high 1.2 · n 2,000'
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from driftwatch.report.bars import columns, histogram, histogram_legend
from driftwatch.report.charts import Band, Series
from driftwatch.report.html import Markup, el, fmt, join, kv_table, pct, table
from driftwatch.report.inputs import RunData, signal, value
from driftwatch.report.sections import Context, Section, policy_levels, series_chart

__all__ = ["confidence_section", "details_text", "performance_section"]

_CONFIDENCE = ("score_psi", "variance_ratio", "mean_shift", "entropy")
_PERFORMANCE = ("approval_rate", "bad_rate", "expected_loss", "auc", "gini", "ks_score",
                "calibration_ratio")


def details_text(details: dict[str, Any] | None) -> str:
    """The scalar entries of a signal's ``details``, for a table cell."""
    out = []
    for k, v in (details or {}).items():
        if isinstance(v, bool | int | float | str):
            out.append(f"{k} {fmt(v) if isinstance(v, int | float) else v}")
    return " · ".join(out)


def _band(ctx: Context, name: str) -> Band | None:
    def get(key: str) -> list[float | None]:
        out: list[float | None] = []
        for r in ctx.run.records:
            d = ((signal(r, name) or {}).get("details") or {}).get(key)
            out.append(float(d) if isinstance(d, int | float) else None)
        return out

    lo, hi = get("ci_low"), get("ci_high")
    return Band("interval (ci_low–ci_high)", lo, hi) if any(v is not None for v in lo) else None


def _signal_table(recs: list[dict[str, Any]], names: tuple[str, ...]) -> Markup | None:
    rows = []
    for r in recs:
        for n in names:
            s = signal(r, n)
            if s is None:
                continue
            rows.append([n, fmt(s.get("value")), fmt(s.get("threshold")), fmt(s.get("n_cur")),
                         details_text(s.get("details"))])
    if not rows:
        return None
    return table(["signal", "value", "detector threshold", "events", "details"], rows,
                 class_="signals")


def _pick(ctx: Context, name: str) -> dict[str, Any]:
    """The focused window, else the one where ``name`` peaked, else the last."""
    if ctx.focus_record is not None:
        return ctx.focus_record
    best, best_v = ctx.run.records[-1], None
    for r in ctx.run.records:
        v = value(r, name)
        if v is not None and (best_v is None or v > best_v):
            best, best_v = r, v
    return best


def _score_hist(run: RunData, rec: dict[str, Any]) -> Markup | None:
    sc = rec.get("score") or {}
    if not sc.get("bins"):
        return None
    cur = [int(v) for v in sc["bins"]] + [int(sc.get("missing", 0))]
    prof = run.reference
    ref = labels = None
    if prof is not None:
        lay = prof.layout.score
        keep = lay.coarse_valid()[0]  # the layout's own columns, padding left out
        row = prof.sketch.score_coarse()[0]
        if int(keep.sum()) == len(cur):
            ref = [int(v) for v in row[keep]]
            labels = [lab for lab, k in zip(lay.coarse_labels()[0], keep, strict=True) if k]
    labels = labels or [f"bin {i + 1}" for i in range(len(cur) - 1)] + ["missing"]
    wid = rec.get("window_id")
    return el("figure", histogram_legend(ref is not None, f"window {wid}"),
              histogram(labels, cur, ref, label=f"score: reference vs window {wid}",
                        feature="score", window=wid))


def confidence_section(ctx: Context) -> Section | None:
    run = ctx.run
    if not any(signal(r, n) for r in run.records for n in _CONFIDENCE) and not any(
        (r.get("score") or {}).get("mean") is not None for r in run.records
    ):
        return None
    rec = _pick(ctx, "score_psi")
    prof = run.reference
    sc = rec.get("score") or {}
    ref_mean = prof.sketch.score_mean if prof is not None else None
    ref_var = prof.sketch.score_var if prof is not None else None
    vr = signal(rec, "variance_ratio") or {}
    det = vr.get("details") or {}
    interval = (f"[{fmt(det.get('ci_low'))}, {fmt(det.get('ci_high'))}]"
                if "ci_low" in det else "—")
    parts: list[Any] = [el("h3", f"Window {rec.get('window_id')} ({rec.get('end') or ''})"),
                        kv_table([
                            ("mean score: reference → window", f"{fmt(ref_mean)} → "
                                                               f"{fmt(sc.get('mean'))}"),
                            ("score variance: reference → window", f"{fmt(ref_var)} → "
                                                                   f"{fmt(sc.get('var'))}"),
                            ("variance ratio (window / reference)", fmt(vr.get("value"))),
                            ("its interval", interval),
                            ("detector threshold", fmt(vr.get("threshold"))),
                        ])]
    hist = _score_hist(run, rec)
    if hist is not None:
        parts.insert(0, hist)
    else:
        parts.append(el("p", "This timeline carries no score histogram per window: the "
                             "distribution is summarised by its moments.", class_="note"))
    tbl = _signal_table([rec], _CONFIDENCE)
    if tbl is not None:
        parts.append(tbl)
    vrs = ctx.series(lambda r: value(r, "variance_ratio"))
    if any(v is not None for v in vrs) and len(run.records) > 1:
        parts.append(el("figure", series_chart(
            ctx, "Variance ratio of the score (window / reference), with its interval",
            "variance ratio", vrs, levels=policy_levels(run, "variance_ratio"),
            band=_band(ctx, "variance_ratio"))))
    means = ctx.series(lambda r: (r.get("score") or {}).get("mean"))
    if any(v is not None for v in means) and len(run.records) > 1:
        extra = [Series("reference mean", [ref_mean] * len(means), "#7b8794", dashed=True)] \
            if ref_mean is not None else []
        parts.append(el("figure", series_chart(ctx, "Mean score (predicted PD)", "mean score",
                                               means, extra=extra)))
    return Section("confidence", "Confidence: the model's scores", join(parts),
                   "A spreading or shifting score distribution says the model is less sure of "
                   "today's applicants than of its training sample.")


def _ref_rates(run: RunData) -> tuple[float | None, float | None, bool]:
    """The reference's approval rate, its bad rate, and whether that bad rate is taken on
    approved rows only: it is where the reference has approvals, else on every labelled
    row (:func:`~driftwatch.windows.profile.add_frame_labels`)."""
    prof = run.reference
    if prof is None:
        return None, None, False
    dec = prof.sketch.decisions
    decided = int(dec[0] + dec[1])
    lab = int(prof.sketch.lab_n.sum())
    return (int(dec[1]) / decided if decided else None,
            int(prof.sketch.lab_n[1]) / lab if lab else None,
            int(dec[1]) > 0)


def _ref_note(app: float | None, bad: float | None, approved: bool) -> str:
    """The reference's rates, saying "approved" only where its rows say so.

    >>> _ref_note(0.8, 0.05, True)
    'Reference: approval rate 80.0%, bad rate on approved applications 5.00%.'
    >>> _ref_note(None, 0.1254, False).split(" (")[0]
    'Reference: bad rate 12.54% on its labelled rows'
    """
    if approved:
        return (f"Reference: approval rate {pct(app)}, bad rate on approved applications "
                f"{pct(bad, 2)}.")
    said = [f"approval rate {pct(app)}"] if app is not None else []
    if bad is not None:
        said.append(f"bad rate {pct(bad, 2)} on its labelled rows (it records no approval "
                    "decisions, so they are not known to be approved applications only)")
    return "Reference: " + ", ".join(said) + "."


def _date(t: Any, numbered: bool = False) -> str:
    """A cohort's start: its date, or ``record N`` where event time numbers records."""
    if not isinstance(t, int | float) or not math.isfinite(t):
        return "?"
    if numbered:
        return f"record {int(t)}"
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d")


def _days(seconds: Any, numbered: bool = False) -> str:
    """A label delay in days, or in records where event time numbers records.

    >>> _days(172800.0), _days(3.0, numbered=True)
    ('2.0 days', '3 records')
    """
    if not isinstance(seconds, int | float) or seconds != seconds:
        return "—"
    if numbered:
        return f"{seconds:.0f} records"
    return f"{seconds / 86400:.1f} days"


def _awaiting(c: dict[str, Any]) -> bool:
    """Whether a cohort still waits for outcomes: predictions neither joined nor gone
    (expired, evicted); a summary without ``pending`` counts any short of complete."""
    if isinstance(c.get("pending"), int | float):
        return c["pending"] > 0
    done = c.get("completeness")
    return not isinstance(done, int | float) or not done >= 1


def _cohort_caption(cohorts: list[dict[str, Any]]) -> str:
    """What the completeness columns say: immature cohorts only where some await outcomes.

    >>> _cohort_caption([{"predicted": 9, "pending": 0, "completeness": 1.0}])
    'Every cohort is complete: each of its predictions has its outcome.'
    >>> _cohort_caption([{"pending": 0, "completeness": 1.0}, {"pending": 3}]).split(":")[0]
    '1 of the 2 cohorts is immature'
    """
    waiting = sum(_awaiting(c) for c in cohorts)
    if waiting:
        are = "is" if waiting == 1 else "are"
        return (f"{waiting} of the {len(cohorts)} cohorts {are} immature: their outcomes have "
                "not all arrived yet, so their bad rates and Gini are provisional.")
    if all(c.get("completeness") == 1 for c in cohorts):
        return "Every cohort is complete: each of its predictions has its outcome."
    return ("No cohort awaits outcomes any more: a cohort below 100% lost predictions "
            "without one (past the label TTL, or evicted).")


def _maturity(run: RunData) -> Markup:
    """Label delay and per-cohort completeness, from the run summary."""
    s = run.summary
    numbered = s.get("event_time") == "record order"  # event time numbers the records
    lab = s.get("labels") or {}
    joined = lab.get("joined", s.get("outcomes"))
    parts: list[Any] = [el("p", f"{fmt(joined)} outcomes joined to their predictions. A "
                                "window's labelled events are outcomes that arrived in it, for "
                                "applications scored earlier; only approved applications get "
                                "one.", class_="note")]
    delay = s.get("label_delay") or {}
    if delay.get("count"):
        parts.append(kv_table([
            ("label delay, median", _days(delay.get("p50"), numbered)),
            ("label delay, 90th percentile", _days(delay.get("p90"), numbered)),
            ("label delay, longest", _days(delay.get("max"), numbered)),
            ("predictions still waiting for an outcome", lab.get("backlog", "—")),
            ("expired without outcome", lab.get("expired", "—")),
        ], class_="label-delay"))
    cohorts = s.get("label_cohorts") or []
    if cohorts:
        parts.append(el("figure", columns(
            [_date(c.get("start"), numbered) for c in cohorts],
            [c.get("completeness") if isinstance(c.get("completeness"), int | float) else None
             for c in cohorts],
            [int(c.get("predicted", 0)) for c in cohorts],
            "Label completeness per prediction cohort (outcomes joined / predictions)"),
            el("figcaption", _cohort_caption(cohorts))))
    if lab:
        parts.append(el("details", el("summary", "Label join counters"),
                        kv_table(sorted((str(k), v if isinstance(v, int | float) else str(v))
                                        for k, v in lab.items())),
                        *_read_ahead_note(s, lab)))
    return join(parts)


def _read_ahead_note(s: dict[str, Any], lab: dict[str, Any]) -> list[Markup]:
    """Why ``late_predictions`` counts every join where the outcomes were read ahead of
    the predictions (an outcomes file without times): expected, not a lagging stream."""
    late = lab.get("late_predictions")
    if not s.get("outcomes_read_ahead") or not isinstance(late, int | float) or not late:
        return []
    return [el("p", f"late_predictions counts the {fmt(late)} outcomes that were there before "
               "their prediction, as expected here: the outcomes have no times of their own "
               "(event_time: {source: arrival}), so replay reads them ahead of the "
               "predictions and joins each when its prediction is read. On a live stream the "
               "same count would mean the prediction stream lags.", class_="note")]


def performance_section(ctx: Context) -> Section | None:
    run = ctx.run
    recs = run.records
    if not recs:
        return None
    ref_app, ref_bad, ref_approved = _ref_rates(run)
    parts: list[Any] = [_maturity(run)]
    n = len(recs)
    if n > 1:
        arriving = ctx.series(lambda r: float(r.get("n_labelled", 0)))
        parts.append(el("figure", series_chart(
            ctx, "Labelled outcomes in each window (label coverage)", "labelled outcomes",
            arriving, zero=True)))
        app = ctx.series(lambda r: (r.get("score") or {}).get("approval_rate"))
        if any(v is not None for v in app):
            extra = [Series("reference", [ref_app] * n, "#7b8794", dashed=True)] \
                if ref_app is not None else []
            parts.append(el("figure", series_chart(ctx, "Approval rate", "approval rate", app,
                                                   extra=extra)))
        bad = [r.get("n_labelled_bad", 0) / r["n_labelled"] if r.get("n_labelled") else None
               for r in recs]
        if any(v is not None for v in bad):
            ref_name = "reference (approved)" if ref_approved else "reference"
            extra = [Series(ref_name, [ref_bad] * n, "#7b8794", dashed=True)] \
                if ref_bad is not None else []
            parts.append(el("figure", series_chart(ctx, "Observed bad rate on labelled outcomes",
                                                   "bad rate", bad, extra=extra, zero=True)))
        for name, label in (("calibration_ratio", "Calibration: observed / expected bads"),
                            ("gini", "Discrimination: Gini on labelled outcomes"),
                            ("expected_loss", "Expected loss")):
            vals = ctx.series(lambda r, n_=name: value(r, n_))
            if any(v is not None for v in vals):
                det = ctx.series(lambda r, n_=name: (signal(r, n_) or {}).get("threshold"))
                parts.append(el("figure", series_chart(ctx, label, name, vals,
                                                       levels=policy_levels(run, name),
                                                       detector=det, band=_band(ctx, name))))
    focus = [ctx.focus_record] if ctx.focus_record is not None else [recs[-1]]
    tbl = _signal_table(focus, _PERFORMANCE)
    if tbl is not None:
        parts.append(el("h3", f"Signals in window {focus[0].get('window_id')}"))
        parts.append(tbl)
    if ref_app is not None or ref_bad is not None:
        parts.append(el("p", _ref_note(ref_app, ref_bad, ref_approved), class_="note"))
    return Section("performance", "Business metrics and performance on labels", join(parts),
                   "Label-based metrics lag: read them with the coverage line above them.")
