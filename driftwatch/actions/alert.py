"""Alerts: a log line always, a JSON POST to the policy's webhook when it has one.

The POST has a short timeout so a slow receiver never holds the loop; a failed POST is
retried on later ``run_pending`` calls (the step is not done until it succeeds), at most
``MAX_ATTEMPTS`` times, then the action fails and says why.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from typing import Any

from driftwatch.actions.context import ActionEnv, parse_settings
from driftwatch.actions.records import ActionRecord
from driftwatch.actions.steps import Done, Result, StepRunner, Waiting
from driftwatch.errors import ActionError

__all__ = ["MAX_ATTEMPTS", "alert_payload", "run_alert"]

MAX_ATTEMPTS = 3
RETRY_AFTER_S = 60.0
log = logging.getLogger("driftwatch.actions.alert")


def alert_payload(action: ActionRecord) -> dict[str, Any]:
    """What the webhook receives: the decision in short, with its reasons."""
    d = action.decision
    return {
        "source": "driftwatch",
        "action_id": action.id,
        "key": action.key,
        "model": action.model,
        "tier": action.tier,
        "window_id": action.window_id,
        "time": action.decided_at,
        "data_quality_fault": d.get("data_quality_fault", False),
        "channels": list(parse_settings("alert", action.settings).channels),
        "reasons": d.get("reasons", []),
        "policy": action.policy,
        "policy_digest": action.policy_digest,
    }


def _post(url: str, payload: dict[str, Any], timeout: float) -> int:
    body = json.dumps(payload, sort_keys=True).encode()
    req = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return int(resp.status)


def run_alert(action: ActionRecord, steps: StepRunner, env: ActionEnv) -> Result:
    payload = alert_payload(action)
    steps.run("log", lambda: _log(action, payload))
    url = parse_settings("alert", action.settings).webhook
    if not url:
        return Done({"channels": payload["channels"], "webhook": None})
    failures = sum(
        1 for s in steps.outbox.steps(action.id) if s.step == "webhook" and s.status == "failed"
    )
    if steps.result("webhook") is None:
        try:
            status = _post(url, payload, env.webhook_timeout)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            steps.outbox.log_step(action.id, "webhook", "failed", {"error": str(exc)})
            if failures + 1 >= MAX_ATTEMPTS:
                raise ActionError(
                    f"webhook {url} failed {failures + 1} times; last: {exc}"
                ) from exc
            return Waiting(f"webhook failed: {exc}", env.clock.now() + RETRY_AFTER_S)
        steps.outbox.log_step(action.id, "webhook", "done", {"status": status})
    return Done({"channels": payload["channels"], "webhook": url})


def _log(action: ActionRecord, payload: dict[str, Any]) -> dict[str, Any]:
    reasons = "; ".join(
        f"{r.get('signal')}{'[' + r['feature'] + ']' if r.get('feature') else ''}="
        f"{r.get('value'):.4g} (threshold {r.get('threshold'):.4g})"
        for r in payload["reasons"]
        if isinstance(r.get("value"), int | float) and isinstance(r.get("threshold"), int | float)
    )
    log.warning(
        "driftwatch alert %s: %s tier on %s window %s: %s",
        action.key,
        action.tier,
        action.model,
        action.window_id,
        reasons or "no reasons given",
    )
    return {"logged": True}
