"""The monitoring pipeline both composition roots run: batches in, judged windows out.

:class:`~driftwatch.pipeline.monitor.ModelMonitor` joins labels, sketches panes, assesses
closed windows against the reference and asks the policy engine; the daemon and replay
differ only in where batches come from and what happens to the decisions.
"""

from driftwatch.pipeline.monitor import (
    ModelMonitor,
    PollError,
    StageError,
    WindowResult,
    window_size,
    window_spec_from_policy,
)

__all__ = [
    "ModelMonitor",
    "PollError",
    "StageError",
    "WindowResult",
    "window_size",
    "window_spec_from_policy",
]
