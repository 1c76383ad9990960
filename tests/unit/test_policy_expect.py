"""Replay expectations: parsing, semantics over a timeline, and messages on failure."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from driftwatch.policy import ExpectationError, check_expectations, parse_expectation

HOUR = 3600.0
T0 = datetime(2026, 3, 1, tzinfo=UTC).timestamp()


def rec(i: int, tier: str, action: str | None = None, dq: bool = False) -> dict:
    """Window i covers hours [(i-1)*6, i*6) after 2026-03-01T00:00Z."""
    return {"window_id": i, "start_time": T0 + (i - 1) * 6 * HOUR,
            "end_time": T0 + i * 6 * HOUR, "tier": tier,
            "decision": {"action": action, "data_quality_fault": dq}}


# ends: 1 -> 03-01T06, 2 -> 12, 3 -> 18, 4 -> 03-02T00, 5 -> 06, 6 -> 12, 7 -> 18, 8 -> 03-03T00
TIMELINE = [
    rec(1, "none"),
    rec(2, "mild", "online_update"),
    rec(3, "mild"),
    rec(4, "moderate", "shadow"),
    rec(5, "severe", "alert", dq=True),
    rec(6, "severe", "retrain"),
    rec(7, "mild"),
    rec(8, "none"),
]


@pytest.mark.parametrize(("text", "passed"), [
    ("tier>=moderate between 2026-03-01T00:00 and 2026-03-02T00:00", True),
    ("tier>=severe between 2026-03-01T00:00 and 2026-03-02T00:00", False),
    ("tier>moderate", True),
    ("tier==none", False),
    ("tier<=severe", True),
    ("tier<=mild after 2026-03-02T12:00", True),
    ("tier<=mild after 2026-03-02T06:00", False),   # window 6 ends at 12:00, still severe
    ("tier<mild before 2026-03-01T12:00", True),    # only window 1 ends before 12:00
    ("tier!=severe before 2026-03-02", True),
    ("no retrain", False),
    ("no retrain before 2026-03-02T12:00", True),   # before is strict: window 6 ends at 12:00
    ("no retrain before 2026-03-02T12:00:01", False),
    ("retrain", True),
    ("alert between 2026-03-02T00:00 and 2026-03-02T06:00", True),
    ("alert between 2026-03-01 and 2026-03-02", False),
    ("data_quality_fault between 2026-03-02 and 2026-03-03", True),
    ("no data_quality_fault after 2026-03-02T06:00", True),
    ("action==shadow at least once between 2026-03-01T00:00 and 2026-03-03T00:00", True),
    ("action==shadow at least 2 times", False),
    ("action!=retrain", False),
    ("action==none at least 4 times", True),
    ("tier>=mild every window between 2026-03-01T12:00 and 2026-03-02T18:00", True),
    ("tier>=mild in every window", False),
    ("tier>=moderate at least 2 times", True),
    ("TIER >= Moderate BETWEEN 2026-03-01 AND 2026-03-03", True),
    ("tier>=mild between 2026-03-01T00:00:00+01:00 and 2026-03-01T13:00:00+01:00", True),
    ("tier>=mild between 2026-03-01T00:00:00+01:00 and 2026-03-01T12:00:00+01:00", False),
])
def test_expectation_semantics(text: str, passed: bool) -> None:
    assert parse_expectation(text).check(TIMELINE).passed is passed


def test_between_is_inclusive_on_window_end_times():
    exp = parse_expectation("tier>=moderate between 2026-03-02T00:00 and 2026-03-02T00:00")
    result = exp.check(TIMELINE)
    assert result.passed and result.windows == (4,)


def test_failure_message_for_at_least_once_names_the_highest_tier_seen():
    r = parse_expectation("tier>=severe between 2026-03-01 and 2026-03-02").check(TIMELINE)
    assert not r.passed
    assert r.message == (
        "expected tier>=severe at least once in windows ending between 2026-03-01T00:00:00Z "
        "and 2026-03-02T00:00:00Z; the highest tier was moderate (window 4, ends "
        "2026-03-02T00:00:00Z)")


def test_failure_message_for_every_window_lists_the_windows_that_broke_it():
    r = parse_expectation("tier<=mild after 2026-03-01T12:00").check(TIMELINE)
    assert not r.passed and r.windows == (4, 5, 6)
    assert r.message == (
        "expected tier<=mild in every window ending after 2026-03-01T12:00:00Z; 3 of 6 windows "
        "broke it: window 4 (moderate, ends 2026-03-02T00:00:00Z), window 5 (severe, ends "
        "2026-03-02T06:00:00Z), window 6 (severe, ends 2026-03-02T12:00:00Z)")


def test_failure_message_for_no_action_lists_when_it_happened():
    r = parse_expectation("no retrain").check(TIMELINE)
    assert r.message == ("expected no retrain in the whole timeline; 1 of 8 windows broke it: "
                         "window 6, ends 2026-03-02T12:00:00Z")


def test_failure_message_for_a_missing_action_counts_the_actions_seen():
    r = parse_expectation("action==shadow at least 2 times").check(TIMELINE)
    assert r.message == (
        "expected shadow at least 2 times in the whole timeline; held in 1 window(s) only; "
        "actions seen: alert x1, none x4, online_update x1, retrain x1, shadow x1")


def test_an_empty_range_fails_rather_than_passing_vacuously():
    r = parse_expectation("no retrain after 2026-04-01").check(TIMELINE)
    assert not r.passed
    assert r.message.endswith("; no window in range")


def test_passing_message_says_what_held():
    r = parse_expectation("tier>=moderate").check(TIMELINE)
    assert r.message == ("expected tier>=moderate at least once in the whole timeline; held in "
                         "3 window(s), first window 4, ends 2026-03-02T00:00:00Z")


def test_check_expectations_runs_several():
    results = check_expectations(["retrain", "no shadow"], TIMELINE)
    assert [r.passed for r in results] == [True, False]


def test_records_without_a_decision_use_top_level_fields():
    records = [{"window_id": 1, "start_time": T0, "end_time": T0 + 60, "tier": "none",
                "action": "alert"}]
    assert parse_expectation("alert").check(records).passed


@pytest.mark.parametrize(("text", "col", "fragment"), [
    ("tier=>mild", 5, "expected an operator (>=, <=, ==, !=, >, <) after 'tier'"),
    ("tier>=moderat", 7, "expected a tier name (did you mean 'moderate'?)"),
    ("action>=shadow", 7, "expected an operator (==, !=) after 'action'"),
    ("action==rollback", 9, "expected a action name"),
    ("retrian", 1, "(did you mean 'retrain'?)"),
    ("", 1, "empty expectation"),
    ("tier>=mild between 2026-03-01", 30, "expected 'and' after the first time"),
    ("tier>=mild between 2026-03-05 and 2026-03-01", 35, "the range ends before it starts"),
    ("tier>=mild before yesterday", 19, "expected a date or time"),
    ("tier>=mild after", 17, "expected a date or time"),
    ("no retrain at least once", 12, "'no ...' takes no quantifier"),
    ("tier>=mild at least twice", 21, "expected 'once' or 'N times' after 'at least'"),
    ("tier>=mild every day", 18, "expected 'window' after 'every'"),
    ("tier>=mild please", 12, "unexpected words at the end"),
])
def test_parse_errors_point_at_the_bad_word(text: str, col: int, fragment: str) -> None:
    with pytest.raises(ExpectationError) as info:
        parse_expectation(text, file="replay.yaml", line=7)
    err = info.value
    assert (err.file, err.line, err.col) == ("replay.yaml", 7, col)
    assert fragment in err.message
    assert str(err).startswith(f"replay.yaml:7:{col}: ")
