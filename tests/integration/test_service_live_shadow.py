"""``driftwatch run`` with actions executing: a challenger in shadow scores the live traffic
the daemon reads, and the daemon's own report says which actions ran."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
ROOT = Path(__file__).resolve().parents[2]


def _actions(state: Path) -> list[dict]:
    db = sqlite3.connect(state / "models" / MODEL / "outbox.sqlite3")
    try:
        rows = db.execute("SELECT id, action, state, artifacts FROM actions ORDER BY id")
        return [{"id": i, "action": a, "state": s, "artifacts": orjson.loads(art or b"{}")}
                for i, a, s, art in rows.fetchall()]
    finally:
        db.close()


def test_the_daemon_shadows_on_live_traffic_and_reports_what_ran(
        tmp_path, driftwatch_daemon, service_config_factory):
    # the bundled recording (its moderate episode runs a shadow), a day of event time per
    # second: the consume loop never waits for the actions' thread, so the shadow must start
    # while the recording still runs. The mild tier only alerts here: online updates queued
    # on the same MLflow lane before the shadow made that a race on a loaded machine
    connector = tmp_path / "demo-file.yaml"
    connector.write_text((ROOT / "connectors/demo-file.yaml").read_text().replace(
        "data/demo/", f"{ROOT / 'data/demo'}/"))
    demo = (ROOT / "policies/credit-risk-demo.yaml").read_text()
    start = demo.index("  mild:\n    type: online_update")
    end = demo.index("  moderate:\n", start)
    policy = tmp_path / "policy.yaml"
    policy.write_text(demo[:start] + "  mild:\n    type: alert\n    channels: [risk-oncall]\n"
                      + demo[end:])
    cfg = service_config_factory(
        tmp_path / "svc.yaml", connector, policy, reference=ROOT / "data/demo/reference.parquet",
        execute=True, gpus=10, speed=86400.0)
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state)
    d.wait_ready()
    report = state / "out" / MODEL / "report.html"
    d.wait_for("the report", report.exists, timeout=300)

    shadows = [a for a in _actions(state) if a["action"] == "shadow"
               and a["artifacts"].get("shadow")]
    assert shadows, [(a["id"], a["action"], a["state"]) for a in _actions(state)]
    live = [(s["artifacts"]["shadow"]["champion"]["live"],
             s["artifacts"]["shadow"]["challenger"]["live"]) for s in shadows]
    assert any(c > 0 for c, _ in live), live
    assert all(c == h for c, h in live)  # both versions scored the same rows

    html = report.read_text()
    assert (state / "out" / MODEL / "actions.jsonl").exists()
    assert "executed ·" in html
    section = html[html.index('<section id="shadow"'):]
    section = section[: section.index("</section>")]
    assert "not executed (dry run)" not in section
    assert 'class="champion-challenger"' in section
    assert d.terminate() == 0
