"""Prediction cohorts in the monitor: which pane a prediction belongs to, the label-free
estimates of each window, and the verdict on a cohort once its outcomes are in.

A cohort is one effective pane of the window (a tumbling window, or one slide of a
sliding one): ``event index // pane size`` for count panes, ``floor(event time / pane
size)`` for time panes (:func:`cohort_ids`). Its labelled statistics live in the label
joiner's :class:`~driftwatch.labels.cohort_book.CohortBook`, whatever the order in which
predictions and outcomes arrive. When the window that closes with a cohort's pane is
judged, the cohort is named after it (``window <id>``) and that window's assessment gets
``expected_bad_rate`` and ``expected_gini`` from the held predictions of its panes.

Once a cohort is complete enough (``cohorts.min_completeness``, or nothing pending any
more), its ``cohort_*`` signals are judged once, as a *verdict on that window*: a
:class:`~driftwatch.pipeline.monitor.WindowResult` with the cohort's window id and span
and ``cohort`` set, decided by the policy with its own persistence and hysteresis (cohorts
in a row) and the model's shared cooldowns, daily limits and data-quality gate. A cohort
rule's tier lands on the cohort's own window, so a clean window does not inherit a tier
from an old cohort's late outcomes (the window-level ``bad_rate``, ``gini`` and
``calibration_ratio`` still measure the outcomes that arrive in a window).

>>> from driftwatch.windows.sketch import SketchLayout
>>> lay = SketchLayout.fit()
>>> spec = WindowSpec(kind="count", pane_size=100, panes=4, mode="sliding")
>>> ids = cohort_ids(PaneWindow(lay, spec), np.zeros(201))
>>> ids[[0, 99, 100, 199, 200]].tolist()
[0, 0, 1, 1, 2]
>>> list(window_panes(spec, 7))
[4, 5, 6, 7]
>>> t = PaneWindow(lay, WindowSpec(kind="time", pane_size=3600.0))
>>> cohort_ids(t, np.array([10.0, 3600.0, np.nan])).tolist()
[0, 1, -1]
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.detectors.cohort import CohortInput, cohort_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.estimated import estimated_signals
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.registry import SIGNALS
from driftwatch.labels.cohort_book import SCALE, Cohort, CohortBook
from driftwatch.policy.decision import Decision
from driftwatch.policy.engine import evaluate
from driftwatch.policy.schema import Policy
from driftwatch.policy.state import EngineState
from driftwatch.windows.panes import ClosedWindow, PaneWindow, WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

__all__ = [
    "COHORT_SIGNALS",
    "Verdict",
    "cohort_ids",
    "cohort_name",
    "estimates_from",
    "judge_cohorts",
    "name_cohort",
    "newest_pane",
    "verdict_window",
    "window_holdings",
    "window_panes",
]

#: The signals judged on a cohort (not on a window).
COHORT_SIGNALS = frozenset(n for n, s in SIGNALS.items() if s.group == "cohort")


def cohort_ids(window: PaneWindow, event_time: np.ndarray) -> np.ndarray:
    """The cohort (effective pane) of each prediction of a batch about to be added to
    ``window``; -1 for a time pane without an event time."""
    spec = window.spec
    size, _ = spec.effective
    n = len(event_time)
    if spec.kind == "count":
        return window.count_panes(n)
    t = np.asarray(event_time, dtype=np.float64)
    out = np.full(n, -1, dtype=np.int64)
    ok = np.isfinite(t)
    out[ok] = np.floor(t[ok] / size).astype(np.int64)
    return out


def newest_pane(cw: ClosedWindow) -> int | None:
    """The pane a closed window closed with (None when it held no prediction)."""
    return None if cw.pane < 0 or cw.first_index < 0 else int(cw.pane)


def window_panes(spec: WindowSpec, newest: int) -> range:
    """The panes a window that closed with pane ``newest`` sums."""
    _, k = spec.effective
    return range(newest - k + 1, newest + 1)


def cohort_name(window_id: int) -> str:
    return f"window {window_id}"


def name_cohort(book: CohortBook, cw: ClosedWindow) -> None:
    """Name the cohort ``cw`` closed with after it (once)."""
    newest = newest_pane(cw)
    if newest is not None:
        book.set_window(newest, cw.window_id, cw.start_time, cw.end_time)


def window_holdings(book: CohortBook, spec: WindowSpec, cw: ClosedWindow,
                    cfg: DetectorConfig) -> Cohort | None:
    """The held predictions of the window's panes as the book holds them now (what its
    estimates read), or None when it gets no estimate: a window that judges apart from
    its intake takes this at its close, as the book then is."""
    newest = newest_pane(cw)
    if newest is None or not cfg.wants_group("estimated"):
        return None
    return book.total(window_panes(spec, newest))


def estimates_from(profile: ReferenceProfile, total: Cohort | None,
                   cfg: DetectorConfig) -> list[SignalResult]:
    """The label-free estimates of a window whose panes hold ``total`` (None: none)."""
    if total is None:
        return []
    return estimated_signals(prepare(profile), total.pred_n,
                             total.pred_pd.astype(np.float64) / SCALE, cfg)


@dataclasses.dataclass
class Verdict:
    """A judged cohort: its assessment, the decision and the engine state after it."""

    cohort: Cohort
    assessment: Assessment
    decision: Decision | None
    state: EngineState
    summary: dict[str, Any]


def _ready(c: Cohort, min_completeness: float, min_labelled: int) -> bool:
    """Complete enough with enough outcomes, or final (nothing pending any more)."""
    if c.judged or c.window_id < 0 or c.predicted == 0:
        return False
    if c.resolved >= 1.0:
        return True
    return c.completeness >= min_completeness and c.labelled >= min_labelled


def judge_cohorts(
    *,
    model: str,
    profile: ReferenceProfile,
    book: CohortBook,
    policy: Policy,
    cfg: DetectorConfig,
    cohort_state: EngineState,
    window_state: EngineState,
    now: float,
    ttl: float,
    running_retrains: int = 0,
) -> list[Verdict]:
    """Judge every cohort that became ready (oldest first), once each; a final cohort
    with fewer than ``cfg.min_labelled`` outcomes is set aside without a verdict.

    The decisions use ``cohort_state`` for persistence and hysteresis, and the window
    engine's cooldowns, daily action times and data-quality gate (``window_state``): the
    caller writes the returned states' cooldowns and action times back to the window
    engine so both share one blast radius. A gate the windows left closed holds a
    verdict's action; a verdict, with no data-quality signal of its own, neither opens
    it nor runs its action again."""
    prep = prepare(profile)
    out: list[Verdict] = []
    shared = window_state
    for c in book.cohorts():
        if not _ready(c, policy.cohorts.min_completeness, cfg.min_labelled):
            continue
        c.judged = True
        summary = c.summary(now, ttl)
        extra = {k: summary[k] for k in ("window_id", "completeness", "resolved", "matured",
                                         "predicted", "expected_bad_rate", "log_loss")}
        sig = cohort_signals(
            CohortInput(cohort_name(c.window_id), c.lab_n, c.lab_pd.astype(np.float64) / SCALE,
                        c.lab_pq / SCALE, extra, seed=c.key),
            ref_bad_rate=prep.bad_rate, ref_gini=prep.disc.gini,
            n_ref=prep.n_labelled, cfg=cfg)
        if not sig:  # final with too few outcomes: nothing to judge
            continue
        a = Assessment(model=model, window_id=c.window_id, start_time=c.start_time,
                       end_time=c.end_time, n_events=c.predicted, signals=tuple(sig),
                       n_labelled=c.labelled)
        st = dataclasses.replace(
            cohort_state, cooldown_until=shared.cooldown_until,
            action_times=shared.action_times, dq_fault=shared.dq_fault,
            dq_clean_windows=shared.dq_clean_windows)
        decision, cohort_state = evaluate(policy, a, st, now=now,
                                          running_retrains=running_retrains,
                                          reads_feed=False)
        shared = dataclasses.replace(shared, cooldown_until=cohort_state.cooldown_until,
                                     action_times=cohort_state.action_times)
        out.append(Verdict(c, a, decision, cohort_state, summary))
    return out


def verdict_window(layout: Any, v: Verdict) -> ClosedWindow:
    """The cohort's window, as the verdict's result carries it (no sketch of its own)."""
    c = v.cohort
    return ClosedWindow(window_id=c.window_id, sketch=Sketch.empty(layout),
                        start_time=c.start_time, end_time=c.end_time, first_index=-1,
                        last_index=-1)
