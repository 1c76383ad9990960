"""Model changes a decision asked for: shadow deployments and retraining jobs.

What ran comes from the executed-action records (``actions.jsonl``, exported from the
actions outbox and audit trail); a decision whose action did not run (a dry-run replay, or
an action still waiting) shows what *would* run, from the decision's action settings,
marked "not executed (dry run)". Field names of executed records are shown as recorded,
so nothing the audit trail says is hidden or renamed.

>>> rule = shadow_rule({"metric": "gini", "margin": 0.01, "min_labelled": 2000,
...                     "max_duration": 1814400.0})
>>> rule.split(", ")[1]
'promote the challenger if its gini beats the champion by 0.01 or more (within 21d)'
"""

from __future__ import annotations

from typing import Any

from driftwatch.report.html import Markup, el, fmt, join, kv_table, table
from driftwatch.report.sections import Context, Section, tier_badge

__all__ = ["retraining_section", "shadow_rule", "shadow_section"]

_DRY = "not executed (dry run)"


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return str(seconds) if seconds is not None else "—"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def shadow_rule(settings: dict[str, Any]) -> str:
    """The promotion rule of a shadow action, in words."""
    metric = settings.get("metric", "auc")
    rule = (f"after {fmt(int(settings.get('min_labelled', 0)))} labelled events, promote the "
            f"challenger if its {metric} beats the champion by {fmt(settings.get('margin', 0.0))}"
            " or more")
    if settings.get("max_duration") is not None:
        rule += f" (within {_duration(settings['max_duration'])})"
    return rule


def _scalar_items(rec: dict[str, Any], skip: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in rec.items():
        if k in skip:
            continue
        if isinstance(v, dict):
            out.extend((f"{k}.{k2}", v2 if isinstance(v2, int | float | str) else str(v2))
                       for k2, v2 in v.items())
        elif isinstance(v, list):
            out.append((k, ", ".join(map(str, v))))
        else:
            out.append((k, v if isinstance(v, int | float | str) else str(v)))
    return out


def _decisions_with(ctx: Context, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    recs = [ctx.focus_record] if ctx.focus_record is not None else ctx.run.records
    return [r for r in recs if (r.get("decision") or {}).get("action") in kinds
            or any(a.get("action") in kinds for a in ctx.run.executed_for(r.get("window_id", -1)))]


def _head(rec: dict[str, Any], status: str) -> Markup:
    d = rec.get("decision") or {}
    tags = [el("span", status, class_="tag warn" if status == _DRY else "tag")]
    if d.get("requires_approval"):
        tags.append(el("span", "promotion needs human approval", class_="tag"))
    return el("h3", f"Window {rec.get('window_id')} · {rec.get('end') or ''} ",
              tier_badge(str(rec.get("tier", "none"))), " ", *tags)


def _compare(ex: dict[str, Any]) -> Markup | None:
    champ, chall = ex.get("champion"), ex.get("challenger")
    if not isinstance(champ, dict) or not isinstance(chall, dict):
        return None
    keys = [k for k in champ if k in chall] + [k for k in chall if k not in champ]
    rows = []
    for k in keys:
        a, b = champ.get(k), chall.get(k)
        diff = b - a if isinstance(a, int | float) and isinstance(b, int | float) else ""
        rows.append([k, a if isinstance(a, int | float) else str(a or "—"),
                     b if isinstance(b, int | float) else str(b or "—"), diff])
    return table(["on the same labelled events", "champion", "challenger", "difference"], rows,
                 class_="champion-challenger")


def shadow_section(ctx: Context) -> Section | None:
    recs = _decisions_with(ctx, ("shadow",))
    if not recs:
        return None
    blocks = []
    for rec in recs[: ctx.budget.max_decisions]:
        wid = rec.get("window_id")
        settings = (rec.get("decision") or {}).get("action_settings") or {}
        executed = [a for a in ctx.run.executed_for(wid) if a.get("action") == "shadow"]
        parts: list[Any] = [_head(rec, "executed" if executed else _DRY),
                            el("p", "Verdict rule: ", el("b", shadow_rule(settings)))]
        for ex in executed:
            cmp_ = _compare(ex)
            if cmp_ is not None:
                parts.append(cmp_)
            parts.append(kv_table(_scalar_items(ex, ("champion", "challenger"))))
        if not executed:
            parts.append(el("p", "No challenger was scored: the replay ran actions as a dry run. "
                                 "Run with --execute to compare champion and challenger.",
                            class_="note"))
        blocks.append(el("div", *parts, class_="shadow", data_window=wid,
                         data_status="executed" if executed else "dry-run"))
    return Section("shadow", "Shadow deployments: champion vs challenger", join(blocks),
                   "A challenger scores live traffic beside the champion and is promoted only "
                   "if it wins on the same labelled applications.")


def retraining_section(ctx: Context) -> Section | None:
    recs = _decisions_with(ctx, ("retrain",))
    if not recs:
        return None
    blocks = []
    for rec in recs[: ctx.budget.max_decisions]:
        wid = rec.get("window_id")
        s = (rec.get("decision") or {}).get("action_settings") or {}
        executed = [a for a in ctx.run.executed_for(wid) if a.get("action") == "retrain"]
        planned = kv_table([
            ("command (argv)", el("code", " ".join(map(str, s.get("argv") or [])))),
            ("GPUs from the reserved pool", s.get("gpus", "—")),
            ("time limit", _duration(s.get("time_limit"))),
            ("retries", s.get("retries", "—")),
            ("deferrable to off-peak", s.get("deferrable", False)),
            ("preemptible (checkpoints)", s.get("preemptible", False)),
        ])
        parts: list[Any] = [_head(rec, "executed" if executed else _DRY), planned]
        for ex in executed:
            parts.append(kv_table(_scalar_items(ex), class_="retrain-run"))
        if not executed:
            parts.append(el("p", "No job was queued (dry run): no pool lease, duration or model "
                                 "version to show.", class_="note"))
        blocks.append(el("div", *parts, class_="retrain", data_window=wid,
                         data_status="executed" if executed else "dry-run"))
    return Section("retraining", "Retraining jobs", join(blocks),
                   "Retraining runs on the reserved GPU pool; its model goes to shadow, never "
                   "straight to production.")
