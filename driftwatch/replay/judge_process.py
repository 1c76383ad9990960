"""Judging a replay's closed windows in a process of its own, beside the loop's intake.

A replay whose files are read in a process of their own
(:mod:`~driftwatch.connectors.file_process`) still takes in and judges every window on
one core: the loop. :class:`JudgeProcess` forks a third process once the monitor is set
up (it inherits the reference, its prepared arrays, the calibrated levels and the policy
engine's state) and hands it, for each poll, the windows the poll closed; the judge
assesses them, lets the policy decide and writes the timeline, as the loop would have.

What judging reads of the loop's state at a window's close is taken there and travels
with the window: the cohort book's step (:meth:`~driftwatch.pipeline.monitor.ModelMonitor.
close_book`: its rows folded, its cohort named, the held predictions of its panes for
the label-free estimates). Judging writes nothing the intake reads, except cohort
verdicts, which read and mark the cohort book as windows are judged: a policy with a
``cohort_*`` rule is judged in the loop (:func:`judges_apart`). The engine state, the
change trackers, the calibrators and the errors of the judging stages live in the judge;
at the end it hands back the timeline's slim records and its error counts.

A judge that stops (killed, or an error of its own) ends the replay with a
:class:`~driftwatch.errors.ReplayError` at the loop's next hand-over or at the end,
never a wait.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from driftwatch.connectors.handover import (
    ended_early,
    fork_child,
    frames,
    pipe,
    receive,
    write_frames,
)
from driftwatch.cores import usable_cores
from driftwatch.errors import ReplayError
from driftwatch.pipeline import ModelMonitor, WindowResult
from driftwatch.windows.panes import ClosedWindow, WindowSpec

__all__ = ["DENSE_PANE", "JudgeProcess", "dense_windows", "judges_apart",
           "why_judged_in_the_loop"]

#: What the judge hands back at the end: the timeline's slim records, its error counts.
Judged = tuple[list[dict[str, Any]], dict[str, int]]


def why_judged_in_the_loop(monitor: ModelMonitor, *, reader_process: bool, executes: bool,
                           hooked: bool) -> str | None:
    """Why a replay's windows must be judged in the loop's process, or None when a judge
    process can take them (the same timeline either way).

    ``reader_process``: the files are read in a process of their own; ``executes``:
    actions run on each window; ``hooked``: the caller reads each window's result in
    this process (``on_window``, ``keep_results``)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform has no fork start method"
    if executes:
        return "--execute runs each window's actions in the loop's process"
    if hooked:
        return "the caller reads each window's result in the loop's process"
    if not reader_process:
        return ("the files are read in the loop's process (--reader thread, or a recording "
                "under 64 MiB)")
    if monitor.judges_cohorts:
        return "the policy's cohort_* rules read the cohort book as each window is judged"
    return None


#: Events per pane of a count window at most which a judge process is worth its cost by
#: default: a window closes with every pane, and judging one costs about as much as
#: taking in a thousand events. On the benchmark (two cores, 25 features) the judge made
#: a replay 1.08-1.17 times faster with 1,000-event panes, gained nothing with 2,000 and
#: cost 4-6% with 3,000 and 10,000: three processes on two cores then contend for what
#: the judge saves the loop.
DENSE_PANE = 1_500


def dense_windows(spec: WindowSpec) -> bool:
    """Whether windows close often enough for a judge process to pay (a count window with
    panes of at most :data:`DENSE_PANE` events; a time window's rate is the stream's,
    unknown ahead: ``--judge process`` asks for one there).

    >>> dense_windows(WindowSpec(kind="count", pane_size=1000, panes=4, mode="sliding"))
    True
    >>> dense_windows(WindowSpec(kind="count", pane_size=1000, panes=10, mode="tumbling"))
    False
    """
    return spec.kind == "count" and spec.effective[0] <= DENSE_PANE


def judges_apart(monitor: ModelMonitor, *, wanted: bool | None, reader_process: bool,
                 executes: bool, hooked: bool,
                 note: Callable[[str], None] | None = None) -> bool:
    """Whether a replay judges its windows in a process of its own: ``wanted`` when
    given (where :func:`why_judged_in_the_loop` finds no reason against it: one is
    passed to ``note`` when the caller asked for the process), else on Linux with a
    second core, where nothing is against it and the windows are dense
    (:func:`dense_windows`)."""
    if wanted is False:
        return False
    why = why_judged_in_the_loop(monitor, reader_process=reader_process, executes=executes,
                                 hooked=hooked)
    if why is not None:
        if wanted and note is not None:
            note(f"the windows are judged in the loop's process, not a judge process: {why}")
        return False
    if wanted:
        return True
    return (sys.platform.startswith("linux") and usable_cores() >= 2
            and dense_windows(monitor.spec))


