"""``driftwatch run --exit-when-done`` finishes what it started: the drain after the stream.

The drain itself on an injected clock, the daemon's side of it (hurried lanes, reports
brought up to date once the actions are through, the exit code) on fakes, what the
actions layer counts as work left on a real outbox, and the command line's option.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock
from driftwatch.metrics import Metrics
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.service.actions import ServiceActions
from driftwatch.service.config import parse_service_config
from driftwatch.service.daemon_finish import EXIT_UNFINISHED, FinishingRun
from driftwatch.service.drain import Backlog, Drain
from driftwatch.service.lanes import Lane

from ._cli import run_cli


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("driftwatch.service")]


# -- the drain --------------------------------------------------------------------------------
def test_progress_is_logged_every_few_seconds_until_nothing_is_left(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    clock = ManualClock(100.0)
    left = [Backlog(reports=51, actions=(3, 4))] * 12 + [Backlog(reports=2)] * 9 + [Backlog()]
    drain = Drain(lambda: left.pop(0), clock=clock, timeout_s=None, every_s=5.0)
    passes = 0
    while (result := drain.poll()) is None:
        passes += 1
        clock.advance(0.5)
    assert passes == 21 and result.done and result.left.empty and result.seconds == 10.5
    assert _messages(caplog) == [
        "every source is consumed; finishing: 51 reports, 2 actions (ids 3, 4) left "
        "(SIGTERM or Ctrl-C stops now; the rest resumes on the next start)",
        "finishing: 51 reports, 2 actions (ids 3, 4) left (5s)",  # at 5.0 s
        "finishing: 2 reports left (10s)",  # at 10.0 s
        "finished what the run started in 10.5s",
    ]


def test_nothing_left_ends_the_drain_at_once_and_says_nothing(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    result = Drain(Backlog, clock=ManualClock(), timeout_s=0.0).poll()
    assert result is not None and result.done and result.seconds == 0.0
    assert _messages(caplog) == []


def test_the_limit_ends_the_drain_with_what_is_left_said(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    clock = ManualClock()
    waiting = Backlog(actions=(13,), waiting=("action 13 tries again in 40s (MLflow down)",))
    drain = Drain(lambda: waiting, clock=clock, timeout_s=90.0)
    while (result := drain.poll()) is None:
        clock.advance(1.0)
    assert not result.done and result.left == waiting and result.seconds == 90.0
    assert _messages(caplog)[0].endswith(
        "left; action 13 tries again in 40s (MLflow down) (SIGTERM or Ctrl-C stops now; the "
        "rest resumes on the next start)")
    assert _messages(caplog)[-1] == ("--drain-timeout 1m30s passed with 1 action (id 13) left; "
                                     "action 13 tries again in 40s (MLflow down); "
                                     "left unfinished (they resume on the next start)")


# -- the daemon's side, on fakes ----------------------------------------------------------------
@dataclass
class _Actions:
    """The lanes: each hurry runs one pass, which finishes the oldest open action."""

    open: list[int]
    execute: bool = True
    done: list[int] = field(default_factory=list)
    hurried: int = 0

    def hurry(self) -> None:
        self.hurried += 1
        if self.open:
            self.done.append(self.open.pop(0))

    def unfinished_work(self) -> tuple[tuple[int, ...], tuple[str, ...]]:
        return tuple(self.open), ()

    def states(self, model: str) -> tuple[tuple[int, str], ...]:
        return tuple((i, "pending") for i in self.open) + tuple((i, "succeeded")
                                                                for i in self.done)

    def open_actions(self) -> list[Any]:
        return []


@dataclass
class _Reports:
    queued: int

    def pending(self) -> int:
        return self.queued


class _Wake:
    def __init__(self, clock: ManualClock, reports: _Reports) -> None:
        self.clock, self.reports = clock, reports

    def wait(self, seconds: float) -> bool:  # the writer thread writes one report meanwhile
        self.clock.advance(seconds)
        self.reports.queued = max(0, self.reports.queued - 1)
        return False

    def clear(self) -> None:
        pass


class _Service(FinishingRun):
    def __init__(self, actions: _Actions, reports: _Reports, timeout_s: float | None) -> None:
        self.clock = ManualClock()
        self.actions, self.reports = actions, reports
        self.inbox = SimpleNamespace(wake=_Wake(self.clock, reports))
        self.runtimes = [SimpleNamespace(name="credit")]
        self.config = SimpleNamespace(reports=SimpleNamespace(on_decision=True),
                                      state_dir=Path("state"))
        self.drain_timeout_s = timeout_s
        self.drain = self.drained = None
        self._settled: dict[str, Any] = {}
        self._reported = {"credit": actions.states("credit")}  # at the end of the stream
        self.refreshed = self.rewritten = 0

    def _submit_report(self, rt: Any, res: Any = None, *, page: bool = True) -> None:
        assert not page  # only the decision reports whose action moved on
        self.refreshed += 1
        self.reports.queued += 1

    def _report(self, rt: Any) -> None:
        self.rewritten += 1
        self._reported[rt.name] = self.actions.states(rt.name)

    def finish(self) -> int:
        passes = 0
        while self._finishing():
            passes += 1
        return passes


def test_the_loop_hurries_the_lanes_then_brings_the_reports_up_to_date_once() -> None:
    svc = _Service(_Actions(open=[1, 2, 3]), _Reports(queued=5), timeout_s=None)
    svc.finish()
    assert svc.actions.done == [1, 2, 3] and svc.actions.hurried >= 3
    assert (svc.refreshed, svc.rewritten) == (1, 1)  # after the last action, not per action
    assert svc.reports.queued == 0 and svc.drained is not None and svc.drained.done
    assert svc._exit_code() == 0


def test_reports_are_left_as_they_are_when_no_action_moved() -> None:
    svc = _Service(_Actions(open=[], execute=False), _Reports(queued=2), timeout_s=None)
    svc.finish()
    assert (svc.refreshed, svc.rewritten) == (0, 0) and svc._exit_code() == 0


def test_out_of_time_with_work_left_exits_3() -> None:
    svc = _Service(_Actions(open=[1]), _Reports(queued=500), timeout_s=2.0)
    svc.finish()
    assert svc.drained is not None and not svc.drained.done
    assert svc.drained.left.reports > 0 and svc._exit_code() == EXIT_UNFINISHED == 3


# -- what the actions layer counts as work left -------------------------------------------------
def _decision(window_id: int, action: str) -> Decision:
    return Decision(model="credit", window_id=window_id, time=3600.0, tier=Tier.MILD,
                    raw_tier=Tier.MILD, action=action, action_settings={"type": action},
                    policy="p", policy_digest="sha256:0")


def _actions(tmp_path: Path, execute: bool, clock: ManualClock) -> tuple[ServiceActions, Any]:
    """The actions layer of a one-model daemon, and the model's actions."""
    cfg = parse_service_config(
        "models:\n  - connector: c.yaml\n    policy: p.yaml\n"
        f"state_dir: {tmp_path}\nactions: {{execute: {str(execute).lower()}}}\n")
    actions = ServiceActions(cfg, clock=clock, metrics=Metrics(CollectorRegistry()))
    ma = actions.add_model("credit", reference=None, cutoff=None, shadow_defaults={},
                           buffer=None, on_promote=None)
    return actions, ma


