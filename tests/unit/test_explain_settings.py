"""``policy explain`` names every setting that changes what a rule does: a gate signal's
features and per-feature levels, per-feature weights and explicit clear levels.

They were parsed and acted on by the engine, but the plain-English lines left them out
(``missing_rate > 0.05`` while ``age`` only closed the gate past 0.2), so the lines
promised other behaviour than the engine's.
"""

from __future__ import annotations

from driftwatch.policy.explain import describe_tiers
from driftwatch.policy.loader import load_policy_text

HEAD = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: p}
model: {name: credit, reference: ref.parquet}
window: {pane: 500}
"""


def _line(text: str, start: str) -> str:
    return next(ln for ln in describe_tiers(load_policy_text(HEAD + text)) if ln.startswith(start))


def test_the_gate_line_names_the_features_and_their_own_levels() -> None:
    line = _line("""\
signals:
  - detector: psi
    thresholds: {severe: 0.5}
data_quality:
  signals:
    - detector: missing_rate
      features: [income, age]
      threshold: 0.05
      overrides: {age: 0.2}
    - detector: out_of_range
      threshold: 0.01
""", "data quality:")
    assert line.startswith("data quality: when missing_rate increase > 0.05 (on income, age; "
                           "age > 0.2), out_of_range > 0.01, alert")


def test_a_gate_signal_on_every_feature_without_overrides_reads_as_before() -> None:
    line = _line("""\
signals:
  - detector: psi
    thresholds: {severe: 0.5}
data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
""", "data quality:")
    assert line.startswith("data quality: when missing_rate increase > 0.05, alert")


def test_per_feature_weights_are_named() -> None:
    line = _line("""\
signals:
  - detector: psi
    thresholds: {moderate: 0.25}
    weights: {income: 3}
combine: {method: weighted_vote, quorum: 0.5}
""", "moderate:")
    assert "psi >= 0.25 (any feature; income counts as 3)" in line


def test_an_explicit_clear_level_is_named_with_the_overrides_it_does_not_cover() -> None:
    line = _line("""\
signals:
  - detector: psi
    thresholds: {moderate: 0.25}
    clear: {moderate: 0.15}
    overrides:
      income: {moderate: 0.4}
      age: {mild: 0.05}
""", "moderate:")
    assert ("psi >= 0.25 (any feature; income: 0.4; once active, clears only past 0.15 "
            "(not for income, whose own level clears by hysteresis))") in line


def test_no_clear_level_no_clear_words() -> None:
    line = _line("""\
signals:
  - detector: psi
    thresholds: {moderate: 0.25}
""", "moderate:")
    assert "psi >= 0.25 (any feature)" in line
    assert "clears" not in line


def test_a_gate_that_does_nothing_promises_no_alert_and_says_its_cooldown_never_starts(
) -> None:
    """The engine starts the gate's cooldown only when its action runs: with action none
    nothing runs, so 'at most one alert per 10m' promised an alert that never comes."""
    gate = """\
signals:
  - detector: psi
    thresholds: {severe: 0.5}
data_quality:
  signals:
    - detector: bad_record_rate
      threshold: 0.01
  action: %s
  cooldown: 10m
"""
    quiet = _line(gate % "none", "data quality:")
    assert "alert" not in quiet and quiet.endswith("; its cooldown (10m) never starts.")
    loud = _line(gate % "alert", "data quality:")
    assert loud.endswith("; at most one alert per 10m.")


def test_the_reference_line_names_the_decline_values() -> None:
    """With ``decline:`` a value on neither list decides nothing (HMDA's withdrawn or
    incomplete files); without it every value not approved is a decline. The line named
    the approve values only, so both read alike."""
    from driftwatch.policy.reference import ReferenceColumns, describe_reference

    named = ReferenceColumns.model_validate(
        {"decision": {"column": "action_taken", "approve": [1], "decline": [3]}})
    assert ("decision column 'action_taken' (approve: 1; decline: 3; any other value "
            "decides nothing)") in describe_reference(named)
    plain = ReferenceColumns.model_validate({"decision": {"column": "d", "approve": ["A"]}})
    assert "decision column 'd' (approve: 'A')" in describe_reference(plain)
