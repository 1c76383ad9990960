"""The audit trail: every decision that asked for an action, what ran, and who approved.

Read from the outbox tables, never kept separately, so the trail cannot disagree with what
the executor did. One entry per action: the decision (tier, reasons with their policy
lines, policy file and content hash), the data window, each step with its time and result,
the MLflow runs and model versions, the pool job, the approver, and the admin calls (approve,
cancel, rollback) made on it. ``export_json`` writes the lot for a model-risk reviewer.

>>> import tempfile
>>> from driftwatch.actions.outbox import Outbox
>>> from driftwatch.clock import ManualClock
>>> from driftwatch.policy.decision import Decision
>>> from driftwatch.policy.tiers import Tier
>>> box = Outbox(tempfile.mkdtemp(), clock=ManualClock(5.0))
>>> d = Decision("credit", 3, 4.0, Tier.SEVERE, Tier.SEVERE, action="retrain",
...              policy="policies/credit.yaml", policy_digest="ab12")
>>> _ = box.record(d, {"window_start": 0.0, "window_end": 4.0})
>>> e = AuditTrail(box).entries()[0]
>>> e["key"], e["decided_by"], e["window"], [s["step"] for s in e["steps"]]
('credit:severe:3', 'policies/credit.yaml@ab12', [0.0, 4.0], ['recorded'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionRecord, ActionState

__all__ = ["AuditTrail"]

_SHADOW_KEYS = ("champion_version", "challenger_version", "metric", "margin", "min_labelled",
                "max_duration", "cutoff", "verdict", "reason", "started_at", "decided_at",
                "first_live", "last_live", "score_psi", "missed", "unscored_live",
                "unscored_labelled")


def _shadow(rec: ActionRecord) -> dict[str, Any] | None:
    """The shadow comparison as stored with the action, without its raw histograms."""
    ev = rec.artifacts.get("shadow") if rec.action == "shadow" else None
    if not ev:
        return None
    out = {k: ev.get(k) for k in _SHADOW_KEYS}
    out["metrics"] = ev.get("metrics", {})
    return out

_MLFLOW_KEYS = ("version", "run_id", "previous", "parent_version")


class AuditTrail:
    """Queries over the outbox, shaped for people who review model changes.

    With ``pool`` (the GPU pool), a retraining's entry also holds its job's record: state,
    leased GPUs, attempts and times (``job``). A shadow's entry holds its comparison
    (``shadow``): both versions' metrics on the same rows, the counts, the rule and verdict.
    """

    def __init__(self, outbox: Outbox, pool: Any = None) -> None:
        self.outbox = outbox
        self.pool = pool

    def entries(
        self,
        *,
        model: str | None = None,
        since: float | None = None,
        until: float | None = None,
        states: Sequence[ActionState | str] | None = None,
        actions: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Entries by decision time ``[since, until)``, model, state and action type."""
        recs = self.outbox.list(states=states, model=model, since=since, until=until)
        return [self._entry(r) for r in recs if not actions or r.action in actions]

    def entry(self, action_id: int) -> dict[str, Any]:
        return self._entry(self.outbox.get(action_id))

    def _entry(self, rec: ActionRecord) -> dict[str, Any]:
        steps = self.outbox.steps(rec.id)
        mlflow: dict[str, Any] = {}
        for s in steps:
            if s.status == "done":
                for k in _MLFLOW_KEYS:
                    if s.detail.get(k) is not None:
                        mlflow.setdefault(k, s.detail[k])
        for k in _MLFLOW_KEYS:
            if rec.outcome.get(k) is not None:
                mlflow[k] = rec.outcome[k]
        return {
            "id": rec.id,
            "key": rec.key,
            "model": rec.model,
            "tier": rec.tier,
            "window_id": rec.window_id,
            "action": rec.action,
            "state": rec.state.value,
            "decided_at": rec.decided_at,
            "decided_by": f"{rec.policy or '<no policy file>'}@{rec.policy_digest or '?'}",
            "policy": rec.policy,
            "policy_digest": rec.policy_digest,
            "reasons": rec.decision.get("reasons", []),
            "settings": rec.settings,
            "window": [rec.context.get("window_start"), rec.context.get("window_end")],
            "context": rec.context,
            "requires_approval": rec.requires_approval,
            "approver": rec.approver,
            "approved_at": rec.approved_at,
            "mlflow": mlflow,
            "job_id": rec.artifacts.get("job_id"),
            "outcome": rec.outcome,
            "error": rec.error,
            "note": rec.note,
            "parent_id": rec.parent_id,
            "shadow": _shadow(rec),
            "job": self._job(rec.artifacts.get("job_id")),
            "recorded_at": rec.created_at,
            "updated_at": rec.updated_at,
            "steps": [
                {"step": s.step, "status": s.status, "at": s.at, "detail": s.detail} for s in steps
            ],
            "admin": [
                {"command": a.command, "actor": a.actor, "at": a.at, "detail": a.detail}
                for a in self.outbox.admin_calls(rec.id)
            ],
        }

    def _job(self, job_id: Any) -> dict[str, Any] | None:
        if job_id is None or self.pool is None:
            return None
        try:
            job = self.pool.get(str(job_id))
        except Exception:  # a pool that forgot the job: the entry still has its id
            return None
        return {
            "job_id": job.job_id,
            "state": job.state.value,
            "gpus": list(job.lease) or None,
            "gpus_requested": job.spec.gpus,
            "attempts": job.attempts,
            "submitted_at": job.submitted_at,
            "started_at": job.started_at,
            "ended_at": job.ended_at,
            "exit_code": job.exit_code,
            "time_limit_s": job.spec.time_limit_s,
            "log_path": job.log_path,
        }

    def admin_calls(self) -> list[dict[str, Any]]:
        """Every call made by a person, including those on no single action (rollback)."""
        return [
            {
                "action_id": a.action_id,
                "command": a.command,
                "actor": a.actor,
                "at": a.at,
                "detail": a.detail,
            }
            for a in self.outbox.admin_calls()
        ]

    def export_json(self, path: str | Path | None = None, **filters: Any) -> str:
        """The trail as JSON (``{"actions": [...], "admin": [...]}``); written to ``path``
        when given. Keys sorted, so two exports of the same trail are byte-identical."""
        doc = {"actions": self.entries(**filters), "admin": self.admin_calls()}
        text = json.dumps(doc, sort_keys=True, indent=2, default=str) + "\n"
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_name(p.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(p)
        return text