class JudgeProcess:
    """The judge of a replay's windows, in a forked process (see the module docstring).

    ``emit`` is the replay's own: called in the judge with each hand-over's results (it
    writes the timeline and keeps the slim records there); ``done``, called in the judge
    at the end, closes what ``emit`` writes and returns the records. :meth:`start` it,
    :meth:`send` each poll's closed windows, :meth:`finish`, then :meth:`close`.
    """

    def __init__(self, monitor: ModelMonitor, emit: Callable[[list[WindowResult]], None],
                 done: Callable[[], list[dict[str, Any]]]) -> None:
        self.monitor = monitor
        self._emit = emit
        self._done = done
        self._proc: Any = None
        self._to = self._back = -1  # this process's ends of the two pipes
        #: Windows handed to the judge so far.
        self.sent = 0

    def start(self, *, close: Sequence[int] = ()) -> None:
        """Fork the judge; ``close``: descriptors of this process the judge lets go of
        (another child's pipe, whose writes must fail once this process is gone)."""
        to_r, to_w = pipe()
        back_r, back_w = os.pipe()
        proc = fork_child(self._child, (to_r, back_w, (to_w, back_r, *close)),
                          "driftwatch-judge", ours=(to_w, back_r), theirs=(to_r, back_w))
        self._proc, self._to, self._back = proc, to_w, back_r

    def send(self, closed: list[ClosedWindow]) -> None:
        """Take each window's cohort-book step here, at its close, and hand the windows
        over (nothing when none closed)."""
        if closed:
            self._put("windows", closed)

    def finish(self) -> Judged:
        """End of the recording: close what is open, hand it over, and wait for the
        judge's records and error counts."""
        m = self.monitor
        closed = m.window.flush()
        self._put("end", closed, fold=True)
        try:
            kind, payload = receive(self._back)
        except EOFError:
            raise self._failed() from None
        if kind == "error":
            raise ReplayError(f"judging the windows failed: {payload}")
        self._proc.join(timeout=10)
        return payload  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the judge if it still runs (the replay failed) and let go of the pipes."""
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join(timeout=10)
            os.close(self._to)
            os.close(self._back)
            self._proc, self._to, self._back = None, -1, -1

    # -- this process ----------------------------------------------------------------------
    def _put(self, kind: str, closed: list[ClosedWindow], *, fold: bool = False) -> None:
        m = self.monitor
        held = [m.close_book(c) for c in closed]
        if fold:
            m.fold_all()
        try:
            write_frames(self._to, frames((kind, closed, held), shared=(m.profile.layout,)))
        except OSError:  # the judge is gone
            raise self._failed() from None
        self.sent += len(closed)

    def _failed(self) -> ReplayError:
        """Why the judge stopped: its own error where it said one, else how it ended."""
        try:
            kind, payload = receive(self._back)
            if kind == "error":
                return ReplayError(f"judging the windows failed: {payload}")
        except EOFError:
            pass
        self._proc.join(timeout=10)
        return ReplayError(_ended(self._proc.exitcode))

    # -- the judge -------------------------------------------------------------------------
    def _child(self, read_fd: int, back_fd: int, others: Sequence[int]) -> None:
        for fd in others:
            os.close(fd)
        m = self.monitor
        m.errors_by_stage = {}  # the loop's own (ingest) are counted there
        shared = (m.profile.layout,)
        try:
            while True:
                kind, closed, held = receive(read_fd, shared=shared)
                self._emit(m.judge_held(closed, held))
                if kind == "end":
                    break
            reply: tuple[str, Any] = ("done", (self._done(), m.errors_by_stage))
        except BaseException as exc:  # the loop's process reports it
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            write_frames(back_fd, frames(reply))
        except OSError:  # the loop's process is gone
            os._exit(1)


def _ended(exitcode: int | None) -> str:
    """Why the judge ended early, from its exit code (``-N``: signal ``N``).

    >>> import signal
    >>> _ended(-signal.SIGKILL)
    'the judging process was stopped by SIGKILL before the end of the replay'
    """
    return ended_early("judging", "the end of the replay", exitcode)[0]
