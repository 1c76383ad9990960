"""A monitor's checkpoint state: what it writes, and how it comes back.

:meth:`MonitorState.state_dict` gives the window, the label joiner and its cohort book,
the engines' state, the held feature rows, the labelled buffer and the counters, JSON-safe
or for a binary checkpoint; :meth:`MonitorState.load_state` restores them onto a monitor
built on the same profile and spec. :class:`MonitorState` is mixed into
:class:`~driftwatch.pipeline.monitor.ModelMonitor`.
"""

from __future__ import annotations

from typing import Any

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.detectors.change import MetricChange
from driftwatch.labels.features import PendingFeatures
from driftwatch.labels.joiner import LabelJoiner
from driftwatch.labels.landing import LandingBook
from driftwatch.policy.state import EngineState
from driftwatch.statetree import Capture
from driftwatch.windows.panes import PaneWindow

__all__ = ["MonitorState"]


class MonitorState:
    """The checkpoints' side of :class:`~driftwatch.pipeline.monitor.ModelMonitor` (see
    the module docstring); a mixin, it holds no state of its own."""

    # -- checkpoints -------------------------------------------------------------------
    def state_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """This monitor's state: JSON-safe, or for a binary checkpoint when given the
        store's ``capture`` (arrays stay arrays, append-only tables give new rows only)."""
        return {
            "model": self.model,
            "profile": self.profile.fingerprint,
            "window": self.window.to_dict(arrays=capture is not None),
            "joiner": self.joiner.to_dict(capture),
            "engine": self.engine_state.to_dict(),
            "cohort_engine": self.cohort_state.to_dict(),
            "pending_features": self.pending_features.to_dict(capture),
            "labelled_buffer": self.labelled_buffer.to_dict(capture),
            "n_events": self.n_events,
            "lineage": self.lineage,
            "n_outcomes": self.n_outcomes,
            "n_outcome_records": self.n_outcome_records,
            "bad_by_reason": dict(sorted(self.bad_by_reason.items())),
            "unknown_labels": {s: dict(sorted(v.items()))
                               for s, v in sorted(self.unknown_labels.items())},
            "errors_by_stage": dict(sorted(self.errors_by_stage.items())),
            "changes": {k: v.to_dict() for k, v in sorted(self.changes.items())},
        }

    def load_state(self, d: dict[str, Any]) -> None:
        self.window = PaneWindow.from_dict(self.profile.layout, self.spec, d["window"],
                                           segments=self._segment_coder())
        self.joiner = LabelJoiner.from_dict(d["joiner"])
        if "landing" in d["joiner"].get("book", {}):
            size, _ = self.spec.effective
            self.joiner.book = LandingBook.from_dict(d["joiner"]["book"], pane_size=size)
        self.engine_state = EngineState.from_dict(d["engine"])
        self.cohort_state = EngineState.from_dict(d["cohort_engine"]) \
            if "cohort_engine" in d else EngineState()
        self.pending_features = PendingFeatures.from_dict(
            self.profile.schema, d["pending_features"]
        )
        self.labelled_buffer = LabelledBuffer.from_dict(self.profile.schema, d["labelled_buffer"])
        self.n_events = int(d["n_events"])
        self.lineage = str(d.get("lineage") or self.lineage)
        self.n_outcomes = int(d["n_outcomes"])
        # a checkpoint from before the count: its outcomes, labels inline included
        self.n_outcome_records = int(d.get("n_outcome_records", self.n_outcomes))
        self.bad_by_reason = dict(d["bad_by_reason"])
        self.unknown_labels = {s: dict(v) for s, v in d.get("unknown_labels", {}).items()}
        self.errors_by_stage = dict(d.get("errors_by_stage", {}))
        self.changes = {k: MetricChange.from_dict(v) for k, v in d.get("changes", {}).items()}
        self.apply_label_settings()
        self.apply_change_settings()
