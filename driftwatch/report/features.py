"""The features that moved most: reference vs current on the reference's bins.

For each feature the report picks one window: the focused decision's, or in a run report
the window where the feature's PSI peaked. It draws the reference and current shares on
the same coarse bins the detectors used (deciles plus a missing bin; levels plus other,
new and missing), outlines the bins that moved most, and lists every statistic computed on
the feature with the detector's threshold and the policy's, with the policy file:line.

Features are ranked by the detectors' PSI; those with PSI of at least :data:`MOVED`, or
named by a drift reason, get a panel (at least one, at most the budget). Where a record
carries no PSI for a feature (an older timeline, a detector left out), the report computes
it from the same counts, with empty bins set to ``EPS`` (a share), and says so.

>>> psi, contrib = own_psi([50, 50, 0], [25, 75, 0])
>>> round(psi, 4), [round(c, 4) for c in contrib]
(0.2747, [0.1733, 0.1014, 0.0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from driftwatch.detectors.registry import CALIBRATED_LEVELS, measure_name
from driftwatch.report.bars import histogram, histogram_legend
from driftwatch.report.html import Markup, el, fmt, join, pct, table
from driftwatch.report.inputs import RunData, signal
from driftwatch.report.sections import (
    Context,
    Section,
    policy_levels,
    policy_line,
    reason_tier,
    series_chart,
    tier_badge,
)
from driftwatch.report.svg import short
from driftwatch.windows.layout import CategoricalLayout

__all__ = ["EPS", "MOVED", "Bins", "calibrated_text", "feature_bins", "features_section", "own_psi",
           "ranked_features"]

#: Share given to an empty bin when the report computes PSI itself.
EPS = 1e-4
#: A feature is plotted when its PSI reaches this (or a drift reason names it).
MOVED = 0.05
#: Drift statistics listed per feature, in this order.
_STATS = ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger", "ks", "wasserstein", "chi2",
          "cramers_v")


@dataclass(frozen=True)
class Bins:
    """One feature's bins in one window: labels, current and reference counts."""

    labels: list[str]
    cur: list[int]
    ref: list[int] | None
    edge_labels: list[str] | None = None


def own_psi(ref: Sequence[int], cur: Sequence[int], eps: float = EPS) -> tuple[float, list[float]]:
    """PSI and per-bin contributions ``(a - e) ln(a / e)`` on shares, empty bins at ``eps``."""
    nr, nc = max(sum(ref), 1), max(sum(cur), 1)
    contrib = []
    for r, c in zip(ref, cur, strict=True):
        if r == 0 and c == 0:
            contrib.append(0.0)
            continue
        e, a = max(r / nr, eps), max(c / nc, eps)
        contrib.append((a - e) * math.log(a / e))
    return sum(contrib), contrib


def _numeric_ref(run: RunData, name: str) -> tuple[list[int], list[str], list[str]] | None:
    prof = run.reference
    if prof is None or name not in prof.layout.numeric.names:
        return None
    lay = prof.layout.numeric
    j = lay.names.index(name)
    keep = lay.coarse_valid()[j]  # the layout's own columns, padding left out
    row = prof.sketch.num_coarse()[j]
    counts = [int(v) for v in row[keep]]
    labels = [lab for lab, k in zip(lay.coarse_labels()[j], keep, strict=True) if k]
    edges = [short(float(e)) for e in lay.coarse_edges[j]]
    return counts, labels, edges


def feature_bins(run: RunData, rec: dict[str, Any], name: str) -> Bins | None:
    """Bins of ``name`` in window record ``rec`` (None when the record lacks the feature)."""
    f = (rec.get("features") or {}).get(name)
    if not f:
        return None
    if f.get("type") == "numeric":
        cur = [int(v) for v in f.get("bins", [])] + [int(f.get("missing", 0))]
        ref = _numeric_ref(run, name)
        if ref is not None and len(ref[0]) == len(cur):
            return Bins(ref[1], cur, ref[0], ref[2])
        return Bins([f"bin {i + 1}" for i in range(len(cur) - 1)] + ["missing"], cur, None)
    levels: dict[str, int] = f.get("levels") or {}
    prof = run.reference
    tail_cur = [int(f.get("other", 0)), int(f.get("unseen", 0)), int(f.get("missing", 0))]
    if prof is not None and name in prof.layout.categorical.names:
        cl = prof.layout.categorical
        j = cl.names.index(name)
        order = list(cl.levels[j])
        keep = cl.valid()[j]  # the feature's levels and other/unseen/missing, no padding
        row = prof.sketch.cat[j]
        if set(order) == set(levels):
            labels = [lab for lab, k in zip(cl.column_labels()[j], keep, strict=True) if k]
            return Bins(labels, [int(levels[k]) for k in order] + tail_cur,
                        [int(v) for v in row[keep]])
    lay = CategoricalLayout((name,), (tuple(levels),))  # no profile: the record's own levels
    return Bins(list(lay.column_labels()[0]), [int(v) for v in levels.values()] + tail_cur, None)


