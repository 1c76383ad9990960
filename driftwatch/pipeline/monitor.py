"""One monitored model's path from decoded batches to decisions: the same for live and replay.

``poll -> ModelMonitor.process -> (windows closed -> assess -> policy) -> results``.
Prediction batches feed the label joiner and the pane window; outcome batches are joined
to held predictions and their labelled statistics land in the window of the outcome's
time, and in the prediction's cohort (:mod:`driftwatch.pipeline.cohorts`), whose verdict
comes as a result of its own once enough outcomes are in. Nothing here reads a clock: the
time of a decision is the window's end (event time).

No input stops the monitor. An exception while assessing a window or deciding on it is
kept in that window's result (``error``) and the next window goes on; one while taking in
a poll is kept in :attr:`ModelMonitor.poll_errors` with the events of that poll (which
may have been taken in part) for the caller to count and dead-letter.

Taking in a poll is :mod:`~driftwatch.pipeline.intake`, judging a closed window
:mod:`~driftwatch.pipeline.judging`, the checkpoint state
:mod:`~driftwatch.pipeline.monitor_state` (all three mixed into :class:`ModelMonitor`),
and the results :mod:`~driftwatch.pipeline.results`.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.detectors.assess import Calibrator
from driftwatch.detectors.change import MetricChange
from driftwatch.detectors.config import DetectorConfig
from driftwatch.labels.cohort_book import CohortBook
from driftwatch.labels.features import PendingFeatures
from driftwatch.labels.joiner import LabelJoiner
from driftwatch.labels.landing import LandingBook
from driftwatch.pipeline.intake import PollIntake
from driftwatch.pipeline.judging import WindowJudging
from driftwatch.pipeline.monitor_state import MonitorState
from driftwatch.pipeline.results import PollError, StageError, WindowResult
from driftwatch.policy.levels import CalibratorCache, detector_config
from driftwatch.policy.schema import Policy
from driftwatch.policy.segments import SegmentSettings
from driftwatch.policy.settings import LabelSettings
from driftwatch.policy.state import EngineState
from driftwatch.windows.panes import ClosedWindow, PaneWindow, WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.segments import SegmentCoder

__all__ = [
    "ModelMonitor",
    "PollError",
    "StageError",
    "WindowResult",
    "window_size",
    "window_spec_from_policy",
]

#: Label-join settings without a policy (a policy's ``labels:`` section sets them).
_LABELS = LabelSettings()


def window_size(spec: WindowSpec) -> int | None:
    """Events per full window of a count window (None for time windows)."""
    return int(spec.pane_size * spec.panes) if spec.kind == "count" else None


def window_spec_from_policy(policy: Policy) -> WindowSpec:
    """The policy's window settings as a :class:`WindowSpec`."""
    from driftwatch.policy.durations import parse_duration

    w = policy.window
    pane = float(parse_duration(w.pane)) if isinstance(w.pane, str) else float(w.pane)
    return WindowSpec(
        kind=w.kind,
        pane_size=pane,
        panes=w.panes,
        mode=w.mode,
        allowed_lateness=float(w.allowed_lateness),
    )


