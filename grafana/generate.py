"""Generate the driftwatch Grafana dashboards (``grafana/dashboards/*.json``) from code.

Pinned to **Grafana 11.2** (dashboard ``schemaVersion`` 39, classic JSON model): the JSON
written here is what that version exports, so it loads through file provisioning without
migration. Run ``python grafana/generate.py`` after editing; ``tests/unit/test_grafana.py``
fails when the committed JSON and this generator disagree, and checks every metric name
against ``driftwatch.metrics.CATALOGUE``. It also writes the alert rules
(``prometheus/rules.yml``, from ``alerts.py``) with the thresholds of a service
configuration: ``python grafana/generate.py --config your-driftwatch.yaml
--runbook-base https://your.docs/runbook.md``.

Each panel plots one family of statistics on its own axis (divergences such as PSI,
test statistics, counts, seconds): a chi-square of 8,000 never flattens a PSI of 0.2.

PromQL uses Grafana's ``$__rate_interval`` and the template variables ``$model``,
``$feature`` and ``$detector`` (all multi-value regexes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["DASHBOARDS", "GRAFANA_VERSION", "SCHEMA_VERSION", "build_all", "build_rules", "main"]

GRAFANA_VERSION = "11.2.0"
SCHEMA_VERSION = 39
HERE = Path(__file__).resolve().parent
OUT = HERE / "dashboards"
RULES = HERE / "prometheus" / "rules.yml"
DEFAULT_CONFIG = HERE.parent / "driftwatch.yaml"

DS = {"type": "prometheus", "uid": "${datasource}"}
M = 'model=~"$model"'
F = 'feature=~"$feature"'
D = 'detector=~"$detector"'
RI = "$__rate_interval"
# statistic families: each panel plots one of them, on its own axis
DIVERGENCES = "psi|kl_cur_ref|kl_ref_cur|js|hellinger"
DISTANCES = "ks|wasserstein|cramers_v"
DIV = f'detector=~"{DIVERGENCES}"'
DIST = f'detector=~"{DISTANCES}"'

REPORT_LINK = {
    "title": "Drift report for ${__field.labels.model} (rolling)",
    "url": "${service_url}/reports/${__field.labels.model}/",
    "targetBlank": True,
}
DECISION_LINK = {
    "title": "Latest decision report for ${__field.labels.model}",
    "url": "${service_url}/reports/${__field.labels.model}/decisions/latest.html",
    "targetBlank": True,
}
TIER_MAPPINGS = [
    {"type": "value", "options": {
        "0": {"text": "none", "color": "green", "index": 0},
        "1": {"text": "mild", "color": "yellow", "index": 1},
        "2": {"text": "moderate", "color": "orange", "index": 2},
        "3": {"text": "severe", "color": "red", "index": 3},
    }},
]
STEPS_TIER = [{"color": "green", "value": None}, {"color": "yellow", "value": 1},
              {"color": "orange", "value": 2}, {"color": "red", "value": 3}]
STEPS_BAD = [{"color": "green", "value": None}, {"color": "red", "value": 1}]
STEPS_OK = [{"color": "red", "value": None}, {"color": "green", "value": 1}]


# -- panel builders ---------------------------------------------------------------------------
def _targets(exprs: Sequence[tuple[str, str]], instant: bool = False) -> list[dict[str, Any]]:
    return [
        {"refId": chr(ord("A") + i), "datasource": DS, "expr": e, "legendFormat": legend,
         "range": not instant, "instant": instant, "editorMode": "code"}
        for i, (e, legend) in enumerate(exprs)
    ]


def panel(kind: str, title: str, exprs: Sequence[tuple[str, str]], *, desc: str, unit: str = "",
          w: int = 12, h: int = 8, instant: bool = False, links: bool = False,
          mappings: list[dict[str, Any]] | None = None, steps: list[dict[str, Any]] | None = None,
          options: dict[str, Any] | None = None, custom: dict[str, Any] | None = None,
          minv: float | None = None, maxv: float | None = None) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "unit": unit or "short",
        "mappings": mappings or [],
        "thresholds": {"mode": "absolute",
                       "steps": steps or [{"color": "green", "value": None}]},
        "color": {"mode": "thresholds" if steps else "palette-classic"},
        "links": [REPORT_LINK, DECISION_LINK] if links else [],
    }
    if minv is not None:
        defaults["min"] = minv
    if maxv is not None:
        defaults["max"] = maxv
    if custom:
        defaults["custom"] = custom
    return {
        "type": kind,
        "title": title,
        "description": desc,
        "datasource": DS,
        "gridPos": {"h": h, "w": w, "x": 0, "y": 0},
        "targets": _targets(exprs, instant),
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": options or _default_options(kind),
    }


def _default_options(kind: str) -> dict[str, Any]:
    if kind == "timeseries":
        return {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                "tooltip": {"mode": "multi", "sort": "desc"}}
    if kind in ("stat", "gauge", "bargauge"):
        return {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "orientation": "auto", "textMode": "auto", "colorMode": "background",
                "graphMode": "none", "justifyMode": "auto"}
    if kind == "state-timeline":
        return {"showValue": "auto", "mergeValues": True, "rowHeight": 0.9,
                "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True}}
    return {}


def ts(title: str, exprs: Sequence[tuple[str, str]], **kw: Any) -> dict[str, Any]:
    return panel("timeseries", title, exprs, **kw)


def stat(title: str, exprs: Sequence[tuple[str, str]], **kw: Any) -> dict[str, Any]:
    kw.setdefault("w", 6)
    kw.setdefault("h", 5)
    kw.setdefault("instant", True)
    return panel("stat", title, exprs, **kw)


def row(title: str) -> dict[str, Any]:
    return {"type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0}}


def _layout(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pack panels left to right in rows of 24 columns; ids in order."""
    x = y = line_h = 0
    for i, p in enumerate(panels, start=1):
        g = p["gridPos"]
        if p["type"] == "row" or x + g["w"] > 24:
            y += line_h
            x = line_h = 0
        g["x"], g["y"] = x, y
        p["id"] = i
        x += g["w"]
        line_h = max(line_h, g["h"])
        if p["type"] == "row":
            y += 1
            x = line_h = 0
    return panels


