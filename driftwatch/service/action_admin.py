"""The HTTP admin calls on the daemon's actions, and their audit trail.

``POST /actions/<id>/approve`` and the other admin endpoints come to
:meth:`AdminCalls.admin`, which finds the model and action they name and approves,
cancels, rolls back, promotes or queues a retraining; every call, refused or not, goes to
the audit trail (:meth:`AdminCalls.audit`). A promotion or rollback moves the champion and
then hands its reference profile to the monitor; when MLflow fails at that last load the
answer is 202 and the adoption stays pending until it holds (``action_adoption.py``).
:class:`AdminCalls` is mixed into :class:`~driftwatch.service.actions.ServiceActions`,
which holds the models, registry, pool and lock these calls use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from driftwatch.actions.outbox import Outbox
from driftwatch.errors import ActionError, DriftwatchError
from driftwatch.policy.decision import Decision
from driftwatch.service.http import AdminResult

if TYPE_CHECKING:
    from driftwatch.service.actions import ModelActions

__all__ = ["AdminCalls", "retrain_settings"]


class AdminCalls:
    """The admin endpoints' side of :class:`~driftwatch.service.actions.ServiceActions`
    (see the module docstring); a mixin, it holds no state of its own."""

    # -- HTTP's side ----------------------------------------------------------------------------
    def admin(self, verb: str, arg: str, body: Mapping[str, Any], actor: str) -> AdminResult:
        with self._lock:
            try:
                return self._admin(verb, arg, body, actor)
            except ActionError as exc:
                status = 404 if "no action" in str(exc) or "no model" in str(exc) else 409
                return AdminResult(status, {"error": str(exc)})

    def _admin(self, verb: str, arg: str, body: Mapping[str, Any], actor: str) -> AdminResult:
        if verb in ("approve", "cancel"):
            ma, action_id = self._find(arg)
            if verb == "approve":
                rec = (ma.executor or ma.outbox).approve(action_id, actor)
            else:
                reason = str(body.get("reason", ""))
                rec = (ma.executor or ma.outbox).cancel(action_id, actor, reason)
            return AdminResult(200, {"model": ma.model, "action": rec.to_dict()})
        ma = self.models.get(arg)
        if ma is None:
            raise ActionError(f"no model {arg!r}; models: {', '.join(self.models)}")
        if ma.executor is None:
            return AdminResult(409, {"error": f"{verb} needs actions.execute: true"})
        if verb == "rollback":
            restored = ma.executor.rollback(ma.model, actor, adopt=False)
            adopted = self.adopt_champion(ma, restored)
            return AdminResult(_status(adopted), {"model": ma.model, "champion": restored,
                                                  **adopted})
        if verb == "promote":
            return self._promote(ma, actor)
        return self._retrain(ma, actor, str(body.get("reason", "")))

    def _promote(self, ma: ModelActions, actor: str) -> AdminResult:
        """Make the current challenger the champion (a person's decision, audited), then
        hand its reference profile to the monitor. A profile MLflow could not load stays
        pending (``action_adoption.py``): the answer is 202 and says so, and asking again
        finishes that adoption rather than promoting anything a second time."""
        from driftwatch.registry.promotion import promote
        from driftwatch.registry.versions import CHALLENGER, CHAMPION

        challenger = self.registry.by_alias(ma.model, CHALLENGER)
        if challenger is None:
            pending = self.pending_adoption(ma.model)
            if pending is None:
                return AdminResult(409, {"error": f"{ma.model} has no challenger to promote"})
            # the promotion happened; the champion now (moved meanwhile?) is what to adopt
            current = self.registry.by_alias(ma.model, CHAMPION)
            version = current.version if current is not None else pending.version
            adopted = self.adopt_champion(ma, version)
            return AdminResult(_status(adopted), {"model": ma.model, "champion": version,
                                                  "promoted_already": True, **adopted})
        replaced = promote(self.registry, ma.model, challenger.version, at=self.clock.now(),
                           by=actor)
        adopted = self.adopt_champion(ma, challenger.version)
        warning = _learner_warning(ma, challenger.version)
        return AdminResult(_status(adopted), {"model": ma.model, "champion": challenger.version,
                                              "replaced": replaced, **adopted,
                                              **({"warning": warning} if warning else {})})

    def _retrain(self, ma: ModelActions, actor: str, reason: str) -> AdminResult:
        """Queue a retraining now with the policy's retrain settings, as a severe action."""
        from driftwatch.policy.tiers import Tier

        settings = retrain_settings(ma.policy)
        if settings is None:
            return AdminResult(409, {"error": f"the policy of {ma.model} has no retrain action"})
        now = self.clock.now()
        decision = Decision(
            model=ma.model, window_id=-1, time=now, tier=Tier.SEVERE, raw_tier=Tier.SEVERE,
            action="retrain", action_settings=settings,
            policy=getattr(ma.policy.metadata, "name", "") if ma.policy else "",
            policy_digest=getattr(ma.policy, "digest", "") if ma.policy else "",
            notes=(f"requested by {actor} through the admin API" + (f": {reason}" if reason
                                                                    else ""),))
        key = f"{ma.model}:manual:{int(now * 1000)}"
        action_id, _ = ma.outbox.record(decision, {"reference": ma.reference}, key=key)
        self.metrics.record_action(ma.model, "retrain", "submitted")
        return AdminResult(202, {"model": ma.model, "action_id": action_id, "key": key})

    def _find(self, arg: str) -> tuple[ModelActions, int]:
        """``ID`` (one model configured) or ``MODEL:ID``."""
        model, _, num = arg.rpartition(":")
        if not num.isdigit():
            raise ActionError(f"no action {arg!r}: expected an action id or MODEL:ID")
        if model:
            if model not in self.models:
                raise ActionError(f"no model {model!r}; models: {', '.join(self.models)}")
            return self.models[model], int(num)
        holders = [ma for ma in self.models.values() if _has(ma.outbox, int(num))]
        if not holders:
            raise ActionError(f"no action {num}")
        if len(holders) > 1:
            raise ActionError(f"action {num} exists for several models: use MODEL:{num}")
        return holders[0], int(num)

    def audit(self, entry: Mapping[str, Any]) -> None:
        """Every admin call, refused or not, goes to the audit trail (the outbox's admin
        table of the model it concerns; the first model's when it names none)."""
        arg = str(entry.get("action_id") or entry.get("model") or "")
        model, _, num = arg.rpartition(":")
        ma = self.models.get(model or arg)
        if ma is None:
            ma = next((m for m in self.models.values() if num.isdigit()
                       and _has(m.outbox, int(num))), next(iter(self.models.values())))
        verb, actor = str(entry["verb"]), str(entry.get("actor", ""))
        action_id = int(num) if num.isdigit() and _has(ma.outbox, int(num)) else None
        ma.outbox.log_admin(action_id, verb, actor, dict(entry))

    def audit_entries(self, model: str) -> list[dict[str, Any]]:
        """The model's audit trail, one entry per action, as ``actions.jsonl`` holds it
        (JSON types); thread-safe."""
        import orjson

        from driftwatch.actions.audit import AuditTrail

        ma = self.models[model]
        entries = AuditTrail(ma.outbox, self.pool).entries()  # thread-safe reads, no lock
        return [orjson.loads(orjson.dumps(e, option=orjson.OPT_NON_STR_KEYS)) for e in entries]

    def export(self, model: str, path: Any) -> None:
        """The model's audit trail as ``actions.jsonl`` (what its report reads to tell
        executed actions from decided ones)."""
        import orjson

        entries = self.audit_entries(model)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(b"".join(orjson.dumps(
            e, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS)
            for e in entries))
        tmp.replace(path)


def _status(adopted: Mapping[str, Any]) -> int:
    """200 once the monitor holds the champion's profile; 202 while that is pending (the
    champion moved, the rest follows on its own)."""
    return 200 if adopted.get("profile") == "adopted" else 202


def _learner_warning(ma: ModelActions, version: str) -> str | None:
    """The online-update warning for the new champion; while MLflow cannot say what kind
    of model it is, the answer says that instead of failing a promotion already made."""
    from driftwatch.actions.online_update import learner_after_promotion
    from driftwatch.state import write_fault

    try:
        return learner_after_promotion(ma.executor.env, ma.model, version)
    except DriftwatchError as exc:
        if write_fault(exc) is not None:
            raise
        return f"could not check the policy's online updates against v{version}: {exc}"


def _has(outbox: Outbox, action_id: int) -> bool:
    try:
        outbox.get(action_id)
    except ActionError:
        return False
    return True


def retrain_settings(policy: Any) -> dict[str, Any] | None:
    """The policy's retrain action settings (for a retrain a person asks for)."""
    for tier in ("severe", "moderate", "mild"):
        action = getattr(getattr(policy, "actions", None), tier, None)
        if getattr(action, "type", None) == "retrain":
            return dict(action.model_dump(mode="json", by_alias=True))
    return None
