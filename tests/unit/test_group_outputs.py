"""A decider's batch completed after a crash: the missing lines, the same decisions."""

from __future__ import annotations

import numpy as np
import orjson

from driftwatch.detectors.base import SignalResult
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.service.group.outputs import CRASH_HOOK, crash_point, recovered_result, unwritten
from driftwatch.windows.sketch import SketchLayout

LAYOUT = SketchLayout.fit(numeric_names=("x",), numeric=np.linspace(0.0, 10.0, 50)[:, None])


def _line(wid: int, action: str | None) -> bytes:
    d = Decision(model="credit", window_id=wid, time=100.0 * wid, tier=Tier.MODERATE,
                 raw_tier=Tier.MODERATE, action=action)
    rec = {"model": "credit", "window_id": wid, "first_index": 10 * wid,
           "last_index": 10 * wid + 9, "start_time": 0.0, "end_time": 100.0 * wid,
           "n_events": 10, "n_labelled": 4, "partial": False, "tier": "moderate",
           "signals": [SignalResult("psi", "drift", 0.3, feature="x").to_dict()],
           "decision": d.to_dict()}
    return orjson.dumps(rec, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def test_only_the_lines_the_timeline_lacks_are_written_again() -> None:
    batch = [_line(3, "shadow"), _line(4, None), _line(5, "alert")]
    timeline = _line(1, None) + _line(2, None) + batch[0]  # killed after the first line
    assert unwritten(batch, timeline) == batch[1:]
    assert unwritten(batch, timeline + b"".join(batch[1:])) == []
    assert unwritten(batch, b"") == batch


def test_a_recovered_window_carries_the_decision_the_outbox_keys_on() -> None:
    line = _line(7, "shadow")
    res = recovered_result(line, LAYOUT)
    want = Decision.from_dict(orjson.loads(line)["decision"])
    assert res.decision is not None and res.decision.key == want.key
    assert res.decision.action == "shadow"
    cw = res.window
    assert (cw.window_id, cw.end_time, cw.n_events, cw.first_index, cw.last_index) == (
        7, 700.0, 10, 70, 79)
    assert [s.signal for s in res.assessment.signals] == ["psi"]
    assert recovered_result(_line(8, None), LAYOUT).decision.action is None


def test_the_crash_hook_is_off_unless_its_file_exists(tmp_path) -> None:
    crash_point({})  # unset: nothing happens
    crash_point({CRASH_HOOK: str(tmp_path / "not-armed")})
    assert not (tmp_path / "not-armed").exists()
