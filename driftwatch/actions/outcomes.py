"""What an executed action came to, in one line: the words replay summaries and reports use.

Read from an audit-trail entry (:class:`~driftwatch.actions.audit.AuditTrail`, one line of
``actions.jsonl``), so a summary cannot say more than the outbox recorded: ``done`` (with
the model version it registered, if any), ``failed`` (with the error's first line),
``discarded`` (a recalibration or challenger that lost, with the rule's reason), ``done:
unchanged: ...`` (an online update that reused the version made from the same data),
``skipped`` (an online update with fewer labelled rows than its policy needs: not enough
data yet, nothing went wrong),
``awaiting approval``, ``still open`` or ``cancelled``.

>>> o = action_outcome({"id": 3, "action": "online_update", "window_id": 7,
...                     "state": "succeeded", "outcome": {"verdict": "discarded",
...                     "reason": "holdout log loss worse"}})
>>> o["state"], o["reason"], o["version"]
('discarded', 'holdout log loss worse', None)
>>> outcome_counts([o, {**o, "state": "failed"}, {**o, "state": "done"}])
'1 done, 1 failed, 1 discarded'
>>> s = action_outcome({"id": 4, "action": "online_update", "window_id": 1,
...                     "state": "succeeded", "outcome": {"verdict": "skipped",
...                     "reason": "only 0 labelled rows in the window, the policy needs 500"}})
>>> outcome_line(s).split(": ")[1:]
['skipped', 'only 0 labelled rows in the window, the policy needs 500']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["OUTCOME_STATES", "action_outcome", "metric_outcome", "outcome_counts", "outcome_line",
           "version_words"]

#: Outcome states in the order summaries list them.
OUTCOME_STATES = ("done", "failed", "discarded", "skipped", "awaiting approval", "still open",
                  "cancelled", "not recorded")

_OPEN = {"pending": "waiting to run", "running": "running"}


def _first_line(text: Any) -> str | None:
    if not text:
        return None
    return str(text).strip().splitlines()[0] if str(text).strip() else None


def action_outcome(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``id``, ``kind``, ``window``, ``state``, ``reason`` and ``version`` of one action, and
    the ``warning`` its outcome carries, if any (a promoted champion that the policy's
    ``method: learner`` online updates cannot update)."""
    state = str(entry.get("state", ""))
    outcome = entry.get("outcome") or {}
    version = (entry.get("mlflow") or {}).get("version") or outcome.get("version")
    reason: str | None = None
    if state == "failed":
        word, reason = "failed", _first_line(entry.get("error")) or "no error recorded"
    elif state == "cancelled":
        word, reason = "cancelled", _first_line(entry.get("note"))
    elif state == "awaiting_approval":
        word, reason = "awaiting approval", _first_line(entry.get("note"))
    elif state in _OPEN:
        word, reason = "still open", _first_line(entry.get("note")) or _OPEN[state]
    elif outcome.get("verdict") == "discarded":
        word, reason = "discarded", _first_line(outcome.get("reason"))
        version = None  # a discarded candidate is not the version this action made current
    elif outcome.get("verdict") == "skipped":  # too little data yet: nothing made, no error
        word, reason = "skipped", _first_line(outcome.get("reason"))
    elif outcome.get("verdict") == "unchanged":  # an update that reused a registered version
        word, reason = "done", _first_line(outcome.get("reason"))
        version = None  # it registered nothing: the reason names the version it reused
    else:
        word = "done"
    out = {"id": entry.get("id"), "kind": entry.get("action"), "window": entry.get("window_id"),
           "state": word, "reason": reason,
           "version": str(version) if version is not None else None}
    if state == "succeeded" and (warning := _first_line(outcome.get("warning"))):
        out["warning"] = warning
    return out


def metric_outcome(state: str, outcome: Mapping[str, Any] | None) -> str:
    """The ``outcome`` label of ``driftwatch_actions_total`` for a finished action: its
    state, or ``skipped`` for one that ended with too little data (no success, no failure).

    >>> metric_outcome("succeeded", {"verdict": "skipped"}), metric_outcome("failed", None)
    ('skipped', 'failed')
    """
    return "skipped" if (outcome or {}).get("verdict") == "skipped" else str(state)


def outcome_counts(outcomes: Iterable[Mapping[str, Any]]) -> str:
    """``2 failed, 2 discarded``: how many actions ended in each state, in a fixed order."""
    n = Counter(str(o.get("state")) for o in outcomes)
    return ", ".join(f"{n[s]} {s}" for s in OUTCOME_STATES if n.get(s))


def outcome_line(o: Mapping[str, Any]) -> str:
    """``action 3 online_update (window 7): failed: only 40 labelled rows``."""
    text = f"action {o.get('id')} {o.get('kind')} (window {o.get('window')}): {o.get('state')}"
    if o.get("reason"):
        text += f": {o['reason']}"
    if o.get("version"):
        text += f"; {version_words(o)}"
    if o.get("warning"):
        text += f"; warning: {o['warning']}"
    return text


def version_words(o: Mapping[str, Any]) -> str:
    """``registered v3``; a shadow registers nothing: it judges a challenger and may promote it.

    >>> version_words({"kind": "shadow", "state": "awaiting approval", "version": "6"})
    'challenger v6'
    >>> version_words({"kind": "shadow", "state": "done", "version": "6"})
    'promoted v6'
    """
    said = "registered"
    if o.get("kind") == "shadow":
        said = "promoted" if o.get("state") == "done" else "challenger"
    return f"{said} v{o['version']}"
