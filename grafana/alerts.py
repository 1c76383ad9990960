"""The Prometheus alert rules of driftwatch, with thresholds taken from a service configuration.

``grafana/generate.py`` writes them to ``grafana/prometheus/rules.yml`` (and their
``promtool test rules`` cases to ``rules_test.yml``, one quiet and one firing case per
alert, series placed around the configured thresholds) from the bundled
``driftwatch.yaml``; run it with ``--config your.yaml`` to regenerate them for your own
checkpoint and staleness settings. Every rule carries a ``runbook_url`` pointing at its
section of ``docs/runbook.md`` (``--runbook-base`` says where those docs are served).

Thresholds that come from the configuration:

- ``DriftwatchCheckpointTooOld`` fires when the last durable checkpoint is older than
  ``checkpoint.max_age`` (the same age at which ``/readyz`` fails);
- ``DriftwatchInputStale`` waits ``staleness.after`` before it fires, on top of the
  daemon's own staleness limit, so a feed that comes back within one period pages nobody.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RUNBOOK_BASE", "AlertThresholds", "anchor", "rule_groups", "rule_tests"]

#: Where ``docs/runbook.md`` lives, as seen from the alert's reader (override per site).
RUNBOOK_BASE = "docs/runbook.md"
REPORT = "http://127.0.0.1:9108/reports/{{ $labels.model }}/"


@dataclass(frozen=True)
class AlertThresholds:
    """The configuration values the alert rules are built from (seconds)."""

    checkpoint_max_age_s: float = 120.0
    stale_after_s: float = 300.0
    report_base: str = "http://127.0.0.1:9108"

    @classmethod
    def from_service_config(cls, cfg: Any) -> AlertThresholds:
        """From a :class:`~driftwatch.service.config.ServiceConfig`."""
        http = cfg.http
        return cls(float(cfg.checkpoint.max_age_s), float(cfg.stale_after_s),
                   f"http://{http.host}:{http.port}")


def anchor(alert: str) -> str:
    """The Markdown heading anchor of an alert's runbook section (its lower-cased name)."""
    return alert.lower()


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s % 3600 == 0 and s:
        return f"{s // 3600}h"
    if s % 60 == 0 and s:
        return f"{s // 60}m"
    return f"{s}s"


def _rule(name: str, expr: str, for_: str, severity: str, summary: str, description: str,
          base: str, **extra: str) -> dict[str, Any]:
    annotations = {"summary": summary, "description": description,
                   "runbook_url": f"{base}#{anchor(name)}", **extra}
    return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity},
            "annotations": annotations}


