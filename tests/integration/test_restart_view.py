"""After a restart, ``/metrics`` shows the view the daemon left: the same tier, signals and
data-quality state for every gauge the checkpoint covers, before the next window closes."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
VIEW = ("driftwatch_tier", "driftwatch_signal_severity", "driftwatch_data_quality_fault",
        "driftwatch_feature_drift_score", "driftwatch_model_drift_score",
        "driftwatch_data_quality_ratio", "driftwatch_confidence_value",
        "driftwatch_business_value", "driftwatch_window_events")


def view(daemon) -> dict[tuple, float]:
    code, body = daemon.get("/metrics")
    assert code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(body.decode()) for s in fam.samples
            if s.name in VIEW}


def test_metrics_after_a_restart_equal_metrics_before_it(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"])
    state = tmp_path / "state"
    first = driftwatch_daemon(cfg, state)
    first.wait_ready()
    first.wait_for("the recording consumed", lambda: first.status()["models"][0]["source"]
                   ["done"], timeout=180)
    before = view(first)
    assert first.terminate() == 0
    assert before[("driftwatch_window_events", (("model", MODEL),))] > 0
    assert any(k[0] == "driftwatch_feature_drift_score" for k in before)

    again = driftwatch_daemon(cfg, state)  # the recording is done: no window will close
    again.wait_ready()
    after = view(again)
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert (math.isnan(value) and math.isnan(after[key])) or after[key] == value, key
    assert again.terminate() == 0