def _psi_at(run: RunData, rec: dict[str, Any], name: str) -> tuple[float | None, bool]:
    s = signal(rec, "psi", name)
    if s is not None and isinstance(s.get("value"), int | float) and math.isfinite(s["value"]):
        return float(s["value"]), False
    b = feature_bins(run, rec, name)
    if b is None or b.ref is None:
        return None, False
    return own_psi(b.ref, b.cur)[0], True


def _has_predictions(rec: dict[str, Any]) -> bool:
    n = rec.get("n_events")
    return not isinstance(n, int | float) or n > 0


def ranked_features(ctx: Context) -> list[tuple[str, int, float | None, bool]]:
    """(feature, window position, PSI, computed here?) by PSI, largest first."""
    run = ctx.run
    out = []
    for name in run.feature_names():
        if ctx.focus_pos is not None:
            v, own = _psi_at(run, run.records[ctx.focus_pos], name)
            out.append((name, ctx.focus_pos, v, own))
            continue
        # only windows that saw predictions: a labels-only window has no feature counts
        # worth ranking (its PSI against the reference is an artefact of emptiness)
        seen = [i for i, rec in enumerate(run.records) if _has_predictions(rec)]
        best: tuple[str, int, float | None, bool] = (
            name, seen[-1] if seen else len(run.records) - 1, None, False)
        for i in seen:
            rec = run.records[i]
            v, own = _psi_at(run, rec, name)
            if v is not None and (best[2] is None or v > best[2]):
                best = (name, i, v, own)
        out.append(best)
    return sorted(out, key=lambda t: (-(t[2] if t[2] is not None else -1.0), t[0]))


def _moved(bins: Bins, psi_sig: dict[str, Any] | None) -> tuple[set[int], list[list[Any]]]:
    """Indices of the bins that moved most, and their table rows."""
    top = (psi_sig or {}).get("details", {}).get("top_bins") or []
    idx = {lab: i for i, lab in enumerate(bins.labels)}
    if top and all(t.get("bin") in idx for t in top):
        rows = [[t["bin"], pct(t.get("ref"), 2), pct(t.get("cur"), 2), fmt(t.get("psi"))]
                for t in top]
        return {idx[t["bin"]] for t in top}, rows
    if bins.ref is None:
        return set(), []
    _, contrib = own_psi(bins.ref, bins.cur)
    order = sorted(range(len(contrib)), key=lambda i: (-contrib[i], i))[:3]
    nr, nc = max(sum(bins.ref), 1), max(sum(bins.cur), 1)
    rows = [[bins.labels[i], pct(bins.ref[i] / nr, 2), pct(bins.cur[i] / nc, 2),
             fmt(contrib[i])] for i in order if contrib[i] > 0]
    return {i for i in order if contrib[i] > 0}, rows


def _stats_rows(run: RunData, rec: dict[str, Any], name: str) -> list[list[Any]]:
    """One row per statistic, with the one threshold that decides it.

    The policy's, where a policy rule on this statistic and feature fired in this window
    (its tier and file:line) or elsewhere in the run (its lowest tier); else the detector's.
    """
    fired = {r.get("signal"): r for r in (rec.get("decision") or {}).get("reasons") or ()
             if r.get("feature") == name and r.get("measure", "value") == "value"
             and r.get("kind", "trigger") == "trigger"}
    rows = []
    for st in _STATS:
        s = signal(rec, st, name)
        if s is None:
            continue
        r = fired.get(st)
        levels = policy_levels(run, st, name)
        if r is not None:
            rate = r.get("false_alarm_rate")
            kind = "policy " if rate is None else f"policy, calibrated at {rate:g}, "
            thr, by = r.get("threshold"), join([kind, tier_badge(str(r.get("tier")))])
        elif levels:
            thr, by = levels[0][1], join(["policy ", tier_badge(levels[0][0])])
        else:
            thr, by = s.get("threshold"), "detector"
        value = s.get("value")
        above = isinstance(thr, int | float) and isinstance(value, int | float) and value >= thr
        rows.append([st, fmt(value), fmt(thr), by, calibrated_text(s.get("details")),
                     fmt(s.get("p_value"), 3), "above" if above else ""])
    return rows


def calibrated_text(details: Any) -> str:
    """The calibrated levels a result carries, ``"0.0312 at 0.01"`` per false-alarm rate.

    >>> calibrated_text({"calibrated_thresholds": {"0.01": 0.03121, "0.001": 0.0402}})
    '0.03121 at 0.01; 0.0402 at 0.001'
    >>> calibrated_text({})
    '—'
    """
    table_ = (details or {}).get(CALIBRATED_LEVELS) or {}
    return "; ".join(f"{fmt(v)} at {k}" for k, v in table_.items()) or "—"