# -- dashboard frame ----------------------------------------------------------------------------
def _var_query(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        "query": {"query": query, "refId": f"{name}-query"}, "definition": query,
        "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "options": [], "sort": 1, "hide": 0, "regex": "", "skipUrlSync": False,
    }


def templating() -> dict[str, Any]:
    return {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource",
         "query": "prometheus", "current": {}, "options": [], "hide": 0, "refresh": 1,
         "regex": "", "includeAll": False, "multi": False, "skipUrlSync": False},
        _var_query("model", "Model", "label_values(driftwatch_tier, model)"),
        _var_query("feature", "Feature",
                   'label_values(driftwatch_feature_drift_score{model=~"$model"}, feature)'),
        _var_query("detector", "Detector",
                   'label_values(driftwatch_signal_severity{model=~"$model"}, detector)'),
        {"name": "service_url", "label": "driftwatch URL", "type": "textbox",
         "query": "http://127.0.0.1:9108", "options": [], "hide": 0, "skipUrlSync": False,
         "current": {"selected": False, "text": "http://127.0.0.1:9108",
                     "value": "http://127.0.0.1:9108"}},
    ]}


def annotations() -> dict[str, Any]:
    return {"list": [
        {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
         "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
         "name": "Annotations & Alerts", "type": "dashboard"},
        {"name": "Tier changes", "datasource": DS, "enable": True, "hide": False,
         "iconColor": "orange", "step": "30s",
         "expr": f"changes(driftwatch_tier{{{M}}}[1m]) > 0",
         "titleFormat": "{{model}}: tier changed",
         "textFormat": "Report: ${service_url}/reports/{{model}}/ · decision reports, "
                       "newest first: ${service_url}/reports/",
         "tagKeys": "model", "useValueForTime": False},
        {"name": "Actions decided", "datasource": DS, "enable": True, "hide": False,
         "iconColor": "red", "step": "30s",
         "expr": (f'sum by (model, tier, action) (increase(driftwatch_decisions_total'
                  f'{{{M}, action!="none"}}[1m])) > 0'),
         "titleFormat": "{{model}}: {{action}} ({{tier}})",
         "textFormat": "Decision report: ${service_url}/reports/{{model}}/decisions/"
                       "latest.html (the newest; each decision's, newest first: "
                       "${service_url}/reports/) · audit: /status",
         "tagKeys": "model,tier,action", "useValueForTime": False},
    ]}