def rule_groups(t: AlertThresholds, runbook_base: str = RUNBOOK_BASE) -> dict[str, Any]:
    """The whole rules file as data: ``{"groups": [...]}``."""
    report = f"{t.report_base}/reports/{{{{ $labels.model }}}}/"
    # the newest decision report: when a drift or data-quality alert fires, the decision
    # that put the model there (the daemon writes one per decision as it is made)
    decision = f"{report}decisions/latest.html"
    b = runbook_base
    drift = [
        _rule("DriftwatchDriftSevere", "max by (model) (driftwatch_tier) >= 3", "0m", "page",
              "Severe drift on {{ $labels.model }}",
              "The policy put {{ $labels.model }} at tier severe (retraining is queued or "
              "waits for approval). The decision report gives its reasons with their numbers; "
              "the rolling report the windows around it.",
              b, report=report, decision_report=decision),
        _rule("DriftwatchDataQualityFault", "max by (model) (driftwatch_data_quality_fault) > 0",
              "0m", "page", "Data-quality fault on {{ $labels.model }}: model changes blocked",
              "Missing values, out-of-range values, new categories or bad records crossed "
              "the policy's data-quality limits. This is a broken feed, not drift: "
              "retraining is blocked until it clears.", b, report=report,
              decision_report=decision),
    ]
    ops = [
        _rule("DriftwatchInputStale", "max by (model) (driftwatch_input_stale) > 0",
              _duration(t.stale_after_s), "ticket", "No events for {{ $labels.model }}",
              "The source has delivered nothing for longer than the staleness limit "
              f"(staleness.after = {_duration(t.stale_after_s)}); "
              "driftwatch_last_event_age_seconds says for how long.", b),
        _rule("DriftwatchSourceNotReady",
              "max by (model) (driftwatch_source_ready == 0 and driftwatch_source_done == 0)",
              "5m", "ticket", "Source of {{ $labels.model }} is not connected",
              "The daemon keeps retrying with backoff; nothing is lost meanwhile.", b),
        _rule("DriftwatchDependencyDown",
              "max by (dependency) (driftwatch_dependency_up == 0)", "10m", "ticket",
              "driftwatch cannot reach {{ $labels.dependency }}",
              "A dependency has been down for 10 minutes; /readyz says why. While MLflow "
              "is down, actions that need it wait and retry with backoff; alerts, webhooks "
              "and monitoring go on.", b),
        _rule("DriftwatchCheckpointTooOld",
              f"max(driftwatch_checkpoint_age_seconds) > {round(t.checkpoint_max_age_s)}",
              "0m", "page",
              "driftwatch has not checkpointed for {{ $value | humanizeDuration }}",
              "Offsets are committed only after a checkpoint: a restart now re-reads "
              "everything since the last one. The limit is checkpoint.max_age = "
              f"{_duration(t.checkpoint_max_age_s)}, where /readyz fails too. Check disk "
              'space and driftwatch_checkpoints_total{outcome="error"}.', b),
        _rule("DriftwatchStateNotWritable", "max(driftwatch_state_writable) == 0", "2m", "page",
              "driftwatch's state folder refuses writes; consumption is paused",
              "The state folder is full or read-only: nothing is read or committed until a "
              "write works again, then the daemon resumes by itself from its last "
              "checkpoint. /readyz names the reason; see "
              "driftwatch_state_write_failures_total.", b),
        _rule("DriftwatchRetrainingFailed",
              'sum by (model) (increase(driftwatch_actions_total{action="retrain", '
              'outcome="failed"}[1h])) > 0', "0m", "ticket",
              "Retraining of {{ $labels.model }} failed",
              "The job used up its retries; see /status and the GPU pool's job log.", b),
        _rule("DriftwatchPoolSaturated",
              "max(driftwatch_pool_reserved_gpus) > 0\n"
              "and max(driftwatch_pool_in_use_gpus) >= max(driftwatch_pool_reserved_gpus)\n"
              "and max(driftwatch_pool_queued_jobs) > 0", "30m", "ticket",
              "GPU pool saturated: {{ $value }} reserved GPUs busy and jobs waiting",
              "Every reserved GPU is leased and retraining jobs have queued for 30 minutes. "
              "Raise pool.reserve_fraction or look for jobs that run too long.", b),
        _rule("DriftwatchPolicyReloadFailed",
              "sum by (model) (increase(driftwatch_policy_reload_errors_total[15m])) > 0",
              "0m", "ticket", "Policy edit for {{ $labels.model }} refused",
              "The edited policy is invalid; the running policy is kept. The log names "
              "file:line:col.", b),
        _rule("DriftwatchStageErrors",
              "sum by (model, stage) (increase(driftwatch_window_errors_total[15m])) > 0",
              "0m", "ticket", "The {{ $labels.stage }} stage raised on {{ $labels.model }}",
              "A window or poll could not be processed. It is recorded (timeline error, log "
              "line; a poll's events are dead-lettered as processing_error) and the daemon "
              "goes on.", b),
        _rule("DriftwatchChampionProfilePending",
              "max by (model) (driftwatch_reference_adoption_pending_seconds) > 900", "0m",
              "ticket", "{{ $labels.model }} is judged against its previous champion's profile",
              "A promotion or rollback moved the champion more than 15 minutes ago, and its "
              "reference profile has not reached the monitor yet (MLflow failed to load it; "
              "retried on the actions' backoff). Drift is judged against the previous "
              "champion's reference meanwhile. /status names the champion and the error "
              "(actions.profile_adoption).", b),
        _rule("DriftwatchDown", 'up{job="driftwatch"} == 0', "2m", "page",
              "driftwatch is not answering scrapes",
              "Prometheus cannot scrape the daemon: it is down, or its HTTP port is "
              "unreachable. Consumption resumes from the last checkpoint on restart.", b),
    ]
    return {"groups": [{"name": "driftwatch-drift", "rules": drift},
                       {"name": "driftwatch-operations", "rules": ops}]}


def _render(text: str, labels: dict[str, str], value: str) -> str:
    """What Prometheus makes of the few template expressions these rules use."""
    out = text
    for name, label in labels.items():
        out = out.replace(f"{{{{ $labels.{name} }}}}", label)
    return out.replace("{{ $value | humanizeDuration }}", value).replace("{{ $value }}", value)


def _humanize_duration(seconds: int) -> str:
    """Prometheus' ``humanizeDuration`` for whole seconds of a minute or more."""
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}h {m}m {s}s" if h else f"{m}m {s}s"


