"""What every section shares (:class:`Context`, :class:`Section`), and the first two sections:
the run summary and the timeline of the tier and the main signals.

A section is a function ``(Context) -> Section | None``; None means the run (or the focused
decision) has nothing for it, and the section is left out rather than shown empty. Ids are
stable: tests, links from Grafana and reviewers' bookmarks rely on them.

>>> tier_badge("severe")
'<span class="tier tier-severe" data-tier="severe">severe</span>'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftwatch.report.charts import PALETTE, Series, WindowAxis, signal_chart, tier_strip
from driftwatch.report.html import Markup, el, fmt, join, kv_table, pct, table
from driftwatch.report.inputs import TIER_ORDER, RunData, max_value, signal, value

__all__ = [
    "Budget",
    "Context",
    "Section",
    "policy_levels",
    "policy_line",
    "reason_tier",
    "series_chart",
    "summary_section",
    "tier_badge",
    "timeline_section",
]

_TIER_COLOR = {"mild": "#c99a06", "moderate": "#f0831c", "severe": "#d64545"}


@dataclass(frozen=True)
class Budget:
    """How much detail the report carries; the builder lowers it to stay under the size bound."""

    top_features: int = 6
    max_decisions: int = 40
    hover: bool = True


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    body: Markup
    lead: str = ""

    def render(self) -> Markup:
        lead = el("p", self.lead, class_="lead") if self.lead else None
        return el("section", el("h2", self.title), lead, self.body, id=self.id)


@dataclass
class Context:
    """The run, its shared window axis, the focused decision (if any) and the budget."""

    run: RunData
    focus: int | None = None
    budget: Budget = field(default_factory=Budget)
    axis: WindowAxis = field(init=False)

    def __post_init__(self) -> None:
        recs = self.run.records
        self.axis = WindowAxis(
            tuple(int(r.get("window_id", i)) for i, r in enumerate(recs)),
            tuple(r.get("end") for r in recs),
        )

    @property
    def focus_pos(self) -> int | None:
        return None if self.focus is None else self.axis.index(self.focus)

    @property
    def focus_record(self) -> dict[str, Any] | None:
        return None if self.focus is None else self.run.window(self.focus)

    def series(self, get: Callable[[dict[str, Any]], float | None]) -> list[float | None]:
        return [get(r) for r in self.run.records]


def tier_badge(tier: str) -> Markup:
    t = tier if tier in TIER_ORDER else "none"
    return el("span", tier, class_=f"tier tier-{t}", data_tier=tier)


def reason_tier(reason: dict[str, Any]) -> Markup:
    """A reason's tier badge; a data-quality check is labelled as such (it gates, not tiers)."""
    if reason.get("group") == "data_quality":
        return el("span", "data-quality check", class_="tag dq")
    return tier_badge(str(reason.get("tier")))


def policy_line(source: str | None) -> Markup:
    """A policy ``file:line`` shown by file name, the full path in its tooltip."""
    if not source:
        return el("code", "—")
    return el("code", source.replace("\\", "/").rsplit("/", 1)[-1], title=source,
              data_source=source)


def policy_levels(
    run: RunData, name: str, feature: str | None = None
) -> list[tuple[str, float]]:
    """The lowest threshold per tier the engine applied to signal ``name`` in this run
    (on ``feature`` when given), read from the decisions' trigger reasons."""
    best: dict[str, float] = {}
    for r in run.decisions():
        for reason in r["decision"].get("reasons") or ():
            if feature is not None and reason.get("feature") != feature:
                continue
            # a level on another measure (approval rate: its change) is not on this axis
            if reason.get("measure", "value") != "value":
                continue
            if reason.get("signal") == name and reason.get("kind", "trigger") == "trigger":
                t, thr = str(reason.get("tier")), reason.get("threshold")
                if isinstance(thr, int | float) and (t not in best or thr < best[t]):
                    best[t] = float(thr)
    return sorted(best.items(), key=lambda kv: TIER_ORDER.index(kv[0]) if kv[0] in TIER_ORDER
                  else 9)


