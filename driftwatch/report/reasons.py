"""The reasons of each decision, exactly as the policy engine gave them.

Values and thresholds are shown to four significant digits; each cell keeps the recorded
number (shortest round-trip form) in its tooltip and ``data-exact``, so a reviewer can
match it with the timeline and the policy file line by line. Data-quality checks are
labelled as such, not with a drift tier. A run report
lists the decisions that matter to a reviewer (an action ran or was held back, the tier
changed, the data-quality gate closed); a per-decision report lists its one decision.

>>> exact(0.30000000000000004), exact(2), exact(None), exact(float("inf"))
('0.30000000000000004', '2', '—', 'inf')
"""

from __future__ import annotations

from typing import Any

from driftwatch.report.html import Markup, el, fmt, join
from driftwatch.report.sections import Context, Section, policy_line, reason_tier, tier_badge

__all__ = ["REASON_COLUMNS", "exact", "notable_decisions", "reasons_section"]

#: Reason fields, in the engine's order; fields a newer engine adds are shown after them.
REASON_COLUMNS = ("signal", "group", "feature", "value", "threshold", "tier", "direction",
                  "kind", "source")


def _columns(reasons: list[dict[str, Any]]) -> list[str]:
    extra = sorted({k for r in reasons for k in r} - set(REASON_COLUMNS))
    cols = list(REASON_COLUMNS)
    cols[5:5] = extra  # after value/threshold: e.g. "measure" says what the value measures
    return cols


def exact(v: Any) -> str:
    """A recorded number without rounding."""
    if v is None:
        return "—"
    return repr(v) if isinstance(v, float) else str(v)


def notable_decisions(ctx: Context) -> list[dict[str, Any]]:
    """Window records whose decision a reviewer should read, in window order."""
    if ctx.focus_record is not None:
        return [ctx.focus_record]
    out = []
    prev = "none"
    for r in ctx.run.records:
        d = r.get("decision")
        tier = str(r.get("tier") or "none")
        if d and (d.get("action") or d.get("suppressed_by") or d.get("data_quality_fault")
                  or tier != prev):
            out.append(r)
        prev = tier
    return out


def _reason_row(r: dict[str, Any], columns: list[str]) -> Markup:
    cells = []
    for col in columns:
        v = r.get(col)
        if col == "tier":
            cells.append(el("td", reason_tier(r)))
        elif col == "source":
            cells.append(el("td", policy_line(v), class_="src"))
        elif col in ("value", "threshold"):
            cells.append(el("td", fmt(v) if isinstance(v, int | float) else exact(v),
                            class_="num", title=exact(v), data_exact=exact(v)))
        else:
            cells.append(el("td", "—" if v is None else str(v)))
    return el("tr", *cells, class_="reason", data_signal=r.get("signal"), data_group=r.get("group"),
              data_feature=r.get("feature"), data_source=r.get("source"))


def _decision_block(rec: dict[str, Any]) -> Markup:
    d = rec.get("decision") or {}
    wid = rec.get("window_id")
    tags = [el("span", f"action: {d.get('action') or 'none'}", class_="tag")]
    tags += [el("span", f"suppressed by {s}", class_="tag warn")
             for s in d.get("suppressed_by") or ()]
    if d.get("data_quality_fault"):
        tags.append(el("span", "data-quality fault", class_="tag dq"))
    if d.get("requires_approval"):
        tags.append(el("span", "requires approval", class_="tag"))
    if d.get("escalated_from"):
        tags.append(el("span", f"escalated from {d['escalated_from']}", class_="tag"))
    reasons = d.get("reasons") or []
    head = el("h3", f"Window {wid} · {rec.get('end') or ''} ", tier_badge(str(d.get("tier"))),
              " ", *tags)
    policy = el("p", "policy ", el("code", d.get("policy") or "—"), " digest ",
                el("code", d.get("policy_digest") or "—"),
                f" · this window's own tier: {d.get('raw_tier', '—')}", class_="note")
    body: Any
    if reasons:
        cols = _columns(reasons)
        body = el("table", el("thead", el("tr", *(el("th", c) for c in cols))),
                  el("tbody", *(_reason_row(r, cols) for r in reasons)), class_="reasons")
    else:
        body = el("p", "No reasons: no signal reached a tier.", class_="note")
    notes = [el("p", n, class_="note") for n in d.get("notes") or ()]
    return el("div", head, policy, body, *notes, class_="decision", id=f"decision-{wid}",
              data_window=wid, data_reasons=len(reasons))


def reasons_section(ctx: Context) -> Section | None:
    recs = [r for r in notable_decisions(ctx) if r.get("decision")]
    if not recs:
        return None
    shown = recs[: ctx.budget.max_decisions]
    parts = [_decision_block(r) for r in shown]
    if len(recs) > len(shown):
        parts.append(el("p", f"{len(recs) - len(shown)} more decisions are not listed here; "
                             "`driftwatch report --decision WINDOW` gives any one in full.",
                        class_="note"))
    lead = ("Every signal behind the decision, with the policy file and line that set its "
            "level." if ctx.focus is not None else
            "Decisions where an action ran or was held back, the tier changed or the "
            "data-quality gate closed, with every reason and its policy file:line.")
    return Section("reasons", "Decisions and their reasons", join(parts), lead)
