"""What every partition published for a pane, held by the decider until the pane is complete.

Beside its sketch, a partition publishes rows that landed in a pane (cohort rows, labelled
rows) once the pane closed there. The decider holds them per ``(pane, partition)`` and
hands them on, pane by pane and partition by partition, once the merge has every
partition's mark past the pane: the same order whichever instances published them. A
re-published copy (a partition read again after a crash) replaces what is held; rows of
a pane already merged are ignored, as the pane merger does with sketches.

An idle partition publishes *provisional* copies of the rows of its open panes (they stay
there), which the merge uses for the panes it passes meanwhile. What the partition
publishes later for such a pane (more rows landed there once it was active again) is
*late*: the decider takes only the difference from what it merged (:meth:`PaneParts.delta`),
so nothing is lost or counted twice, and puts it where one process puts a late row.

>>> parts = PaneParts()
>>> parts.add(1, 5, "b", next_pane=None); parts.add(0, 5, "a", next_pane=None)
>>> parts.add(0, 6, "c", next_pane=None); parts.add(0, 4, "old", next_pane=5)
>>> parts.take_below(6)
[(5, 0, 'a'), (5, 1, 'b')]
>>> parts.take_below(None), sorted(parts.pending)
([], [6])
>>> parts.add(2, 6, "idle copy", next_pane=6, provisional=True)
>>> [x for x in parts.take_below(7) if x[1] == 2], parts.merged_early
([(6, 2, 'idle copy')], {(2, 6): 'idle copy'})
>>> parts.add(2, 6, "all rows", next_pane=7)   # the pane closed there at last
>>> parts.take_late(), parts.merged_early
([(6, 2, ('all rows', 'idle copy'))], {})
>>> parts.add(3, 6, "rows", next_pane=7, passed=True)   # idle with nothing there yet
>>> parts.take_late()
[(6, 3, ('rows', None))]
"""

from __future__ import annotations

from typing import Any

__all__ = ["PaneParts"]


class PaneParts:
    """Payloads per (pane, partition) read from the pane log, until their pane is complete."""

    def __init__(self) -> None:
        self.pending: dict[int, dict[int, Any]] = {}
        #: ``(partition, pane)`` of the provisional copies pending
        self.provisional: set[tuple[int, int]] = set()
        #: what was merged of a pane from provisional copies, by ``(partition, pane)``
        self.merged_early: dict[tuple[int, int], Any] = {}
        self._late: list[tuple[int, int, Any]] = []

    def delta(self, payload: Any, merged: Any) -> Any:
        """What ``payload`` holds beyond ``merged`` (None: nothing merged; a subclass knows
        its rows); the base hands on both."""
        return payload, merged

    def accounted(self, payload: Any) -> Any:
        """What to remember of a provisional payload merged (a subclass may keep less)."""
        return payload

    def add(self, partition: int, pane: int, payload: Any, *, next_pane: int | None,
            provisional: bool = False, passed: bool = False) -> None:
        """``passed``: the merge passed this pane before the partition closed it (it was
        idle with nothing staged there: every row is late), not a re-published copy."""
        key = (int(partition), int(pane))
        if next_pane is not None and pane < next_pane:
            merged = self.merged_early.pop(key, None)
            if merged is None and not passed:
                return  # merged already: a re-published copy
            self._late.append((key[1], key[0], self.delta(payload, merged)))
            if provisional:  # idle again before the pane closed there
                self.merged_early[key] = self.accounted(payload)
            return
        self.pending.setdefault(key[1], {})[key[0]] = payload
        (self.provisional.add if provisional else self.provisional.discard)(key)

    def drop_below(self, next_pane: int | None) -> None:
        """Forget the payloads of panes already merged (a new decider read them again from
        the log before it knew where the merge stood); one of a pane merged from
        provisional copies is late (:meth:`add`)."""
        if next_pane is None:
            return
        for k in [k for k in self.pending if k < next_pane]:
            for p, payload in sorted(self.pending.pop(k).items()):
                provisional = (p, k) in self.provisional
                self.provisional.discard((p, k))
                self.add(p, k, payload, next_pane=next_pane, provisional=provisional)

    def take_below(self, below: int | None) -> list[tuple[int, int, Any]]:
        """``(pane, partition, payload)`` of every pane below ``below`` (complete on every
        partition), in pane then partition order; they leave the holder."""
        if below is None:
            return []
        out = []
        for pane in sorted(k for k in self.pending if k < below):
            parts = self.pending.pop(pane)
            for p in sorted(parts):
                if (p, pane) in self.provisional:
                    self.provisional.discard((p, pane))
                    self.merged_early[(p, pane)] = self.accounted(parts[p])
                out.append((pane, p, parts[p]))
        return out

    def take_late(self) -> list[tuple[int, int, Any]]:
        """``(pane, partition, delta)`` of what came for panes merged from provisional
        copies since the last call, in arrival order."""
        out, self._late = self._late, []
        return out

    # -- the decider's state ------------------------------------------------------------
    def progress(self) -> list[list[Any]]:
        return [[p, k, v] for (p, k), v in sorted(self.merged_early.items())]

    def resume(self, rows: list[list[Any]]) -> None:
        self.merged_early = {(int(p), int(k)): v for p, k, v in rows}
