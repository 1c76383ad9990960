"""Malformed policies: every error at its exact ``file:line:col`` with a message to act on."""

from __future__ import annotations

import pytest

from driftwatch.errors import ConfigError, PolicyError
from driftwatch.policy import PolicyErrors, load_policy_text

BASE = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata:
  name: demo
model:
  name: credit
  reference: ref.parquet
window:
  kind: count
  pane: 500
signals:
  - detector: psi
    thresholds: {mild: 0.1, moderate: 0.25, severe: 0.5}
actions:
  severe:
    type: retrain
    argv: [python, job.py]
"""
# lines added with ``plus`` start at line 18
AUC = "  - detector: auc\n    thresholds: {mild: 0.75, moderate: 0.70, severe: 0.60}\n"
FEATURES = "  name: credit\n  features: [income, age, purpose]\n"


def sub(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


def plus(text: str) -> str:
    return BASE + text


def signal(text: str) -> str:
    """Replace the PSI signal (lines 12-13) with ``text``."""
    return sub("  - detector: psi\n    thresholds: {mild: 0.1, moderate: 0.25, severe: 0.5}\n",
               text)


def action(text: str) -> str:
    """Replace the severe action (lines 15-17) with ``text``."""
    return sub("  severe:\n    type: retrain\n    argv: [python, job.py]\n", text)


# (id, policy text, [(line, col, message fragment), ...] - every error, in file order)
CASES = [
    # --- YAML syntax -------------------------------------------------------------------------
    ("unclosed-flow-mapping", sub("severe: 0.5}", "severe: 0.5"),
     [(14, 8, "YAML syntax error")]),
    ("tab-indent", sub("  name: demo", "\tname: demo"),
     [(4, 1, "YAML syntax error")]),
    ("duplicate-key", sub("  name: demo\n", "  name: demo\n  name: again\n"),
     [(5, 3, "duplicate key 'name'")]),
    ("empty-document", "# nothing here\n",
     [(1, 1, "expected a policy mapping")]),
    ("list-document", "- apiVersion: driftwatch/v1\n",
     [(1, 1, "expected a policy mapping (apiVersion: driftwatch/v1, kind: DriftPolicy")]),
    # --- unknown keys ------------------------------------------------------------------------
    ("unknown-top-level-key", sub("signals:", "singals:"),
     [(11, 1, "unknown key 'singals' (did you mean 'signals'?)")]),
    ("unknown-key-metadata", sub("  name: demo", "  nam: demo"),
     [(4, 3, "unknown key 'nam' (did you mean 'name'?)")]),
    ("unknown-key-signal", sub("    thresholds:", "    thresold: 0.1\n    thresholds:"),
     [(13, 5, "unknown key 'thresold' (did you mean 'thresholds'?)")]),
    ("unknown-tier-key", sub("moderate: 0.25", "moderat: 0.25"),
     [(13, 29, "unknown key 'moderat' (did you mean 'moderate'?)")]),
    ("unknown-key-action", sub("    argv: [python, job.py]", "    argv: [python, job.py]\n"
                                                           "    gpu: 2"),
     [(18, 5, "unknown key 'gpu' (did you mean 'gpus'?)")]),
    ("unknown-key-no-guess", plus("colour: blue\n"),
     [(18, 1, "unknown key 'colour'")]),
    # --- document header ---------------------------------------------------------------------
    ("wrong-api-version", sub("driftwatch/v1", "driftwatch/v2"),
     [(1, 13, "expected 'driftwatch/v1', found 'driftwatch/v2'")]),
    ("wrong-kind", sub("kind: DriftPolicy", "kind: DriftPolicies"),
     [(2, 7, "expected 'DriftPolicy', found 'DriftPolicies'")]),
    ("missing-metadata", sub("metadata:\n  name: demo\n", ""),
     [(1, 1, "missing required key 'metadata'")]),
    ("missing-reference", sub("  reference: ref.parquet\n", ""),
     [(5, 1, "missing required key 'reference'")]),
    ("metadata-not-mapping", sub("metadata:\n  name: demo\n", "metadata: demo\n"),
     [(3, 11, "expected a mapping, found 'demo'")]),
    # --- signals -----------------------------------------------------------------------------
    ("missing-signals", signal("").replace("signals:\n", ""),
     [(1, 1, "missing required key 'signals'")]),
    ("empty-signals", signal("").replace("signals:\n", "signals: []\n"),
     [(11, 10, "expected at least 1 item, found an empty list")]),
    ("signals-not-a-list", signal("").replace("signals:\n", "signals: psi\n"),
     [(11, 10, "expected a list, found 'psi'")]),
    ("unknown-detector", sub("detector: psi", "detector: pis"),
     [(12, 15, "unknown detector 'pis' (did you mean 'psi'?)")]),
    ("data-quality-detector-in-signals", sub("detector: psi", "detector: missing_rate"),
     [(12, 15, "'missing_rate' is a data-quality signal")]),
    ("drift-detector-in-data-quality",
     plus("data_quality:\n  signals:\n    - {detector: psi, threshold: 0.1}\n"),
     [(20, 18, "'psi' is a drift signal, not a data-quality one")]),
    ("threshold-not-a-number", sub("moderate: 0.25", "moderate: high"),
     [(13, 39, "expected a number or a mapping with calibrated: false_alarm_rate, "
               "found 'high'")]),
    ("thresholds-out-of-order-above", sub("moderate: 0.25", "moderate: 0.05"),
     [(13, 39, "thresholds out of order: moderate must be above mild (0.1) for direction "
               "'above', found 0.05")]),
    ("thresholds-out-of-order-below", signal(AUC.replace("0.70", "0.80")),
     [(13, 40, "thresholds out of order: moderate must be below mild (0.75) for direction "
               "'below', found 0.8")]),
    ("abs-threshold-negative",
     signal("  - detector: mean_shift\n    thresholds: {mild: -0.1}\n"),
     [(13, 24, "an abs threshold is a size: it cannot be negative")]),
    ("no-tier-thresholds", signal("  - detector: psi\n    thresholds: {}\n"),
     [(13, 5, "give a threshold for at least one tier")]),
    ("missing-thresholds", signal("  - detector: psi\n"),
     [(12, 5, "missing required key 'thresholds'")]),
    ("calibrated-typo",
     signal("  - detector: ks\n    thresholds:\n"
            "      mild: {calibrated: {false_alarm_rat: 0.01}}\n"),
     [(14, 27, "unknown key 'false_alarm_rat' (did you mean 'false_alarm_rate'?)")]),
    ("calibrated-rate-too-big",
     signal("  - detector: ks\n    thresholds:\n"
            "      mild: {calibrated: {false_alarm_rate: 1.5}}\n"),
     [(14, 45, "expected a value less than 1, found 1.5")]),
    ("calibrated-rates-not-decreasing",
     signal("  - detector: ks\n    thresholds:\n"
            "      mild: {calibrated: {false_alarm_rate: 0.01}}\n"
            "      moderate: {calibrated: {false_alarm_rate: 0.05}}\n"),
     [(15, 49, "a moderate false_alarm_rate must be smaller than the mild one (0.01)")]),
    ("clear-above-trigger",
     sub("severe: 0.5}\n", "severe: 0.5}\n    clear: {severe: 0.6}\n"),
     [(14, 21, "the severe clear level must be below its trigger 0.5, found 0.6")]),
    ("clear-without-threshold",
     signal("  - detector: psi\n    thresholds: {mild: 0.1}\n    clear: {moderate: 0.2}\n"),
     [(14, 13, "clear needs a fixed moderate threshold to clear from")]),
    ("direction-typo", sub("    thresholds:", "    direction: upward\n    thresholds:"),
     [(13, 16, "expected 'above', 'below' or 'abs', found 'upward'")]),
    ("model-level-signal-with-features",
     signal("  - detector: auc\n    features: [income]\n    thresholds: {mild: 0.7}\n"),
     [(13, 5, "'auc' is a model-level signal: it has no features")]),
    ("feature-not-in-model",
     sub("  name: credit\n", FEATURES).replace("detector: psi\n",
                                               "detector: psi\n    features: [incme]\n"),
     [(14, 16, "feature 'incme' is not in model.features (did you mean 'income'?)")]),
    ("override-for-unwatched-feature",
     sub("severe: 0.5}\n", "severe: 0.5}\n    features: [age]\n"
                           "    overrides: {income: {mild: 0.2}}\n"),
     [(15, 17, "feature 'income' is not in this signal's features")]),
    ("measure-not-reported", sub("    thresholds:", "    measure: rel_change\n    thresholds:"),
     [(13, 14, "'psi' does not report rel_change")]),
    ("measure-typo", sub("    thresholds:", "    measure: delta\n    thresholds:"),
     [(13, 14, "expected 'value', 'change', 'abs_change', 'rel_change', 'increase' or "
               "'psi_without_missing', found 'delta'")]),
    ("data-quality-measure-not-reported",
     plus("data_quality:\n  signals:\n    - {detector: out_of_range, measure: increase, "
          "threshold: 0.1}\n"),
     [(20, 41, "'out_of_range' does not report increase")]),
    ("weights-without-weighted-vote",
     sub("severe: 0.5}\n", "severe: 0.5}\n    weights: {income: 2}\n"),
     [(14, 5, "weights applies to combine method: weighted_vote or count, found method 'worst'")]),
    ("weight-zero", sub("severe: 0.5}\n", "severe: 0.5}\n    weight: 0\n")
     + "combine: {method: weighted_vote}\n",
     [(14, 13, "expected a value greater than 0, found 0")]),
    # --- durations, window, counts -----------------------------------------------------------
    ("duration-with-words", plus("cooldown: {mild: 15 minutes}\n"),
     [(18, 18, "expected a duration like 15m, 1h or 7d")]),
    ("duration-negative", plus("cooldown: {mild: -5m}\n"),
     [(18, 18, "expected a duration like 15m, 1h or 7d")]),
    ("duration-plain-number", plus("cooldown: {mild: 3600}\n"),
     [(18, 18, "expected a duration like 15m, 1h or 7d")]),
    ("duration-units-out-of-order", plus("cooldown: {mild: 30m1h}\n"),
     [(18, 18, "give each unit once, largest first")]),
    ("window-kind-typo", sub("kind: count", "kind: cuont"),
     [(9, 9, "expected 'count' or 'time', found 'cuont'")]),
    ("count-window-with-duration", sub("pane: 500", "pane: 15m"),
     [(10, 9, "a count window's pane is a number of events")]),
    ("time-window-with-number", sub("kind: count", "kind: time"),
     [(10, 9, "a time window's pane is a duration like 15m, 1h or 7d")]),
    ("zero-panes", sub("pane: 500", "pane: 500\n  panes: 0"),
     [(11, 10, "expected a value of at least 1, found 0")]),
    ("lateness-on-count-window", sub("pane: 500", "pane: 500\n  allowed_lateness: 5m"),
     [(11, 3, "allowed_lateness applies to kind: time")]),
    ("persistence-zero", plus("persistence: 0\n"),
     [(18, 14, "expected a value of at least 1, found 0")]),
    ("persistence-not-a-number", plus("persistence: {mild: two}\n"),
     [(18, 21, "expected a whole number, found 'two'")]),
    ("persistence-float", plus("persistence: 1.5\n"),
     [(18, 14, "expected a mapping, found 1.5")]),
    # ADWIN has no threshold: the value was read and never used
    ("change-threshold-with-adwin", plus("detectors:\n  change: {threshold: 5}\n"),
     [(19, 12, "threshold applies to method: page_hinkley")]),
    # the reference could not be binned: each coarse bin is cut into whole fine ones
    ("fine-bins-not-a-multiple-of-bins", plus("detectors: {bins: 7}\n"),
     [(18, 19, "fine_bins must be a multiple of bins (7), found fine_bins 200")]),
    ("fine-bins-written-not-a-multiple", plus("detectors: {bins: 10, fine_bins: 205}\n"),
     [(18, 34, "fine_bins must be a multiple of bins (10), found fine_bins 205")]),
    ("min-features-without-count", plus("combine: {method: worst, min_features: 3}\n"),
     [(18, 26, "min_features applies to method: count")]),
    ("escalation-going-down", plus("escalation:\n  - {from: severe, to: mild, after: 2}\n"),
     [(19, 24, "escalation must go up from 'severe', found 'mild'")]),
    ("escalation-missing-after", plus("escalation:\n  - {from: mild, to: moderate}\n"),
     [(19, 5, "missing required key 'after'")]),
    ("limits-negative", plus("limits: {max_concurrent_retrains: -1}\n"),
     [(18, 35, "expected a value of at least 0, found -1")]),
    # --- actions -----------------------------------------------------------------------------
    ("unknown-action", sub("type: retrain", "type: retrian"),
     [(16, 11, "unknown action 'retrian' (did you mean 'retrain'?)")]),
    ("unknown-action-shorthand", plus("  mild: nothing\n"),
     [(18, 9, "unknown action 'nothing'")]),
    ("action-missing-type", sub("    type: retrain\n", ""),
     [(15, 3, "missing required key 'type'")]),
    ("argv-as-string", sub("argv: [python, job.py]", "argv: python job.py --epochs 3"),
     [(17, 11, "argv must be a list of strings, not a shell string")]),
    ("argv-with-number", sub("argv: [python, job.py]", "argv: [python, job.py, --epochs, 3]"),
     [(17, 11, "every argv item must be a string, not 3")]),
    ("argv-missing", action("  severe: {type: retrain, gpus: 1}\n"),
     [(15, 3, "missing required key 'argv'")]),
    ("argv-empty", sub("argv: [python, job.py]", "argv: []"),
     [(17, 11, "expected at least 1 item")]),
    ("online-update-without-opt-in", plus("  mild: {type: online_update}\n"),
     [(18, 9, "online updates are opt-in: set opt_in: true")]),
    ("online-update-unknown-learner",
     plus("  mild: {type: online_update, opt_in: true, learner: StandardScaler|XGBoost}\n"),
     [(18, 54, "unknown learner step 'XGBoost'")]),
    ("online-update-learner-order",
     plus("  mild: {type: online_update, opt_in: true, learner: LogisticRegression|"
          "StandardScaler}\n"),
     [(18, 54, "a learner is transformers then exactly one estimator, last")]),
    ("shadow-unknown-metric", plus("  moderate: {type: shadow, metric: accuracy}\n"),
     [(18, 36, "expected 'auc', 'brier', 'gini', 'ks_score' or 'log_loss', found 'accuracy'")]),
    # the pool leases whole GPUs: gpus: 0 used to run on one while explain said 0
    ("retrain-zero-gpus", sub("argv: [python, job.py]", "argv: [python, job.py]\n    gpus: 0"),
     [(18, 11, "a retraining job leases at least one GPU of the pool, found 0")]),
    ("approval-as-string", sub("    type: retrain\n", "    type: retrain\n"
                                                      "    require_approval: \"yes\"\n"),
     [(17, 23, "expected true or false, found 'yes'")]),
    # an alert goes out at once and none does nothing: approval would be promised, not kept
    ("alert-require-approval", plus("  mild: {type: alert, require_approval: true}\n"),
     [(18, 41, "an alert goes out at once, so there is nothing to approve")]),
    ("none-require-approval", plus("  mild: {type: none, require_approval: true}\n"),
     [(18, 40, "action none does nothing, so there is nothing to approve")]),
    ("data-quality-alert-require-approval",
     plus("data_quality:\n  action: {type: alert, require_approval: true}\n"),
     [(19, 43, "require_approval applies to online_update, shadow and retrain")]),
    ("webhook-not-a-url", plus("  mild: {type: alert, webhook: hooks.example.com}\n"),
     [(18, 32, "expected an http(s) URL")]),
    ("data-quality-action-retrain",
     plus("data_quality:\n  action: {type: retrain, argv: [python, job.py]}\n"),
     [(19, 11, "the data-quality gate's action must be alert or none")]),
]


def errors_of(text: str) -> list[PolicyError]:
    with pytest.raises(PolicyErrors) as info:
        load_policy_text(text, file="bad.yaml")
    return info.value.errors


def test_there_are_at_least_forty_cases():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_policy(text: str, expected: list[tuple[int, int, str]]) -> None:
    errors = errors_of(text)
    assert [(e.line, e.col) for e in errors] == [(line, col) for line, col, _ in expected]
    for err, (line, col, fragment) in zip(errors, expected, strict=True):
        assert str(err).startswith(f"bad.yaml:{line}:{col}: ")
        assert fragment in str(err).splitlines()[0]
        assert isinstance(err, PolicyError) and isinstance(err, ConfigError)


def test_several_errors_are_reported_at_once_in_file_order():
    text = (sub("detector: psi", "detector: pis")
            .replace("kind: count", "kind: cuont")
            .replace("type: retrain", "type: retrian")) + "cooldown: {mild: soon}\n"
    with pytest.raises(PolicyErrors) as info:
        load_policy_text(text, file="bad.yaml")
    exc = info.value
    assert [(e.line, e.col) for e in exc.errors] == [(9, 9), (12, 15), (16, 11), (18, 18)]
    rendered = str(exc)
    assert rendered.splitlines()[0] == "bad.yaml: 4 errors"
    for e in exc.errors:
        assert e.render() in rendered
    # the aggregate still reads as one PolicyError pointing at the first problem
    assert (exc.file, exc.line, exc.col) == ("bad.yaml", 9, 9)


def test_an_error_shows_the_path_the_line_and_a_caret():
    errors = errors_of(sub("moderate: 0.25", "moderate: high"))
    assert str(errors[0]).splitlines()[1:] == [
        "  at signals[0].thresholds.moderate",
        "    13 |     thresholds: {mild: 0.1, moderate: high, severe: 0.5}",
        "       |                                       ^",
    ]


def test_unknown_names_list_the_valid_ones():
    (err,) = errors_of(sub("type: retrain", "type: rebuild"))
    assert err.hint == "valid actions: alert, none, online_update, retrain, shadow"
    (err,) = errors_of(sub("detector: psi", "detector: drift"))
    assert err.hint is not None and "psi" in err.hint and "wasserstein" in err.hint


def test_argv_string_hint_shows_the_list_form():
    (err,) = errors_of(sub("argv: [python, job.py]", "argv: python job.py --epochs 3"))
    assert err.hint == 'write it as a list, e.g. argv: ["python", "job.py", "--epochs", "3"]'


def test_a_typo_for_a_required_key_is_reported_once():
    errors = errors_of(sub("  reference: ref.parquet", "  refrence: ref.parquet"))
    assert [e.message for e in errors] == ["unknown key 'refrence' (did you mean 'reference'?)"]


def test_missing_file_is_a_policy_error(tmp_path):
    from driftwatch.policy import load_policy

    with pytest.raises(PolicyError, match="cannot read file"):
        load_policy(tmp_path / "absent.yaml")


def test_a_change_threshold_is_taken_with_page_hinkley():
    p = load_policy_text(plus("detectors:\n  change: {method: page_hinkley, threshold: 5}\n"),
                         file="ok.yaml")
    assert (p.detectors.change.method, p.detectors.change.threshold) == ("page_hinkley", 5.0)
