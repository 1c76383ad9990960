"""Deciding for a consumer group: the merge, the judging and leadership.

The instance that owns the model's leader partition merges the complete panes the pane
log holds, judges the windows they close and puts its state and the batch's lines in the
log, durable, before the timeline and the actions see them (``outputs.py``). When it gains
the leader partition it rebuilds the merge from the log and resumes from the last state
kept there. :class:`Leadership` holds these steps for
:class:`~driftwatch.service.group.runtime.GroupRuntime`, which mixes it in and supplies
the attributes they read (``pane_log``, ``merger``, ``monitor``, ``timeline``, ...).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.pipeline import WindowResult
from driftwatch.policy.state import EngineState
from driftwatch.replay.isolation import timeline_record
from driftwatch.service.group import cohorts as group_cohorts
from driftwatch.service.group.labelled import LOG_ROWS_BYTES, LabelledParts, row_bytes
from driftwatch.service.group.merge import PaneMerger
from driftwatch.service.group.outputs import (
    crash_point,
    lines_value,
    mark_recorded,
    recovered_result,
    unwritten,
)
from driftwatch.service.group.panelog import LogEntry, pane_segments
from driftwatch.service.model import _OPTS
from driftwatch.windows.panes import PaneWindow

__all__ = ["Leadership"]

# the runtime's logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.group.runtime")


class Leadership:
    """The decider's steps of a :class:`~driftwatch.service.group.runtime.GroupRuntime`
    (see the module docstring); a mixin, it holds no state of its own."""

    # -- deciding ------------------------------------------------------------------------
    def _decide(self) -> list[WindowResult]:
        if self.merger is None:
            return []
        for e in self.pane_log.read():
            self._note(e)
        below = self.merger.complete_below
        self._cohorts_merged += self.cohort_parts.stage_into(
            self.monitor.joiner.book, below=below, late_at=self.merger.next_pane)
        # the labelled rows of the panes about to merge: the actions of the windows they
        # close learn from them, as one process's would
        self._labelled_merged += self.labelled_parts.feed(self.monitor.labelled_buffer,
                                                          below=below)
        closed = []
        for k, sk, first, last, segments in self.merger.complete():
            cw = self.monitor.window.close_merged(k, sk, first=first, last=last,
                                                  segments=segments)
            if cw is not None:
                closed.append(cw)
        # each window, then the verdicts of the cohorts it makes ready
        results = self.monitor.judge_closed(closed)
        if not results:
            return []
        # the state after this batch and the batch's lines, durable in one message before
        # the timeline and the actions see them: whoever decides next resumes after the
        # batch, and this member completes it after a crash (outputs.py)
        records = [timeline_record(r) for r in results]
        lines = [orjson.dumps(r, option=_OPTS) for r in records]
        # an action key the group decided before is not submitted again (outputs.py)
        recorded = mark_recorded(results, self._acted, floor=self._verdict_floor())
        leader = self._leader_dict()
        first = results[0].window.window_id
        self.pane_log.put("outputs", lines_value(self.member, leader, lines, recorded),
                          pane=first)
        for part, pane in self.merger.merged:
            self.pane_log.forget(part, pane)
        self.merger.merged.clear()
        for pane, part in self._cohorts_merged:  # staged in the state just put
            self.pane_log.forget(part, pane, kind="cohorts")
        self._cohorts_merged.clear()
        for pane, part in self._labelled_merged:  # in the buffer of the state just put
            self.pane_log.forget(part, pane, kind="labelled")
        self._labelled_merged.clear()
        self.pane_log.flush()
        crash_point()  # a test hook, unarmed unless its variable names an existing file
        self._record(results, records)
        self.timeline.sync()
        self._unacked.append((first, leader))
        return results

    def _acknowledge(self) -> None:
        """The batches handed to the daemon before are written and their actions
        submitted: their state under ``leader`` (kept when compaction drops the batch),
        then a tombstone for each batch. Not waited for: a batch the log still holds is
        completed again on restart, and finds everything there."""
        for i, (first, leader) in enumerate(self._unacked):
            if leader is not None and self.deciding and i == len(self._unacked) - 1:
                self.pane_log.put("leader", leader)
            self.pane_log.forget(None, first, kind="outputs")
        self._unacked.clear()

    def _complete(self, data: bytes) -> list[WindowResult]:
        """This member's batches the log holds unacknowledged (it was killed between the
        log and its outputs): the lines not in the timeline yet are written; every window
        goes back to the daemon, whose outbox skips the actions it holds already."""
        if not self._pending:
            return []
        out: list[WindowResult] = []
        for first in sorted(self._pending):
            lines, recorded = self._pending[first]
            missing = unwritten(lines, data)
            for line in missing:
                self.timeline.write(line)
                rec = orjson.loads(line)
                if not rec.get("cohort"):  # a cohort's verdict judges an earlier window
                    self.windows += 1
                    self.tier = str(rec.get("tier", self.tier))
            batch = [recovered_result(x, self.monitor.profile.layout) for x in lines]
            for i in recorded:  # decided before this batch: not submitted the first time
                batch[i].action_recorded = True
            out += batch
            self._unacked.append((first, None))
            log.warning("%s: completed the batch from window %d, decided here before this "
                        "instance stopped (%d of %d lines were missing)", self.name, first,
                        len(missing), len(lines))
        self._pending.clear()
        self.timeline.sync()
        return out

    def _note(self, e: LogEntry) -> None:
        if e.kind == "outputs" and e.pane is not None:
            if e.deleted:
                self._pending.pop(e.pane, None)
                return
            self._leader_state = e.value["leader"]
            if e.value.get("member") == self.member:
                self._pending[e.pane] = ([x.encode() for x in e.value["lines"]],
                                         [int(i) for i in e.value.get("recorded", ())])
            return
        if e.deleted:
            return
        if e.kind == "state" and e.partition is not None:
            self._states[e.partition] = e.value
        elif e.kind == "leader":
            self._leader_state = e.value
        elif e.kind == "mark" and e.partition is not None and "idle" in e.value:
            (self._marked_idle.add if e.value["idle"] else self._marked_idle.discard)(
                e.partition)
        if self.merger is None or e.partition is None:
            return
        if e.kind == "pane" and e.pane is not None:
            from driftwatch.windows.sketch import Sketch

            layout = self.monitor.profile.layout
            self.merger.add_pane(e.partition, e.pane,
                                 Sketch.from_dict(layout, e.value["sketch"]),
                                 provisional=bool(e.value.get("provisional")),
                                 segments=pane_segments(layout, e.value,
                                                        self.monitor.window.segments))
        elif e.kind == "cohorts" and e.pane is not None:
            self.cohort_parts.add(e.partition, e.pane, e.value["cohorts"],
                                  next_pane=self.merger.next_pane,
                                  provisional=bool(e.value.get("provisional")),
                                  passed=self._passed(e))
        elif e.kind == "labelled" and e.pane is not None:
            self.labelled_parts.add(e.partition, e.pane, e.value["rows"],
                                    next_pane=self.merger.next_pane,
                                    provisional=bool(e.value.get("provisional")),
                                    passed=self._passed(e))
        elif e.kind in ("mark", "state"):
            f = e.value.get("frontier")
            self.merger.add_mark(e.partition, None if f is None else int(f),
                                 idle=e.value.get("idle"))

    def _verdict_floor(self) -> int:
        """The oldest window a later decision can be about: that of the oldest cohort
        not judged yet, else the next window's)."""
        ids = [c.window_id for c in self.monitor.joiner.book.cohorts()
               if c.window_id >= 0 and not c.judged]
        return min(ids, default=self.monitor.window.next_id)

    def _passed(self, e: LogEntry) -> bool:
        """Rows published for a pane the merge passed while their partition was idle:
        the pane is at or past the partition's mark (rows come before the mark that
        covers them; a re-published copy is below it)."""
        assert self.merger is not None and e.partition is not None and e.pane is not None
        return e.pane >= self.merger.marks.get(e.partition, e.pane)

    # -- leadership ----------------------------------------------------------------------
    @property
    def _log_rows(self) -> int:
        """The newest labelled rows the decider's state carries (within a message)."""
        return max(1, LOG_ROWS_BYTES // row_bytes(self.monitor.profile.schema))

    def _leader_dict(self) -> dict[str, Any]:
        m = self.monitor
        assert self.merger is not None
        return {"merge": self.merger.progress(), "window": m.window.to_dict(),
                "engine": m.engine_state.to_dict(),
                "changes": {k: v.to_dict() for k, v in sorted(m.changes.items())},
                "book": m.joiner.book.to_dict(), "cohort_engine": m.cohort_state.to_dict(),
                "labelled": m.labelled_buffer.to_dict(last=self._log_rows),
                "acted": dict(sorted(self._acted.items())),
                "early": {"cohorts": self.cohort_parts.progress(),
                          "labelled": self.labelled_parts.progress()}}

    def _lead(self) -> None:
        """This instance now owns the leader partition: rebuild the merge from the log."""
        from driftwatch.detectors.change import MetricChange

        m = self.monitor
        coder = m.window.segments  # the policy's segments: the decider's windows keep them
        self.merger = PaneMerger(m.profile.layout, n_partitions=self.n_partitions,
                                 n_segments=0 if coder is None else len(coder))
        self.cohort_parts = group_cohorts.CohortParts()
        self._cohorts_merged = []
        self.labelled_parts = LabelledParts(m.profile.schema)
        self._labelled_merged = []
        self.pane_log.rewind()
        for e in self.pane_log.read(to_end=True):
            self._note(e)
        d = self._leader_state
        if d is not None:
            self.merger.resume(d["merge"])
            early = d.get("early", {})  # rows merged from idle partitions' copies
            self.cohort_parts.resume(early.get("cohorts", []))
            self.labelled_parts.resume(early.get("labelled", []))
            self.cohort_parts.drop_below(self.merger.next_pane)
            self.labelled_parts.drop_below(self.merger.next_pane)
            m.window = PaneWindow.from_dict(m.profile.layout, m.spec, d["window"],
                                            segments=coder)
            m.engine_state = EngineState.from_dict(d["engine"])
            m.changes = {k: MetricChange.from_dict(v) for k, v in d["changes"].items()}
            m.apply_change_settings()  # the trackers as saved, under today's policy
            if "book" in d:  # the merged cohorts, and the persistence of their verdicts
                group_cohorts.restore_leader(m, d["book"], d["cohort_engine"])
            self._acted = {str(k): int(w) for k, w in d.get("acted", {}).items()}
            if "labelled" in d:  # in place: the actions hold this buffer
                m.labelled_buffer.adopt(LabelledBuffer.from_dict(m.profile.schema,
                                                                 d["labelled"]))
        log.info("%s: this instance decides now (from pane %s)", self.name,
                 self.merger.next_pane)
