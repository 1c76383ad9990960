"""Alerts: a log line always (naming the action's channels), a JSON POST to the policy's
webhook when it has one; only the POST delivers anything to a channel.

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

__all__ = ["MAX_ATTEMPTS", "alert_line", "alert_payload", "alert_text", "run_alert"]

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


def _describe(r: dict[str, Any], level: str) -> str | None:
    v, t = r.get("value"), r.get("threshold")
    if not (isinstance(v, int | float) and isinstance(t, int | float)):
        return None
    feat = f"[{r['feature']}]" if r.get("feature") else ""
    seg = f" in segment={r['segment']}" if r.get("segment") else ""
    return f"{r.get('signal')}{feat}{seg}={v:.4g} ({level} {t:.4g})"


def alert_text(payload: dict[str, Any]) -> str:
    """The alert in one line: a data-quality fault worded as such, a tier with its reasons.

    >>> print(alert_text({"model": "m", "window_id": 7, "tier": "none",
    ...     "data_quality_fault": True, "reasons": [{"signal": "missing_rate",
    ...     "group": "data_quality", "feature": "income", "value": 0.2575, "threshold": 0.05}]}))
    ... # doctest: +NORMALIZE_WHITESPACE
    data-quality fault on m window 7: missing_rate[income]=0.2575 (limit 0.05);
    model changes are blocked until the feed is clean
    """
    reasons = payload.get("reasons") or []
    where = f"{payload.get('model')} window {payload.get('window_id')}"
    if payload.get("data_quality_fault"):
        parts = [d for r in reasons if r.get("group") == "data_quality"
                 if (d := _describe(r, "limit"))]
        said = "; ".join(parts) or ("no check failed in this window, but the gate stays closed "
                                    "until enough clean windows have passed")
        return (f"data-quality fault on {where}: {said}; model changes are blocked until the "
                "feed is clean")
    parts = [d for r in reasons if (d := _describe(r, "threshold"))]
    said = "; ".join(parts) or ("no signal crossed a level in this window: the tier is held "
                                "from earlier windows (persistence or hysteresis)")
    return f"{payload.get('tier')} tier on {where}: {said}"


def alert_line(key: str, payload: dict[str, Any]) -> str:
    """The alert's log line: its key, the channels it is meant for, then the alert.

    >>> alert_line("m:severe:9", {"model": "m", "window_id": 9, "tier": "severe",
    ...     "channels": ["risk-oncall"], "reasons": []})[:52]
    'driftwatch alert m:severe:9 [channels: risk-oncall]:'
    """
    channels = payload.get("channels") or []
    to = f" [channels: {', '.join(channels)}]" if channels else ""
    return f"driftwatch alert {key}{to}: {alert_text(payload)}"


def _log(action: ActionRecord, payload: dict[str, Any]) -> dict[str, Any]:
    log.warning("%s", alert_line(action.key, payload))
    return {"logged": True}
