"""What a tier does: ``online_update``, ``shadow``, ``retrain``, ``alert`` or ``none``.

An action is a mapping with a ``type``; ``none`` and ``alert`` may be written as a bare
name.

>>> from pydantic import TypeAdapter
>>> TypeAdapter(Action).validate_python("none")
NoAction(type='none', require_approval=False)
>>> TypeAdapter(Action).validate_python({"type": "retrain", "argv": ["python", "job.py"]}).gpus
1
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Discriminator, Field, field_validator

from driftwatch.policy.base import StrictModel
from driftwatch.policy.catalog import RANKING_METRICS, RECALIBRATION_METRIC, SHADOW_METRICS
from driftwatch.policy.durations import format_duration
from driftwatch.policy.fields import Argv, Learner, PositiveDuration, WebhookUrl, fail

__all__ = [
    "ACTION_MODELS",
    "Action",
    "AlertAction",
    "NoAction",
    "OnlineUpdateAction",
    "RetrainAction",
    "ShadowAction",
]


class _ActionBase(StrictModel):
    """Every action has a ``type`` and ``require_approval`` (a person must approve
    before it changes anything; ``alert`` and ``none`` change nothing, so they refuse
    ``true``); each subclass declares them so ``type`` comes first."""

    type: str
    require_approval: bool

    def summary(self) -> str:
        """One plain-English clause for ``policy explain``."""
        raise NotImplementedError


def _nothing_to_approve(value: bool, what: str) -> bool:
    """``require_approval: true`` only where the executor holds the action for a person:
    an alert goes out at once and ``none`` does nothing, so there is nothing to approve."""
    if value:
        raise fail(
            "require_approval",
            f"{what}, so there is nothing to approve: require_approval applies to "
            "online_update, shadow and retrain",
            "remove require_approval, or choose an action a person signs off",
        )
    return value


class NoAction(_ActionBase):
    type: Literal["none"] = "none"
    require_approval: bool = False

    @field_validator("require_approval")
    @classmethod
    def _no_approval(cls, value: bool) -> bool:
        return _nothing_to_approve(value, "action none does nothing")

    def summary(self) -> str:
        return "do nothing (the decision is still recorded)"


class AlertAction(_ActionBase):
    type: Literal["alert"] = "alert"
    require_approval: bool = False
    channels: list[str] = Field(default_factory=list)
    webhook: WebhookUrl | None = None

    @field_validator("require_approval")
    @classmethod
    def _no_approval(cls, value: bool) -> bool:
        return _nothing_to_approve(value, "an alert goes out at once")

    def summary(self) -> str:
        """What an alert does: a warning in the log (naming the channels) and the actions
        metric always; only a webhook delivers it, the channels riding in its JSON for the
        receiver to route by.

        >>> AlertAction(channels=["oncall"]).summary()
        'alert: a warning in the log naming channel oncall, and the metrics (no webhook: \
nothing is sent to the channel)'
        >>> AlertAction(channels=["a", "b"], webhook="https://h.example/x").summary()
        'alert: a warning in the log naming channels a, b, the metrics, and a POST to the \
webhook (its receiver routes by the channels in the JSON)'
        """
        said = "a warning in the log"
        if self.channels:
            said += (f" naming channel{'s' if len(self.channels) > 1 else ''} "
                     + ", ".join(self.channels))
        if not self.webhook:
            lost = (f" (no webhook: nothing is sent to the channel"
                    f"{'s' if len(self.channels) > 1 else ''})" if self.channels else "")
            return f"alert: {said}{',' if self.channels else ''} and the metrics{lost}"
        route = " (its receiver routes by the channels in the JSON)" if self.channels else ""
        return f"alert: {said}, the metrics, and a POST to the webhook{route}"


class OnlineUpdateAction(_ActionBase):
    """A river learner learns the recent labelled window, or a recalibration layer on the
    champion's score does (``method``); opt-in for scorecards."""

    type: Literal["online_update"] = "online_update"
    require_approval: bool = False
    #: ``learner``: the river champion learns on (a fresh ``learner`` is trained for a
    #: river champion of another learner); refused for a champion that is no river model,
    #: which it would replace rather than update;
    #: ``recalibrate``: a logistic recalibration of the champion's score, any model;
    #: ``auto``: learner for a river champion, recalibrate for any other.
    method: Literal["auto", "learner", "recalibrate"] = "auto"
    learner: Learner = "StandardScaler|LogisticRegression"
    promote: Literal["challenger", "direct"] = "challenger"
    min_labelled: int = Field(default=0, ge=0)
    opt_in: bool = Field(default=False, validate_default=True)

    @field_validator("opt_in")
    @classmethod
    def _must_opt_in(cls, value: bool) -> bool:
        if value is not True:
            raise fail(
                "opt_in",
                "online updates are opt-in: set opt_in: true to allow them",
                "or choose another action for this tier, e.g. type: shadow",
            )
        return value

    def summary(self) -> str:
        how = "as a challenger" if self.promote == "challenger" else "directly to production"
        what = {
            "auto": f"with {self.learner} (a river champion) or a recalibration of its score "
                    "(any other model)",
            "learner": f"with {self.learner} (river champions only: for any other model "
                       "the update fails rather than replace it; method recalibrate updates "
                       "those)",
            "recalibrate": "by recalibrating its score (logistic on the score's logit)",
        }[self.method]
        return f"update the model online {what} and promote it {how}"


