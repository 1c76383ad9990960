"""Data quality, kept apart from drift: missing rates, out-of-range values, new categories,
bad records by reason, and the windows where the policy's data-quality gate held changes.

A broken feed moves distributions as violently as a real population change; this panel is
where a reviewer checks that a drift alarm is not a pipeline fault.
"""

from __future__ import annotations

from typing import Any

from driftwatch.pipeline.badcounts import unknown_labels_line
from driftwatch.report.bars import hbars
from driftwatch.report.charts import heatmap
from driftwatch.report.html import Markup, el, fmt, join, pct, table
from driftwatch.report.inputs import RunData, signal
from driftwatch.report.sections import Context, Section

__all__ = ["quality_section", "reference_missing_share"]

_DQ_SIGNALS = ("missing_rate", "out_of_range", "new_category_rate", "field_absent")


def reference_missing_share(run: RunData, name: str) -> float | None:
    """The feature's missing share in the reference profile (None without one)."""
    prof = run.reference
    if prof is None:
        return None
    n = max(int(prof.sketch.n), 1)
    if name in prof.layout.numeric.names:
        j = prof.layout.numeric.names.index(name)
        return float(prof.sketch.num_coarse()[j][-1]) / n
    cl = prof.layout.categorical
    if name in cl.names:
        return float(prof.sketch.cat[cl.names.index(name)][cl.missing_col]) / n
    return None


def _feat(rec: dict[str, Any], name: str) -> dict[str, Any]:
    return (rec.get("features") or {}).get(name) or {}


def _peak(recs: list[dict[str, Any]], name: str, key: str) -> tuple[float | None, Any]:
    best: tuple[float | None, Any] = (None, None)
    for r in recs:
        v = _feat(r, name).get(key)
        if isinstance(v, int | float) and (best[0] is None or v > best[0]):
            best = (float(v), r.get("window_id"))
    return best


def _unseen_share(rec: dict[str, Any], name: str) -> float | None:
    f = _feat(rec, name)
    if f.get("type") != "categorical":
        return None
    n = sum((f.get("levels") or {}).values()) + sum(int(f.get(k, 0)) for k in
                                                    ("other", "unseen", "missing"))
    return int(f.get("unseen", 0)) / n if n else None


def _flags(recs: list[dict[str, Any]], name: str) -> list[str]:
    """Per data-quality signal of feature ``name``, the first window it was flagged in:
    by the policy's gate at the policy's level (what held model changes), else by the
    detector at its own threshold, said so (the gate may ask for more)."""
    out = []
    for st in _DQ_SIGNALS:
        gate = next(((r, x) for r in recs for x in (r.get("decision") or {}).get("reasons") or ()
                     if x.get("kind") == "data_quality" and x.get("signal") == st
                     and x.get("feature") == name), None)
        if gate is not None:
            r, x = gate
            out.append(f"gate: {st} {fmt(x.get('value'))} > {fmt(x.get('threshold'))} (the "
                       f"policy's level) in window {r['window_id']}")
            continue
        for r in recs:
            s = signal(r, st, name) or {}
            thr, v = s.get("threshold"), s.get("value")
            if isinstance(thr, int | float) and isinstance(v, int | float) and v > thr:
                out.append(f"{st} over {fmt(thr)} in window {r['window_id']} (the detector's "
                           "own threshold; no gate fault)")
                break
    return out


def _feature_rows(ctx: Context) -> list[list[Any]]:
    run = ctx.run
    recs = [ctx.focus_record] if ctx.focus_record is not None else run.records
    rows = []
    for name in run.feature_names():
        miss, w_miss = _peak(recs, name, "missing_share")
        oor, w_oor = _peak(recs, name, "out_of_range_share")
        new = [(s, r.get("window_id")) for r in recs if (s := _unseen_share(r, name))]
        new_peak = max(new, default=(None, None), key=lambda t: t[0] or 0.0)
        sig_txt = _flags(recs, name)
        rows.append([
            name,
            pct(reference_missing_share(run, name), 2),
            pct(miss, 2) + (f" (w {w_miss})" if w_miss is not None and len(recs) > 1 else ""),
            pct(oor, 2) + (f" (w {w_oor})" if oor and len(recs) > 1 else ""),
            pct(new_peak[0], 2) + (f" (w {new_peak[1]})" if new_peak[0] and len(recs) > 1
                                    else ""),
            "; ".join(sig_txt) or "",
        ])
    # the flagged features first (a wide table's faults sit at its top), each part in the
    # features' own order
    rows.sort(key=lambda row: row[-1] == "")
    return rows


def _faults(ctx: Context) -> Markup | None:
    run = ctx.run
    recs = [ctx.focus_record] if ctx.focus_record is not None else run.records
    rows = []
    for r in recs:
        d = r.get("decision") or {}
        if not d.get("data_quality_fault"):
            continue
        why = [f"{x.get('signal')}{' on ' + x['feature'] if x.get('feature') else ''} "
               f"= {fmt(x.get('value'))} > {fmt(x.get('threshold'))}"
               for x in d.get("reasons") or () if x.get("group") == "data_quality"
               or x.get("kind") == "data_quality"]
        srcs = sorted({str(x.get("source")) for x in d.get("reasons") or ()
                       if x.get("kind") == "data_quality"})
        rows.append([r.get("window_id"), r.get("end") or "", "; ".join(why) or "—",
                     d.get("action") or "none", el("code", ", ".join(srcs))])
    if not rows:
        return None
    shown = rows[: ctx.budget.max_decisions]
    extra = (el("p", f"… and {len(rows) - len(shown)} more windows.", class_="note")
             if len(rows) > len(shown) else None)
    return join([el("h3", "Windows held by the data-quality gate"),
                 table(["window", "end", "signals over their level", "action", "policy line"],
                       shown, class_="dq-faults"), extra])


def quality_section(ctx: Context) -> Section | None:
    run = ctx.run
    if not run.records:
        return None
    parts: list[Any] = [table(
        ["feature", "missing (reference)", "missing (peak)", "out of range (peak)",
         "new categories (peak)", "data-quality signals"],
        _feature_rows(ctx), class_="dq-features")]
    rows = []
    for name in run.feature_names():
        vals = [_feat(r, name).get("missing_share") for r in run.records]
        if any(isinstance(v, int | float) and v > 0 for v in vals):
            rows.append((name, vals))
    if rows and len(run.records) > 1:
        parts.append(el("h3", "Missing share per window"))
        parts.append(el("figure", heatmap(ctx.axis, rows, "missing share per feature and window"),
                        el("figcaption", "Darker: more values missing (scale up to the run's "
                                         "highest share). Hover for values.")))
    total, read = run.bad_records()
    parts.append(el("h3", f"Bad records: {fmt(total)} ({pct(total / max(read, 1), 2)} of the "
                          f"{fmt(read)} records read: predictions, outcomes and bad ones)"))
    if run.bad_by_reason:
        items = sorted(run.bad_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
        parts.append(el("figure", hbars(items, "bad records by reason"),
                        el("figcaption", "Each bad record is kept in dead_letter.jsonl with its "
                                         "reason and position; the rest of the stream flowed on.")))
        for stream, values in (run.summary.get("unknown_labels") or {}).items():
            parts.append(el("p", unknown_labels_line(stream, values), class_="note"))
    else:
        parts.append(el("p", "No bad records.", class_="note"))
    faults = _faults(ctx)
    if faults is not None:
        parts.append(faults)
    return Section("data-quality", "Data quality", join(parts),
                   "Pipeline faults are not drift: a fault alerts and blocks changes to the "
                   "model until the feed is clean again.")
