"""replay's summary names the data-quality faults: a broken feed alerts and holds model
changes apart from the drift tiers, so a run said "alert x2" beside one episode (or none)
and never which windows the feed was broken in, or why."""

from __future__ import annotations

import io
from typing import Any

import orjson

from driftwatch.replay.cli import print_summary
from driftwatch.replay.run import monitor_for, summarise
from driftwatch.windows.profile import ReferenceProfile
from tests.unit.test_report import profile as profile  # the fixture, shared


def _dq(signal: str, feature: str | None) -> dict[str, Any]:
    return {"kind": "data_quality", "signal": signal, "feature": feature, "tier": "none"}


def _record(w: int, *, fault: bool = False, reasons=(), action=None, tier="none"):
    return {"window_id": w, "start_time": 100.0 * w - 99, "end_time": 100.0 * w,
            "end": f"t{w}", "tier": tier, "cohort": None,
            "decision": {"action": action, "data_quality_fault": fault,
                         "reasons": [{"kind": "trigger", "signal": "psi", "feature": "x"},
                                     *reasons]}}


def _records() -> list[dict[str, Any]]:
    return [
        _record(0),
        _record(1, fault=True, action="alert", reasons=[_dq("missing_rate", "income")]),
        _record(2, fault=True, tier="severe", action="alert",
                reasons=[_dq("missing_rate", "income"), _dq("out_of_range", "age")]),
        _record(3),
        _record(4, fault=True, reasons=[_dq("new_category_rate", f"c{i}") for i in range(6)]
                + [_dq("bad_record_rate", None)]),
    ]


def test_faults_are_runs_of_windows_with_their_signals(profile: ReferenceProfile) -> None:
    s = summarise(_records(), monitor_for(None, profile, model="credit"))
    got = orjson.loads(orjson.dumps(s))["data_quality_faults"]  # as summary.json holds it
    assert got == [
        {"first_window": 1, "last_window": 2, "first_alert": "t1", "windows": 2,
         "action": "alert", "signals": ["missing_rate[income]", "out_of_range[age]"]},
        {"first_window": 4, "last_window": 4, "first_alert": "t4", "windows": 1,
         "action": None,
         "signals": [*(f"new_category_rate[c{i}]" for i in range(6)), "bad_record_rate"]},
    ]


def test_the_summary_prints_one_line_a_fault(profile: ReferenceProfile) -> None:
    buf = io.StringIO()
    print_summary(summarise(_records(), monitor_for(None, profile, model="credit")), out=buf)
    lines = [ln for ln in buf.getvalue().splitlines() if "data-quality" in ln]
    assert lines == [
        "  data-quality fault: windows 1-2 (from t1): missing_rate[income], "
        "out_of_range[age]; model changes held, action alert",
        "  data-quality fault: window 4 (from t4): new_category_rate[c0], "
        "new_category_rate[c1], new_category_rate[c2], new_category_rate[c3] and 3 more; "
        "model changes held",
    ]


def test_a_clean_run_prints_no_fault(profile: ReferenceProfile) -> None:
    buf = io.StringIO()
    recs = [_record(w) for w in range(3)]
    s = summarise(recs, monitor_for(None, profile, model="credit"))
    print_summary(s, out=buf)
    assert s["data_quality_faults"] == [] and "data-quality" not in buf.getvalue()
