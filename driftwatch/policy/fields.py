"""Field types shared by the policy schema: durations, detector names, thresholds, argv.

Each raises a :class:`pydantic_core.PydanticCustomError` whose message a person can act
on; the loader turns it into a :class:`~driftwatch.errors.PolicyError` at ``file:line:col``
and shows the ``hint`` carried in its context.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Discriminator, Field, PlainSerializer, SerializationInfo, Tag
from pydantic_core import PydanticCustomError

from driftwatch.policy.base import StrictModel
from driftwatch.policy.catalog import (
    DETECTORS,
    LEARNER_ESTIMATORS,
    LEARNER_TRANSFORMERS,
)
from driftwatch.policy.durations import DURATION_HELP, format_duration, parse_duration
from driftwatch.yamlio import nearest

__all__ = [
    "IN_SECONDS",
    "MAX_DURATION_S",
    "Argv",
    "Calibrated",
    "DataQualityDetector",
    "Duration",
    "FalseAlarm",
    "Learner",
    "PositiveDuration",
    "SignalDetector",
    "Threshold",
    "TierName",
    "WebhookUrl",
    "fail",
    "unknown_name",
]

TierName = Literal["mild", "moderate", "severe"]

#: The longest duration a policy may write (ten years): longer ones mean a typo.
MAX_DURATION_S = 3650 * 86400.0


def fail(kind: str, message: str, hint: str | None = None) -> PydanticCustomError:
    """A custom validation error; ``hint`` travels in the context to the loader."""
    return PydanticCustomError(kind, message.replace("{", "(").replace("}", ")"),
                               {"hint": hint} if hint else None)


def unknown_name(what: str, name: object, valid: list[str] | tuple[str, ...]) -> str:
    """``unknown detector 'pis' (did you mean 'psi'?)``."""
    msg = f"unknown {what} {name!r}"
    guess = nearest(str(name), valid) if isinstance(name, str) else None
    return msg + (f" (did you mean {guess!r}?)" if guess else "")


def _duration(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, str):
        hint = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            hint = f"write a unit: {value}s, or e.g. 15m, 1h, 7d"
        raise fail("duration", DURATION_HELP, hint)
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise fail("duration", str(exc)) from None
    if seconds > MAX_DURATION_S:
        raise fail("duration", f"a duration of at most {format_duration(MAX_DURATION_S)}",
                   "durations in a policy are minutes to months")
    return seconds


#: The dump context under which durations are written as whole seconds (``750s``, not
#: ``12m30s``): where event time numbers records, a second is a record.
IN_SECONDS = {"durations": "seconds"}


def _dump_duration(seconds: float, info: SerializationInfo) -> str:
    """A duration's canonical text, or its whole seconds under :data:`IN_SECONDS`."""
    if (info.context or {}).get("durations") == "seconds":
        return f"{round(seconds)}s"
    return format_duration(seconds)


#: Seconds, written in the policy as ``15m``; dumped back in canonical form.
Duration = Annotated[
    float,
    BeforeValidator(_duration),
    PlainSerializer(_dump_duration, return_type=str),
]


def _positive_duration(value: Any) -> float:
    seconds = _duration(value)
    if seconds == 0:
        raise fail("duration", "expected a duration above 0s",
                   "0s leaves no time at all: write how long it may take, e.g. 30m or 4h")
    return seconds


#: A :data:`Duration` that must be above 0s (a time limit, a wait): 0s would fail or give
#: up at once, so it is refused where the policy is read.
PositiveDuration = Annotated[
    float,
    BeforeValidator(_positive_duration),
    PlainSerializer(_dump_duration, return_type=str),
]


def _detector(group_ok: bool) -> Any:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise fail("detector_type", "expected a detector name")
        valid = sorted(n for n, d in DETECTORS.items() if (d.group == "data_quality") == group_ok)
        if value in valid:
            return value
        if value in DETECTORS:
            if group_ok:
                raise fail(
                    "detector_group",
                    f"{value!r} is a {DETECTORS[value].group} signal, not a data-quality one",
                    "move it to signals:",
                )
            raise fail(
                "detector_group",
                f"{value!r} is a data-quality signal",
                "list it under data_quality.signals: a broken feed alerts and blocks "
                "retraining instead of raising the drift tier",
            )
        raise fail(
            "unknown_detector",
            unknown_name("detector", value, valid),
            "valid detectors: " + ", ".join(valid),
        )

    return check


SignalDetector = Annotated[str, BeforeValidator(_detector(False))]
DataQualityDetector = Annotated[str, BeforeValidator(_detector(True))]


class FalseAlarm(StrictModel):
    """The share of windows of this size that may cross the threshold with no drift."""

    false_alarm_rate: float = Field(gt=0, lt=1)


class Calibrated(StrictModel):
    """``{calibrated: {false_alarm_rate: 0.01}}``: the detector computes the level."""

    calibrated: FalseAlarm


def _threshold_kind(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "number"
    if isinstance(value, dict | Calibrated):
        return "mapping"
    return None


#: A fixed level or a calibrated one.
Threshold = Annotated[
    Annotated[float, Tag("number")] | Annotated[Calibrated, Tag("mapping")],
    Discriminator(
        _threshold_kind,
        custom_error_type="threshold",
        custom_error_message="expected a number or a mapping with calibrated: false_alarm_rate",
    ),
]


def _argv(value: Any) -> Any:
    if isinstance(value, str):
        parts = value.split()
        raise fail(
            "argv_string",
            "argv must be a list of strings, not a shell string",
            "write it as a list, e.g. argv: " + str(parts).replace("'", '"'),
        )
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, str):
                raise fail("argv_item", f"every argv item must be a string, not {item!r}",
                           "quote numbers and flags: \"--epochs\", \"10\"")
    return value


Argv = Annotated[list[str], BeforeValidator(_argv), Field(min_length=1)]


def _learner(value: Any) -> str:
    if not isinstance(value, str):
        raise fail("learner_type", "expected a learner like StandardScaler|LogisticRegression")
    steps = [s.strip() for s in value.split("|")]
    allowed = (*LEARNER_TRANSFORMERS, *LEARNER_ESTIMATORS)
    for step in steps:
        if step not in allowed:
            raise fail(
                "unknown_learner",
                unknown_name("learner step", step, allowed),
                "allowed: " + ", ".join(allowed),
            )
    if steps[-1] not in LEARNER_ESTIMATORS or any(s in LEARNER_ESTIMATORS for s in steps[:-1]):
        raise fail(
            "learner_order",
            "a learner is transformers then exactly one estimator, last",
            "estimators: " + ", ".join(LEARNER_ESTIMATORS),
        )
    return "|".join(steps)


Learner = Annotated[str, BeforeValidator(_learner)]

_URL = re.compile(r"https?://[^\s/?#]+[^\s]*")


def _webhook(value: Any) -> Any:
    if isinstance(value, str) and not _URL.fullmatch(value):
        raise fail("webhook", "expected an http(s) URL", "e.g. https://hooks.example.com/risk")
    return value


WebhookUrl = Annotated[str, BeforeValidator(_webhook)]
