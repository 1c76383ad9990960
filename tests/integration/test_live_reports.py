"""A live daemon fed by a real Kafka broker reports each decision when it makes it.

The first 60 days of the demo recording (session fixture) are produced to two topics;
``driftwatch run`` consumes them. Once the daemon has read the stream, the test opens ``/reports/``
through the daemon's HTTP port in headless Chromium, follows the index to that decision's
report and reads it the way a reviewer does: the model, the tier, and every reason with its
signal, feature, value and threshold. The expected values are read independently, from the
timeline the daemon wrote for that window. The rolling report (APScheduler, every second
here) and retention (``keep: 1``: the newest decision report only) are checked on the same
run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from driftwatch.testing.chromium import open_page
from driftwatch.testing.recording import gz_lines as lines
from driftwatch.testing.recording import kafka_connector, produce

from .test_kafka_crash import counted

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
KEEP = 1
CUT = 1_704_067_200 + 60 * 86_400  # the recording starts on 2024-01-01

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


def _last_window(state: Path) -> int:
    tail = (state / "out" / MODEL / "timeline.jsonl").read_bytes().splitlines()
    return int(orjson.loads(tail[-1])["window_id"]) if tail else -1


def test_a_live_kafka_daemon_writes_decision_reports_a_browser_opens(
        tmp_path, kafka_endpoint, kafka_group, demo_recording, driftwatch_daemon,
        service_config_factory, browser) -> None:
    from driftwatch.testing.kafka import create_topic

    suffix = tmp_path.name[-12:].replace("_", "-").lower()
    names = {"predictions": create_topic(kafka_endpoint.bootstrap, f"dw-live-rep-p-{suffix}"),
             "outcomes": create_topic(kafka_endpoint.bootstrap, f"dw-live-rep-o-{suffix}")}
    # the first 60 days: the mild episode (days 40-50) and the windows after it
    preds = [x for x in lines(demo_recording["predictions"]) if orjson.loads(x)["ts"] < CUT]
    outs = [x for x in lines(demo_recording["outcomes"])
            if orjson.loads(x)["outcome_ts"] < CUT]
    produce(kafka_endpoint.bootstrap, names["predictions"], preds)
    produce(kafka_endpoint.bootstrap, names["outcomes"], outs)
    conn = kafka_connector(tmp_path / "kafka.yaml", kafka_endpoint.bootstrap, names,
                           kafka_group("live-reports"))

    def config(extra: str) -> Path:
        return service_config_factory(
            tmp_path / "svc.yaml", conn, demo_recording["policy"],
            reference=demo_recording["reference"], batch_size=500, extra=extra)

    state = tmp_path / "state"
    d = driftwatch_daemon(config(f"report: {{rolling: 1s, keep: {KEEP}}}\n"), state)
    d.wait_ready()
    d.wait_for("every message read", lambda: counted(d)[:2] == (len(preds), len(outs)),
               timeout=120)
    # the writer is done once a rolling report (queued after every decision) covers the
    # last closed window; no window closes after that, since no event arrives
    d.wait_for("the rolling report of every window", lambda: (
        _manifest(state).get("rolling") or {}).get("last_window") == _last_window(state))
    entry = next(e for e in _manifest(state)["decisions"] if e["tier"] != "none")
    wid = entry["window_id"]
    decision = _window(state, wid)["decision"]
    assert decision["tier"] == entry["tier"] and decision["reasons"]

    # the index, through the daemon's HTTP port, links to the report; the report is one
    # offline file: nothing is fetched but itself
    page, problems, fetched = open_page(browser, f"{d.url}/reports/")
    href = f"{MODEL}/decisions/window-{wid}.html"
    links = page.eval_on_selector_all("table.reports a", "els => els.map(a => a.getAttribute("
                                      "'href'))")
    assert href in links
    page.click(f'a[href="{href}"]')
    page.wait_for_load_state("load")
    assert page.url == f"{d.url}/reports/{href}"
    shown = page.evaluate(_READ)
    page.close()
    assert problems == [] and fetched == [f"{d.url}/reports/", f"{d.url}/reports/{href}"]
    assert f"Decision report · {MODEL} · window {wid}" in shown["h1"]
    assert shown["tier"] == decision["tier"]
    assert shown["blocks"] == [str(wid)]
    want = [{"signal": r["signal"], "feature": r.get("feature"), "source": r["source"],
             "nums": [_exact(r.get("value")), _exact(r.get("threshold"))]}
            for r in decision["reasons"]]
    assert shown["reasons"] == want
    code, body = d.get(f"/reports/{MODEL}/")
    assert code == 200 and f"Drift report · {MODEL}".encode() in body
    # retention: more decisions were made (each wrote its report) than `keep` leaves
    made = sorted({r["window_id"] for r in d.status()["models"][0]["last_decisions"]})
    assert len(made) > KEEP
    assert d.terminate() == 0
    assert "Traceback" not in d.log()
    kept = _manifest(state)["decisions"]
    files = sorted(p.name for p in (state / "out" / MODEL / "decisions").glob("window-*.html"))
    assert sorted(e["window_id"] for e in kept) == made[-KEEP:]
    assert files == sorted(f"window-{e['window_id']}.html" for e in kept)
    latest = (state / "out" / MODEL / "decisions" / "latest.html").read_text()
    assert f'url=window-{made[-1]}.html"' in latest
