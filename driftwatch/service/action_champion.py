"""The champion check before the actions that need MLflow run.

The user's champion (``champion:`` in the config) must exist in the registry, find its
input columns among the connector's features and pass its trial on the reference's rows
(:mod:`driftwatch.registry.trial`); a policy whose online update asks for ``method:
learner`` when the champion is no river model is warned of (each such update fails).
Without one, an empty registry gets the demo's stand-in as version 1, distilled from the
reference data. While MLflow is down the
check backs off like an action. :class:`ChampionCheck` is mixed into
:class:`~driftwatch.service.actions.ServiceActions`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from driftwatch.service.actions import ModelActions

__all__ = ["ChampionCheck"]

# the actions' logger: its messages keep the name they had before the split
log = logging.getLogger("driftwatch.service.actions")


class ChampionCheck:
    """The champion's side of :class:`~driftwatch.service.actions.ServiceActions` (see the
    module docstring); a mixin, it holds no state of its own."""

    def _champion_ready(self, ma: ModelActions) -> bool:
        """The champion check, backed off like an action while MLflow is down, and while
        the champion fails it (a model that cannot score the reference, or ranks it upside
        down): the model is still monitored, its actions wait, and the reason is logged
        once an attempt, not on every actions tick."""
        from driftwatch.errors import DriftwatchError
        from driftwatch.registry.retry import RegistryUnavailableError
        from driftwatch.state import write_fault

        failures, at = self._champion_wait.get(ma.model, (0, 0.0))
        now = self.clock.now()
        if at > now:
            return False
        try:
            self._ensure_champion(ma)
        except DriftwatchError as exc:
            if write_fault(exc) is not None:
                raise  # the state folder refused a write: the service waits that out
            failures += 1
            retry_at = self.backoff.retry_at(now, failures)
            self._champion_wait[ma.model] = (failures, retry_at)
            if isinstance(exc, RegistryUnavailableError):
                log.warning("%s: actions that need MLflow wait %.0fs (attempt %d): %s",
                            ma.model, retry_at - now, failures, exc)
            else:
                log.error("%s: the champion fails its check; actions that need it wait "
                          "%.0fs (attempt %d; fix the model or the config): %s",
                          ma.model, retry_at - now, failures, exc)
            return False
        self._champion_wait.pop(ma.model, None)
        return True

    def _ensure_champion(self, ma: ModelActions) -> None:
        """The user's champion (``champion:`` in the config) must exist and find its input
        columns among the connector's features; without one, an empty registry gets the
        demo's stand-in as version 1, distilled from the reference data."""
        if ma.has_champion:
            return
        if ma.champion is not None:
            from driftwatch.registry.bootstrap import require_champion
            from driftwatch.registry.trial import reference_sample

            if ma.trial_rows is None or ma.trial_rows[0] != ma.reference:
                table = getattr(ma.policy, "reference", None)  # how the reference reads
                ma.trial_rows = (ma.reference, reference_sample(
                    ma.reference, table.conventions() if table is not None else None,
                    formats=ma.text_formats, score_scale=ma.score_scale))
            info = require_champion(
                self.registry, ma.champion, ma.features, ma.executor.env.scorers(),
                ma.trial_rows[1], note=lambda text: log.warning("%s: %s", ma.model, text),
                profile=ma.profile)
            ma.has_champion = True
            declared = ma.champion.declared()  # how its output is read, where not P(bad)
            log.info("%s: champion is %s (version %s%s)", ma.model, ma.champion.uri,
                     info.version, f"; {declared}" if declared else "")
            from driftwatch.actions.online_update import learner_on_foreign

            flavor = ma.executor.env.scorers().get(ma.champion.name, info.version).flavor
            said = learner_on_foreign(getattr(ma.policy, "actions", None), ma.champion.uri,
                                      flavor)
            if said is not None:  # the other tiers act; each online update fails with this
                log.warning("%s: %s", ma.model, said)
            return
        if ma.reference is None:
            return
        from driftwatch.registry.bootstrap import ensure_champion
        from driftwatch.registry.trial import reference_rows

        # the stand-in reads columns score, label, decision, and the numbers live rows hold
        table = getattr(ma.policy, "reference", None)
        df = reference_rows(ma.reference, table.conventions() if table is not None else None,
                            formats=ma.text_formats, score_scale=ma.score_scale)
        info = ensure_champion(self.registry, ma.model, df, at=self.clock.now(),
                               profile=ma.profile)
        ma.has_champion = True
        log.info("%s: champion is version %s", ma.model, info.version)
