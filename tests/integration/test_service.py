"""``driftwatch run`` as ops meet it: endpoints, admin API, loopback, hot reload, clean stops."""

from __future__ import annotations

import http.client
import shutil
import sqlite3
from pathlib import Path

import orjson
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
TOKEN = "s3cret-token"


def metrics(daemon) -> dict[tuple[str, tuple], float]:
    code, body = daemon.get("/metrics")
    assert code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(body.decode()) for s in fam.samples}


def metric(daemon, name: str, **labels: str) -> float | None:
    return metrics(daemon).get((name, tuple(sorted(labels.items()))))


def admin_calls(state: Path) -> list[dict]:
    db = sqlite3.connect(state / "models" / MODEL / "outbox.sqlite3")
    try:
        rows = db.execute("SELECT command, actor, detail FROM admin ORDER BY id").fetchall()
    finally:
        db.close()
    return [{"command": c, "actor": a, **orjson.loads(d)} for c, a, d in rows]


@pytest.fixture(scope="module")
def finished(tmp_path_factory, demo_recording, driftwatch_daemon_module,
             service_config_factory):
    """A daemon that consumed the demo recording (as fast as it goes) and keeps serving."""
    tmp = tmp_path_factory.mktemp("service")
    cfg = service_config_factory(tmp / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"])
    d = driftwatch_daemon_module(cfg, tmp / "state", env={"DRIFTWATCH_ADMIN_TOKEN": TOKEN})
    d.wait_ready()
    d.wait_for("the recording consumed",
               lambda: metric(d, "driftwatch_source_done", model=MODEL) == 1.0)
    d.wait_for("the report", (tmp / "state" / "out" / MODEL / "report.html").exists)
    # checkpoints tick every second: a recording read faster than that (the scanner reads
    # the demo's 24k events in well under one) is consumed before the first
    d.wait_for("a checkpoint",
               lambda: (metric(d, "driftwatch_checkpoints_total", outcome="ok") or 0) >= 1)
    return d


def test_health_readiness_and_status(finished):
    assert finished.get("/healthz")[0] == 200
    code, body = finished.get("/readyz")
    ready = orjson.loads(body)
    assert code == 200 and ready["ready"] and ready["checkpoint_fresh"]
    assert ready["sources"] == {MODEL: True}
    status = finished.status()
    (model,) = status["models"]
    assert model["model"] == MODEL and model["source"]["done"] is True
    assert model["events"] == 24_000 and model["windows"] > 5
    assert model["tier"] in ("none", "mild", "moderate", "severe")
    assert model["last_decisions"] and model["report"] == f"/reports/{MODEL}/"
    assert status["checkpoint"]["seq"] >= 1


def test_metrics_count_what_was_read(finished):
    m = metrics(finished)
    assert m[("driftwatch_events_total", (("model", MODEL), ("stream", "predictions")))] == 24_000
    assert m[("driftwatch_windows_closed_total", (("model", MODEL),))] == \
        finished.status()["models"][0]["windows"]
    assert m[("driftwatch_checkpoints_total", (("outcome", "ok"),))] >= 1
    assert ("driftwatch_build_info", (("version", "0.1.0"),)) in m


def test_reports_are_served_and_nothing_else(finished):
    code, body = finished.get(f"/reports/{MODEL}/")
    assert code == 200 and b"<html" in body.lower()
    assert finished.get("/reports/")[0] == 200
    host, port = finished.url.removeprefix("http://").split(":")
    for path in ("/reports/../checkpoint.sqlite3", "/reports/%2e%2e/checkpoint.sqlite3",
                 f"/reports/{MODEL}/../../driftwatch.lock"):
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("GET", path)
        assert conn.getresponse().status == 404, path
        conn.close()


def test_listeners_bind_to_loopback_only(finished):
    listening = [c for c in psutil.Process(finished.proc.pid).net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN]
    assert listening, "the daemon should be listening"
    assert {c.laddr.ip for c in listening} == {"127.0.0.1"}


def test_admin_calls_need_the_bearer_token_and_are_audited(finished):
    state = finished.state_dir
    post = lambda path, **kw: finished.get(path, method="POST", body=b"{}", **kw)  # noqa: E731
    code, body = post("/admin/approve/1")
    assert code == 401 and b"bearer token required" in body
    assert post("/admin/rollback/credit-risk",
                headers={"Authorization": "Bearer wrong"})[0] == 401
    pending = sqlite3.connect(state / "models" / MODEL / "outbox.sqlite3").execute(
        "SELECT id FROM actions WHERE state = 'pending' ORDER BY id").fetchone()
    assert pending is not None, "the demo decides actions"
    auth = {"Authorization": f"Bearer {TOKEN}", "X-Driftwatch-Actor": "alice"}
    code, body = finished.get(f"/admin/cancel/{pending[0]}", method="POST",
                              body=b'{"reason": "test", "note": "drill"}', headers=auth)
    assert code == 200, body
    assert orjson.loads(body)["action"]["state"] == "cancelled"
    assert post("/admin/cancel/999999", headers=auth)[0] == 404
    calls = admin_calls(state)
    refused = [c for c in calls if c.get("outcome") == "unauthorized"]
    assert {c["verb"] for c in refused} == {"approve", "rollback"}
    done = [c for c in calls if c.get("verb") == "cancel" and c.get("outcome") == "ok"]
    assert done and done[0]["actor"] == "alice" and done[0]["note"] == "drill"
    m = metrics(finished)
    assert m[("driftwatch_admin_requests_total",
              (("action", "approve"), ("outcome", "unauthorized")))] == 1


def test_without_a_configured_token_the_admin_api_is_disabled(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"])
    d = driftwatch_daemon(cfg, tmp_path / "state", "--exit-when-done")
    d.wait_ready()
    code, body = d.get("/admin/retrain/credit-risk", method="POST", body=b"",
                       headers={"Authorization": "Bearer anything"})
    assert code == 403 and b"DRIFTWATCH_ADMIN_TOKEN" in body
    assert d.wait_exit(120) == 0
    assert any(c.get("outcome") == "disabled" for c in admin_calls(tmp_path / "state"))


def test_policy_hot_reload_keeps_a_bad_edit_out_and_takes_a_good_one(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    policy = tmp_path / "policy.yaml"
    shutil.copy(demo_recording["policy"], policy)
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"], policy,
                                 reference=demo_recording["reference"],
                                 speed=140 * 86400 / 60)  # a minute for the recording
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state)
    d.wait_ready()
    good = policy.read_text()
    policy.write_text(good.replace("kind: DriftPolicy", "kind: DriftPolicy\nbogus: [", 1))
    d.wait_for("the bad edit refused",
               lambda: metric(d, "driftwatch_policy_reload_errors_total", model=MODEL) == 1.0)
    assert d.proc.poll() is None
    assert "policy edit refused" in d.log() and "policy.yaml:" in d.log()
    policy.write_text(good + "\n# reviewed: thresholds unchanged\n")  # a new digest
    d.wait_for("the good edit taken",
               lambda: metric(d, "driftwatch_policy_reloads_total", model=MODEL) == 1.0)
    timeline = state / "out" / MODEL / "timeline.jsonl"

    def digests() -> list[str]:
        return [orjson.loads(line)["decision"]["policy_digest"]
                for line in timeline.read_bytes().splitlines() if line.strip()]

    first = digests()[0] if digests() else None
    d.wait_for("a window judged by the new policy",
               lambda: len(set(digests())) == 2 and digests()[0] == first)
    assert d.terminate() == 0


def test_sigint_stops_cleanly_too(tmp_path, demo_recording, driftwatch_daemon,
                                  service_config_factory):
    import signal

    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"], speed=86400)
    d = driftwatch_daemon(cfg, tmp_path / "state")
    d.wait_ready()
    d.proc.send_signal(signal.SIGINT)
    assert d.wait_exit(60) == 0
    assert "SIGINT: finishing the batch, checkpointing" in d.log()


def test_admin_retrain_promote_and_rollback_change_the_champion(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    """The governance path with actions running: MLflow store and GPU pool in the state."""
    cfg = service_config_factory(
        tmp_path / "svc.yaml", demo_recording["connector"], demo_recording["policy"],
        reference=demo_recording["reference"], execute=True, gpus=2)
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state, env={"DRIFTWATCH_ADMIN_TOKEN": TOKEN})
    d.wait_ready()
    auth = {"Authorization": f"Bearer {TOKEN}", "X-Driftwatch-Actor": "model-risk"}

    def post(path: str) -> tuple[int, dict]:
        code, body = d.get(path, method="POST", body=b'{"reason": "quarterly"}',
                           headers=auth, timeout=60)
        return code, orjson.loads(body)

    code, queued = post(f"/admin/retrain/{MODEL}")
    assert code == 202, queued

    def retrained() -> bool:
        db = sqlite3.connect(state / "models" / MODEL / "outbox.sqlite3")
        try:
            row = db.execute("SELECT state, error FROM actions WHERE id = ?",
                             (queued["action_id"],)).fetchone()
        finally:
            db.close()
        assert row[0] != "failed", row[1]
        return row[0] == "succeeded"

    d.wait_for("the manual retraining", retrained, timeout=180)
    code, promoted = post(f"/admin/promote/{MODEL}")
    assert code == 200, promoted
    code, rolled = post(f"/admin/rollback/{MODEL}")
    assert code == 200 and rolled["champion"] == promoted["replaced"], rolled
    calls = [c for c in admin_calls(state) if c.get("outcome") == "ok"]
    assert [c["verb"] for c in calls] == ["retrain", "promote", "rollback"]
    assert {c["actor"] for c in calls} == {"model-risk"}
    d.wait_for("the promoted reference adopted", lambda: (metric(
        d, "driftwatch_reference_refreshes_total", model=MODEL) or 0) >= 1)
    assert d.terminate() == 0