def series_chart(
    ctx: Context, label: str, name: str, values: Sequence[float | None], *,
    levels: Sequence[tuple[str, float]] = (), detector: Sequence[float | None] | None = None,
    extra: Sequence[Series] = (), band: Any = None, zero: bool = False,
) -> Markup:
    """A signal over the run with its policy levels (solid colours) and detector threshold."""
    series = [Series(name, values, PALETTE[0]), *extra]
    n = len(values)
    for tier, thr in levels:
        series.append(Series(f"policy {tier} ≥ {fmt(thr)}", [thr] * n,
                             _TIER_COLOR.get(tier, "#999"), dashed=True))
    if detector is not None and any(v is not None for v in detector):
        series.append(Series("detector threshold", detector, "#7b8794", dashed=True))
    return signal_chart(ctx.axis, label, series, band=band, episodes=ctx.run.episodes(),
                        actions=ctx.run.actions(), focus=ctx.focus_pos, hover=ctx.budget.hover,
                        zero=zero)


def _tile(v: Any, label: str) -> Markup:
    return el("div", el("b", v), el("span", label), class_="tile")


def _run_tiles(run: RunData) -> Markup:
    s, recs = run.summary, run.records
    events = s.get("events", sum(int(r.get("n_events", 0)) for r in recs))
    worst = max((r.get("tier") or "none" for r in recs), key=TIER_ORDER.index, default="none")
    bad, read = run.bad_records()
    n_act = len(run.actions())
    lab = s.get("outcomes", sum(int(r.get("n_labelled", 0)) for r in recs))
    return el(
        "div",
        _tile(fmt(events), "prediction events"),
        _tile(fmt(len(recs)), "windows judged"),
        _tile(tier_badge(worst), "worst tier"),
        _tile(fmt(len(run.episodes())), "drift episodes"),
        _tile(fmt(n_act), "decisions that act"),
        _tile(fmt(bad), f"bad records ({pct(bad / max(read, 1), 2)} of records read)"),
        _tile(fmt(lab), "outcomes (labels)"),
        class_="tiles",
    )


def _decision_head(ctx: Context) -> Markup:
    rec = ctx.focus_record or {}
    d = rec.get("decision") or {}
    tags = [el("span", f"suppressed by {s}", class_="tag warn") for s in d.get("suppressed_by", [])]
    if d.get("data_quality_fault"):
        tags.append(el("span", "data-quality fault: model changes blocked", class_="tag dq"))
    if d.get("requires_approval"):
        tags.append(el("span", "needs human approval", class_="tag"))
    items: list[tuple[str, Any]] = [
        ("tier (after persistence, hysteresis)", tier_badge(str(rec.get("tier", "none")))),
        ("this window's own tier", tier_badge(str(d.get("raw_tier", rec.get("tier", "none"))))),
        ("action", d.get("action") or "none"),
        ("window", f"{rec.get('window_id')}: {rec.get('start')} → {rec.get('end')}"),
        ("events", int(rec.get("n_events", 0))),
        ("labelled outcomes in window", int(rec.get("n_labelled", 0))),
        ("policy", f"{d.get('policy', '')} (digest {d.get('policy_digest', '') or '—'})"),
    ]
    if d.get("escalated_from"):
        items.append(("escalated from", d["escalated_from"]))
    for note in d.get("notes") or ():
        items.append(("note", note))
    return join([el("p", *tags) if tags else None, kv_table(items)])


