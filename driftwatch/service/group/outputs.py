"""The decider's outputs, exactly once across a crash.

A batch of decided windows is made durable in the pane log as *one* ``outputs`` message
before any of its lines is written or any action submitted: the decider's state after the
batch (what the next decider resumes from), the batch's timeline lines, and the member
that writes them. Then that member writes and syncs the lines, the daemon submits the
actions to its outbox, and afterwards (not waited for) the member writes a ``leader``
message with the same state and a tombstone for the ``outputs`` key.

A member killed in between finds on restart its own ``outputs`` messages that have no
tombstone and completes them: the lines its timeline does not hold yet (a line is the
same bytes however often it is made), the actions whose key is not in its outbox yet
(the outbox is idempotent by key). Any other decider resumes from the state in the
message, so it never decides those windows again.
The lines of a batch live where every earlier line of that member lives: on its state
folder, which a restart brings back.

>>> lines = [b'{"window_id":3}\\n', b'{"window_id":4}\\n']
>>> unwritten(lines, b'{"window_id":2}\\n{"window_id":3}\\n')
[b'{"window_id":4}\\n']
"""

from __future__ import annotations

import logging
import os
import signal
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.durable import fsync_dir
from driftwatch.pipeline import WindowResult
from driftwatch.policy.decision import Decision
from driftwatch.windows.panes import ClosedWindow
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["CRASH_HOOK", "crash_point", "lines_value", "mark_recorded",
           "member_id", "recovered_result", "unwritten"]

log = logging.getLogger(__name__)

#: Test-only: the path of an *arm* file. When it exists as a decider's batch becomes
#: durable in the pane log, the process deletes it and SIGKILLs itself before writing the
#: batch's lines (the crash window this module closes). Unset, as in production: never.
CRASH_HOOK = "DRIFTWATCH_TEST_ONLY_KILL_DECIDER_AFTER_LOG"


def crash_point(environ: Mapping[str, str] = os.environ) -> None:
    """Where the test hook (:data:`CRASH_HOOK`) kills the decider; nothing when unarmed."""
    arm = environ.get(CRASH_HOOK)
    if not arm or not os.path.exists(arm):
        return
    os.unlink(arm)
    log.warning("%s is armed: SIGKILL between the pane log and the outputs", CRASH_HOOK)
    os.kill(os.getpid(), signal.SIGKILL)


def member_id(folder: Path) -> str:
    """This member's name in the pane log, kept in ``folder`` so a restart keeps it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     member_id(Path(d)) == member_id(Path(d))
    True
    """
    path = folder / "group-member"
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    name = uuid.uuid4().hex
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(folder)
    return name


def unwritten(lines: list[bytes], timeline: bytes) -> list[bytes]:
    """The lines of a batch that ``timeline`` (the file's bytes) does not hold yet."""
    have = set(timeline.splitlines())
    return [x for x in lines if x.rstrip(b"\n") not in have]


def recovered_result(line: bytes, layout: SketchLayout) -> WindowResult:
    """A window's result as its timeline line tells it, for the daemon to hand to its
    actions and metrics again: bounds, size, signals and decision (the sketch holds only
    the window's event count; detectors do not run on it again)."""
    rec = orjson.loads(line)
    sk = Sketch.empty(layout)
    sk.n = int(rec.get("n_events") or 0)
    cw = ClosedWindow(window_id=int(rec["window_id"]), sketch=sk,
                      start_time=float(rec["start_time"]), end_time=float(rec["end_time"]),
                      first_index=int(rec.get("first_index", -1)),
                      last_index=int(rec.get("last_index", -1)),
                      partial=bool(rec.get("partial", False)))
    signals = tuple(SignalResult.from_dict(s) for s in rec.get("signals", ()))
    a = Assessment(model=str(rec["model"]), window_id=cw.window_id, start_time=cw.start_time,
                   end_time=cw.end_time, n_events=sk.n, signals=signals,
                   n_labelled=int(rec.get("n_labelled") or 0))
    d = rec.get("decision")
    return WindowResult(window=cw, assessment=a,
                        decision=Decision.from_dict(d) if d else None,
                        cohort=rec.get("cohort"))


def lines_value(member: str, leader: dict[str, Any], lines: list[bytes],
                recorded: list[int]) -> dict[str, Any]:
    """The ``outputs`` message of one batch (see the module docstring); ``recorded``: the
    indexes of the lines whose action key the group decided before (not submitted)."""
    return {"member": member, "leader": leader, "lines": [x.decode() for x in lines],
            "recorded": recorded}


def mark_recorded(results: list[WindowResult], acted: dict[str, int], *,
                  floor: int | None = None) -> list[int]:
    """Mark the results whose action key was decided before (in ``acted``: key -> window,
    the group's decisions so far), add the others' keys, then forget the keys of windows
    below ``floor`` (the oldest window a later decision can still be about); the indexes
    marked.

    The outbox is idempotent by key, but each member has its own: a cohort's verdict that
    repeats its window's tier, decided after the decision moved to another member, would
    otherwise be a second action in a second outbox.

    >>> from types import SimpleNamespace as N
    >>> def r(w, tier="mild"):
    ...     return N(decision=N(action="alert", key=f"m:{tier}:{w}", window_id=w),
    ...               action_recorded=False)
    >>> acted = {"m:mild:3": 3}
    >>> mark_recorded([r(4), r(3), r(4)], acted)
    [1, 2]
    >>> sorted(acted)
    ['m:mild:3', 'm:mild:4']
    >>> mark_recorded([r(9)], acted, floor=4), sorted(acted)
    ([], ['m:mild:4', 'm:mild:9'])
    """
    marked = []
    for i, r in enumerate(results):
        d = r.decision
        if d is None or not d.action:
            continue
        if d.key in acted:
            r.action_recorded = True
            marked.append(i)
        else:
            acted[d.key] = int(d.window_id)
    if floor is not None:
        for k in [k for k, w in acted.items() if w < floor]:
            del acted[k]
    return marked
