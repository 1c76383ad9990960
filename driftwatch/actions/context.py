"""What an action knows beyond its decision, and what its handler may use.

:class:`ActionContext` is stored with the decision in the outbox (the window the decision
was made on, the reference dataset, anything else the caller wants in the audit trail).
:class:`ActionEnv` is the executor's toolbox, handed to every handler: the registry, the
GPU pool, the clock, the labelled buffer and where to write files.

>>> ctx = ActionContext(window_start=0.0, window_end=3600.0, reference="ref.parquet")
>>> ActionContext.from_dict(ctx.to_dict()) == ctx
True
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.reference import ReferenceReader
from driftwatch.actions.retrain_limits import RetrainLimits
from driftwatch.clock import Clock
from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.errors import ActionError
from driftwatch.policy.actions import ACTION_MODELS
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.windows.profile import ReferenceProfile

if TYPE_CHECKING:  # neither is imported just to describe a decision's context
    from driftwatch.gpupool import GpuPool
    from driftwatch.registry.mlflow_registry import MlflowRegistry

__all__ = ["ActionContext", "ActionEnv", "PromoteHook", "parse_settings", "shadow_defaults"]

#: Called with ``(model, version, profile)`` when a version becomes champion: the monitor
#: adopts ``profile`` as its reference.
PromoteHook = Callable[[str, str, ReferenceProfile], None]


def parse_settings(kind: str, raw: Mapping[str, Any], defaults: Mapping[str, Any] = ()) -> Any:
    """The decision's ``action_settings`` (as the engine dumps them: durations as text)
    read back into the policy's action model, over ``defaults``.

    >>> parse_settings("shadow", {"max_duration": "2d", "metric": "brier"}).max_duration
    172800.0
    """
    model = ACTION_MODELS[kind]
    data = {**dict(defaults), **dict(raw), "type": kind}
    data = {k: v for k, v in data.items() if k in model.model_fields}
    data.update(_recorded_before_refused(kind, data))
    try:
        return model.model_validate(data)
    except ValueError as exc:
        errors = getattr(exc, "errors", lambda: [])()
        what = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors) or exc
        raise ActionError(f"invalid {kind} settings: {what}") from exc


def _recorded_before_refused(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Settings a policy may no longer write, as such an action ran: an alert or none
    never waited for approval, and a retraining asked for 0 GPUs leased one. An action
    recorded with them before stays readable when it resumes."""
    if kind in ("alert", "none") and data.get("require_approval") is True:
        return {"require_approval": False}
    if kind == "retrain" and data.get("gpus") == 0:
        return {"gpus": 1}
    return {}


def shadow_defaults(policy: Any) -> dict[str, Any]:
    """The policy's shadow settings, for the shadow that follows a retraining."""
    for tier in ("moderate", "severe", "mild"):
        action = getattr(getattr(policy, "actions", None), tier, None)
        if getattr(action, "type", None) == "shadow":
            return dict(action.model_dump(mode="json", by_alias=True))
    return {}


@dataclass(frozen=True)
class ActionContext:
    """Facts about a decision that the decision itself does not carry (JSON-safe)."""

    window_start: float | None = None
    window_end: float | None = None
    reference: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "window_start": self.window_start,
            "window_end": self.window_end,
            "reference": self.reference,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> ActionContext:
        d = dict(d or {})
        return cls(
            window_start=d.get("window_start"),
            window_end=d.get("window_end"),
            reference=d.get("reference"),
            extra=dict(d.get("extra") or {}),
        )

    @property
    def window_label(self) -> str | None:
        """``start/end`` in epoch seconds, the lineage tag of a version trained on it."""
        if self.window_start is None and self.window_end is None:
            return None
        return f"{self.window_start}/{self.window_end}"


