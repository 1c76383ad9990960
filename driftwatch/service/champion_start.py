"""A start judges on the current champion's profile, whether MLflow answers or not.

Each start builds the configured reference file's profile; a model whose champion's
profile was adopted from the registry before (a promotion or rollback, kept in
``<state>/profiles/<model>/``: ``profile_store.py``) starts on that one instead
(:meth:`~driftwatch.service.model.ModelRuntime.open`), and its checkpoint is restored on
the profile it was taken on. Then, when actions run, the registry is asked which
version is the champion now: one that moved while the daemon was down, or whose
profile was still awaited, is adopted; while MLflow cannot be read the daemon goes on
with the profile it kept, says so in the log, in ``/status`` (``actions.profile_adoption``)
and ``/readyz`` (the ``mlflow`` dependency), and reads the champion again on the actions'
backoff. A model that never adopted a champion keeps judging on its reference file.
:class:`ChampionAtStart` is mixed into :class:`~driftwatch.service.daemon.Service`.
"""

from __future__ import annotations

import logging
from typing import Any

from driftwatch.errors import DriftwatchError
from driftwatch.service.model import ModelRuntime, ProfileLookup
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["ChampionAtStart"]

# the daemon's logger: what a start says stays in one place
log = logging.getLogger("driftwatch.service.daemon")


class ChampionAtStart:
    """The champion's side of the daemon's start (see the module docstring); a mixin, it
    holds no state of its own."""

    def _champion_lookup(self, rt: ModelRuntime) -> ProfileLookup | None:
        """Where a checkpoint's profile the state folder lacks may still be: the registry's
        champion (a state folder from before profiles were kept, after a promotion)."""
        actions = self.actions
        if actions is None or actions.registry is None:
            return None

        def lookup(fingerprint: str) -> ReferenceProfile | None:
            from driftwatch.registry.versions import CHAMPION

            try:
                current = actions.registry.by_alias(rt.name, CHAMPION)
                profile = (actions.registry.load_profile(rt.name, current.version)
                           if current is not None else None)
            except DriftwatchError as exc:
                log.warning("%s: the checkpoint's reference %s is not in the state folder, "
                            "and the champion's cannot be read: %s", rt.name, fingerprint, exc)
                return None
            if profile is None or profile.fingerprint != fingerprint:
                return None
            if rt.profiles is not None:  # it is the champion's: judged on from here
                rt.profiles.save(profile)
                rt.profiles.adopted(current.version, fingerprint)
            rt.champion = current.version
            return profile
        return lookup

    def _champion_at_start(self, rt: ModelRuntime) -> None:
        """Ask the registry for the champion of a model that adopted one (see the module
        docstring); a change is handed to the monitor through the loop's inbox."""
        from driftwatch.registry.versions import CHAMPION
        from driftwatch.state import write_fault

        actions = self.actions
        kept = rt.profiles.champion() if rt.profiles is not None else None
        if actions is None or actions.registry is None or kept is None:
            return  # no registry to ask, or a model judged on its reference file
        ma = actions.models.get(rt.name)
        if ma is None or ma.executor is None:
            return
        pending = kept.pending
        now = self.clock.now()
        try:
            current = actions.registry.by_alias(rt.name, CHAMPION)
        except DriftwatchError as exc:
            if write_fault(exc) is not None:
                raise
            on = (f"champion v{rt.champion}'s profile kept in the state folder"
                  if rt.champion is not None else "the reference file's profile")
            awaited = pending["version"] if pending else rt.champion
            note = f"MLflow could not be read at start: judging on {on}"
            log.warning("%s: %s; %s (the champion is read again on the actions' backoff): "
                        "%s", rt.name, note,
                        f"champion v{awaited}'s profile is still awaited" if pending
                        else "a champion moved meanwhile is adopted then", exc)
            actions.resume_adoption(
                rt.name, str(awaited), since=float(pending["since"]) if pending else now,
                attempts=int(pending["attempts"]) + 1 if pending else 1, error=str(exc),
                note=note)
            return
        if current is None:
            if pending is not None and rt.profiles is not None:
                rt.profiles.settled()
            return
        if current.version == rt.champion and pending is None:
            return  # as it was adopted
        log.info("%s: the champion is v%s (%s); adopting its profile", rt.name,
                 current.version, "its profile was awaited" if pending
                 else f"v{rt.champion} before the restart")
        with actions._lock:
            if pending is not None:  # a failure now counts on from the ones before
                actions.resume_adoption(rt.name, str(pending["version"]),
                                        since=float(pending["since"]),
                                        attempts=int(pending["attempts"]),
                                        error=str(pending["error"]))
            actions.adopt_champion(ma, current.version)
        self.inbox.drain()  # the loop's own thread: the monitor adopts it before reading

    def _keep_promoted(self, rt: ModelRuntime, version: str, profile: Any) -> None:
        """A champion's profile is on its way to the monitor: keep it, and that it is the
        champion's, before a checkpoint can name it (a crash before that checkpoint still
        restarts on it)."""
        if rt.profiles is not None:
            rt.profiles.save(profile)
            rt.profiles.adopted(version, profile.fingerprint)
