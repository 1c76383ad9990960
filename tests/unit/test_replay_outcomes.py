"""An executing replay says what each action came to, not only what was decided.

A real outbox holds online updates in every state (done with a version, failed, discarded
on the holdout, awaiting approval, still open); its audit trail, as ``replay --execute``
exports it, feeds the summary line, ``summary.json`` and the report's actions section.
No MLflow: the states are written as the executor writes them.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from driftwatch.actions.audit import AuditTrail
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.clock import ManualClock
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.replay.cli import print_summary
from driftwatch.replay.run import monitor_for, summarise
from driftwatch.report import build_report, load_run
from driftwatch.windows.profile import ReferenceProfile
from tests.unit.test_report import Elements, make_run
from tests.unit.test_report import profile as profile  # the fixture, shared

FAILED = "MLflow unreachable: connection refused\nTraceback (most recent call last): ..."
LOSES = "recalibration loses on the holdout: log loss 0.412 > 0.398"


def _decision(window_id: int, **kw: Any) -> Decision:
    return Decision("credit", window_id, 100.0 * window_id, Tier.MILD, Tier.MILD,
                    action="online_update", policy="p.yaml", policy_digest="ab12", **kw)


@pytest.fixture
def entries(tmp_path: Path) -> Iterator[list[dict[str, Any]]]:
    """Audit-trail entries of online updates on windows 1-5: done (v3), failed, discarded,
    awaiting approval, still open."""
    box = Outbox(tmp_path / "state", clock=ManualClock(1000.0))
    ids = [box.record(_decision(w), {"window_start": 0.0, "window_end": 1.0})[0]
           for w in (1, 2, 3)]
    ids.append(box.record(_decision(4, requires_approval=True),
                          state=ActionState.AWAITING_APPROVAL)[0])
    ids.append(box.record(_decision(5))[0])
    box.log_step(ids[0], "publish", "done", {"version": "3", "run_id": "r1"})
    box.update(ids[0], state=ActionState.SUCCEEDED, outcome={"version": "3"})
    box.update(ids[1], state=ActionState.FAILED, error=FAILED)
    box.update(ids[2], state=ActionState.SUCCEEDED,
               outcome={"verdict": "discarded", "reason": LOSES, "start": "recalibrate"})
    yield AuditTrail(box).entries()
    box.close()


def _records() -> list[dict[str, Any]]:
    return [{"window_id": w, "start_time": 100.0 * w - 99, "end_time": 100.0 * w,
             "end": f"t{w}", "tier": "mild", "cohort": None,
             "decision": {"action": "online_update", "reasons": []}} for w in range(1, 6)]


def _summary(profile: ReferenceProfile, executed: list[dict[str, Any]] | None) -> dict:
    return summarise(_records(), monitor_for(None, profile, model="credit"), executed=executed)


def _printed(summary: dict) -> str:
    buf = io.StringIO()
    print_summary(summary, out=buf)
    return buf.getvalue()


def test_summary_json_says_what_each_action_came_to(entries, profile: ReferenceProfile):
    s = orjson.loads(orjson.dumps(_summary(profile, entries)))  # as summary.json holds it
    assert s["actions_executed"] is True
    got = [{k: a[k] for k in ("id", "kind", "window", "state", "reason", "version")}
           for a in s["actions"]]
    assert got == [
        {"id": 1, "kind": "online_update", "window": 1, "state": "done", "reason": None,
         "version": "3"},
        {"id": 2, "kind": "online_update", "window": 2, "state": "failed",
         "reason": "MLflow unreachable: connection refused", "version": None},
        {"id": 3, "kind": "online_update", "window": 3, "state": "discarded", "reason": LOSES,
         "version": None},
        {"id": 4, "kind": "online_update", "window": 4, "state": "awaiting approval",
         "reason": None, "version": None},
        {"id": 5, "kind": "online_update", "window": 5, "state": "still open",
         "reason": "waiting to run", "version": None},
    ]


def test_summary_line_counts_outcomes_and_lists_each_action(entries, profile):
    text = _printed(_summary(profile, entries))
    assert ("  actions: online_update x5 (1 done, 1 failed, 1 discarded, 1 awaiting approval, "
            "1 still open)\n") in text  # no retraining decided: no GPU-hours bound
    assert "GPU-hours" not in text
    assert "action 1 online_update (window 1): done; registered v3" in text
    assert "action 2 online_update (window 2): failed: MLflow unreachable: connection " \
           "refused\n" in text
    assert f"action 3 online_update (window 3): discarded: {LOSES}\n" in text
    assert "action 4 online_update (window 4): awaiting approval" in text


def test_a_dry_run_says_nothing_ran(profile: ReferenceProfile):
    s = _summary(profile, None)
    assert s["actions_executed"] is False
    assert {a["state"] for a in s["actions"]} == {"dry run"}
    text = _printed(s)
    assert "  actions: online_update x5 (dry run, not executed)\n" in text
    assert "action 1" not in text


def test_a_dry_runs_actions_have_the_keys_an_executed_ones_have(profile: ReferenceProfile):
    """The README promises ``id``, ``kind``, ``window``, ``state``, ``reason`` and
    ``version`` per action in summary.json; a dry run had only ``action`` and ``window_id``."""
    s = orjson.loads(orjson.dumps(_summary(profile, None)))
    got = [{k: a.get(k, "missing") for k in ("id", "kind", "window", "state", "reason",
                                              "version")} for a in s["actions"]]
    assert got == [{"id": None, "kind": "online_update", "window": w, "state": "dry run",
                    "reason": None, "version": None} for w in range(1, 6)]


def test_a_follow_up_is_listed_after_its_parent(tmp_path: Path, profile: ReferenceProfile):
    """A retraining's shadow is recorded after later decisions' actions; the summary (and
    the replay's action lines) list it right after the retraining that asked for it."""
    box = Outbox(tmp_path / "state", clock=ManualClock(1000.0))
    ids = [box.record(_decision(w), {"window_start": 0.0, "window_end": 1.0})[0]
           for w in (1, 2, 3)]
    box.record(_decision(1), key="credit:mild:1:shadow", action="shadow", parent_id=ids[0])
    box.record(_decision(1), key="credit:mild:1:shadow2", action="shadow", parent_id=ids[0])
    entries = AuditTrail(box).entries()
    box.close()
    records = _records()[:3]
    s = summarise(records, monitor_for(None, profile, model="credit"), executed=entries)
    assert [(a["id"], a["kind"]) for a in s["actions"]] == [
        (1, "online_update"), (4, "shadow"), (5, "shadow"), (2, "online_update"),
        (3, "online_update")]
    text = _printed(s)
    assert text.index("action 4 shadow") < text.index("action 2 online_update")


def test_the_gpu_hours_bound_is_said_where_a_retraining_was_decided(profile):
    s = {**_summary(profile, None), "actions_by_type": {"alert": 2, "retrain": 1},
         "retrain_gpu_hours_max": 2.5}
    assert ("  actions: alert x2, retrain x1 (dry run, not executed); retraining at most 2.5 "
            "GPU-hours\n") in _printed(s)


def test_report_lists_each_executed_action_with_its_state(tmp_path, entries, profile):
    run = make_run(tmp_path, profile)
    (run / "actions.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    html = build_report(load_run(run, reference=profile))
    doc = Elements(html)
    assert "actions" in [a["id"] for a in doc.find("section")]
    rows = doc.find("tr", class_="action-outcome")
    assert [(r["data-action"], r["data-state"]) for r in rows] == [
        ("1", "done"), ("2", "failed"), ("3", "discarded"), ("4", "awaiting approval"),
        ("5", "still open")]
    part = html[html.index('<section id="actions"'):]
    part = " ".join(Elements(part[: part.index("</section>")]).text)
    assert "1 done, 1 failed, 1 discarded, 1 awaiting approval, 1 still open" in part
    assert "executed · failed" in part and "MLflow unreachable: connection refused" in part
    assert "Traceback" not in part
    assert "executed · discarded" in part and LOSES in part and "registered v3" in part
    # never "executed" for an action that has not run
    assert "recorded, not run yet (awaiting approval)" in part
    assert "recorded, not run yet" in part.replace("(awaiting approval)", "")
    assert "executed · still open" not in part


def test_report_of_a_dry_run_says_not_executed(tmp_path, profile):
    run = make_run(tmp_path, profile, executed=False)
    doc = Elements(build_report(load_run(run, reference=profile)))
    note = [a for a in doc.find("p") if a.get("data-status") == "dry-run"]
    assert note and not doc.find("tr", class_="action-outcome")
    assert "asked for an action: not executed (dry run)" in " ".join(doc.text)


def test_an_unchanged_update_says_which_version_it_reused() -> None:
    """An online update on the same data and parent as a registered version registers
    nothing; its line said only ``done`` (found replaying a scikit-learn champion)."""
    from driftwatch.actions.outcomes import action_outcome, outcome_line

    entry = {"id": 2, "action": "online_update", "window_id": 28, "state": "succeeded",
             "mlflow": {"parent_version": "1"},
             "outcome": {"verdict": "unchanged", "same_as": "2", "held_already": True,
                         "reason": "unchanged: same data and parent as version 2"}}
    assert outcome_line(action_outcome(entry)) == (
        "action 2 online_update (window 28): done: unchanged: same data and parent as "
        "version 2")
