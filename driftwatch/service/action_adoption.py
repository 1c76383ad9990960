"""The champion's reference profile reaches the monitor, even when MLflow fails at the last step.

A promotion or a rollback through the admin API moves the ``champion`` alias, then loads
the new champion's reference profile from the registry and hands it to the monitor. When
that load fails (MLflow down), the alias has moved but the monitor still judges drift
against the old profile. So the adoption is kept as *pending*: the answer says so (the
champion moved, the profile did not), ``/status`` lists it under
``actions.profile_adoption``, ``driftwatch_reference_adoption_pending_seconds{model}`` says
how long it has waited, and the ``mlflow`` lane tries again on the actions' backoff
(``actions.retry_backoff`` doubling to ``retry_backoff_max``) until it holds. A
``promote`` asked again meanwhile finishes that adoption at once instead of answering that
there is no challenger; it promotes nothing a second time. Every adoption that reaches the
monitor (from here or from a shadow's own promotion) ends the pending one. A pending
adoption is kept in the model's state folder (``profile_store.py``), so a restart goes
on waiting for it; a start that finds MLflow down resumes it here
(:meth:`ProfileAdoption.resume_adoption`).
:class:`ProfileAdoption` is mixed into :class:`~driftwatch.service.actions.ServiceActions`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftwatch.errors import DriftwatchError

if TYPE_CHECKING:
    from driftwatch.service.actions import ModelActions

__all__ = ["PendingAdoption", "ProfileAdoption"]

# the actions' logger: its messages keep the name the rest of the actions layer uses
log = logging.getLogger("driftwatch.service.actions")


@dataclass(frozen=True)
class PendingAdoption:
    """A champion whose reference profile has not reached the monitor yet.

    ``since`` is when the alias moved (the clock's time), ``retry_at`` when the next try is
    due, ``error`` why the last one failed.

    >>> p = PendingAdoption("2", since=100.0, attempts=1, retry_at=130.0, error="down")
    >>> p.to_dict(now=110.0)["retry_in_seconds"], p.to_dict(now=110.0)["pending_seconds"]
    (20.0, 10.0)
    """

    version: str
    since: float
    attempts: int
    retry_at: float
    error: str
    #: what the monitor judges on meanwhile, when a start could not read MLflow
    note: str = ""

    def to_dict(self, now: float) -> dict[str, Any]:
        """What ``/status`` shows of it."""
        return {"champion": self.version, "state": "pending", "attempts": self.attempts,
                "error": self.error, "pending_seconds": round(max(0.0, now - self.since), 3),
                "retry_in_seconds": round(max(0.0, self.retry_at - now), 3),
                **({"note": self.note} if self.note else {})}


class ProfileAdoption:
    """The adoption side of :class:`~driftwatch.service.actions.ServiceActions` (see the
    module docstring). Its state, ``_adoptions`` (model -> :class:`PendingAdoption`), is
    changed only under the actions' lock; readers take a copy."""

    _adoptions: dict[str, PendingAdoption]

    def adopt_champion(self, ma: ModelActions, version: str) -> dict[str, Any]:
        """Hand ``version``'s reference profile to the monitor now; on failure keep it
        pending (retried on the backoff). Returns what the admin answer says of it:
        ``profile`` is ``adopted`` (with its fingerprint) or ``pending`` (with the error
        and when the next try is due). Call under the actions' lock."""
        from driftwatch.actions.online_update import adopt_profile
        from driftwatch.state import write_fault

        now = self.clock.now()
        try:
            adopted = adopt_profile(ma.executor.env, ma.model, version)
        except DriftwatchError as exc:
            if write_fault(exc) is not None:
                raise  # the state folder refused a write: the service waits that out
            pending = self._adoption_failed(ma.model, version, now, exc)
            return {"profile": "pending", "profile_error": pending.error,
                    "retry_in_seconds": round(max(0.0, pending.retry_at - now), 3)}
        self.adoption_done(ma.model, version)
        return {"profile": "adopted", **adopted}

    def adoption_done(self, model: str, version: str) -> None:
        """A champion's profile reached the monitor: a pending adoption of ``model`` is
        over (the newest adoption is the newest champion's)."""
        gone = self._adoptions.pop(model, None)
        if gone is not None:
            self._keep(model, None)
            log.info("%s: champion v%s's reference profile adopted after %d failed "
                     "attempt(s)", model, version, gone.attempts)

    def _adoption_failed(self, model: str, version: str, now: float,
                         exc: BaseException) -> PendingAdoption:
        before = self._adoptions.get(model)
        attempts = before.attempts + 1 if before is not None else 1
        since = before.since if before is not None else now
        pending = PendingAdoption(version, since=since, attempts=attempts,
                                  retry_at=self.backoff.retry_at(now, attempts), error=str(exc),
                                  note=before.note if before is not None else "")
        self._adoptions[model] = pending
        self._keep(model, pending)
        log.warning("%s: champion is v%s, but its reference profile could not be loaded "
                    "(attempt %d; the monitor keeps its current reference, next try in "
                    "%.0fs): %s", model, version, attempts, pending.retry_at - now, exc)
        return pending

    def retry_adoptions(self) -> None:
        """Try each pending adoption that is due (the ``mlflow`` lane, under the lock). The
        champion is read again first: if it moved meanwhile, its current version is the
        one adopted."""
        from driftwatch.registry.versions import CHAMPION
        from driftwatch.state import write_fault

        now = self.clock.now()
        for model, pending in list(self._adoptions.items()):
            ma = self.models.get(model)
            if pending.retry_at > now or ma is None or ma.executor is None:
                continue
            try:
                current = self.registry.by_alias(model, CHAMPION)
            except DriftwatchError as exc:
                if write_fault(exc) is not None:
                    raise
                self._adoption_failed(model, pending.version, now, exc)
                continue
            if current is None:  # no champion any more: nothing to adopt
                self._adoptions.pop(model, None)
                self._keep(model, None)
                continue
            self.adopt_champion(ma, current.version)

    def resume_adoption(self, model: str, version: str, *, since: float, attempts: int,
                        error: str, note: str = "") -> None:
        """A start could not finish champion ``version``'s adoption (MLflow down): wait for
        it from now on the backoff, counted ``since`` the champion moved (or the start)."""
        now = self.clock.now()
        pending = PendingAdoption(version, since=min(since, now), attempts=attempts,
                                  retry_at=self.backoff.retry_at(now, max(1, attempts)),
                                  error=error, note=note)
        self._adoptions[model] = pending
        self._keep(model, pending)

    def _keep(self, model: str, pending: PendingAdoption | None) -> None:
        """Write the model's pending adoption (None: none) to its state folder."""
        ma = self.models.get(model)
        store = getattr(ma, "profiles", None)
        if store is None:
            return
        if pending is None:
            store.settled()
        else:
            store.pending(pending.version, since=pending.since, attempts=pending.attempts,
                          error=pending.error)

    def pending_adoption(self, model: str) -> PendingAdoption | None:
        return self._adoptions.get(model)

    def adoptions_status(self) -> dict[str, dict[str, Any]]:
        """``/status``'s ``actions.profile_adoption``: each model whose champion's profile
        has not reached the monitor yet."""
        now = self.clock.now()
        return {m: p.to_dict(now) for m, p in sorted(dict(self._adoptions).items())}

    def adoption_pending_seconds(self) -> dict[str, float]:
        """Per model: seconds its champion's profile has been pending (0: none pending)."""
        now = self.clock.now()
        pending = dict(self._adoptions)
        return {m: max(0.0, now - pending[m].since) if m in pending else 0.0
                for m in self.models}