def test_work_left_is_what_the_lanes_can_finish_without_new_data_or_a_person(
        tmp_path: Path) -> None:
    clock = ManualClock(1000.0)
    actions, ma = _actions(tmp_path, False, clock)
    box = ma.outbox
    alert, _ = box.record(_decision(1, "alert"))
    update, _ = box.record(_decision(2, "online_update"))
    box.update(update, next_attempt_at=1040.0, note="MLflow is down")
    shadow, _ = box.record(_decision(3, "shadow"))
    box.update(shadow, state=ActionState.RUNNING)  # scores live traffic: waits for data
    retrain, _ = box.record(_decision(4, "retrain"), state=ActionState.AWAITING_APPROVAL)
    done, _ = box.record(_decision(5, "alert"))
    box.update(done, state=ActionState.SUCCEEDED)
    try:
        assert actions.unfinished_work() == ((), ())  # execute: false: recorded is all
        actions.execute = True
        assert actions.unfinished_work() == (
            (alert, update), (f"action {update} tries again in 40s (MLflow is down)",))
        assert dict(actions.states("credit")) == {
            alert: "pending", update: "pending", shadow: "running",
            retrain: "awaiting_approval", done: "succeeded"}
    finally:
        actions.close()


def test_a_lane_still_inside_its_call_is_named_among_the_reasons(tmp_path: Path) -> None:
    """The first MLflow call may outlast a short --drain-timeout: the drain then says the
    lane is still in it, rather than giving no reason at all."""
    clock = ManualClock(1000.0)
    actions, ma = _actions(tmp_path, True, clock)
    update, _ = ma.outbox.record(_decision(2, "online_update"))
    inside, release = threading.Event(), threading.Event()
    lane = Lane("mlflow", [], clock=clock)
    lane.start()
    actions.lanes = {"mlflow": lane}
    try:
        assert lane.post(lambda: (inside.set(), release.wait(10.0)))
        assert inside.wait(10.0)
        clock.advance(7.0)
        assert actions.unfinished_work() == (
            (update,), ("the mlflow thread is in hand-off (7s so far)",))
        ma.outbox.update(update, state=ActionState.SUCCEEDED)
        assert actions.unfinished_work() == ((), ())  # nothing left: no reason to give
    finally:
        release.set()
        lane.stop(timeout_s=5.0)
        actions.lanes = {}
        actions.close()


# -- the command line -----------------------------------------------------------------------
def test_drain_timeout_needs_exit_when_done_and_a_duration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["run", "--state-dir", str(tmp_path), "--drain-timeout", "5m"],
                           capsys)
    assert code == 2 and "--drain-timeout applies to --exit-when-done" in err
    with pytest.raises(SystemExit) as exc:
        run_cli(["run", "--exit-when-done", "--drain-timeout", "soon"], capsys)
    assert exc.value.code == 2
    assert "argument --drain-timeout: expected a duration like" in capsys.readouterr().err
