"""After a restart, the gauges of each model's last window, from its timeline line.

The checkpoint cuts ``timeline.jsonl`` back to the windows it covers, so the file's last
line is the last window the restored monitor has seen: its signals, severities, tier and
data-quality state go back on ``/metrics`` before the loop reads anything, instead of a
tier of 0 and no per-feature series until the next window closes.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "timeline.jsonl"
>>> _ = f.write_bytes(b'{"window_id": 1}\\n{"window_id": 2, "n_events": 5}\\n')
>>> last_record(f)
{'window_id': 2, 'n_events': 5}
>>> last_record(f.with_name("none.jsonl")) is None
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from driftwatch.detectors.base import SignalResult
from driftwatch.metrics import Metrics
from driftwatch.outputlog import timeline_files
from driftwatch.policy.decision import Decision

__all__ = ["last_record", "restore_view"]

#: The tail read to find the last line (a line holds one window's per-feature summaries).
_TAIL = 8 << 20


def last_record(path: str | Path) -> dict[str, Any] | None:
    """The last window line of a timeline (cohort verdicts skipped) as a dict; None when
    there is none or it is unreadable. Right after a rotation the active file is empty:
    the line is then in the newest segment (``timeline.<n>.jsonl``)."""
    for f in reversed(timeline_files(path)):
        rec, done = _last_in(f)
        if done:
            return rec
    return None


def _last_in(path: Path) -> tuple[dict[str, Any] | None, bool]:
    """The last window line of one file, and whether the search ends here (a line was
    found, or the file cannot be read as a timeline); (None, False) when it holds none."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL))
            tail = fh.read()
    except OSError:
        return None, True
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines:
        return None, False
    if size > _TAIL and len(lines) == 1:  # only part of a line was read
        return None, True
    for line in reversed(lines):  # a cohort's verdict is not the last window
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None, True
        if not isinstance(rec, dict):
            return None, True
        if rec.get("cohort") is None:
            return rec, True
    return None, False


def restore_view(metrics: Metrics, model: str, record: dict[str, Any] | None) -> bool:
    """Set ``model``'s window gauges from a timeline record; False when there is none."""
    if not record or not isinstance(record.get("signals"), list):
        return False
    try:
        signals = [SignalResult.from_dict(s) for s in record["signals"]]
        decision = Decision.from_dict(record["decision"]) if record.get("decision") else None
    except (KeyError, TypeError, ValueError):  # a line from another version: skip the view
        return False
    metrics.set_view(model, int(record.get("n_events") or 0), signals, decision)
    return True