@dataclass
class ActionEnv:
    """Everything a handler may touch (built by the executor)."""

    registry: MlflowRegistry
    clock: Clock
    state_dir: Path
    pool: GpuPool | None = None
    buffer: LabelledBuffer | None = None
    reference_path: str | None = None
    cutoff: float | None = None
    shadow_defaults: Mapping[str, Any] = field(default_factory=dict)
    on_promote: PromoteHook | None = None
    webhook_timeout: float = 3.0
    python: str = sys.executable
    default_learner: str = "StandardScaler|LogisticRegression"
    #: model input column -> connector feature, for the user's champion (default: same name)
    columns: Mapping[str, str] = field(default_factory=dict)
    #: label values of the bad class (the policy's reference), to read a classifier's
    #: ``predict_proba`` at the right column
    bad_labels: tuple[Any, ...] = DEFAULT_BAD
    #: what the user's champion returns (``p_good`` is read as 1 - p, or a classifier
    #: with codes for classes at its lower class); not applied to versions driftwatch made
    score_is: str = "p_bad"
    #: the scale the user's custom pyfunc champion writes its output in (the champion's
    #: ``score_scale``, resolved); not applied to versions driftwatch made
    score_scale: ScoreScale = PROBABILITY
    #: the policy's ``limits.max_concurrent_retrains`` (pool jobs of this model at a time)
    max_concurrent_retrains: int | None = None
    #: the policy's per-day limits and cooldowns, checked against the pool's job records
    retrain_limits: RetrainLimits | None = None
    #: reads the reference file as the monitor does (the policy's ``reference:`` columns,
    #: the connector's types, missing values, text formats and score scale): every
    #: profile and row an action takes from it comes through here
    reader: ReferenceReader = field(default_factory=ReferenceReader)
    #: the monitor's lineage and index after the last live prediction batch seen
    live_position: tuple[str | None, int] | None = None
    #: the policy's ``actions:`` section: a promotion checks its online updates against the
    #: new champion (``method: learner`` needs a river one)
    policy_actions: Any = None
    _scorers: Any = field(default=None, repr=False)

    def scorers(self) -> Any:
        """The :class:`~driftwatch.registry.scorers.ScorerCache` of this registry's versions
        (downloaded once into ``<state>/model-cache``)."""
        if self._scorers is None:
            from driftwatch.registry.scorers import ScorerCache

            self._scorers = ScorerCache(
                self.registry, self.state_dir / "model-cache", columns=self.columns,
                bad=self.bad_labels, score_is=self.score_is, score_scale=self.score_scale,
            )
        return self._scorers

    def scorer(self, model: str, version: str | int) -> Any:
        """The :class:`~driftwatch.registry.scorer.Scorer` of a registered version, whatever
        its flavour."""
        return self.scorers().get(model, version)

    def action_dir(self, action_id: int) -> Path:
        """Files of one action (exports, candidate models) live here."""
        path = self.state_dir / "actions" / f"{action_id:06d}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def reference_for(self, context: ActionContext) -> str | None:
        return context.reference or self.reference_path

    def reference_profile(self, context: ActionContext | None = None) -> ReferenceProfile | None:
        """The profile of the decision's reference (else the configured one), built as the
        monitor builds its own; None without a reference."""
        path = self.reference_for(context or ActionContext())
        return self.reader.profile(path) if path else None

    def registered_profile(self, model: str, version: str) -> ReferenceProfile | None:
        """The reference profile registered with ``version``; None for a version registered
        without one (the user's own model). MLflow down raises
        :class:`~driftwatch.registry.retry.RegistryUnavailableError`: the caller waits."""
        from driftwatch.registry.retry import RegistryUnavailableError

        try:
            return self.registry.load_profile(model, version)
        except RegistryUnavailableError:
            raise
        except ActionError:
            return None

    def version_profile(self, model: str, version: str,
                        context: ActionContext | None = None) -> ReferenceProfile | None:
        """:meth:`registered_profile`, else the decision's or configured reference's, built
        as the monitor builds its own, since that is what the monitor judged a model
        registered without a profile on (None when neither exists)."""
        profile = self.registered_profile(model, version)
        return profile if profile is not None else self.reference_profile(context)

    def reference_rows(self, context: ActionContext | None = None) -> Any:
        """The reference's rows as live rows hold them (:meth:`ReferenceReader.rows`); None
        without a reference table."""
        path = self.reference_for(context or ActionContext())
        return self.reader.rows(path) if path else None
