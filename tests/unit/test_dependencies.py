"""Dependencies off the critical path: the backoff schedule, the readiness model, action
lanes that never hold shutdown, alerts that run while MLflow is down, the MLflow limits in
``driftwatch.yaml``. A local HTTP server stands in for a webhook receiver; the unreachable
MLflow is a closed loopback port."""

from __future__ import annotations

import itertools
import logging
import math
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.actions.backoff import Backoff
from driftwatch.actions.executor import NEEDS_MLFLOW, ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock
from driftwatch.errors import ConfigError
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.retry import RegistryUnavailableError, Retry
from driftwatch.service.config import parse_service_config
from driftwatch.service.dependencies import Dependencies, DependencyState
from driftwatch.service.lanes import Lane
from driftwatch.testing.generator import reference_table
from driftwatch.testing.webhook import WebhookReceiver
from driftwatch.windows.profile import ReferenceProfile

MINIMAL = "models:\n  - connector: c.yaml\n    policy: p.yaml\n"


# -- the backoff schedule ---------------------------------------------------------------------
def test_backoff_doubles_from_the_first_wait_and_stops_at_the_cap():
    b = Backoff(initial_s=5.0, max_s=60.0)
    assert [b.delay(n) for n in range(1, 7)] == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]
    assert b.delay(10_000) == 60.0  # a week-long outage does not overflow
    assert b.retry_at(100.0, attempt=3) == 120.0
    assert Backoff(initial_s=7.0, max_s=7.0).delay(9) == 7.0


@pytest.mark.parametrize("initial, cap, factor", [(0.0, 10.0, 2.0), (10.0, 5.0, 2.0),
                                                  (1.0, 10.0, 0.5)])
def test_a_backoff_that_makes_no_sense_is_refused(initial, cap, factor):
    with pytest.raises(ValueError, match="backoff needs"):
        Backoff(initial, cap, factor)


@settings(max_examples=60, deadline=None)
@given(initial=st.floats(0.01, 100.0), extra=st.floats(0.0, 1000.0),
       attempts=st.integers(1, 200))
def test_backoff_never_shrinks_and_never_passes_the_cap(initial, extra, attempts):
    b = Backoff(initial, initial + extra)
    delays = [b.delay(n) for n in range(1, attempts + 1)]
    assert delays[0] == initial
    assert all(x <= y for x, y in itertools.pairwise(delays))
    assert all(initial <= d <= initial + extra for d in delays)


# -- the readiness model ----------------------------------------------------------------------
def test_a_critical_dependency_down_makes_the_daemon_unready_a_non_critical_one_does_not():
    clock = ManualClock(50.0)
    deps = Dependencies(clock)
    deps.declare("kafka")
    deps.declare("mlflow", critical=False)
    assert deps.ready() and deps.gauges() == {"kafka": pytest.approx(math.nan, nan_ok=True),
                                              "mlflow": pytest.approx(math.nan, nan_ok=True)}
    deps.mark("mlflow", False, "connection refused")
    assert deps.ready() and deps.down() == ["mlflow"]
    deps.mark("kafka", False, "no broker")
    assert not deps.ready() and deps.down() == ["kafka", "mlflow"]
    deps.mark("kafka", True, "ignored when up")
    assert deps.ready()
    got = deps.to_dict()
    assert got["kafka"] == {"state": "up", "critical": True, "reason": "",
                            "since_seconds": 0.0}
    assert got["mlflow"]["state"] == "down" and got["mlflow"]["reason"] == "connection refused"


def test_since_counts_from_the_last_change_of_state_not_the_last_report():
    clock = ManualClock(0.0)
    deps = Dependencies(clock)
    deps.declare("mlflow", critical=False)
    assert deps.to_dict()["mlflow"]["since_seconds"] is None  # never seen
    deps.mark("mlflow", False, "refused")
    clock.advance(30)
    deps.mark("mlflow", False, "timed out")  # still down: the outage started 30 s ago
    clock.advance(10)
    d = deps.to_dict()["mlflow"]
    assert d["since_seconds"] == 40.0 and d["reason"] == "timed out"
    deps.mark("mlflow", True)
    clock.advance(2)
    assert deps.to_dict()["mlflow"]["since_seconds"] == 2.0


def test_a_probe_is_read_when_asked_and_another_part_can_plug_in_its_own():
    state = {"up": False}
    deps = Dependencies(ManualClock())
    deps.declare("kafka", probe=lambda: (state["up"], "no partitions assigned"))
    assert deps.status()["kafka"].state is DependencyState.DOWN and not deps.ready()
    state["up"] = True
    assert deps.ready() and deps.gauges() == {"kafka": 1.0}
    deps.mark("state_disk", False, "read-only file system")  # not declared: critical
    assert not deps.ready() and deps.status()["state_disk"].critical


def test_the_retry_tells_its_observer_whether_mlflow_answered():
    seen: list[object] = []
    retry = Retry(attempts=2, sleep=lambda s: None, observer=seen.append)
    assert retry.call(lambda: 3) == 3

    def refused() -> None:
        raise ConnectionRefusedError("refused")

    with pytest.raises(RegistryUnavailableError):
        retry.call(refused)
    with pytest.raises(KeyError):  # an answer, even a bad one, means MLflow is up
        retry.call(lambda: {}["x"])
    assert seen[0] is None and isinstance(seen[1], RegistryUnavailableError)
    assert seen[2] is None and len(seen) == 3