class ShadowAction(_ActionBase):
    """Score a challenger beside the champion; promote it only if it wins on labels."""

    type: Literal["shadow"] = "shadow"
    #: For a challenger, approval means: a person signs off the promotion.
    require_approval: bool = True
    min_labelled: int = Field(default=1000, ge=1)
    metric: Literal[SHADOW_METRICS] = "auc"  # type: ignore[valid-type]
    margin: float = Field(default=0.0, ge=0)
    max_duration: PositiveDuration = 14 * 86400.0

    def summary(self) -> str:
        recal = (f"; a challenger driftwatch makes by recalibrating a champion that is not a "
                 f"river model is judged on {RECALIBRATION_METRIC} instead, as it ranks rows as "
                 "the champion does" if self.metric in RANKING_METRICS else "")
        return (
            f"run a challenger in shadow; after {self.min_labelled} labelled events promote "
            f"it if its {self.metric} beats the champion by {self.margin:g} or more"
            f" (within {format_duration(self.max_duration)}){recal}"
        )


class RetrainAction(_ActionBase):
    """A retraining job on the GPU pool; its model then goes to shadow."""

    type: Literal["retrain"] = "retrain"
    require_approval: bool = False
    argv: Argv
    #: Whole GPUs of the pool's reserved share the job leases (at least one).
    gpus: int = 1
    time_limit: PositiveDuration = 4 * 3600.0
    retries: int = Field(default=0, ge=0)
    deferrable: bool = False
    preemptible: bool = False

    @field_validator("gpus")
    @classmethod
    def _whole_gpus(cls, value: int) -> int:
        if value < 1:
            raise fail(
                "gpus",
                f"a retraining job leases at least one GPU of the pool, found {value}",
                "write gpus: 1 (a CPU-only job holds one of the reserved GPUs too)",
            )
        return value

    def summary(self) -> str:
        extra = [w for w, on in (("deferrable", self.deferrable),
                                 ("preemptible", self.preemptible)) if on]
        return (
            f"retrain with `{' '.join(self.argv)}` on {self.gpus} GPU(s), at most "
            f"{format_duration(self.time_limit)}, {self.retries} retries"
            + (f" ({', '.join(extra)})" if extra else "")
        )


def _shorthand(value: Any) -> Any:
    return {"type": value} if isinstance(value, str) else value


#: Every action model by its ``type``.
ACTION_MODELS: dict[str, type[_ActionBase]] = {
    "alert": AlertAction,
    "none": NoAction,
    "online_update": OnlineUpdateAction,
    "retrain": RetrainAction,
    "shadow": ShadowAction,
}

Action = Annotated[
    OnlineUpdateAction | ShadowAction | RetrainAction | AlertAction | NoAction,
    BeforeValidator(_shorthand),
    Discriminator("type"),
]