def rule_tests(t: AlertThresholds, runbook_base: str = RUNBOOK_BASE) -> dict[str, Any]:
    """``promtool test rules`` cases for every alert of :func:`rule_groups`.

    Each alert gets a time where it must not fire and one where it must, with its labels
    and rendered annotations; the checkpoint and staleness cases sit on either side of the
    configured limits, so they fail when the rules and the configuration disagree.
    """
    rules = {r["alert"]: r for g in rule_groups(t, runbook_base)["groups"] for r in g["rules"]}
    stale_m = max(1, round(t.stale_after_s / 60))
    age = round(t.checkpoint_max_age_s)
    m = {"model": "m"}
    # alert -> (series, quiet eval, firing eval, extra labels, $value as rendered)
    cases: dict[str, tuple[list[tuple[str, str]], str, str, dict[str, str], str]] = {
        "DriftwatchDriftSevere": ([('driftwatch_tier{model="m"}', "2 3 3")], "0m", "1m", m, ""),
        "DriftwatchDataQualityFault": ([('driftwatch_data_quality_fault{model="m"}', "0 1 1")],
                                       "0m", "1m", m, ""),
        "DriftwatchInputStale": ([('driftwatch_input_stale{model="m"}', f"1x{stale_m + 5}")],
                                 f"{stale_m - 1}m", f"{stale_m + 1}m", m, ""),
        "DriftwatchSourceNotReady": ([('driftwatch_source_ready{model="m"}', "0x10"),
                                      ('driftwatch_source_done{model="m"}', "0x10"),
                                      ('driftwatch_source_ready{model="done"}', "0x10"),
                                      ('driftwatch_source_done{model="done"}', "1x10")],
                                     "4m", "6m", m, ""),
        "DriftwatchDependencyDown": ([('driftwatch_dependency_up{dependency="mlflow"}',
                                       "0x20"),
                                      ('driftwatch_dependency_up{dependency="kafka"}', "1x20")],
                                     "9m", "11m", {"dependency": "mlflow"}, ""),
        "DriftwatchCheckpointTooOld": (
            [("driftwatch_checkpoint_age_seconds", f"{age} {age + 60} {age + 60}")],
            "0m", "1m", {}, _humanize_duration(age + 60)),
        "DriftwatchStateNotWritable": ([("driftwatch_state_writable", "1 0 0 0 0")],
                                       "2m", "3m", {}, ""),
        "DriftwatchRetrainingFailed": (
            [('driftwatch_actions_total{model="m", action="retrain", outcome="failed"}',
              "0 0 1 1"),
             ('driftwatch_actions_total{model="m", action="retrain", outcome="succeeded"}',
              "0 1 2 3")], "1m", "2m", m, ""),
        "DriftwatchPoolSaturated": ([("driftwatch_pool_reserved_gpus", "2x40"),
                                     ("driftwatch_pool_in_use_gpus", "2x40"),
                                     ("driftwatch_pool_queued_jobs", "1x40")],
                                    "29m", "31m", {}, "2"),
        "DriftwatchPolicyReloadFailed": (
            [('driftwatch_policy_reload_errors_total{model="m"}', "0 0 1 1")], "1m", "2m", m, ""),
        "DriftwatchStageErrors": (
            [('driftwatch_window_errors_total{model="m", stage="detectors"}', "0 0 1 1")],
            "1m", "2m", {"model": "m", "stage": "detectors"}, ""),
        "DriftwatchChampionProfilePending": (
            [('driftwatch_reference_adoption_pending_seconds{model="m"}', "0+300x10")],
            "3m", "4m", m, ""),
        "DriftwatchDown": ([('up{job="driftwatch", instance="d:9108"}', "0x10")], "1m", "3m",
                           {"job": "driftwatch", "instance": "d:9108"}, ""),
    }
    missing = set(rules) ^ set(cases)
    if missing:
        raise AssertionError(f"alerts without promtool cases (or cases without alerts): {missing}")
    tests = []
    for name, (series, quiet, firing, labels, value) in cases.items():
        r = rules[name]
        exp_labels = {"severity": r["labels"]["severity"], **labels}
        ann = {k: _render(v, labels, value) for k, v in r["annotations"].items()}
        tests.append({
            "name": name,
            "interval": "1m",
            "input_series": [{"series": s, "values": v} for s, v in series],
            "alert_rule_test": [
                {"eval_time": quiet, "alertname": name, "exp_alerts": []},
                {"eval_time": firing, "alertname": name,
                 "exp_alerts": [{"exp_labels": exp_labels, "exp_annotations": ann}]},
            ],
        })
    return {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