def _reason_rows(rec: dict[str, Any], name: str) -> list[list[Any]]:
    d = rec.get("decision") or {}
    return [[measure_name(str(r.get("signal")), str(r.get("measure", "value"))),
             fmt(r.get("value")), fmt(r.get("threshold")),
             "—" if r.get("false_alarm_rate") is None else f"calibrated, {r['false_alarm_rate']:g}",
             reason_tier(r), r.get("kind", ""), policy_line(r.get("source"))]
            for r in d.get("reasons") or () if r.get("feature") == name]


def _panel(ctx: Context, k: int, name: str, pos: int, psi: float | None, own: bool) -> Markup:
    run = ctx.run
    rec = run.records[pos]
    bins = feature_bins(run, rec, name)
    if bins is None:
        return Markup("")
    psi_sig = signal(rec, "psi", name)
    moved, moved_rows = _moved(bins, psi_sig)
    wid = rec.get("window_id")
    hist = histogram(bins.labels, bins.cur, bins.ref, moved=moved, edge_labels=bins.edge_labels,
                     label=f"{name}: reference vs window {wid}", feature=name, window=wid)
    ftype = (rec.get("features") or {}).get(name, {}).get("type", "")
    head = el("h3", f"{k}. {name} ", el("span", ftype, class_="tag"),
              el("span", f"PSI {fmt(psi)}" + (" (computed by the report)" if own else ""),
                 class_="tag warn" if psi is not None and psi >= 0.1 else "tag"),
              el("span", f"window {wid} · {rec.get('end') or ''}", class_="tag"))
    side: list[Any] = []
    stats = _stats_rows(run, rec, name)
    if stats:
        cols = ["statistic", "value", "threshold", "set by", "calibrated level (false alarms)",
                "p-value", "vs threshold"]
        side.append(table(cols, stats, class_="stats"))
    reasons = _reason_rows(rec, name)
    if reasons:
        side.append(el("p", "Policy reasons on this feature:", class_="note"))
        side.append(table(["signal", "value", "threshold", "level", "tier", "kind",
                           "policy line"], reasons))
    if moved_rows:
        side.append(el("p", "Bins that moved most (▲ in the plot):", class_="note"))
        side.append(table(["bin", "reference", "current", "PSI part"], moved_rows,
                          class_="moved-bins"))
    legend = histogram_legend(bins.ref is not None, f"window {wid}")
    spark = ctx.series(lambda r: _psi_at(run, r, name)[0])
    parts = [head, el("div", el("figure", legend, hist), el("div", *side), class_="grid2")]
    if len(run.records) > 1:
        parts.append(el("figure", series_chart(
            ctx, f"PSI of {name} over the run", "PSI", spark,
            levels=policy_levels(run, "psi", name), zero=True)))
    return el("div", *parts, class_="feature", id=f"feature-{k}", data_feature=name,
              data_window=wid)


def _named_features(ctx: Context) -> set[str]:
    """Features a drift reason names, in the focused decision or in any decision."""
    recs = [ctx.focus_record] if ctx.focus_record is not None else ctx.run.decisions()
    return {str(r["feature"]) for rec in recs for r in (rec.get("decision") or {}).get("reasons")
            or () if r.get("feature") and r.get("group") == "drift"}


def features_section(ctx: Context) -> Section | None:
    ranked = ranked_features(ctx)
    if not ranked:
        return None
    # plot the features that moved (or that a reason names), at least one, at most the budget
    named = _named_features(ctx)
    moved = [t for t in ranked if (t[2] or 0.0) >= MOVED or t[0] in named]
    top = (moved or ranked[:1])[: ctx.budget.top_features]
    overview = table(
        ["feature", "PSI", "window", "missing (window)"],
        [[name, fmt(v) if v is not None else "—",
          ctx.run.records[pos].get("window_id"),
          pct((ctx.run.records[pos].get("features") or {}).get(name, {}).get("missing_share"))]
         for name, pos, v, _ in ranked],
        class_="ranking",
    )
    panels = [_panel(ctx, k, *t) for k, t in enumerate(top, 1)]
    more = len(moved) - len(top)
    note = el("p", f"{more} more features moved; they are ranked above but not plotted "
                   "(size bound).", class_="note") if more > 0 else None
    where = ("in the focused window" if ctx.focus is not None
             else "at the window where each peaked")
    return Section("features", "Features that moved most",
                   join([el("details", el("summary", "Ranking of all features"), overview),
                         *panels, note]),
                   f"Reference vs current shares on the reference's bins, {where}.")
