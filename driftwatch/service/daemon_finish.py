"""The daemon's end of a finite run with ``--exit-when-done``: finish, then stop.

Once every source is consumed, the loop calls :meth:`FinishingRun._finishing` on each pass
instead of polling: it hurries the action lanes (an idle lane runs its jobs now, not on
their period), and once they are through brings the reports up to date with what the
actions did (the decision reports whose action moved on, and the report written when the
recording was consumed); a :class:`~driftwatch.service.drain.Drain` says what is left and
when it is done. The loop's hand-offs and checkpoints go on meanwhile, and SIGTERM ends
it as always. :class:`FinishingRun` is mixed into
:class:`~driftwatch.service.daemon.Service`.
"""

from __future__ import annotations

import logging

from driftwatch.service.actions import open_actions_note
from driftwatch.service.drain import Backlog, Drain

__all__ = ["EXIT_UNFINISHED", "FinishingRun"]

# the daemon's logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.daemon")

#: ``run()``'s exit code when ``--drain-timeout`` passed with reports or actions left.
EXIT_UNFINISHED = 3
#: How often the loop looks at what is left while it drains (and hurries the lanes).
_DRAIN_POLL_S = 0.25


class FinishingRun:
    """The drain's side of :class:`~driftwatch.service.daemon.Service` (see the module
    docstring); a mixin, its state (``drain``, ``drained``, ``_settled``) is the service's."""

    def _finishing(self) -> bool:
        """One pass of the drain: hurry the lanes, bring the reports up to date with what
        the actions did, see what is left; False once done (or out of time)."""
        if self.drain is None:
            self.drain = Drain(self._backlog, clock=self.clock, timeout_s=self.drain_timeout_s)
        if self.actions is not None:
            self.actions.hurry()
        self._settle()
        self.drained = self.drain.poll()
        if self.drained is None:
            self.inbox.wake.wait(_DRAIN_POLL_S)
            self.inbox.wake.clear()
            return True
        self._say_open_actions()
        return False

    def _exit_code(self) -> int:
        """0, or :data:`EXIT_UNFINISHED` when the drain ran out of time with work left."""
        return EXIT_UNFINISHED if self.drained is not None and not self.drained.done else 0

    def _backlog(self) -> Backlog:
        ids, waiting = self.actions.unfinished_work() if self.actions is not None else ((), ())
        return Backlog(reports=self.reports.pending() if self.reports is not None else 0,
                       actions=ids, waiting=waiting)

    def _settle(self) -> None:
        """Once the lanes are through, what the reports say about each model's actions is
        brought up to date (once per change): its decision reports whose action moved on,
        and the report written when its recording was consumed."""
        if self.actions is None or not self.actions.execute \
                or self.actions.unfinished_work()[0]:
            return
        for rt in self.runtimes:
            states = self.actions.states(rt.name)
            if self._settled.get(rt.name, ()) == states:
                continue
            self._settled[rt.name] = states
            if self.reports is not None and self.config.reports.on_decision:
                self._submit_report(rt, page=False)
            if self._reported.get(rt.name, states) != states:
                self._reported.pop(rt.name)
                self._report(rt)

    def _say_open_actions(self) -> None:
        if self.actions is not None:
            note = open_actions_note(self.actions.open_actions(), execute=self.actions.execute,
                                     state_dir=str(self.config.state_dir))
            if note:
                log.warning("%s", note)
