"""The outbox: decisions recorded durably and once, steps run once, approvals and the audit
trail as a reviewer reads them, the ``driftwatch actions`` commands, and the labelled buffer.

No MLflow here: alert actions (which need none) exercise the executor's loop; a local
HTTP server stands in for a webhook receiver.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from driftwatch.actions.audit import AuditTrail
from driftwatch.actions.commands import add_commands
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.actions.steps import StepRunner
from driftwatch.clock import ManualClock
from driftwatch.errors import ActionError, StateError
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.tiers import Tier
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.schema import FeatureSchema
from driftwatch.testing.webhook import WebhookReceiver

REASON = Reason("psi", "drift", "income", 0.31, 0.25, Tier.MODERATE, "above", "p.yaml:12")


def decision(window_id: int = 7, action: str = "alert", **kw: object) -> Decision:
    fields: dict[str, object] = {
        "model": "credit-risk",
        "window_id": window_id,
        "time": 3600.0,
        "tier": Tier.MODERATE,
        "raw_tier": Tier.MODERATE,
        "action": action,
        "reasons": (REASON,),
        "policy": "credit-risk-demo",
        "policy_digest": "sha256:ab12",
    }
    fields.update(kw)
    return Decision(**fields)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(10_000.0)


@pytest.fixture
def box(tmp_path: Path, clock: ManualClock) -> Iterator[Outbox]:
    b = Outbox(tmp_path, clock=clock)
    yield b
    b.close()


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


def executor(tmp_path: Path, box: Outbox, clock: ManualClock) -> ActionExecutor:
    # the registry is never called for alerts: no MLflow store is created
    registry = MlflowRegistry.embedded(tmp_path / "unused")
    return ActionExecutor(box, registry, None, clock)


def test_a_decision_is_recorded_once_and_survives_a_restart(tmp_path: Path, clock: ManualClock):
    first = Outbox(tmp_path, clock=clock)
    assert first.record(decision(), {"window_start": 0.0, "window_end": 3600.0}) == (1, True)
    assert first.record(decision(), {"window_start": 0.0, "window_end": 3600.0}) == (1, False)
    assert first.record(decision(window_id=8)) == (2, True)
    first.close()

    again = Outbox(tmp_path, clock=clock)
    rec = again.by_key("credit-risk:moderate:7")
    assert rec is not None and rec.state is ActionState.PENDING
    assert rec.decision["reasons"][0]["source"] == "p.yaml:12"
    assert rec.policy_digest == "sha256:ab12"
    assert rec.context["window_end"] == 3600.0
    assert [r.key for r in again.list()] == ["credit-risk:moderate:7", "credit-risk:moderate:8"]
    again.close()


def test_outbox_is_sqlite_in_wal_mode_with_full_sync(box: Outbox):
    assert box._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert box._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_finished_step_is_never_run_again_even_by_a_new_process(tmp_path: Path, clock):
    box = Outbox(tmp_path, clock=clock)
    action_id, _ = box.record(decision())
    calls: list[int] = []
    StepRunner(box, action_id).run("register", lambda: calls.append(1) or {"version": "3"})
    box.close()

    reopened = Outbox(tmp_path, clock=clock)
    again = StepRunner(reopened, action_id).run("register", lambda: calls.append(1) or {})
    assert again == {"version": "3"} and calls == [1]
    reopened.close()


def test_an_interrupted_step_runs_again(box: Outbox):
    action_id, _ = box.record(decision())
    box.log_step(action_id, "register", "started")  # the process died here
    assert StepRunner(box, action_id).run("register", lambda: {"version": "4"}) == {"version": "4"}


def test_alert_posts_the_decision_to_the_webhook_once(tmp_path, box, clock, webhook):
    ex = executor(tmp_path, box, clock)
    settings = {"type": "alert", "channels": ["risk-oncall"], "webhook": webhook.url}
    action_id = ex.submit(decision(action_settings=settings))
    assert action_id == ex.submit(decision(action_settings=settings))  # a repeat: no-op
    ex.run_pending()
    ex.run_pending()
    assert box.get(action_id).state is ActionState.SUCCEEDED
    assert len(webhook.bodies) == 1
    body = webhook.bodies[0]
    assert body["key"] == "credit-risk:moderate:7" and body["channels"] == ["risk-oncall"]
    assert body["reasons"][0]["feature"] == "income"
    ex.close()


def test_a_failing_webhook_is_retried_later_then_the_alert_succeeds(tmp_path, box, clock, webhook):
    ex = executor(tmp_path, box, clock)
    webhook.fail = True
    action_id = ex.submit(decision(action_settings={"type": "alert", "webhook": webhook.url}))
    rec = ex.run_pending()[0]
    assert rec.state is ActionState.RUNNING and "webhook failed" in (rec.note or "")
    assert ex.run_pending() == []  # not due yet: the loop is not held up
    webhook.fail = False
    clock.advance(120)
    ex.run_pending()
    assert box.get(action_id).state is ActionState.SUCCEEDED and len(webhook.bodies) == 1
    ex.close()


def test_resume_after_restart_does_not_repeat_a_step_that_finished(tmp_path, clock, webhook):
    box = Outbox(tmp_path, clock=clock)
    settings = {"type": "alert", "webhook": webhook.url}
    action_id, _ = box.record(decision(action_settings=settings))
    # A previous process posted the webhook and died before finishing the action.
    box.log_step(action_id, "log", "done", {"logged": True})
    box.log_step(action_id, "webhook", "done", {"status": 200})
    box.close()

    box = Outbox(tmp_path, clock=clock)
    ex = executor(tmp_path, box, clock)
    assert ex.resume() == [action_id]
    assert box.get(action_id).state is ActionState.SUCCEEDED
    assert webhook.bodies == []
    ex.close()


def test_a_second_executor_on_the_same_state_is_refused(tmp_path, box, clock):
    ex = executor(tmp_path, box, clock)
    with pytest.raises(StateError, match="another executor"):
        executor(tmp_path, Outbox(tmp_path, clock=clock), clock)
    ex.close()


def test_approval_is_recorded_with_the_approver_and_only_when_awaited(box: Outbox, clock):
    action_id, _ = box.record(decision(action="retrain"), state=ActionState.AWAITING_APPROVAL)
    other, _ = box.record(decision(window_id=9))
    clock.advance(60)
    rec = box.approve(action_id, "ana.risk")
    assert rec.state is ActionState.PENDING and rec.approver == "ana.risk"
    assert rec.approved_at == 10_060.0
    with pytest.raises(ActionError, match="nothing to approve"):
        box.approve(other, "ana.risk")
    with pytest.raises(ActionError, match="approver"):
        box.approve(action_id, " ")
    assert [(a.command, a.actor) for a in box.admin_calls(action_id)] == [("approve", "ana.risk")]


def test_cancel_finishes_an_action_and_cannot_be_undone(box: Outbox):
    action_id, _ = box.record(decision())
    rec = box.cancel(action_id, "ops", "false alarm")
    assert rec.state is ActionState.CANCELLED and "false alarm" in (rec.error or "")
    with pytest.raises(ActionError, match="was cancelled: there is nothing to cancel"):
        box.cancel(action_id, "ops")


def test_audit_trail_shows_who_decided_why_and_who_approved(box: Outbox, tmp_path: Path):
    action_id, _ = box.record(
        decision(action="retrain"),
        {"window_start": 0.0, "window_end": 3600.0},
        state=ActionState.AWAITING_APPROVAL,
    )
    box.approve(action_id, "ana.risk")
    box.update(action_id, artifacts={"job_id": "000001-retrain"})
    box.log_step(action_id, "find_version", "done", {"version": "5", "run_id": "r1"})
    trail = AuditTrail(box)
    entry = trail.entry(action_id)
    assert entry["decided_by"] == "credit-risk-demo@sha256:ab12"
    assert entry["reasons"][0]["source"] == "p.yaml:12"
    assert entry["window"] == [0.0, 3600.0]
    assert entry["approver"] == "ana.risk" and entry["job_id"] == "000001-retrain"
    assert entry["mlflow"] == {"version": "5", "run_id": "r1"}
    assert [s["step"] for s in entry["steps"]] == ["recorded", "state", "find_version"]
    assert entry["admin"][0]["command"] == "approve"

    out = tmp_path / "audit.json"
    text = trail.export_json(out)
    assert out.read_text() == text == trail.export_json()  # same trail, same bytes
    assert json.loads(text)["actions"][0]["key"] == "credit-risk:moderate:7"
    assert trail.entries(model="other-model") == []


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="driftwatch")
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_lists_approves_and_cancels(tmp_path: Path, clock, capsys):
    state = tmp_path / "state"
    box = Outbox(state, clock=clock)
    first, _ = box.record(decision(action="retrain"), state=ActionState.AWAITING_APPROVAL)
    second, _ = box.record(decision(window_id=8))
    box.close()

    assert run_cli(["actions", "list", "--state-dir", str(state)]) == 0
    listing = capsys.readouterr().out
    assert "awaiting_approval" in listing and "credit-risk:moderate:8" in listing

    assert run_cli(["approve", str(first), "--by", "ana", "--state-dir", str(state)]) == 0
    assert "approved by ana" in capsys.readouterr().out
    assert (
        run_cli(["actions", "cancel", str(second), "--by", "ops", "--state-dir", str(state)]) == 0
    )
    capsys.readouterr()

    assert run_cli(["actions", "show", str(first), "--state-dir", str(state)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["approver"] == "ana" and shown["state"] == "pending"
    assert (
        run_cli(["actions", "list", "--json", "--state", "cancelled", "--state-dir", str(state)])
        == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == [second]


def test_cli_list_says_what_a_succeeded_action_decided(tmp_path: Path, clock, capsys):
    """A discarded shadow was listed 'succeeded' and nothing else, while the replay's
    summary said 'discarded'."""
    state = tmp_path / "state"
    box = Outbox(state, clock=clock)
    shadow, _ = box.record(decision(window_id=8), state=ActionState.RUNNING)
    box.update(shadow, state=ActionState.SUCCEEDED, outcome={"verdict": "discarded"})
    box.close()
    assert run_cli(["actions", "list", "--state-dir", str(state)]) == 0
    [row] = [ln for ln in capsys.readouterr().out.splitlines() if "moderate:8" in ln]
    assert row.split()[1] == "succeeded" and row.endswith("(discarded)"), row


def test_cli_explains_an_empty_state_folder(tmp_path: Path):
    with pytest.raises(ActionError, match="no actions recorded"):
        run_cli(["actions", "list", "--state-dir", str(tmp_path / "nothing")])


SCHEMA = FeatureSchema(
    numeric=("income",), categorical=("purpose",), levels=(("car", "home"),), other=()
)


def fill(buf: LabelledBuffer, start: int, n: int) -> None:
    x = np.arange(start, start + n, dtype=np.float64)
    buf.add(
        numeric=x[:, None],
        categorical=(np.arange(n) % 2).astype(np.int32)[:, None],
        label=(x % 3 == 0).astype(np.float64),
        score=np.full(n, 0.2),
    )


def test_labelled_buffer_keeps_only_the_newest_rows():
    buf = LabelledBuffer(SCHEMA, capacity=100)
    for start in range(0, 1000, 70):
        fill(buf, start, 70)
    frame = buf.frame()
    assert len(buf) == 100 and buf.seq == 1050
    assert frame["income"].tolist() == list(np.arange(950, 1050, dtype=np.float64))
    assert frame["seq"].iloc[-1] == 1050
    assert set(frame["purpose"]) == {"car", "home"}


def test_a_resized_labelled_buffer_keeps_the_newest_rows_and_their_numbers():
    buf = LabelledBuffer(SCHEMA, capacity=100)
    fill(buf, 0, 250)  # rows 1..250 added, 151..250 held (income 150..249)
    small = buf.resized(40)
    assert (len(small), small.seq, small.capacity) == (40, 250, 40)
    assert small.frame()["seq"].tolist() == list(range(211, 251))
    assert small.frame()["income"].tolist() == list(np.arange(210, 250, dtype=np.float64))
    # larger: it holds what it had, and says so (not 250 rows it never saw)
    big = small.resized(1000)
    assert (len(big), big.seq) == (40, 250)
    assert big.frame()["seq"].tolist() == list(range(211, 251))
    restored = LabelledBuffer.from_dict(SCHEMA, json.loads(json.dumps(big.to_dict())))
    assert (len(restored), restored.seq) == (40, 250)
    fill(big, 250, 5)
    assert (len(big), big.frame()["seq"].tolist()[-6:]) == (45, list(range(250, 256)))


def test_labelled_buffer_skips_rows_without_an_outcome():
    buf = LabelledBuffer(SCHEMA, capacity=10)
    buf.add(
        numeric=np.ones((3, 1)),
        categorical=np.zeros((3, 1), np.int32),
        label=np.array([1.0, np.nan, 0.0]),
        score=np.full(3, 0.5),
    )
    assert len(buf) == 2


def test_labelled_buffer_checkpoint_round_trip_keeps_the_sequence():
    buf = LabelledBuffer(SCHEMA, capacity=50)
    fill(buf, 0, 120)
    restored = LabelledBuffer.from_dict(SCHEMA, json.loads(json.dumps(buf.to_dict())))
    assert restored.seq == buf.seq == 120
    assert restored.frame().equals(buf.frame())
    assert restored.frame(after_seq=110)["income"].tolist() == list(np.arange(110.0, 120.0))


def test_cli_finds_actions_in_the_daemons_per_model_folders(tmp_path: Path, clock, capsys):
    state = tmp_path / "state"
    for model in ("credit-risk", "fraud"):
        box = Outbox(state / "models" / model, clock=clock)
        box.record(decision(model=model, action="retrain"), state=ActionState.AWAITING_APPROVAL)
        box.close()
    with pytest.raises(ActionError, match="several models: use MODEL:1"):
        run_cli(["approve", "1", "--by", "ana", "--state-dir", str(state)])
    assert run_cli(["approve", "fraud:1", "--by", "ana", "--state-dir", str(state)]) == 0
    capsys.readouterr()
    assert run_cli(["actions", "list", "--state-dir", str(state)]) == 0
    listing = capsys.readouterr().out
    # nothing else to say about it: no dangling "; " after the approver
    assert "fraud:moderate:7  (approved by ana)\n" in listing
    assert "credit-risk:moderate:7" in listing
