"""Model changes a decision asked for: shadow deployments and retraining jobs.

What ran comes from the executed-action records (``actions.jsonl``, exported from the
actions outbox and audit trail, by replay and by the daemon alike); a decision without one
(a dry-run replay) shows what *would* run, from the decision's action settings, marked
"not executed (dry run)". A shadow shows champion and challenger side by side (metrics,
difference, counts, the rule and the verdict); a retraining its pool job (GPUs, attempts,
queue and run times in human units) and the version it registered, with its lineage.

>>> rule = shadow_rule({"metric": "gini", "margin": 0.01, "min_labelled": 2000,
...                     "max_duration": 1814400.0})
>>> rule.split(", ")[1]
'promote the challenger if its gini beats the champion by 0.01 or more (within 21d)'
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from driftwatch.actions.outcomes import action_outcome, outcome_counts, version_words
from driftwatch.report.html import Markup, el, fmt, join, kv_table, table
from driftwatch.report.sections import Context, Section, tier_badge

__all__ = ["actions_section", "human_duration", "retraining_section", "shadow_rule",
           "shadow_section"]

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


def _decisions_with(ctx: Context, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    recs = [ctx.focus_record] if ctx.focus_record is not None else ctx.run.records
    return [r for r in recs if (r.get("decision") or {}).get("action") in kinds
            or any(a.get("action") in kinds for a in ctx.run.executed_for(r.get("window_id", -1)))]


def _head(rec: dict[str, Any], status: str) -> Markup:
    d = rec.get("decision") or {}
    warn = status.startswith("not executed") or status.startswith("recorded")
    tags = [el("span", status, class_="tag warn" if warn else "tag")]
    if d.get("requires_approval"):
        tags.append(el("span", "promotion needs human approval", class_="tag"))
    return el("h3", f"Window {rec.get('window_id')} · {rec.get('end') or ''} ",
              tier_badge(str(rec.get("tier", "none"))), " ", *tags)


def _status(executed: list[dict[str, Any]]) -> str:
    """What the outbox says happened to the window's action."""
    if not executed:
        return _DRY
    ex = executed[-1]
    state = str(ex.get("state", "executed"))
    steps = [s.get("step") for s in ex.get("steps") or ()]
    if state in ("pending", "awaiting_approval") and not set(steps) - {"recorded", "export"}:
        return "recorded, not run yet" + (" (awaiting approval)"
                                          if state == "awaiting_approval" else "")
    verdict = (ex.get("outcome") or {}).get("verdict")
    if state == "awaiting_approval":
        return "executed · awaiting approval"
    return f"executed · {verdict or state.replace('_', ' ')}"


