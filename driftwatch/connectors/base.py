"""Contracts shared by every source: what a poll returns and what a bad record carries.

A source is polled by the run loop: ``poll -> process -> checkpoint -> commit``. Positions
are opaque per-source cursors (``"path"`` -> next line, ``"topic:partition"`` -> next offset)
that go into checkpoints and come back through :meth:`Source.seek` on restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from driftwatch.batch import Batch

__all__ = ["BadRecord", "Polled", "Source"]


@dataclass(frozen=True, slots=True)
class BadRecord:
    """One record that could not be decoded; it is counted by ``reason`` and dead-lettered.

    ``reason`` is a short, bounded snake_case code (``invalid_json``, ``not_an_object``,
    ``missing_id``, ``missing_time``, ``bad_time``, ``wrong_type``, ``non_finite_score``,
    ``score_out_of_range``, ``bad_label``, ...), safe as a metric label.
    """

    reason: str
    detail: str
    source: str  # file path or topic
    position: int  # 1-based line number in a file, or the Kafka offset
    raw: bytes
    partition: int | None = None
    stream: str = ""
    #: the value at fault, as text, where the reason names one: a ``bad_label``'s label
    #: value that the stream's connector names on none of its lists (None otherwise)
    value: str | None = None


@dataclass(slots=True)
class Polled:
    """What one poll yields: decoded batches (one per stream present), bad records, cursors."""

    batches: list[Batch] = field(default_factory=list)
    bad: list[BadRecord] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    bytes_read: int = 0
    #: For each good record in merged (event-time) order, the index in ``batches`` of the
    #: batch holding it; each batch's rows are in that order. ``None`` when the source
    #: has no order across its batches (Kafka topics are consumed independently).
    order: np.ndarray | None = None
    #: For each record of ``bad``, the good records of ``order`` before it in merged order
    #: (where it sits in the stream); ``None`` when the source has no merged order.
    bad_at: np.ndarray | None = None

    @property
    def n_events(self) -> int:
        return sum(len(b) for b in self.batches)


@runtime_checkable
class Source(Protocol):
    """A stream of events: files for replay, Kafka for production."""

    def poll(self, max_records: int = 10_000, timeout_s: float = 1.0) -> Polled | None:
        """Next micro-batch; ``None`` once a finite source is exhausted."""
        ...

    def seek(self, positions: Mapping[str, int]) -> None:
        """Resume from cursors taken from a checkpoint."""
        ...

    def commit(self, positions: Mapping[str, int]) -> None:
        """Acknowledge everything before these cursors (after the checkpoint is durable)."""
        ...

    def close(self) -> None: ...