def dashboard(uid: str, title: str, desc: str, panels: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": GRAFANA_VERSION},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
        ],
        "uid": uid,
        "title": title,
        "description": desc,
        "tags": ["driftwatch"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "weekStart": "",
        "id": None,
        "links": [
            {"title": "driftwatch dashboards", "type": "dashboards", "tags": ["driftwatch"],
             "asDropdown": True, "includeVars": True, "keepTime": True},
            {"title": "Reports", "type": "link", "url": "${service_url}/reports/",
             "targetBlank": True, "icon": "doc"},
            {"title": "Status (JSON)", "type": "link", "url": "${service_url}/status",
             "targetBlank": True, "icon": "info"},
        ],
        "annotations": annotations(),
        "templating": templating(),
        "panels": _layout(panels),
    }


# -- the four dashboards -----------------------------------------------------------------------
def overview() -> dict[str, Any]:
    return dashboard("driftwatch-overview", "driftwatch / Overview",
                     "Models and their current tier, what is firing, what was done.", [
        row("Models"),
        panel("state-timeline", "Tier over time", [(f"driftwatch_tier{{{M}}}", "{{model}}")],
              desc="Tier after persistence and hysteresis (0 none … 3 severe). Click for the "
                   "model's drift report.", w=24, h=6, links=True,
              mappings=TIER_MAPPINGS, steps=STEPS_TIER, minv=0, maxv=3),
        stat("Current tier", [(f"driftwatch_tier{{{M}}}", "{{model}}")],
             desc="Current tier per model.", links=True, mappings=TIER_MAPPINGS,
             steps=STEPS_TIER),
        stat("Data-quality fault", [(f"driftwatch_data_quality_fault{{{M}}}", "{{model}}")],
             desc="1: the feed looks broken; model changes are blocked.", steps=STEPS_BAD),
        stat("Input stale", [(f"driftwatch_input_stale{{{M}}}", "{{model}}")],
             desc="1: no events for longer than the staleness limit.", steps=STEPS_BAD),
        stat("Source ready", [(f"driftwatch_source_ready{{{M}}}", "{{model}}")],
             desc="1: the source is connected.", steps=STEPS_OK),
        row("Decisions and actions"),
        ts("Decisions by tier", [(f"sum by (model, tier) (rate(driftwatch_decisions_total"
                                  f"{{{M}}}[{RI}]))", "{{model}} {{tier}}")],
           desc="Windows judged per second, by the tier decided.", unit="ops"),
        ts("Actions by outcome", [(f"sum by (model, action, outcome) (increase("
                                   f"driftwatch_actions_total{{{M}}}[{RI}]))",
                                   "{{model}} {{action}} {{outcome}}")],
           desc="Online updates, shadows, retrains and alerts: submitted, succeeded, failed. "
                "Zero until a policy tier acts.", unit="short"),
        ts("Events per second", [(f"sum by (model, stream) (rate(driftwatch_events_total"
                                  f"{{{M}}}[{RI}]))", "{{model}} {{stream}}")],
           desc="Predictions and outcomes processed.", unit="ops"),
        ts("Windows closed", [(f"sum by (model) (rate(driftwatch_windows_closed_total"
                               f"{{{M}}}[{RI}]))", "{{model}}")],
           desc="Windows closed and assessed per second.", unit="ops"),
    ])


