"""Drift policies: the YAML schema, its loader and checks, the pure decision engine,
replay expectations and the ``driftwatch policy`` commands.

Names are imported on first use, so a module that needs one part of the package (the
replay reads the engine and the loader) does not pay for the others (the commands and
``policy explain``).

>>> from driftwatch.policy import Tier, load_policy_text
>>> from driftwatch.policy.watcher import MINIMAL
>>> load_policy_text(MINIMAL).signals[0].thresholds.moderate
0.25
"""

from __future__ import annotations

from driftwatch.lazy import lazy_attributes

__all__ = [
    "Decision",
    "EngineState",
    "Expectation",
    "ExpectationError",
    "ExpectationResult",
    "Policy",
    "PolicyErrors",
    "PolicyWatcher",
    "Reason",
    "Tier",
    "add_commands",
    "check_expectations",
    "check_files",
    "evaluate",
    "explain_policy",
    "load_policy",
    "load_policy_text",
    "parse_expectation",
]

_WHERE = {
    "Decision": "driftwatch.policy.decision",
    "EngineState": "driftwatch.policy.state",
    "Expectation": "driftwatch.policy.expect",
    "ExpectationError": "driftwatch.policy.errors",
    "ExpectationResult": "driftwatch.policy.expect",
    "Policy": "driftwatch.policy.schema",
    "PolicyErrors": "driftwatch.policy.errors",
    "PolicyWatcher": "driftwatch.policy.watcher",
    "Reason": "driftwatch.policy.decision",
    "Tier": "driftwatch.policy.tiers",
    "add_commands": "driftwatch.policy.commands",
    "check_expectations": "driftwatch.policy.expect",
    "check_files": "driftwatch.policy.commands",
    "evaluate": "driftwatch.policy.engine",
    "explain_policy": "driftwatch.policy.explain",
    "load_policy": "driftwatch.policy.loader",
    "load_policy_text": "driftwatch.policy.loader",
    "parse_expectation": "driftwatch.policy.expect",
}

__getattr__ = lazy_attributes(__name__, _WHERE)
