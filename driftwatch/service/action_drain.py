"""What the drain of ``--exit-when-done`` asks of the actions layer (a mixin of
:class:`~driftwatch.service.actions.ServiceActions`): which actions the lanes can still
finish alone, why some of them wait, and hurrying the lanes.

>>> _short("MLflow  did not\\n answer", limit=12)
'MLflow did …'
"""

from __future__ import annotations

from typing import Any

__all__ = ["DrainHooks"]


class DrainHooks:
    """The drain's side of :class:`~driftwatch.service.actions.ServiceActions`; it holds no
    state of its own."""

    execute: bool
    models: dict[str, Any]
    lanes: dict[str, Any]
    clock: Any
    _champion_wait: dict[str, tuple[int, float]]

    def unfinished_work(self) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """What the lanes can still finish without new data or a person: the ids of the
        pending and running actions (not shadows, which score live traffic), and a line
        for each of those that waits to try again (MLflow down) or for its pool job, and
        for each lane still inside a call (its first MLflow call, say)."""
        if not self.execute:  # recorded, and that is all that happens to them
            return (), ()
        from driftwatch.actions.executor import waits_for_data

        now = self.clock.now()
        ids, waiting = [], []
        for ma in self.models.values():
            left = [r for r in ma.outbox.unfinished() if not waits_for_data(r)]
            _, at = self._champion_wait.get(ma.model, (0, 0.0))
            if at > now and any(r.action != "alert" for r in left):
                waiting.append(f"{ma.model}: the actions that need MLflow try again in "
                               f"{at - now:.0f}s (MLflow did not answer)")
            for rec in left:
                ids.append(rec.id)
                if rec.next_attempt_at is not None and rec.next_attempt_at > now:
                    waiting.append(f"action {rec.id} tries again in "
                                   f"{rec.next_attempt_at - now:.0f}s"
                                   + (f" ({_short(rec.note)})" if rec.note else ""))
        for name, lane in self.lanes.items() if ids else ():
            busy, held = lane.busy, lane.busy_for  # a call under way: the first to MLflow
            if busy is not None:
                waiting.append(f"the {name} thread is in {busy} ({held:.0f}s so far)")
        return tuple(ids), tuple(waiting)

    def hurry(self) -> None:
        """Run the lanes' action jobs now rather than on their period (an idle lane only):
        the stream has ended and the daemon waits for them."""
        for name, lane in self.lanes.items():
            if lane.busy is None:
                lane.kick("actions" if name == "mlflow" else name)

    def states(self, model: str) -> tuple[tuple[int, str], ...]:
        """Each of the model's actions and its state: what a report tells."""
        return tuple((r.id, str(r.state)) for r in self.models[model].outbox.list())


def _short(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
