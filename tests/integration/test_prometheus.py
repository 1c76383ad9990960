"""A real Prometheus scrapes a running ``driftwatch run``: every dashboard query and alert
rule is answered.

Prometheus (the Debian package's ``/usr/bin/prometheus``) is started on a free loopback
port with a one-second scrape and rule interval, the repository's ``rules.yml`` loaded.
Grafana's variables are given the values "All" gives them (``.*``), ``$__rate_interval``
30s. Panel queries must return at least one series: every counter and histogram is
created at zero for each model, so even a rate of something that did not happen in the
scenario (admin calls, retrain failures, pool jobs) is a series at 0, not a gap. Alert
rules must load and evaluate without error, and every selector in them must match series
(whether the alert fires depends on the scenario).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import orjson
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from driftwatch.metrics import CATALOGUE
from driftwatch.testing.net import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "grafana"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
VARIABLES = {"$__rate_interval": "30s", "$__interval": "15s", "$model": ".*",
             "$feature": ".*", "$detector": ".*"}


def require(binary: str) -> None:
    if not Path(binary).exists():
        import os

        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{binary} is missing under CI (apt-get install prometheus)")
        pytest.skip(f"{binary} is not installed (apt-get install prometheus)")


def grafana_expr(expr: str) -> str:
    for var, value in VARIABLES.items():
        expr = expr.replace(var, value)
    return expr


def dashboard_queries() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted((GRAFANA / "dashboards").glob("*.json")):
        dash = json.loads(path.read_text())
        for panel in dash["panels"]:
            for t in panel.get("targets", ()):
                out.append((path.name, panel["title"], grafana_expr(t["expr"])))
    return out


def annotation_queries() -> list[str]:
    return [grafana_expr(a["expr"]) for path in sorted((GRAFANA / "dashboards").glob("*.json"))
            for a in json.loads(path.read_text())["annotations"]["list"] if "expr" in a]


class Prometheus:
    def __init__(self, tmp: Path, target: str):
        require(PROMETHEUS)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        shutil.copy(GRAFANA / "prometheus" / "rules.yml", tmp / "rules.yml")
        config = yaml.safe_load((GRAFANA / "prometheus" / "prometheus.yml").read_text())
        config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
        config["scrape_configs"][0]["static_configs"] = [{"targets": [target]}]
        (tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.log_path = tmp / "prometheus.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self._log, stderr=subprocess.STDOUT)

    def api(self, path: str, **params: str) -> dict:
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                code, body = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            code, body = err.code, err.read()
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:  # a server still starting answers 503 in plain text
            raise AssertionError(f"{path}: HTTP {code}, not JSON: {body[:200]!r}") from None
        assert code == 200 and doc["status"] == "success", (path, params, doc)
        return doc["data"]

    def query(self, expr: str) -> list:
        return self.api("query", query=expr)["result"]

    def wait(self, what: str, check, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_path.read_text()[-3000:]
            try:
                got = check()
            except (OSError, AssertionError):
                got = None
            if got:
                return got
            time.sleep(0.2)
        pytest.fail(f"Prometheus: timed out waiting for {what}\n"
                    f"{self.log_path.read_text()[-3000:]}")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        self._log.close()


@pytest.fixture(scope="module")
def scraped(tmp_path_factory, demo_recording, driftwatch_daemon_module, service_config_factory):
    """A finished demo run, scraped by Prometheus long enough for rates over 30 s."""
    tmp = tmp_path_factory.mktemp("prometheus")
    cfg = service_config_factory(tmp / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"],
                                 speed=140 * 86400 / 6)  # six seconds of live stream
    daemon = driftwatch_daemon_module(cfg, tmp / "state")
    url = daemon.wait_ready()
    prom = Prometheus(tmp, url.removeprefix("http://"))
    try:
        prom.wait("the first scrape", lambda: prom.query('up{job="driftwatch"} == 1'))
        prom.wait("the recording consumed",
                  lambda: prom.query("driftwatch_source_done == 1"), timeout=120)
        prom.wait("ten scrapes after that",
                  lambda: prom.query('count_over_time(driftwatch_source_done[30s]) >= 10'))
        prom.wait("the rules evaluated",
                  lambda: all(r.get("lastEvaluation", "").startswith("2")
                              and not r["lastEvaluation"].startswith("0001")
                              for g in prom.api("rules")["groups"] for r in g["rules"]))
        yield prom, daemon
    finally:
        prom.close()


def test_promtool_accepts_the_rules_and_the_example_config(tmp_path):
    require(PROMTOOL)
    rules = subprocess.run([PROMTOOL, "check", "rules", str(GRAFANA / "prometheus/rules.yml")],
                           capture_output=True, text=True)
    assert rules.returncode == 0, rules.stdout + rules.stderr
    config = subprocess.run(
        [PROMTOOL, "check", "config", "--syntax-only",
         str(GRAFANA / "prometheus/prometheus.yml")], capture_output=True, text=True)
    assert config.returncode == 0, config.stdout + config.stderr


def test_promtool_unit_tests_pass_for_every_alert_rule():
    require(PROMTOOL)
    res = subprocess.run([PROMTOOL, "test", "rules", "rules_test.yml"],
                         cwd=GRAFANA / "prometheus", capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    tested = {t["name"] for t in yaml.safe_load(
        (GRAFANA / "prometheus/rules_test.yml").read_text())["tests"]}
    rules = {r["alert"] for g in yaml.safe_load(
        (GRAFANA / "prometheus/rules.yml").read_text())["groups"] for r in g["rules"]}
    assert tested == rules


def test_promtool_tests_follow_a_configured_threshold(tmp_path):
    """Rules generated for checkpoint.max_age 7m: the cases sit at 420 s and pass, and the
    bundled rules (120 s) fail them, so the threshold really comes from the config."""
    require(PROMTOOL)
    import sys

    text = (ROOT / "driftwatch.yaml").read_text(encoding="utf-8")
    cfg = tmp_path / "site.yaml"
    cfg.write_text(text.replace("max_age: 2m", "max_age: 7m"), encoding="utf-8")
    out = tmp_path / "rules.yml"
    gen = subprocess.run([sys.executable, str(GRAFANA / "generate.py"), "--config", str(cfg),
                          "--rules-out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert gen.returncode == 0, gen.stderr
    assert "> 420" in out.read_text()
    ok = subprocess.run([PROMTOOL, "test", "rules", "rules_test.yml"], cwd=tmp_path,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    shutil.copy(GRAFANA / "prometheus" / "rules.yml", out)
    stale = subprocess.run([PROMTOOL, "test", "rules", "rules_test.yml"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert stale.returncode != 0 and "DriftwatchCheckpointTooOld" in stale.stdout + stale.stderr


def test_every_dashboard_query_returns_data(scraped):
    prom, _ = scraped
    # segment series need a reference with a segment column: the demo's has none (their
    # values are checked in tests/unit/test_metrics.py and tests/unit/test_segments.py)
    empty = [f"{name} / {title}: {expr}" for name, title, expr in dashboard_queries()
             if "driftwatch_segment_" not in expr and not prom.query(expr)]
    assert empty == [], "queries with no data:\n" + "\n".join(empty)


def test_annotation_queries_are_valid_and_decisions_show(scraped):
    prom, _ = scraped
    for expr in annotation_queries():
        prom.api("query_range", query=expr, start=str(time.time() - 120),
                 end=str(time.time()), step="1")
    decided = prom.query('sum(driftwatch_decisions_total{action!="none"}) > 0')
    assert decided, "the demo scenario decides actions"


def test_every_alert_rule_loads_evaluates_and_reads_existing_series(scraped):
    prom, _ = scraped
    rules = [r for g in prom.api("rules")["groups"] for r in g["rules"]]
    assert len(rules) == sum(len(g["rules"]) for g in yaml.safe_load(
        (GRAFANA / "prometheus/rules.yml").read_text())["groups"])
    broken = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert broken == []
    for r in rules:
        for sel in re.findall(r"(?:driftwatch_[a-z0-9_]+|up)(?:\{[^}]*\})?", r["query"]):
            assert prom.query(sel), f"{r['name']}: {sel} matches no series"
    firing = {a["labels"]["alertname"] for a in prom.api("alerts")["alerts"]}
    # the demo's episodes pass (it ends quiet); a healthy daemon raises no operations alert
    assert firing.isdisjoint({"DriftwatchDown", "DriftwatchCheckpointTooOld",
                              "DriftwatchInputStale", "DriftwatchSourceNotReady"})


def test_exposed_metrics_are_exactly_the_catalogue(scraped):
    _, daemon = scraped
    code, body = daemon.get("/metrics")
    assert code == 200
    families = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {"process_resident_memory_bytes", "process_cpu_seconds", "python_gc_objects_collected",
            "python_info"} <= families, "prometheus-client's process collectors"
    exposed = {n for n in families if n.startswith("driftwatch_")}
    expected = {s.name.removesuffix("_total") if s.kind == "counter" else s.name
                for s in CATALOGUE}
    assert exposed == expected