def human_duration(seconds: Any) -> str:
    """Seconds for people.

    >>> human_duration(3.21), human_duration(250), human_duration(7500), human_duration(None)
    ('3.2 s', '4 min 10 s', '2 h 5 min', '—')
    >>> human_duration(3 * 86400 + 4 * 3600)
    '3 d 4 h'
    """
    if not isinstance(seconds, int | float) or seconds != seconds:
        return "—"
    s = float(seconds)
    if s < 60:
        return f"{s:.1f} s"
    for big, big_name, small, small_name in ((86400, "d", 3600, "h"), (3600, "h", 60, "min"),
                                             (60, "min", 1, "s")):
        if s >= big:
            rest = int((s % big) // small)
            return f"{int(s // big)} {big_name}" + (f" {rest} {small_name}" if rest else "")
    return f"{s:.1f} s"  # pragma: no cover - every case returned above


def _when(t: Any) -> str:
    """Epoch seconds as UTC date and time."""
    if not isinstance(t, int | float) or t != t:
        return "—"
    return datetime.fromtimestamp(float(t), tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


#: Rows of the champion-vs-challenger table, in reading order.
_METRICS = (
    ("live", "live predictions scored"),
    ("approval_rate", "approval rate at the cut-off"),
    ("expected_loss", "expected loss per application (PD × exposure, approved)"),
    ("labelled", "joined outcomes"),
    ("gini", "Gini"),
    ("auc", "AUC"),
    ("ks_score", "KS"),
    ("bad_rate_approved", "bad rate of the approved"),
    ("calibration_ratio", "calibration (observed / expected bad rate)"),
    ("log_loss", "log loss"),
    ("brier", "Brier score"),
)


def _compare(ex: dict[str, Any]) -> Markup | None:
    shadow = ex.get("shadow") or {}
    metrics = shadow.get("metrics") or {}
    champ = metrics.get("champion", ex.get("champion"))
    chall = metrics.get("challenger", ex.get("challenger"))
    if not isinstance(champ, dict) or not isinstance(chall, dict):
        return None
    known = [k for k, _ in _METRICS]
    extra = [(k, k) for k in [*champ, *chall] if k not in known]
    rows = []
    for key, label in (*_METRICS, *dict(extra).items()):
        a, b = champ.get(key), chall.get(key)
        if a is None and b is None:
            continue
        num = isinstance(a, int | float) and isinstance(b, int | float)
        rows.append([el("span", label, data_metric=key), _exact(a), _exact(b),
                     _exact(b - a) if num else "—"])
    cv, hv = shadow.get("champion_version"), shadow.get("challenger_version")
    head = ["metric (same rows for both)", f"champion v{cv}" if cv else "champion",
            f"challenger v{hv}" if hv else "challenger", "challenger − champion"]
    return table(head, rows, class_="champion-challenger")


def _exact(v: Any) -> Any:
    """A number for people, its recorded value in ``data-exact`` (and the tooltip)."""
    if not isinstance(v, int | float) or isinstance(v, bool):
        return "—" if v is None else v
    raw = repr(v) if isinstance(v, float) else str(v)
    return el("span", fmt(v), class_="num", title=raw, data_exact=raw)


def _rule_of(ex: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The rule the shadow was judged by: as stored with it (a retraining's follow-up
    shadow has no shadow settings in its decision), else the decision's settings."""
    sh = ex.get("shadow") or {}
    keys = ("metric", "margin", "min_labelled", "max_duration")
    stored = {k: sh[k] for k in keys if sh.get(k) is not None}
    return stored if "metric" in stored else {k: v for k, v in settings.items() if k in keys}


def _shadow_facts(ex: dict[str, Any]) -> Markup:
    sh = ex.get("shadow") or {}
    out = ex.get("outcome") or {}
    items: list[tuple[str, Any]] = [("action", f"{ex.get('id', '—')} · {ex.get('key', '')}")]
    if sh:
        items.append(("score PSI, challenger vs champion (live traffic)",
                      sh.get("score_psi") if sh.get("score_psi") is not None else "—"))
        items.append(("approval cut-off", sh.get("cutoff") if sh.get("cutoff") is not None
                      else "none configured (model.approval_cutoff)"))
        items.append(("shadow period (live traffic, event time)",
                      f"{_when(sh.get('first_live'))} to {_when(sh.get('last_live'))}"))
        left = (sh.get("unscored_live") or 0, sh.get("unscored_labelled") or 0)
        if any(left):
            items.append(("left out: a version gave no score",
                          f"{left[0]:,} live predictions, {left[1]:,} outcomes"))
    verdict = out.get("verdict") or (sh.get("verdict") if sh else None) or ex.get("status")
    items.append(("verdict", verdict or "undecided"))
    reason = out.get("reason") or (sh.get("reason") if sh else None) or ex.get("verdict")
    if reason:
        items.append(("by the rule", reason))
    if ex.get("state") == "running":
        items.append(("undecided", ex.get("note") or "waiting for outcomes"))
    approver = ex.get("approver") or ex.get("approved_by")
    if approver:
        items.append(("approved by", approver))
    if ex.get("error"):
        items.append(("error", ex["error"]))
    return kv_table(items, class_="shadow-run")


def _lineage(ex: dict[str, Any]) -> list[tuple[str, Any]]:
    ml = ex.get("mlflow") or {}
    out: list[tuple[str, Any]] = []
    if ml.get("version"):
        out.append(("model version", f"v{ml['version']}"
                    + (f" (parent v{ml['parent_version']})" if ml.get("parent_version") else "")))
    if ml.get("run_id"):
        out.append(("MLflow run", el("code", str(ml["run_id"]))))
    return out


def _retrain_facts(ex: dict[str, Any]) -> Markup:
    job = ex.get("job") or {}
    out = ex.get("outcome") or {}
    items: list[tuple[str, Any]] = [("action", f"{ex.get('id', '—')} · {ex.get('key', '')}"),
                                    ("state", str(ex.get("state", "—")).replace("_", " "))]
    if job:
        started, ended = job.get("started_at"), job.get("ended_at")
        queued = (started - job["submitted_at"]) if isinstance(started, int | float) else None
        ran = (ended - started) if isinstance(started, int | float) and isinstance(
            ended, int | float) else None
        n = job.get("gpus_requested")
        held = ", ".join(job.get("gpus") or [])
        lease = f"{held} (held now)" if held else (
            f"{n} GPU{'s' if n != 1 else ''}, released" if isinstance(n, int) else "released")
        items += [
            ("pool job", el("code", str(job.get("job_id")))),
            ("job state", str(job.get("state", "—")).replace("_", " ")),
            ("GPU lease", lease),
            ("attempts", job.get("attempts", 0)),
            ("waited in the queue", human_duration(queued)),
            ("ran for (lease held)", human_duration(ran)),
            ("time limit", human_duration(job.get("time_limit_s"))),
        ]
        if job.get("exit_code") is not None:
            items.append(("exit code", job["exit_code"]))
    elif ex.get("job_id"):
        items.append(("pool job", el("code", str(ex["job_id"]))))
    items += _lineage(ex)
    if out.get("shadow_action_id") is not None:
        items.append(("judged by shadow action", out["shadow_action_id"]))
    if ex.get("error"):
        items.append(("error", ex["error"]))
    return kv_table(items, class_="retrain-run")


def shadow_section(ctx: Context) -> Section | None:
    recs = _decisions_with(ctx, ("shadow",))
    if not recs:
        return None
    blocks = []
    for rec in recs[: ctx.budget.max_decisions]:
        wid = rec.get("window_id")
        settings = (rec.get("decision") or {}).get("action_settings") or {}
        executed = [a for a in ctx.run.executed_for(wid) if a.get("action") == "shadow"]
        status = _status(executed)
        parts: list[Any] = [_head(rec, status)]
        for ex in executed:
            parts.append(el("p", "Verdict rule: ", el("b", shadow_rule(_rule_of(ex, settings)))))
            cmp_ = _compare(ex)
            if cmp_ is not None:
                parts.append(cmp_)
            parts.append(_shadow_facts(ex))
            parts.append(kv_table(_lineage(ex) or [("model version", "—")]))
        if not executed:
            parts.append(el("p", "Verdict rule: ", el("b", shadow_rule(settings))))
            parts.append(el("p", "No challenger was scored: the replay ran actions as a dry run. "
                                 "Run with --execute to compare champion and challenger.",
                            class_="note"))
        blocks.append(el("div", *parts, class_="shadow", data_window=wid,
                         data_status="executed" if executed else "dry-run"))
    return Section("shadow", "Shadow deployments: champion vs challenger", join(blocks),
                   "A challenger scores every live prediction beside the champion and is "
                   "promoted only if it wins on the same labelled applications.")


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
        parts: list[Any] = [_head(rec, _status(executed)), planned]
        for ex in executed:
            parts.append(_retrain_facts(ex))
        if not executed:
            parts.append(el("p", "No job was queued (dry run): no pool lease, duration or model "
                                 "version to show.", class_="note"))
        blocks.append(el("div", *parts, class_="retrain", data_window=wid,
                         data_status="executed" if executed else "dry-run"))
    return Section("retraining", "Retraining jobs", join(blocks),
                   "Retraining runs on the reserved GPU pool; its model goes to shadow, never "
                   "straight to production.")


_OPEN_STATES = ("still open", "awaiting approval")  # may not have run at all: say so


def _outcome_row(ex: dict[str, Any]) -> Markup:
    o = action_outcome(ex)
    warn = o["state"] != "done"
    return el("tr", el("td", str(o["id"])), el("td", str(o["kind"])), el("td", str(o["window"])),
              el("td", el("span", _status([ex]) if o["state"] in _OPEN_STATES
                          else f"executed · {o['state']}", class_="tag warn" if warn else "tag")),
              el("td", o["reason"] or "—"),
              el("td", version_words(o) if o["version"] else "—"),
              class_="action-outcome", data_action=o["id"], data_state=o["state"])


def actions_section(ctx: Context) -> Section | None:
    """Every action the outbox holds, with what it came to; a dry run says none ran."""
    if ctx.focus is not None:
        executed = ctx.run.executed_for(ctx.focus)
        decided = [ctx.focus_record] if (ctx.focus_record or {}).get("decision", {}).get(
            "action") else []
    else:
        executed, decided = ctx.run.executed, ctx.run.decisions()
        decided = [r for r in decided if r["decision"].get("action")]
    if not executed:
        if not decided:
            return None
        body = el("p", f"{len(decided)} decision{'s' if len(decided) != 1 else ''} asked for "
                       f"an action: {_DRY}. Run with --execute to run them.",
                  class_="note", data_status="dry-run")
        return Section("actions", "Actions: what ran", body,
                       "What each action the policy decided came to.")
    shown = executed[: ctx.budget.max_decisions]
    head = el("thead", el("tr", *(el("th", h) for h in (
        "action", "kind", "window", "state", "reason", "model version"))))
    parts: list[Any] = [
        el("p", "Outcomes: ", el("b", outcome_counts(action_outcome(e) for e in executed)),
           class_="action-counts"),
        el("table", head, el("tbody", *(_outcome_row(e) for e in shown)),
           class_="action-outcomes"),
    ]
    if len(executed) > len(shown):
        parts.append(el("p", f"{len(executed) - len(shown)} more actions are not listed here; "
                             "actions.jsonl holds them all.", class_="note"))
    return Section("actions", "Actions: what ran", join(parts),
                   "What each action came to, as the actions outbox recorded it: done, "
                   "failed, discarded, awaiting approval or still open, and the model "
                   "version it registered.")
