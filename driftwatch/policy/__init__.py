"""Drift policies: the YAML schema, its loader and checks, the pure decision engine,
replay expectations and the ``driftwatch policy`` commands.

>>> from driftwatch.policy import Tier, load_policy_text
>>> from driftwatch.policy.watcher import MINIMAL
>>> load_policy_text(MINIMAL).signals[0].thresholds.moderate
0.25
"""

from driftwatch.policy.commands import add_commands, check_files
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.engine import evaluate
from driftwatch.policy.errors import ExpectationError, PolicyErrors
from driftwatch.policy.expect import (
    Expectation,
    ExpectationResult,
    check_expectations,
    parse_expectation,
)
from driftwatch.policy.explain import explain_policy
from driftwatch.policy.loader import load_policy, load_policy_text
from driftwatch.policy.schema import Policy
from driftwatch.policy.state import EngineState
from driftwatch.policy.tiers import Tier
from driftwatch.policy.watcher import PolicyWatcher

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
