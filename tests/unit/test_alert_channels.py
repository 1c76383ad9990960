"""An alert's ``channels`` are named in its log line (the only thing an alert without a
webhook produces besides the metrics), and ``policy explain`` says that only a webhook
delivers anything to them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock
from driftwatch.policy.actions import AlertAction
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.explain import describe_tiers
from driftwatch.policy.loader import load_policy
from driftwatch.policy.tiers import Tier
from driftwatch.registry.mlflow_registry import MlflowRegistry

REASON = Reason("psi", "drift", "income", 0.31, 0.25, Tier.MODERATE, "above", "p.yaml:12")


def _decision(settings: dict[str, object]) -> Decision:
    return Decision(model="credit-risk", window_id=7, time=3600.0, tier=Tier.MODERATE,
                    raw_tier=Tier.MODERATE, action="alert", reasons=(REASON,),
                    policy="p", policy_digest="sha256:ab12", action_settings=settings)


def test_an_alert_without_a_webhook_names_its_channels_in_the_log_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(10_000.0)
    box = Outbox(tmp_path, clock=clock)
    ex = ActionExecutor(box, MlflowRegistry.embedded(tmp_path / "unused"), None, clock)
    settings = {"type": "alert", "channels": ["risk-oncall", "pager"]}
    with caplog.at_level(logging.WARNING, logger="driftwatch.actions.alert"):
        action_id = ex.submit(_decision(settings))
        ex.run_pending()
    assert box.get(action_id).state is ActionState.SUCCEEDED
    lines = [r.getMessage() for r in caplog.records if r.name == "driftwatch.actions.alert"]
    assert lines == ["driftwatch alert credit-risk:moderate:7 [channels: risk-oncall, pager]: "
                     "moderate tier on credit-risk window 7: psi[income]=0.31 (threshold "
                     "0.25)"]
    ex.close()
    box.close()


@pytest.mark.parametrize(("settings", "said"), [
    ({}, "alert: a warning in the log and the metrics"),
    ({"channels": ["oncall"]}, "alert: a warning in the log naming channel oncall, and the "
     "metrics (no webhook: nothing is sent to the channel)"),
    ({"webhook": "https://hooks.example.com/r"},
     "alert: a warning in the log, the metrics, and a POST to the webhook"),
    ({"channels": ["a", "b"], "webhook": "https://hooks.example.com/r"},
     "alert: a warning in the log naming channels a, b, the metrics, and a POST to the "
     "webhook (its receiver routes by the channels in the JSON)"),
])
def test_explain_says_what_an_alert_delivers(settings: dict[str, object], said: str) -> None:
    assert AlertAction(**settings).summary() == said  # type: ignore[arg-type]


def test_explain_of_the_template_says_its_channel_gets_nothing_without_a_webhook() -> None:
    root = Path(__file__).resolve().parents[2]
    lines = describe_tiers(load_policy(root / "policies" / "template.yaml"))
    severe = next(ln for ln in lines if ln.startswith("severe:"))
    assert ("then alert: a warning in the log naming channel ml-oncall, and the metrics (no "
            "webhook: nothing is sent to the channel)") in severe
    assert "alert ml-oncall" not in severe