def _run_overview(run: RunData) -> Markup:
    """Tiles, windows per tier, episodes and provenance of the whole run."""
    s = run.summary
    parts: list[Any] = [_run_tiles(run)]
    per_tier = {t: sum(1 for r in run.records if (r.get("tier") or "none") == t)
                for t in TIER_ORDER}
    parts.append(el("p", "Windows per tier: ",
                    *(join([tier_badge(t), f" {fmt(int(n))}  "]) for t, n in per_tier.items())))
    eps = run.episodes()
    if eps:
        rows = []
        for k, (i0, i1, worst) in enumerate(eps, 1):
            r0, r1 = run.records[i0], run.records[i1]
            acts = Counter(a for i, a in run.actions() if i0 <= i <= i1)
            said = ", ".join(f"{a} ×{n}" if n > 1 else a for a, n in acts.items())
            rows.append([k, r0.get("window_id"), r0.get("end") or "", r1.get("window_id"),
                         tier_badge(worst), i1 - i0 + 1, said or "none"])
        parts.append(el("h3", "Episodes"))
        parts.append(table(["#", "first window", "first alert", "last window", "max tier",
                            "windows", "actions"], rows, class_="episodes"))
    first = next((r["decision"] for r in run.decisions()), {})
    parts.append(kv_table([
        ("model", run.model),
        ("period (event time)", f"{s.get('first_event') or run.records[0].get('start')} → "
                                f"{s.get('last_event') or run.records[-1].get('end')}"),
        ("reference profile", s.get("reference") or (run.reference.fingerprint
                                                      if run.reference else "—")),
        ("policy", f"{first.get('policy', '—')} (digest {first.get('policy_digest') or '—'})"),
        *((label, s[key]) for label, key in (("policy owner", "policy_owner"),
                                             ("policy description", "policy_description"))
          if s.get(key)),
        ("late events", s.get("late_events", sum(int(r.get("n_late", 0)) for r in run.records))),
    ]))
    return join(parts)


def summary_section(ctx: Context) -> Section:
    run = ctx.run
    parts: list[Any] = [el("p", w, class_="banner") for w in run.warnings]
    if ctx.focus is None:
        parts.append(_run_overview(run))
        return Section("run-summary", "Run summary", join(parts),
                       "What was watched, what the policy concluded and what it would do.")
    parts.append(_decision_head(ctx))
    parts.append(el("details", el("summary", "The whole run"), _run_overview(run)))
    return Section("run-summary", f"Decision for window {ctx.focus}", join(parts),
                   "One decision, in the context of the whole run.")


def timeline_section(ctx: Context) -> Section:
    run = ctx.run
    ax = ctx.axis
    dq = [bool((r.get("decision") or {}).get("data_quality_fault")) for r in run.records]
    strip = tier_strip(ax, [str(r.get("tier") or "none") for r in run.records], dq,
                       run.actions(), focus=ctx.focus_pos)
    legend = el("div", *(join([el("i", style=f"background:var(--{t})"), t]) for t in TIER_ORDER),
                join([el("i", style="background:var(--dq)"), "data-quality fault"]),
                " · shaded: drift episodes · dotted lines / ▲: actions (U online update, "
                "S shadow, R retrain, A alert)", class_="legend")
    charts = [legend, el("figure", strip)]
    psi = ctx.series(lambda r: value(r, "psi_aggregate") or max_value(r, "psi"))
    if any(v is not None for v in psi):
        charts.append(el("figure", series_chart(
            ctx, "Feature drift: largest CSI / PSI over features", "max PSI", psi,
            levels=policy_levels(run, "psi"), zero=True)))
    sp = ctx.series(lambda r: value(r, "score_psi"))
    if any(v is not None for v in sp):
        det = ctx.series(lambda r: (s := signal(r, "score_psi")) and s.get("threshold"))
        charts.append(el("figure", series_chart(
            ctx, "Score stability: PSI of the model score", "score PSI", sp,
            levels=policy_levels(run, "score_psi"), detector=det, zero=True)))
    return Section("timeline", "Timeline: tier and main signals", join(charts),
                   "Each column is one window, in event time. The tier is the policy's "
                   "verdict after persistence and hysteresis.")

