"""Actions: the outbox, the executor and the tiered repairs it runs.

``online_update`` (mild), ``shadow`` (moderate), ``retrain`` on the GPU pool (severe) and
``alert``. Every decision that asks for one is written to the outbox before it runs; the
outbox tables are the audit trail. Names are imported on first use, so ``driftwatch``
commands that never touch MLflow do not pay for importing it.
"""

from __future__ import annotations

from driftwatch.lazy import lazy_attributes

__all__ = [
    "ActionContext",
    "ActionExecutor",
    "ActionRecord",
    "ActionState",
    "AuditTrail",
    "CrashPoints",
    "LabelledBuffer",
    "Outbox",
    "ShadowEvaluation",
]

_WHERE = {
    "ActionContext": "driftwatch.actions.context",
    "ActionExecutor": "driftwatch.actions.executor",
    "ActionRecord": "driftwatch.actions.records",
    "ActionState": "driftwatch.actions.records",
    "AuditTrail": "driftwatch.actions.audit",
    "CrashPoints": "driftwatch.actions.steps",
    "LabelledBuffer": "driftwatch.actions.labelled_buffer",
    "Outbox": "driftwatch.actions.outbox",
    "ShadowEvaluation": "driftwatch.actions.shadow_eval",
}


__getattr__ = lazy_attributes(__name__, _WHERE)
