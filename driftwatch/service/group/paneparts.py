"""What every partition published for a pane, held by the decider until the pane is complete.

Beside its sketch, a partition publishes rows that landed in a pane (cohort rows, labelled
rows) once the pane closed there. The decider holds them per ``(pane, partition)`` and
hands them on, pane by pane and partition by partition, once the merge has every
partition's mark past the pane: the same order whichever instances published them. A
re-published copy (a partition read again after a crash) replaces what is held; rows of
a pane already merged are ignored, as the pane merger does with sketches.

>>> parts = PaneParts()
>>> parts.add(1, 5, "b", next_pane=None); parts.add(0, 5, "a", next_pane=None)
>>> parts.add(0, 6, "c", next_pane=None); parts.add(0, 4, "old", next_pane=5)
>>> parts.take_below(6)
[(5, 0, 'a'), (5, 1, 'b')]
>>> parts.take_below(None), sorted(parts.pending)
([], [6])
"""

from __future__ import annotations

from typing import Any

__all__ = ["PaneParts"]


class PaneParts:
    """Payloads per (pane, partition) read from the pane log, until their pane is complete."""

    def __init__(self) -> None:
        self.pending: dict[int, dict[int, Any]] = {}

    def add(self, partition: int, pane: int, payload: Any, *, next_pane: int | None) -> None:
        if next_pane is not None and pane < next_pane:
            return
        self.pending.setdefault(int(pane), {})[int(partition)] = payload

    def drop_below(self, next_pane: int | None) -> None:
        """Forget the payloads of panes already merged (a new decider read them again from
        the log before it knew where the merge stood)."""
        if next_pane is not None:
            for k in [k for k in self.pending if k < next_pane]:
                del self.pending[k]

    def take_below(self, below: int | None) -> list[tuple[int, int, Any]]:
        """``(pane, partition, payload)`` of every pane below ``below`` (complete on every
        partition), in pane then partition order; they leave the holder."""
        if below is None:
            return []
        out = []
        for pane in sorted(k for k in self.pending if k < below):
            parts = self.pending.pop(pane)
            out += [(pane, p, parts[p]) for p in sorted(parts)]
        return out
