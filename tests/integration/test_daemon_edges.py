"""``driftwatch run`` at the edges: a busy port, stopping with actions still open, and
``--exit-when-done`` finishing what the run started before it exits."""

from __future__ import annotations

import socket
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.integration


def test_a_busy_port_stops_the_daemon_with_one_line(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                     demo_recording["policy"],
                                     reference=demo_recording["reference"], port=port)
        d = driftwatch_daemon(cfg, tmp_path / "state")
        assert d.wait_exit(120) == 1
    log = d.log()
    assert f"error: cannot listen on 127.0.0.1:{port}: " in log
    assert "Traceback" not in log and "OSError" not in log


def test_exit_when_done_says_which_actions_are_still_open(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"])  # execute: false
    d = driftwatch_daemon(cfg, tmp_path / "state", "--exit-when-done")
    assert d.wait_exit(180) == 0
    log = d.log()
    assert "actions recorded and not run (actions.execute is false): ids 1" in log


def _decisions(state: Path) -> list[int]:
    """The windows whose decision is not none (a tier above none, or an action)."""
    lines = (state / "out" / "credit-risk" / "timeline.jsonl").read_bytes().splitlines()
    return [r["window_id"] for r in map(orjson.loads, lines)
            if r["tier"] != "none" or r["decision"].get("action")]


def test_exit_when_done_writes_every_report_and_runs_every_action_before_it_exits(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    """The stream ends with decision reports queued and actions decided but not run:
    the daemon finishes them (online updates on the embedded MLflow, alerts), then exits 0;
    a shadow stays open, as it scores live traffic that will not come."""
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"], execute=True)
    text = cfg.read_text()  # the lanes' period past the run: only the drain runs the actions
    cfg.write_text(text.replace("scheduler: {actions: 1s,", "scheduler: {actions: 1h,"))
    assert "actions: 1h" in cfg.read_text()
    state = tmp_path / "state"
    start = time.monotonic()
    d = driftwatch_daemon(cfg, state, "--exit-when-done")
    assert d.wait_exit(240) == 0, d.log()[-4000:]
    log = d.log()
    assert "every source is consumed; finishing: " in log
    assert "finished what the run started in " in log
    for unfinished in ("left unfinished", "abandoned", "stopped while finishing"):
        assert unfinished not in log, log[-4000:]

    decided = _decisions(state)
    manifest = orjson.loads((state / "out" / "credit-risk" / "reports.json").read_bytes())
    listed = {e["window_id"]: e for e in manifest["decisions"]}
    assert decided and sorted(listed) == sorted(decided)
    for e in listed.values():
        assert (state / "out" / "credit-risk" / e["file"]).is_file()

    db = sqlite3.connect(f"file:{state / 'models' / 'credit-risk' / 'outbox.sqlite3'}?mode=ro",
                         uri=True)
    try:
        rows = db.execute("SELECT id, window_id, action, state FROM actions").fetchall()
    finally:
        db.close()
    assert rows and not [r for r in rows if r[3] == "pending"], rows
    assert not [r for r in rows if r[3] == "running" and r[2] != "shadow"], rows
    assert {"online_update", "alert"} <= {a for _, _, a, s in rows if s == "succeeded"}, rows
    for _, window, _, st in rows:  # each decision report says what its action came to
        assert listed[window]["action_state"] == st, (window, listed[window], st)
    assert time.monotonic() - start < 120


SHUTDOWN_BOUND_S = 10.0  # issue 15: SIGTERM stops the daemon within 10 s, whatever is down


def test_exit_when_done_with_mlflow_unreachable_stops_at_its_limit_or_on_sigterm(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    """MLflow never answers: the actions that need it cannot finish. ``--drain-timeout``
    ends the wait with exit 3 and says what is left; started again on the same state (the
    recording is consumed: it drains at once), SIGTERM stops it within the usual bound."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"], execute=True)
    cfg.write_text(cfg.read_text().replace(
        "actions: {execute: true}",
        f"actions: {{execute: true, tracking_uri: 'http://127.0.0.1:{port}', "
        "mlflow_timeout: 2s, mlflow_attempts: 1, retry_backoff: 1m}"))
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state, "--exit-when-done", "--drain-timeout", "3s")
    assert d.wait_exit(120) == 3, d.log()[-4000:]
    said = [line for line in d.log().splitlines() if "--drain-timeout 3s passed with " in line]
    assert len(said) == 1 and "left unfinished" in said[0], d.log()[-4000:]
    # why they wait: MLflow's refusal, or (on a loaded machine, where the first MLflow call
    # outlasts the 3 s) the thread still inside that call
    assert ("the actions that need MLflow try again in " in said[0]
            or "the mlflow thread is in " in said[0]), said[0]

    again = driftwatch_daemon(cfg, state, "--exit-when-done")
    again.wait_for("the drain under way", lambda: "finishing: " in again.log())
    again.assert_stops_within(SHUTDOWN_BOUND_S)
    assert "stopped while finishing: " in again.log()