# -- lanes ------------------------------------------------------------------------------------
def test_a_lane_stuck_in_a_call_is_abandoned_at_stop_and_does_not_hold_the_process(caplog):
    release, entered = threading.Event(), threading.Event()

    def stuck() -> None:  # an MLflow call that never returns
        entered.set()
        release.wait(30)

    lane = Lane("mlflow", [], clock=ManualClock())
    lane.start()
    assert lane.post(stuck) and entered.wait(5)
    assert lane.busy == "hand-off"
    with caplog.at_level(logging.WARNING, logger="driftwatch.service.lanes"):
        assert lane.stop(timeout_s=0.2) is False
    assert "abandoned" in caplog.text and "resumes on the next start" in caplog.text
    assert lane._thread.daemon  # the interpreter does not wait for it
    assert not lane.post(lambda: None)  # a stopping lane takes no more work
    release.set()


def test_a_full_lane_refuses_a_hand_off_instead_of_waiting():
    release, entered = threading.Event(), threading.Event()
    lane = Lane("mlflow", [], clock=ManualClock(), queue_size=2)
    lane.start()
    lane.post(lambda: (entered.set(), release.wait(30)))
    assert entered.wait(5)
    assert lane.post(lambda: None) and lane.post(lambda: None)
    assert lane.post(lambda: None) is False
    release.set()
    assert lane.stop(timeout_s=5.0)


def test_a_kicked_job_runs_before_its_period():
    ran = threading.Event()
    lane = Lane("alerts", [("alerts", 3600.0, ran.set)], clock=ManualClock())
    lane.start()
    lane.kick("alerts")
    assert ran.wait(5)
    assert lane.stop(timeout_s=5.0)


# -- alerts run while MLflow is down ----------------------------------------------------------
@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


def _decision(window_id: int, action: str, settings: dict[str, object]) -> Decision:
    return Decision(model="credit-risk", window_id=window_id, time=3600.0, tier=Tier.MILD,
                    raw_tier=Tier.MILD, action=action, action_settings=settings,
                    policy="p", policy_digest="sha256:0")


def test_alerts_go_out_while_the_actions_that_need_mlflow_back_off(
        tmp_path: Path, webhook: WebhookReceiver, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    clock = ManualClock(10_000.0)
    box = Outbox(tmp_path, clock=clock)
    down = MlflowRegistry("http://127.0.0.1:9", retry=Retry(attempts=1))
    df = reference_table(800, seed=4).to_pandas()
    buffer = LabelledBuffer(ReferenceProfile.build(df).schema, capacity=2000)
    buffer.add_frame(df)
    ex = ActionExecutor(box, down, None, clock, buffer=buffer, backoff_s=5.0,
                        max_backoff_s=20.0)
    update = ex.submit(_decision(1, "online_update", {"type": "online_update",
                                                      "opt_in": True}))
    alert = ex.submit(_decision(2, "alert", {"type": "alert", "webhook": webhook.url}))
    assert update is not None and alert is not None

    ex.run_pending(kinds=("alert",))  # the alerts lane: MLflow is never asked
    assert box.get(alert).state is ActionState.SUCCEEDED and len(webhook.bodies) == 1
    assert box.get(update).state is ActionState.PENDING and box.get(update).attempts == 0

    retries = []
    for _ in range(4):  # the mlflow lane: each failure waits longer, up to the cap
        clock.advance(60)
        [rec] = ex.run_pending(kinds=NEEDS_MLFLOW)
        assert rec.id == update and rec.state is ActionState.PENDING
        retries.append(rec.next_attempt_at - clock.now())
    assert retries == [5.0, 10.0, 20.0, 20.0]
    assert ex.run_pending(kinds=NEEDS_MLFLOW) == []  # backing off: not even tried
    ex.close()


# -- the MLflow limits in driftwatch.yaml -----------------------------------------------------
def test_mlflow_limits_have_bounded_defaults_and_can_be_set():
    cfg = parse_service_config(MINIMAL)
    lim = cfg.mlflow
    assert (lim.timeout_s, lim.http_retries, lim.attempts) == (10.0, 0, 2)
    assert (lim.backoff_s, lim.backoff_max_s, lim.shutdown_grace_s) == (30.0, 600.0, 5.0)
    cfg = parse_service_config(MINIMAL + "actions:\n  mlflow_timeout: 3s\n  mlflow_attempts: 1\n"
                               "  retry_backoff: 2s\n  retry_backoff_max: 1m\n"
                               "  shutdown_grace: 1s\n")
    assert (cfg.mlflow.timeout_s, cfg.mlflow.attempts, cfg.mlflow.backoff_s,
            cfg.mlflow.backoff_max_s, cfg.mlflow.shutdown_grace_s) == (3.0, 1, 2.0, 60.0, 1.0)


@pytest.mark.parametrize("text, where, what", [
    ("actions:\n  retry_backoff: 1m\n  retry_backoff_max: 10s\n", "d.yaml:6:22",
     "must not be shorter than retry_backoff"),
    ("actions:\n  mlflow_timeout: 0s\n", "d.yaml:5:19", "expected a positive duration"),
    ("actions:\n  mlflow_http_retries: -1\n", "d.yaml:5:24", "greater than or equal to 0"),
])
def test_a_bad_mlflow_limit_is_located(text, where, what):
    with pytest.raises(ConfigError) as err:
        parse_service_config(MINIMAL + text, file="d.yaml")
    assert where in str(err.value) and what in str(err.value)