def feature_drift() -> dict[str, Any]:
    return dashboard("driftwatch-feature-drift", "driftwatch / Feature drift",
                     "Per-feature drift against the reference, top movers, data quality.", [
        row("Drift"),
        ts("Divergences per feature", [(f"driftwatch_feature_drift_score{{{M}, {F}, {D}, {DIV}}}",
                                        "{{model}} {{feature}} {{detector}}")],
           desc="PSI/CSI on reference deciles, both KL directions, JS and Hellinger per "
                "feature in the last closed window (PSI 0.1 moderate, 0.25 significant).",
           w=24, links=True),
        ts("Distances per feature", [(f"driftwatch_feature_drift_score{{{M}, {F}, {D}, {DIST}}}",
                                      "{{model}} {{feature}} {{detector}}")],
           desc="KS statistic, Wasserstein distance in reference standard deviations and "
                "Cramér's V per feature in the last closed window.", links=True),
        ts("Chi-square per feature", [(f'driftwatch_feature_drift_score{{{M}, {F}, {D}, '
                                       f'detector="chi2"}}', "{{model}} {{feature}}")],
           desc="Chi-square statistic on the coarse bins; it grows with the window size, so "
                "it has its own axis (its decision uses the BH-adjusted p-value).",
           links=True),
        ts("PSI and KS beside their calibrated levels", [
            (f'driftwatch_feature_drift_score{{{M}, {F}, detector=~"psi|ks"}}',
             "{{model}} {{feature}} {{detector}}"),
            (f'driftwatch_drift_level{{{M}, {F}, detector=~"psi|ks"}}',
             "{{model}} {{feature}} {{detector}} level ({{false_alarm_rate}})")],
           desc="Each statistic with the level it must pass: its null quantile at the "
                "window's actual size for the policy's false-alarm rate (a calibrated "
                "threshold), so a value over its own line is an alarm.", w=24, links=True),
        ts("Segments: PSI per feature", [
            (f'driftwatch_segment_drift_score{{{M}, {F}, detector="psi"}}',
             "{{model}} {{segment}} {{feature}}"),
            (f'driftwatch_segment_drift_level{{{M}, {F}, detector="psi"}}',
             "{{model}} {{segment}} {{feature}} level ({{false_alarm_rate}})")],
           desc="PSI of each feature within each segment (the reference's most frequent "
                "values of its segment column, then other) against the same segment of the "
                "reference, with the segment's own calibrated level: a drift confined to "
                "one channel shows here before the whole window moves.", w=24, links=True),
        panel("bargauge", "Top movers (PSI)",
              [(f'topk(10, driftwatch_feature_drift_score{{{M}, detector="psi"}})',
                "{{model}} {{feature}}")],
              desc="The ten features with the largest PSI in the last window.", instant=True,
              links=True, steps=[{"color": "green", "value": None},
                                 {"color": "yellow", "value": 0.1},
                                 {"color": "red", "value": 0.25}],
              options={"displayMode": "gradient", "orientation": "horizontal",
                       "reduceOptions": {"calcs": ["lastNotNull"], "fields": "",
                                         "values": False},
                       "showUnfilled": True}),
        ts("Severity by detector", [(f"max by (model, detector) (driftwatch_signal_severity"
                                     f"{{{M}, {D}}})", "{{model}} {{detector}}")],
           desc="Tier each detector reached in the last window (0 none … 3 severe).",
           mappings=TIER_MAPPINGS, minv=0, maxv=3),
        ts("Largest divergence over features", [
            (f'driftwatch_model_drift_score{{{M}, detector=~"({DIVERGENCES})_aggregate"}}',
             "{{model}} {{detector}}")],
           desc="The largest PSI, JS and Hellinger over all features in the last window."),
        ts("Largest distance over features", [
            (f'driftwatch_model_drift_score{{{M}, detector=~"({DISTANCES})_aggregate"}}',
             "{{model}} {{detector}}")],
           desc="The largest KS, Wasserstein (sd units) and Cramér's V over all features."),
        row("Data quality"),
        ts("Data-quality ratios", [(f"driftwatch_data_quality_ratio{{{M}}}",
                                    "{{model}} {{feature}} {{detector}}")],
           desc="Missing share, out-of-range share, new categories, bad records: a broken "
                "feed is not drift.", unit="percentunit"),
        ts("Bad records by reason", [(f"sum by (model, reason) (rate("
                                      f"driftwatch_bad_events_total{{{M}}}[{RI}]))",
                                      "{{model}} {{reason}}")],
           desc="Records that failed to decode; each is in the dead-letter file or topic.",
           unit="ops"),
        stat("Features cut by the cap", [(f"sum by (model) (driftwatch_features_cut_total"
                                          f"{{{M}}})", "{{model}}")],
             desc="Features without per-feature series (metrics.feature_cap).", w=12),
        stat("Late events", [(f"sum by (model) (increase(driftwatch_late_events_total"
                              f"{{{M}}}[1h]))", "{{model}}")],
             desc="Events that arrived after their window closed, last hour.", w=12),
    ])


