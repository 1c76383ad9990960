"""Model versions the run's actions made or judged, with their lineage, from the outbox.

One row per registered version, oldest first: which action made it (online update or
retraining, with its window and tier), what it was made from (the parent version of an
online update or recalibration, the data a retraining was given), its MLflow run, and what
became of it (judged in shadow against which champion, and the verdict; promoted, with its
approver). A version no action of the run made was registered before it (a champion, or a
challenger registered by hand).
Nothing here is read from a dry run: without executed actions the section is left out.

>>> rows = version_rows([
...     {"id": 1, "action": "online_update", "window_id": 28, "tier": "mild",
...      "state": "succeeded", "mlflow": {"version": "2", "parent_version": "1", "run_id": "r1"},
...      "outcome": {"alias": "challenger"}},
...     {"id": 3, "action": "shadow", "window_id": 44, "tier": "moderate",
...      "state": "succeeded", "mlflow": {"version": "2"}, "outcome": {"verdict": "promoted"},
...      "approver": "ana",
...      "shadow": {"champion_version": "1", "challenger_version": "2"}}])
>>> version_rows([{"id": 5, "action": "shadow", "state": "awaiting_approval", "outcome": {},
...     "shadow": {"champion_version": "1", "challenger_version": "3", "verdict": "promote"}}]
...     )[1]["fate"]
'shadow 5 against v1: awaiting approval (the rule says promote)'
>>> for r in rows:
...     print(f"v{r['version']} | {r['made_by']} | {r['from']} | {r['fate']}")
v1 | champion before this run | — | champion in shadow 3
v2 | online update (action 1, window 28, mild) | v1 | shadow 3 against v1: promoted, approved by ana
"""

from __future__ import annotations

from typing import Any

from driftwatch.report.html import el, table
from driftwatch.report.sections import Context, Section

__all__ = ["version_rows", "versions_section"]

_MAKERS = {"online_update": "online update", "retrain": "retraining"}


def _key(v: str) -> tuple[int, str]:
    return (int(v), v) if v.isdigit() else (1 << 62, v)


def version_rows(executed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One dict per version (``version``, ``made_by``, ``from``, ``run``, ``fate``)."""
    rows: dict[str, dict[str, Any]] = {}

    def row(v: Any) -> dict[str, Any]:
        return rows.setdefault(str(v), {"version": str(v), "made_by": None, "from": "—",
                                        "run": None, "fate": []})

    for ex in executed:
        ml = ex.get("mlflow") or {}
        kind = str(ex.get("action"))
        if kind in _MAKERS and ml.get("version"):
            r = row(ml["version"])
            r["made_by"] = (f"{_MAKERS[kind]} (action {ex.get('id')}, window "
                            f"{ex.get('window_id')}, {ex.get('tier')})")
            if ml.get("parent_version"):
                r["from"] = f"v{ml['parent_version']}"
            elif kind == "retrain":
                r["from"] = "the exported training snapshot"
            r["run"] = ml.get("run_id")
            alias = (ex.get("outcome") or {}).get("alias")
            if alias:
                r["fate"].append(f"registered as {alias}")
    for ex in executed:
        sh = ex.get("shadow") or {}
        if ex.get("action") != "shadow" or not sh.get("challenger_version"):
            continue
        champ = sh.get("champion_version")
        state = str(ex.get("state", "running"))
        verdict = (ex.get("outcome") or {}).get("verdict") or (
            f"awaiting approval (the rule says {sh.get('verdict') or 'promote'})"
            if state == "awaiting_approval" else sh.get("verdict") or state.replace("_", " "))
        said = f"shadow {ex.get('id')} against v{champ}: {verdict}" if champ else \
            f"shadow {ex.get('id')}: {verdict}"
        if ex.get("approver"):
            said += f", approved by {ex['approver']}"
        r = row(sh["challenger_version"])
        r["fate"] = [f for f in r["fate"] if not f.startswith("registered as")] + [said]
        r["challenger"] = True
        step = next((s.get("detail") or {} for s in ex.get("steps") or ()
                     if s.get("step") == "challenger" and s.get("status") == "done"), {})
        if step.get("created") and r["made_by"] is None:  # the shadow made its challenger
            r["made_by"] = (f"shadow (action {ex.get('id')}, window {ex.get('window_id')}, "
                            f"{ex.get('tier')})")
            r["from"] = f"v{champ}" if champ else "—"
        if champ:
            row(champ)["fate"].append(f"champion in shadow {ex.get('id')}")
    for r in rows.values():
        if r["made_by"] is None:
            r["made_by"] = ("registered before this run" if r.pop("challenger", False)
                            else "champion before this run")
        r.pop("challenger", None)
        r["fate"] = "; ".join(r["fate"]) or "—"
    return [rows[k] for k in sorted(rows, key=_key)]


def versions_section(ctx: Context) -> Section | None:
    executed = ctx.run.executed
    if ctx.focus is not None:
        executed = ctx.run.executed_for(ctx.focus) + [
            e for e in executed if e.get("parent_id") in
            {x.get("id") for x in ctx.run.executed_for(ctx.focus)}]
    rows = version_rows(executed)
    if not rows:
        return None
    body = table(["version", "made by", "made from", "MLflow run", "what became of it"],
                 [[el("span", f"v{r['version']}", data_version=r["version"]), r["made_by"],
                   r["from"], el("code", r["run"]) if r["run"] else "—", r["fate"]]
                  for r in rows], class_="versions")
    return Section("versions", "Model versions and lineage", body,
                   "Every version the actions registered or judged, from the outbox: what "
                   "made it, what it was made from, and what became of it.")
