"""Judging a monitor's closed windows: the cohort book's step at each close, the
detectors, the policy engine and cohort verdicts.

A window's close has two parts. :meth:`WindowJudging.close_book` is the cohort book's:
fold the rows landed up to the window's end, name its cohort, take the held predictions
of its panes (what its label-free estimates read). :meth:`WindowJudging.judge` assesses
the window against the reference and lets the policy decide. Judging writes nothing of
the book back but cohort verdicts (:meth:`WindowJudging._verdicts`), so where a policy
has no ``cohort_*`` rule a window may be judged apart from its intake, on what the book
held at its close (:meth:`WindowJudging.judge_held`: a replay's judge process). Windows
closed together have their drift statistics computed in one pass first
(:func:`~driftwatch.detectors.stacked.window_stats`).

:class:`WindowJudging` is mixed into :class:`~driftwatch.pipeline.monitor.ModelMonitor`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from driftwatch.detectors.assess import assess, segment_windows
from driftwatch.detectors.base import Assessment
from driftwatch.detectors.change import MetricChange, change_signals
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.stacked import WindowStats, window_stats
from driftwatch.labels.cohort_book import Cohort
from driftwatch.labels.landing import LandingBook
from driftwatch.pipeline.cohorts import (
    COHORT_SIGNALS,
    estimates_from,
    judge_cohorts,
    name_cohort,
    verdict_window,
    window_holdings,
)
from driftwatch.pipeline.results import StageError, WindowResult
from driftwatch.policy.engine import evaluate
from driftwatch.windows.panes import ClosedWindow

__all__ = ["STUB_COVERAGE", "Holdings", "WindowJudging", "is_stub"]

#: What :meth:`WindowJudging.close_book` gives a window: the held predictions of its panes
#: (None: it gets no estimate), or the error taking them raised, which its judging records.
Holdings = Cohort | None | Exception

#: :meth:`WindowJudging.judge` reads the window's holdings from the book itself.
_FROM_BOOK: Holdings = Exception("holdings read from the book")

#: A window cut short (:meth:`~driftwatch.windows.panes.PaneWindow.flush`: the end of a
#: finite stream, as a replay's last window, or a daemon's change of window or reference)
#: that covers less than this share of a full window is a *stub*: the policy does not
#: judge what it measures on its few predictions (drift, score, feature data quality,
#: estimates, approvals), which on a handful of events is noise; only its labels and its
#: bad records, the latter as a share of a full window's records (:func:`is_stub`).
STUB_COVERAGE = 0.5

#: What the policy still reads of a stub: signals on labels (they matured whatever the
#: stub's size), its bad records, and the run's absent fields.
_STUB_GROUPS = frozenset({"performance", "cohort"})
_STUB_SIGNALS = frozenset({"bad_rate", "bad_record_rate", "field_absent"})


def is_stub(cw: ClosedWindow) -> bool:
    """Whether ``cw`` is a stub (see :data:`STUB_COVERAGE`).

    >>> from driftwatch.windows.sketch import Sketch, SketchLayout
    >>> import numpy as np
    >>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(10.0)[:, None])
    >>> cw = ClosedWindow(0, Sketch.empty(lay), 0.0, 1.0, 0, 9, partial=True)
    >>> is_stub(cw), is_stub(dataclasses.replace(cw, tail_coverage=0.01))
    (False, True)
    """
    return cw.tail_coverage is not None and cw.tail_coverage < STUB_COVERAGE


class WindowJudging:
    """The judging side of :class:`~driftwatch.pipeline.monitor.ModelMonitor` (see the
    module docstring); a mixin, it holds no state of its own."""

    def _close_all(self, closed: list[ClosedWindow]) -> list[WindowResult]:
        """Judge windows closed together, in order, their drift statistics computed in
        one pass first (:func:`window_stats`)."""
        stats = self._drift_stats(closed)
        return [r for c, st in zip(closed, stats, strict=True) for r in self._close(c, st)]

    def _drift_stats(self, closed: list[ClosedWindow]) -> list[WindowStats | None]:
        """The drift statistics (score divergences, data-quality numbers) of windows closed
        together, in one numpy pass: on arrays of ``features × bins`` a call costs its
        overhead, and a poll closes several windows. None for a window left out (empty,
        or on other bins) and for all where one pass is not worth it or raises: each
        window then computes its own in ``assess``, where a failure is recorded against
        that window alone."""
        out: list[WindowStats | None] = [None] * len(closed)
        if len(closed) < 2:
            return out
        try:
            cfg = self.detectors  # the data-quality numbers are always computed
            layout = self.profile.layout
            at = [i for i, c in enumerate(closed)
                  if c.sketch.n > 0 and c.sketch.layout is layout]
            if len(at) < 2:
                return out
            got = window_stats(prepare(self.profile), [closed[i].sketch for i in at], cfg)
        except Exception:  # the windows' own passes meet it again, each in its result
            return out
        for i, st in zip(at, got, strict=True):
            out[i] = st
        return out

    def flush(self) -> list[WindowResult]:
        """End of a finite stream: close what is open (the last window is partial)."""
        out = self._close_all(self.window.flush())
        self.fold_all()
        return out + self._verdicts(self.window.watermark)

    def fold_all(self) -> None:
        """End of a finite stream, its last windows closed: fold every cohort row staged."""
        if isinstance(self.joiner.book, LandingBook):
            self.joiner.book.fold(math.inf)

    def judge_closed(self, closed: Sequence[ClosedWindow]) -> list[WindowResult]:
        """Judge windows closed elsewhere (a consumer group's merged panes), in order, as
        windows closed here together are: each one's result, then the verdicts of the
        cohorts it makes ready; their drift statistics in one pass first."""
        return self._close_all(list(closed))

    def _close(self, cw: ClosedWindow, stats: WindowStats | None = None
               ) -> list[WindowResult]:
        held = self.close_book(cw)
        return [self.judge(cw, stats=stats, held=held), *self._verdicts(cw.end_time)]

    def close_book(self, cw: ClosedWindow) -> Holdings:
        """The cohort book's part of a window's close, before it is judged: fold the rows
        landed up to its end, name its cohort, and take the held predictions of its panes
        (what its estimates read; an error taking them is returned for its judging to
        record). Judging writes nothing of the book back but cohort verdicts, so where a
        policy has no ``cohort_*`` rule a window may be judged apart from its intake
        (:meth:`judge_held`) on what this returns at its close."""
        if isinstance(self.joiner.book, LandingBook) and cw.pane >= 0:
            self.joiner.book.fold(cw.pane)  # the rows landed up to this window's end
        name_cohort(self.joiner.book, cw)  # first: a failing detector leaves it named
        try:
            return window_holdings(self.joiner.book, self.spec, cw, self.detectors)
        except Exception as exc:  # recorded as the window's estimates' error
            return exc

    def judge_held(self, closed: Sequence[ClosedWindow], held: Sequence[Holdings]
                   ) -> list[WindowResult]:
        """Judge windows closed together whose book step (:meth:`close_book`) ran where
        they closed, in order, as :meth:`process` judges them: the drift statistics in
        one pass, then each one's result and the verdicts it makes ready (none where the
        policy has no ``cohort_*`` rule, the only case this is for)."""
        stats = self._drift_stats(list(closed))
        return [r for c, st, h in zip(closed, stats, held, strict=True)
                for r in (self.judge(c, stats=st, held=h), *self._verdicts(c.end_time))]

    @property
    def judges_cohorts(self) -> bool:
        """Whether the policy has a ``cohort_*`` rule: its verdicts read and mark the
        cohort book as windows are judged."""
        pol = self.policy
        return pol is not None and any(r.detector in COHORT_SIGNALS for r in pol.signals)

    def _verdicts(self, now: float) -> list[WindowResult]:
        """Cohorts ready to be judged, when the policy has a ``cohort_*`` rule."""
        pol = self.policy
        if pol is None or not self.judges_cohorts:
            return []
        try:
            found = judge_cohorts(
                model=self.model, profile=self.profile, book=self.joiner.book, policy=pol,
                cfg=self.detectors, cohort_state=self.cohort_state,
                window_state=self.engine_state, now=now, ttl=self.joiner.ttl,
                running_retrains=self.running_retrains)
        except Exception as exc:  # like a window's: recorded, and the stream goes on
            self._count_error(StageError.of("cohorts", exc))
            return []
        out = []
        for v in found:
            self.cohort_state = v.state
            self.engine_state = dataclasses.replace(
                self.engine_state, cooldown_until=v.state.cooldown_until,
                action_times=v.state.action_times)
            out.append(WindowResult(window=verdict_window(self.profile.layout, v),
                                    assessment=v.assessment, decision=v.decision,
                                    cohort=v.summary))
        return out

    def judge(self, cw: ClosedWindow, *, stats: WindowStats | None = None,
              held: Holdings = _FROM_BOOK) -> WindowResult:
        """Assess a closed window against the reference and let the policy decide on it
        (engine state carries over: persistence, hysteresis and cooldowns count windows
        judged here in order). The Python API closes its own windows and calls this.
        ``stats``: the window's drift statistics, computed with other windows' in one pass.
        ``held``: what :meth:`close_book` took for it (else the book is read now).
        Never raises: a stage that does is kept in the result's ``error``.
        A stub (:func:`is_stub`) is assessed in full, and judged on part of it."""
        stub = is_stub(cw)
        try:
            a = assess(
                self.profile,
                cw.sketch,
                model=self.model,
                window_id=cw.window_id,
                start_time=cw.start_time,
                end_time=cw.end_time,
                config=self.detectors,
                calibrator=self.calibrator,
                bad_records={"rejected": cw.sketch.n_bad},
                records_at_least=self._full_records(cw) if stub else 0,
                absent_fields=self.absent_fields or None,
                segments=segment_windows(self.profile, cw.segments,
                                         min_events=self.segment_min_events,
                                         calibrator=self._segment_calibrator),
                stats=stats,
            )
        except Exception as exc:  # recorded in the window's result; the next window goes on
            empty = Assessment(model=self.model, window_id=cw.window_id,
                               start_time=cw.start_time, end_time=cw.end_time,
                               n_events=int(cw.sketch.n))
            return WindowResult(window=cw, assessment=empty,
                                error=self._count_error(StageError.of("detectors", exc)))
        if self._follows_changes() and not stub:
            extra = change_signals(self.changes, a.signals, self._new_change)
            a = dataclasses.replace(a, signals=(*a.signals, *extra))
        try:  # label-free estimates from the held predictions of this window's panes
            if held is _FROM_BOOK:
                held = window_holdings(self.joiner.book, self.spec, cw, self.detectors)
            if isinstance(held, Exception):
                raise held
            est = estimates_from(self.profile, held, self.detectors)
        except Exception as exc:
            return WindowResult(window=cw, assessment=a,
                                error=self._count_error(StageError.of("detectors", exc)))
        if est:
            a = dataclasses.replace(a, signals=(*a.signals, *est))
        decision = None
        if self.policy is not None:
            seen = a if not stub else dataclasses.replace(a, signals=tuple(
                s for s in a.signals if s.group in _STUB_GROUPS or s.signal in _STUB_SIGNALS))
            try:
                decision, self.engine_state = evaluate(
                    self.policy,
                    seen,
                    self.engine_state,
                    now=cw.end_time,
                    running_retrains=self.running_retrains,
                )
                if stub:
                    decision = dataclasses.replace(decision, notes=(
                        _stub_note(cw), *decision.notes))
            except Exception as exc:  # the engine state stays as it was before this window
                return WindowResult(window=cw, assessment=a,
                                    error=self._count_error(StageError.of("policy", exc)))
        return WindowResult(window=cw, assessment=a, decision=decision)

    def _full_records(self, cw: ClosedWindow) -> int:
        """A full window's records, as a stub's bad records are measured against: a count
        window's events, or a time window's records read scaled to its whole span."""
        if self.spec.kind == "count":
            size, k = self.spec.effective
            return int(size) * k
        sk = cw.sketch
        read = int(sk.n) + int(sk.n_bad) + int(sk.n_outcome_records)
        return math.ceil(read / max(cw.tail_coverage or 0.0, 0.01))

    def _follows_changes(self) -> bool:
        return self.policy is not None and any(
            r.detector == "change_point" for r in self.policy.signals)

    def _new_change(self, series: str) -> MetricChange:
        c = self.policy.detectors.change  # type: ignore[union-attr]
        return MetricChange(c.method, delta=c.delta, threshold=c.threshold,
                            min_windows=c.min_windows)

    def apply_change_settings(self) -> None:
        """Give every ``change_point`` tracker the policy's ``detectors.change`` settings
        (after a reload, or a restored checkpoint whose trackers hold the settings they
        were built with), keeping the series each has followed since its last change."""
        if self.policy is None:
            return
        c = self.policy.detectors.change
        want = (c.method, float(c.delta), float(c.threshold), int(c.min_windows))
        for series, t in list(self.changes.items()):
            if t.settings != want:
                self.changes[series] = t.retuned(c.method, delta=c.delta,
                                                 threshold=c.threshold,
                                                 min_windows=c.min_windows)


def _stub_note(cw: ClosedWindow) -> str:
    return (f"stub: cut short (the end of the stream, or a new window or reference) at "
            f"{cw.tail_coverage:.0%} of a full window ({cw.sketch.n:,} events), too little "
            f"to judge its drift, "
            f"scores, feature quality, estimates or approvals; its labels are judged, "
            f"and its bad records as a share of a full window's records")