def model_health() -> dict[str, Any]:
    return dashboard("driftwatch-model-health", "driftwatch / Model health",
                     "Confidence, business metrics on matured labels, champion vs challenger.", [
        row("Scores and business metrics"),
        ts("Confidence", [(f'driftwatch_confidence_value{{{M}, detector!="score_psi"}}',
                           "{{model}} {{detector}}")],
           desc="Variance ratio (current / reference), mean shift (reference sd) and mean "
                "entropy (bits) of the model's scores."),
        ts("Score PSI (system stability)", [
            (f'driftwatch_confidence_value{{{M}, detector="score_psi"}}', "{{model}}")],
           desc="PSI of the model's score against its reference (the SSI of a system "
                "stability report)."),
        ts("Approval and bad rate", [
            (f'driftwatch_business_value{{{M}, detector=~"approval_rate|bad_rate"}}',
             "{{model}} {{detector}}")],
           desc="Share of applications approved, and bad rate on matured, approved "
                "applications.", unit="percentunit", links=True),
        ts("Discrimination", [(f'driftwatch_business_value{{{M}, detector=~"auc|gini|ks_score"}}',
                               "{{model}} {{detector}}")],
           desc="AUC, Gini and the score's KS on matured, approved applications.", links=True),
        ts("Calibration (observed / expected)", [
            (f'driftwatch_business_value{{{M}, detector="calibration_ratio"}}', "{{model}}")],
           desc="Observed bad count over the count the scores predicted: 1 is calibrated."),
        ts("Expected loss", [(f'driftwatch_business_value{{{M}, detector="expected_loss"}}',
                              "{{model}}")],
           desc="Expected loss (PD × exposure) per window, in the exposure's unit."),
        ts("Events per window", [(f"driftwatch_window_events{{{M}}}", "{{model}}")],
           desc="Events in the last closed window."),
        ts("Expected before labels", [
            (f'driftwatch_business_value{{{M}, detector=~"expected_bad_rate|expected_gini"}}',
             "{{model}} {{detector}}")],
           desc="Bad rate and Gini the window's scores imply if the champion stays "
                "calibrated: they move with a covariate shift, before any outcome."),
        row("Prediction cohorts"),
        ts("Last judged cohort", [(f"driftwatch_cohort_value{{{M}}}", "{{model}} {{detector}}")],
           desc="A window's own outcomes once complete enough: cohort bad rate and Gini, and "
                "realised minus expected (the gap)."),
        stat("Cohort completeness", [(f"driftwatch_cohort_completeness_ratio{{{M}}}",
                                      "{{model}}")],
             desc="Outcomes joined / approved predictions of the last judged cohort.",
             unit="percentunit"),
        ts("Cohort verdicts", [(f"sum by (model, tier) (increase(driftwatch_cohort_verdicts_total"
                                f"{{{M}}}[{RI}]))", "{{model}} {{tier}}")],
           desc="Cohorts judged on their own outcomes, by the tier decided."),
        row("Labels"),
        ts("Label joins", [(f"sum by (model, outcome) (rate(driftwatch_label_joins_total"
                            f"{{{M}}}[{RI}]))", "{{model}} {{outcome}}")],
           desc="Predictions joined to outcomes, expired after the TTL, and unmatched "
                "outcomes.", unit="ops"),
        ts("Label backlog", [(f"driftwatch_label_join_backlog_events{{{M}}}", "{{model}}")],
           desc="Predictions waiting for their outcome."),
        ts("Label delay (p50, p90)", [
            (f"histogram_quantile(0.5, sum by (model, le) (rate("
             f"driftwatch_label_join_delay_seconds_bucket{{{M}}}[{RI}])))", "{{model}} p50"),
            (f"histogram_quantile(0.9, sum by (model, le) (rate("
             f"driftwatch_label_join_delay_seconds_bucket{{{M}}}[{RI}])))", "{{model}} p90"),
            (f"sum by (model) (rate(driftwatch_label_join_delay_seconds_sum{{{M}}}[{RI}])) / "
             f"sum by (model) (rate(driftwatch_label_join_delay_seconds_count{{{M}}}[{RI}]))",
             "{{model}} mean"),
        ], desc="Event-time delay from prediction to outcome.", unit="s"),
        row("Champion vs challenger"),
        ts("Shadow comparison", [(f"driftwatch_shadow_metric_value{{{M}}}",
                                  "{{model}} {{role}} {{metric}}")],
           desc="Both models on the same joined labels (empty until a shadow runs)."),
        stat("Shadow running", [(f"driftwatch_shadow_active{{{M}}}", "{{model}}")],
             desc="1 while a challenger runs in shadow."),
        stat("Shadow labelled events", [(f"driftwatch_shadow_labelled_events{{{M}}}",
                                         "{{model}}")],
             desc="Labelled events both models were scored on."),
        stat("Shadow batches left unscored", [(
            f"sum by (model) (increase(driftwatch_shadow_batches_dropped_total{{{M}}}[1h]))",
            "{{model}}")],
             desc="Live batches the challengers missed in the last hour because the MLflow "
                  "lane was busy (MLflow slow or down); their comparison counts fewer events."),
    ])