class ModelMonitor(PollIntake, WindowJudging, MonitorState):
    """Windows, label joiner, detectors and policy engine for one model."""

    def __init__(
        self,
        model: str,
        profile: ReferenceProfile,
        spec: WindowSpec,
        *,
        detectors: DetectorConfig | None = None,
        policy: Policy | None = None,
        joiner: LabelJoiner | None = None,
        calibrator: Calibrator | None = None,
        lineage: str | None = None,
    ) -> None:
        self.model = model
        #: Names this monitor's run of events: a fresh monitor gets a new one, a restored
        #: checkpoint brings its own back, so event indices of one lineage are comparable.
        self.lineage = lineage if lineage is not None else uuid.uuid4().hex
        self.profile = profile
        self.spec = spec
        self._detectors = detectors
        self.policy = policy
        labels = policy.labels if policy is not None else _LABELS
        self.joiner = joiner or LabelJoiner(labels.ttl, labels.max_pending)
        #: A replay reads an outcomes stream without times of its own ahead of the
        #: predictions (each joins as its prediction is read): its outcomes then wait as
        #: orphans up to ``labels.max_pending``, as predictions do, not a tenth of it (a
        #: live stream's allowance for a lagging prediction stream), which dropped every
        #: outcome past the first 100,000 of a table without times.
        self.outcomes_read_ahead = False
        self._fixed_calibrator = calibrator
        #: Calibrators by reference, rates and window size: a hot reload that keeps the
        #: rates, or a window size seen before, is not resampled again.
        self.calibrators = CalibratorCache(capacity=64)
        self.window = PaneWindow(profile.layout, spec, segments=self._segment_coder())
        self.pending_features = PendingFeatures(profile.schema, labels.pending_feature_rows)
        self.labelled_buffer = LabelledBuffer(profile.schema, labels.labelled_rows)
        #: Whether joined outcomes become labelled training rows (the held feature rows of
        #: pending predictions and the labelled buffer, what online updates, shadows and
        #: retraining exports read). A replay that runs no action keeps none: nothing
        #: would read them, and holding each prediction's features until its outcome is
        #: a third of the intake's cost.
        self.keep_training_rows = True
        self.engine_state = EngineState()
        #: Persistence and hysteresis of cohort verdicts (cohorts in a row).
        self.cohort_state = EngineState()
        self.apply_label_settings()
        #: ``change_point`` trackers per metric series (when the policy names the signal).
        self.changes: dict[str, MetricChange] = {}
        self.n_events = 0
        self.n_outcomes = 0
        #: records read on an outcomes stream (``n_outcomes`` also counts labels that came
        #: on a prediction's own record): with predictions and bad records, all records read
        self.n_outcome_records = 0
        self.bad_by_reason: dict[str, int] = {}
        #: stream -> label value its connector names on no list -> records (bounded)
        self.unknown_labels: dict[str, dict[str, int]] = {}
        #: feature -> (absent, sampled, path) from a probe of the first records, if any
        self.absent_fields: dict[str, tuple[int, int, str]] = {}
        self.errors_by_stage: dict[str, int] = {}
        #: Polls that raised while being taken in, since the caller last took them.
        self.poll_errors: list[PollError] = []
        #: How many retrainings of this model are active now (for the policy's
        #: ``max_concurrent_retrains``); the actions layer sets it from the pool's job
        #: records. Without it (actions listed, not run), no retraining is running.
        self.retrains_running: Callable[[], int] | None = None
        #: Called with every prediction batch as it arrives: challengers in shadow score
        #: live traffic through it (the same hook in the daemon and in replay). It runs
        #: after :attr:`n_events` counts the batch, so the batch holds the events
        #: ``n_events - len(batch)`` to ``n_events - 1`` (indices a checkpoint restores).
        self.on_predictions: Callable[[Batch], None] | None = None

    def record_counts(self) -> dict[str, int]:
        """Records taken in so far: prediction events, outcomes joined or carried on them,
        outcome records read, bad records, and every record read (what a bad-record share
        is taken of, as the data-quality gate's ``bad_record_rate`` is per window)."""
        bad = sum(self.bad_by_reason.values())
        return {"events": self.n_events, "outcomes": self.n_outcomes, "bad_records": bad,
                "outcome_records": self.n_outcome_records,
                "records_read": self.n_events + self.n_outcome_records + bad}

    @property
    def running_retrains(self) -> int:
        return int(self.retrains_running()) if self.retrains_running is not None else 0

    def take_poll_errors(self) -> list[PollError]:
        out, self.poll_errors = self.poll_errors, []
        return out

    def _count_error(self, err: StageError) -> StageError:
        self.errors_by_stage[err.stage] = self.errors_by_stage.get(err.stage, 0) + 1
        return err

    # -- settings ----------------------------------------------------------------------
    @property
    def detectors(self) -> DetectorConfig:
        """The detectors' settings: given at construction, else the policy's."""
        return self._detectors if self._detectors is not None else detector_config(self.policy)

    @property
    def calibrator(self) -> Calibrator | None:
        """The calibrator for the current profile, policy rates and window size.

        Built on first use and rebuilt when any of them changes (a promoted model's
        profile, a hot-reloaded policy, a new window shape); its levels are cached per
        window size inside it. None when the policy asks for no calibrated level.
        """
        if self._fixed_calibrator is not None:
            return self._fixed_calibrator
        if self.policy is None:
            return None
        size = window_size(self.spec)
        return self.calibrators.get(self.profile, self.policy, config=self.detectors,
                                    sizes=() if size is None else (size,))

    def warm_up(self) -> None:
        """Resample the calibrated levels of a count window now, and each segment's at
        its reference share of it (the daemon calls this before it serves HTTP:
        resampling holds the interpreter for a second or two)."""
        cal, size = self.calibrator, window_size(self.spec)
        if cal is not None and size is not None:
            cal.levels(size)
            # each segment at its expected share of the window (a window near it falls
            # on the same grid size)
            for ref in self.profile.segment_references():
                seg = self._segment_calibrator(ref)
                n = int(size * ref.sketch.n / max(self.profile.sketch.n, 1))
                if seg is not None and n >= self.segment_min_events:
                    seg.levels(n)

    # -- segments ----------------------------------------------------------------------
    def _segment_coder(self) -> SegmentCoder | None:
        segs = self.profile.segments
        return None if segs is None else segs.coder

    @property
    def segment_min_events(self) -> int:
        """Events a segment needs (window and reference) for signals of its own."""
        return self.policy.segments.min_events if self.policy is not None \
            else SegmentSettings().min_events

    def _segment_calibrator(self, reference: ReferenceProfile) -> Calibrator | None:
        """A segment's calibrator: on its own reference rows, at its own window sizes."""
        if self._fixed_calibrator is not None or self.policy is None:
            return None
        return self.calibrators.get(reference, self.policy, config=self.detectors,
                                    model_level=False)

    def apply_label_settings(self) -> None:
        """Take the policy's ``labels:`` and ``cohorts:`` sizes (after a reload or a
        restored checkpoint, which holds the sizes it was saved with)."""
        if self.policy is None:
            return
        labels = self.policy.labels
        self.joiner.ttl = float(labels.ttl)
        self.joiner.max_pending = int(labels.max_pending)
        self._size_orphans()
        self.joiner.book.max_cohorts = int(self.policy.cohorts.max_cohorts)
        if self.pending_features.capacity != labels.pending_feature_rows:
            self.pending_features.resize(labels.pending_feature_rows)
        if self.labelled_buffer.capacity != labels.labelled_rows:
            # in place: the actions hold this buffer object
            self.labelled_buffer.adopt(self.labelled_buffer.resized(labels.labelled_rows))
        self._fit_book()

    def read_outcomes_ahead(self) -> None:
        """A replay reads its outcomes without times ahead of the predictions: let all of
        them wait (:attr:`outcomes_read_ahead`), with or without a policy."""
        self.outcomes_read_ahead = True
        self._size_orphans()

    def _size_orphans(self) -> None:
        """Outcomes waiting for their prediction: ``max_pending`` where they are read
        ahead, else a tenth of it (as the joiner is built)."""
        share = 1 if self.outcomes_read_ahead else 10
        self.joiner.max_orphans = max(self.joiner.max_pending // share, 1)

    def _fit_book(self) -> None:
        """Time panes stage cohort rows by the pane they land in
        (:class:`~driftwatch.labels.landing.LandingBook`): a verdict then sees the same
        rows however the stream was cut into polls, or split over a consumer group."""
        j = self.joiner
        book = j.book
        if self.spec.kind == "time":
            size, _ = self.spec.effective
            if not isinstance(book, LandingBook) or book.size != size:
                if isinstance(book, LandingBook):
                    book.fold(math.inf)
                book = j.book = LandingBook.adopt(book, size)
            book.ttl = j.ttl
        elif isinstance(book, LandingBook):
            book.fold(math.inf)
            j.book = CohortBook.from_dict(CohortBook.to_dict(book))

    # -- processing --------------------------------------------------------------------
    def process(self, polled: Polled) -> list[WindowResult]:
        """Feed one poll; returns results of the windows that closed, in order.

        Joined outcomes are charged to the pane open where they sit in the merged
        (event-time) stream, so the windows do not depend on how the stream was cut into
        polls. Without a merged order (Kafka), they sit after the poll's predictions.
        Never raises: a poll that cannot be taken in lands in :attr:`poll_errors`.
        """
        return self._close_all(self.take_in(polled))

    def take_in(self, polled: Polled) -> list[ClosedWindow]:
        """Feed one poll without judging: the windows it closed, in order, for the caller
        to judge (:meth:`judge_closed`, or :meth:`close_book` then :meth:`judge_held`).
        Never raises: a poll that cannot be taken in lands in :attr:`poll_errors`."""
        try:
            return self._take_in(polled)
        except Exception as exc:  # one poison poll must not stop the model
            err = self._count_error(StageError.of("ingest", exc))
            self.poll_errors.append(PollError(err, tuple(b for b in polled.batches if len(b))))
            return []

    def set_profile(self, profile: ReferenceProfile) -> None:
        """Adopt a promoted model's reference profile (idempotent).

        The open window's sketches are on the old bins, so it restarts empty; pending
        feature rows are coded on the old levels, so they are dropped (their outcomes
        still join for the label metrics); the labelled buffer is re-coded.
        """
        if profile.fingerprint == self.profile.fingerprint:
            return
        self.profile = profile
        # window ids stay unique across the swap
        self.window = PaneWindow(profile.layout, self.spec, first_id=self.window.next_id,
                                 segments=self._segment_coder(),
                                 first_pane=self.window.next_pane)
        self.pending_features = PendingFeatures(profile.schema, self.pending_features.capacity)
        self.labelled_buffer = self.labelled_buffer.rebase(profile.schema)
