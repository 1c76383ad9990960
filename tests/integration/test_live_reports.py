"""A live daemon fed by a real Kafka broker reports each decision when it makes it.

The demo recording (session fixture) is produced to two topics; ``driftwatch run`` consumes
them. As soon as the daemon has decided a tier above none, the test opens ``/reports/``
through the daemon's HTTP port in headless Chromium, follows the index to that decision's
report and reads it the way a reviewer does: the model, the tier, and every reason with its
signal, feature, value and threshold. The expected values are read independently, from the
timeline the daemon wrote for that window. The rolling report (APScheduler, every 2 s here)
and retention (``keep: 3``) are checked on the same run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from driftwatch.testing.chromium import open_page

from .test_kafka_crash import kafka_connector, lines, produce

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
KEEP = 3

# What the browser shows of a decision report: header, badge and the reasons table.
_READ = """() => ({
  h1: document.querySelector('header.top h1').textContent,
  tier: document.querySelector('header.top h1 .tier').textContent.trim(),
  blocks: [...document.querySelectorAll('#reasons .decision')].map(e => e.dataset.window),
  reasons: [...document.querySelectorAll('#reasons tr.reason')].map(r => ({
    signal: r.dataset.signal, feature: r.dataset.feature || null,
    source: r.dataset.source,
    nums: [...r.querySelectorAll('td.num')].map(td => td.dataset.exact)})),
})"""


def _manifest(state: Path) -> dict[str, Any]:
    try:
        return orjson.loads((state / "out" / MODEL / "reports.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}


def _window(state: Path, window_id: int) -> dict[str, Any]:
    for line in (state / "out" / MODEL / "timeline.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        if rec["window_id"] == window_id:
            return rec
    raise AssertionError(f"window {window_id} is not in the timeline")


def _exact(v: Any) -> str:
    return "—" if v is None else repr(v) if isinstance(v, float) else str(v)


def test_a_live_kafka_daemon_writes_decision_reports_a_browser_opens(
        tmp_path, kafka_endpoint, kafka_group, demo_recording, driftwatch_daemon,
        service_config_factory, browser) -> None:
    from driftwatch.testing.kafka import create_topic

    suffix = tmp_path.name[-12:].replace("_", "-").lower()
    names = {"predictions": create_topic(kafka_endpoint.bootstrap, f"dw-live-rep-p-{suffix}"),
             "outcomes": create_topic(kafka_endpoint.bootstrap, f"dw-live-rep-o-{suffix}")}
    produce(kafka_endpoint.bootstrap, names["predictions"], lines(demo_recording["predictions"]))
    produce(kafka_endpoint.bootstrap, names["outcomes"], lines(demo_recording["outcomes"]))
    conn = kafka_connector(tmp_path / "kafka.yaml", kafka_endpoint.bootstrap, names,
                           kafka_group("live-reports"))
    cfg = service_config_factory(
        tmp_path / "svc.yaml", conn, demo_recording["policy"],
        reference=demo_recording["reference"], batch_size=500,
        extra=f"report: {{rolling: 2s, keep: {KEEP}}}\n")
    state = tmp_path / "state"
    d = driftwatch_daemon(cfg, state)
    d.wait_ready()

    def drifted() -> dict[str, Any] | None:
        return next((e for e in _manifest(state).get("decisions", ())
                     if e["tier"] != "none"), None)

    entry = d.wait_for("a decision report above tier none", drifted, timeout=120)
    wid = entry["window_id"]
    rec = _window(state, wid)
    decision = rec["decision"]
    assert decision["tier"] == entry["tier"] and decision["reasons"]

    # the index, through the daemon's HTTP port, newest first, links to the report
    page, problems, _ = open_page(browser, f"{d.url}/reports/")
    assert problems == []
    href = f"{MODEL}/decisions/window-{wid}.html"
    links = page.eval_on_selector_all("table.reports a", "els => els.map(a => a.getAttribute("
                                      "'href'))")
    assert href in links
    page.click(f'a[href="{href}"]')
    page.wait_for_load_state("load")
    assert page.url == f"{d.url}/reports/{href}"
    shown = page.evaluate(_READ)
    page.close()
    assert f"Decision report · {MODEL} · window {wid}" in shown["h1"]
    assert shown["tier"] == decision["tier"]
    assert shown["blocks"] == [str(wid)]
    want = [{"signal": r["signal"], "feature": r.get("feature"), "source": r["source"],
             "nums": [_exact(r.get("value")), _exact(r.get("threshold"))]}
            for r in decision["reasons"]]
    assert shown["reasons"] == want

    # the page is one offline file: nothing is fetched but itself
    page, problems, fetched = open_page(browser, f"{d.url}/reports/{href}")
    assert problems == [] and fetched == [f"{d.url}/reports/{href}"]
    page.close()

    # the rolling report on its schedule, and retention while decisions keep coming
    d.wait_for("the rolling report", lambda: (_manifest(state).get("rolling") or {})
               .get("last_window", -1) > wid, timeout=60)
    code, body = d.get(f"/reports/{MODEL}/")
    assert code == 200 and f"Drift report · {MODEL}".encode() in body
    d.wait_for(f"more than {KEEP} decisions", lambda: len(
        {r["window_id"] for r in d.status()["models"][0]["last_decisions"]}) > KEEP, timeout=60)
    assert d.terminate() == 0  # the writer finishes what is queued
    assert "Traceback" not in d.log()
    kept = _manifest(state)["decisions"]
    files = sorted(p.name for p in (state / "out" / MODEL / "decisions").glob("window-*.html"))
    assert len(kept) == KEEP and files == sorted(f"window-{e['window_id']}.html" for e in kept)
    newest = max(e["window_id"] for e in kept)
    latest = (state / "out" / MODEL / "decisions" / "latest.html").read_text()
    assert f'url=window-{newest}.html"' in latest