def operations() -> dict[str, Any]:
    return dashboard("driftwatch-operations", "driftwatch / Operations",
                     "Throughput, lag, checkpoints, GPU pool, scheduled jobs.", [
        row("Throughput"),
        ts("Events per second", [(f"sum by (model, stream) (rate(driftwatch_events_total"
                                  f"{{{M}}}[{RI}]))", "{{model}} {{stream}}")],
           desc="Events processed per second.", unit="ops"),
        ts("Bytes read", [(f"sum by (model) (rate(driftwatch_source_bytes_total{{{M}}}"
                           f"[{RI}]))", "{{model}}")], desc="Source bytes per second.",
           unit="Bps"),
        ts("Batch processing time (p95)", [
            (f"histogram_quantile(0.95, sum by (model, le) (rate("
             f"driftwatch_batch_duration_seconds_bucket{{{M}}}[{RI}])))", "{{model}}"),
            (f"sum by (model) (rate(driftwatch_batch_duration_seconds_sum{{{M}}}[{RI}])) / "
             f"sum by (model) (rate(driftwatch_batch_duration_seconds_count{{{M}}}[{RI}]))",
             "{{model}} mean")],
           desc="Time to process one micro-batch.", unit="s"),
        ts("Consumer lag", [(f"driftwatch_consumer_lag_messages{{{M}}}", "{{model}}"),
                            (f"driftwatch_source_held_events{{{M}}}", "{{model}} held")],
           desc="Messages behind the end of the topic, and fetched records held back to "
                "merge the partitions in event time (0 for files)."),
        ts("Last event age", [(f"driftwatch_last_event_age_seconds{{{M}}}", "{{model}}")],
           desc="Seconds since the source delivered an event.", unit="s"),
        ts("Event-time watermark", [(f"driftwatch_event_time_watermark_seconds{{{M}}} * 1000",
                                     "{{model}}")],
           desc="Largest event time seen (as a date).", unit="dateTimeAsIso"),
        stat("Recording consumed", [(f"driftwatch_source_done{{{M}}}", "{{model}}")],
             desc="1 when a finite recording has been read to its end."),
        stat("Staleness alarms (24h)", [(f"sum by (model) (increase("
                                         f"driftwatch_staleness_alarms_total{{{M}}}[24h]))",
                                         "{{model}}")],
             desc="Times the input went stale."),
        stat("Window memory", [(f"driftwatch_window_memory_bytes{{{M}}}", "{{model}}")],
             desc="Memory of the open panes: independent of window length.", unit="bytes"),
        ts("Source commits", [(f"sum by (model, outcome) (rate("
                               f"driftwatch_source_commits_total{{{M}}}[{RI}]))",
                               "{{model}} {{outcome}}")],
           desc="Offset commits after durable checkpoints.", unit="ops"),
        row("Checkpoints"),
        stat("Checkpoint age", [("driftwatch_checkpoint_age_seconds", "age")],
             desc="Seconds since the last durable checkpoint.", unit="s",
             steps=[{"color": "green", "value": None}, {"color": "red", "value": 300}]),
        stat("Checkpoint size", [("driftwatch_checkpoint_size_bytes", "size")],
             desc="Compressed size of the last checkpoint.", unit="bytes"),
        stat("Restore time", [("driftwatch_restore_duration_seconds", "restore")],
             desc="Time the last start took to restore its checkpoint.", unit="s"),
        stat("Checkpoints written (1h)", [("sum by (outcome) (increase("
                                           "driftwatch_checkpoints_total[1h]))", "{{outcome}}")],
             desc="Checkpoints per outcome, last hour."),
        stat("State folder writable", [("driftwatch_state_writable", "writable")],
             desc="0: the state folder is full or read-only and consumption is paused "
                  "(/readyz says why); it resumes by itself.",
             steps=[{"color": "red", "value": None}, {"color": "green", "value": 1}]),
        stat("State write failures (1h)", [("sum by (reason) (increase("
                                            "driftwatch_state_write_failures_total[1h]))",
                                            "{{reason}}")],
             desc="Writes to the state folder refused, by reason (full, read_only)."),
        ts("Checkpoint duration (p95)", [
            (f"histogram_quantile(0.95, sum by (le) (rate("
             f"driftwatch_checkpoint_duration_seconds_bucket[{RI}])))", "p95"),
            (f"rate(driftwatch_checkpoint_duration_seconds_sum[{RI}]) / "
             f"rate(driftwatch_checkpoint_duration_seconds_count[{RI}])", "mean")],
           desc="Serialise, write and fsync one checkpoint.", unit="s", w=24),
        row("GPU pool"),
        ts("Pool GPUs", [("driftwatch_pool_capacity_gpus", "capacity"),
                         ("driftwatch_pool_reserved_gpus", "reserved"),
                         ("driftwatch_pool_in_use_gpus", "in use")],
           desc="Cluster GPUs, the share reserved for retraining, and what is leased."),
        ts("Pool jobs", [("driftwatch_pool_queued_jobs", "queued"),
                         ("driftwatch_pool_running_jobs", "running")],
           desc="Retraining jobs waiting and running."),
        ts("Pool job duration (p90)", [
            (f"histogram_quantile(0.9, sum by (outcome, le) (rate("
             f"driftwatch_pool_job_duration_seconds_bucket[{RI}])))", "{{outcome}}")],
           desc="Wall time of finished retraining jobs (empty until one finishes).",
           unit="s"),
        ts("Pool jobs finished per hour", [
            ("sum by (outcome) (increase(driftwatch_pool_job_duration_seconds_count[1h]))",
             "{{outcome}}"),
            (f"sum(rate(driftwatch_pool_job_duration_seconds_sum[{RI}]))", "busy job-seconds/s")],
           desc="Finished retraining jobs by outcome in the last hour, and how many jobs run "
                "on average (job-seconds per second)."),
        row("Service"),
        stat("Dependencies up", [("driftwatch_dependency_up", "{{dependency}}")],
             desc="1 while a dependency (kafka, mlflow) answers, 0 while it is down: "
                  "/readyz says why. Actions that need MLflow wait; alerts go on.",
             steps=[{"color": "red", "value": None}, {"color": "green", "value": 1}]),
        stat("Dependencies down for", [("driftwatch_dependency_down_seconds", "{{dependency}}")],
             desc="How long each dependency has been down without a break (0 while it "
                  "answers). A schema registry down holds its Kafka partitions: nothing "
                  "is lost, the windows wait.", unit="s",
             steps=[{"color": "green", "value": None}, {"color": "red", "value": 1}]),
        stat("Champion profile pending", [("driftwatch_reference_adoption_pending_seconds",
                                           "{{model}}")],
             desc="How long a promoted or rolled-back champion's reference profile has "
                  "waited to reach the monitor (MLflow failed to load it; retried on the "
                  "actions' backoff). Meanwhile drift is judged against the previous "
                  "profile: /status says which champion (profile_adoption).", unit="s",
             steps=[{"color": "green", "value": None}, {"color": "red", "value": 1}]),
        ts("Scheduled job time (p95)", [
            (f"histogram_quantile(0.95, sum by (job, le) (rate("
             f"driftwatch_scheduler_job_duration_seconds_bucket[{RI}])))", "{{job}}")],
           desc="Checkpoint requests, staleness checks, action polling, policy reloads.",
           unit="s"),
        ts("Scheduled job runs", [
            (f"sum by (job) (rate(driftwatch_scheduler_job_duration_seconds_count[{RI}]))",
             "{{job}}")], desc="Runs per second of each scheduled job.", unit="ops"),
        ts("Scheduled job errors", [(f"sum by (job) (increase("
                                     f"driftwatch_scheduler_job_errors_total[{RI}]))", "{{job}}")],
           desc="Scheduled runs that raised (see the log)."),
        ts("Stage errors (recorded, skipped)", [
            (f"sum by (model, stage) (increase(driftwatch_window_errors_total{{{M}}}[{RI}]))",
             "{{model}} {{stage}}")],
           desc="Windows or polls a stage raised on; each is in the timeline (error), the log "
                "and, for polls, the dead letters. The daemon goes on."),
        ts("Policy and reference reloads", [
            (f"sum by (model) (increase(driftwatch_policy_reloads_total{{{M}}}[{RI}]))",
             "{{model}} policy reloaded"),
            (f"sum by (model) (increase(driftwatch_policy_reload_errors_total{{{M}}}[{RI}]))",
             "{{model}} bad policy edit"),
            (f"sum by (model) (increase(driftwatch_reference_refreshes_total{{{M}}}[{RI}]))",
             "{{model}} reference refreshed")],
           desc="Hot reloads; a bad edit keeps the running policy."),
        ts("Admin API calls", [(f"sum by (action, outcome) (increase("
                                f"driftwatch_admin_requests_total[{RI}]))",
                                "{{action}} {{outcome}}")],
           desc="Approve, cancel, retrain, promote, rollback; 401s included (all audited)."),
        stat("Version", [("driftwatch_build_info", "{{version}}")],
             desc="Running driftwatch version.", options={
                 "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                 "textMode": "name", "colorMode": "none", "graphMode": "none",
                 "justifyMode": "auto", "orientation": "auto"}),
    ])


