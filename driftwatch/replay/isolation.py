"""What the run loop and replay do with a stage that raised: record it, dead-letter, go on.

A window whose detectors or policy raised still gets its timeline line, with ``error``;
a window whose timeline line cannot be built gets a minimal one; the events of a poll the
monitor could not take in become dead letters with reason ``processing_error``.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.pipeline import PollError, StageError
>>> b = Batch.empty("predictions", n_numeric=1, n_categorical=0)
>>> err = PollError(StageError("ingest", "IndexError: index 7 is out of bounds"), (b,))
>>> poison_records(err)
[]
"""

from __future__ import annotations

from typing import Any

from driftwatch.connectors.base import BadRecord
from driftwatch.pipeline import PollError, StageError, WindowResult
from driftwatch.replay.timeline import when, window_record

__all__ = ["PROCESSING_ERROR", "poison_records", "timeline_record"]

#: The dead-letter reason of an event whose poll raised past decoding.
PROCESSING_ERROR = "processing_error"


def timeline_record(res: WindowResult, numbered: bool = False) -> dict[str, Any]:
    """The window's timeline line (with ``error`` when a stage failed); never raises.
    ``numbered``: event times are record numbers (``event_time: {source: order}``)."""
    try:
        rec = window_record(res, numbered)
    except Exception as exc:  # the line a report reads must not cost the next window
        res.error = res.error or StageError.of("timeline", exc)
        cw = res.window
        rec = {"model": res.assessment.model, "window_id": cw.window_id,
               "start_time": cw.start_time, "end_time": cw.end_time,
               "start": when(cw.start_time, numbered), "end": when(cw.end_time, numbered),
               "signals": [],
               "tier": "none", "decision": None}
    if res.error is not None:
        rec["error"] = res.error.to_dict()
    return rec


def poison_records(err: PollError) -> list[BadRecord]:
    """One dead letter per event of a poll that raised: its id, stream and position.

    The decoded events no longer hold their raw bytes; ``raw`` is the event id, which
    with ``source``/``position`` finds the original message.
    """
    out: list[BadRecord] = []
    for b in err.batches:
        for i in range(len(b)):
            out.append(BadRecord(
                reason=PROCESSING_ERROR, detail=f"{err.error.stage}: {err.error.message}",
                source=b.stream, position=int(b.position[i]),
                raw=str(b.ids[i]).encode("utf-8", "replace"), stream=b.stream))
    return out