DASHBOARDS = {
    "overview.json": overview,
    "feature-drift.json": feature_drift,
    "model-health.json": model_health,
    "operations.json": operations,
}


def build_all() -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {name: json.dumps(make(), indent=2, sort_keys=True) + "\n"
            for name, make in DASHBOARDS.items()}


def _alerts() -> Any:
    spec = importlib.util.spec_from_file_location("grafana_alerts", HERE / "alerts.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules.setdefault("grafana_alerts", mod)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules["grafana_alerts"]


def build_rules(config: str | Path | None = None,
                runbook_base: str | None = None) -> tuple[str, str]:
    """The texts of ``rules.yml`` and ``rules_test.yml`` for the configuration ``config``."""
    import yaml

    from driftwatch.service.config import load_service_config

    alerts = _alerts()
    path = Path(config) if config is not None else DEFAULT_CONFIG
    thresholds = alerts.AlertThresholds.from_service_config(load_service_config(path))
    base = runbook_base or alerts.RUNBOOK_BASE
    data = alerts.rule_groups(thresholds, base)
    tests = alerts.rule_tests(thresholds, base)
    head = ("# Prometheus alert rules for driftwatch, generated by grafana/generate.py from\n"
            f"# {path.name} (checkpoint.max_age, staleness.after, http): do not edit by hand.\n"
            "# Check with: promtool check rules grafana/prometheus/rules.yml; unit tests for\n"
            "# every rule: promtool test rules grafana/prometheus/rules_test.yml\n")
    test_head = ("# promtool test rules cases for rules.yml, generated by grafana/generate.py\n"
                 f"# from {path.name}: do not edit by hand.\n")

    def dump(d: Any) -> str:
        return yaml.safe_dump(d, sort_keys=False, width=100, allow_unicode=True)

    return head + dump(data), test_head + dump(tests)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the Grafana dashboards and alert rules.")
    ap.add_argument("--config", help="driftwatch.yaml whose thresholds the rules use "
                    "(default: the bundled one)")
    ap.add_argument("--runbook-base", help="URL or path of docs/runbook.md for runbook_url")
    ap.add_argument("--rules-out", default=str(RULES),
                    help="where to write rules.yml (rules_test.yml goes beside it)")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in build_all().items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name}")
    out = Path(args.rules_out)
    rules, tests = build_rules(args.config, args.runbook_base)
    for path, text in ((out, rules), (out.with_name("rules_test.yml"), tests)):
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
