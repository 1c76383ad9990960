"""The policy schema, ``apiVersion: driftwatch/v1``, ``kind: DriftPolicy``.

Types only: :mod:`driftwatch.policy.loader` reads a file into a :class:`Policy`,
checking keys first and cross-field rules last, and remembers where every value was
written so decisions can cite ``file:line``.

>>> p = Policy.model_validate({
...     "apiVersion": "driftwatch/v1", "kind": "DriftPolicy",
...     "metadata": {"name": "demo"},
...     "model": {"name": "credit", "reference": "ref.parquet"},
...     "window": {"kind": "count", "pane": 500},
...     "signals": [{"detector": "auc", "thresholds": {"mild": 0.7}}],
... })
>>> p.signals[0].direction, p.persistence.severe, p.actions.severe.type
('below', 1, 'none')
>>> p.source(("signals", 0, "thresholds", "mild"))
'<policy>'
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, PrivateAttr, model_validator

from driftwatch.policy.actions import Action, AlertAction, NoAction
from driftwatch.policy.base import StrictModel
from driftwatch.policy.catalog import DETECTORS, Direction, Measure
from driftwatch.policy.durations import parse_duration
from driftwatch.policy.fields import (
    DataQualityDetector,
    Duration,
    SignalDetector,
    Threshold,
    TierName,
)
from driftwatch.policy.reference import ReferenceColumns
from driftwatch.policy.segments import SegmentSettings
from driftwatch.policy.settings import CohortSettings, DetectorSettings, LabelSettings
from driftwatch.policy.tiers import Tier

__all__ = [
    "API_VERSION",
    "KIND",
    "ClearThresholds",
    "Combine",
    "DataQualityGate",
    "DataQualityRule",
    "Escalation",
    "Hysteresis",
    "Limits",
    "Metadata",
    "ModelRef",
    "Policy",
    "SignalRule",
    "TierActions",
    "TierCounts",
    "TierDurations",
    "TierLimits",
    "TierThresholds",
    "Window",
]

API_VERSION = "driftwatch/v1"
KIND = "DriftPolicy"


class _PerTier(StrictModel):
    def get(self, tier: Tier | str) -> Any:
        return getattr(self, str(Tier.parse(tier)))


class Metadata(StrictModel):
    name: str = Field(min_length=1)
    description: str = ""
    owner: str = ""


class ModelRef(StrictModel):
    #: Registered model name (MLflow registry).
    name: str = Field(min_length=1)
    #: Reference profile or training data: a path in the repository or a URI.
    reference: str = Field(min_length=1)
    #: Optional: the model's features, so the policy's feature names can be checked.
    features: list[str] | None = None
    #: Optional: scores at or below it are approved (the credit policy's cut-off); shadow
    #: comparisons give both models' approval rate and expected loss at it.
    approval_cutoff: float | None = Field(default=None, ge=0, le=1)


class Window(StrictModel):
    #: ``count``: a pane is ``pane`` events; ``time``: a pane spans ``pane`` (a duration).
    kind: Literal["count", "time"] = "count"
    pane: int | str
    panes: int = Field(default=1, ge=1)
    mode: Literal["tumbling", "sliding"] = "tumbling"
    allowed_lateness: Duration = 0.0

    @property
    def pane_size(self) -> float:
        """Events per pane (``count``) or seconds per pane (``time``)."""
        return parse_duration(self.pane) if isinstance(self.pane, str) else float(self.pane)


class TierThresholds(_PerTier):
    mild: Threshold | None = None
    moderate: Threshold | None = None
    severe: Threshold | None = None


class ClearThresholds(_PerTier):
    mild: float | None = None
    moderate: float | None = None
    severe: float | None = None


class SignalRule(StrictModel):
    """One detector on some features, with a threshold per tier."""

    detector: SignalDetector
    features: Literal["all"] | list[str] = "all"
    #: ``above``: worse when higher; ``below``: worse when lower (auc); ``abs``: two-sided.
    direction: Direction = "above"
    #: Compare thresholds with the result's ``value`` or a change in its ``details``.
    measure: Measure = "value"
    thresholds: TierThresholds
    #: Explicit hysteresis: once a tier is active it clears only past these levels (an
    #: override's own level of a tier clears by ``hysteresis.factor`` instead).
    clear: ClearThresholds | None = None
    overrides: dict[str, TierThresholds] = Field(default_factory=dict)
    weight: float = Field(default=1.0, gt=0)
    weights: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _detector_defaults(cls, data: Any) -> Any:
        """``direction`` and ``measure`` default to the detector's (auc: below)."""
        return _defaults(data, "direction", "measure")


def _defaults(data: Any, *names: str) -> Any:
    if not isinstance(data, dict):
        return data
    det = data.get("detector")
    info = DETECTORS.get(det) if isinstance(det, str) else None
    if info is None:
        return data
    return {**{n: getattr(info, n) for n in names}, **data}


class DataQualityRule(StrictModel):
    """A data-quality signal and the level above which the feed counts as broken.

    The feed is faulty when the measure is strictly above ``threshold`` (so ``0``
    tolerates none). ``missing_rate`` measures the ``increase`` over the reference's
    missing share by default, as some features are often blank in training data too; an
    increase counts only when it is also significant (its binomial p-value passes
    Benjamini-Hochberg at ``detectors.fdr`` across the window's features), so a wide
    table's chance ups and downs do not read as a broken feed. ``out_of_range`` counts
    likewise only when its count outside the reference's range is significant against
    what a stable feed leaves outside a range drawn from ``m`` reference values present
    (exact: :mod:`driftwatch.detectors.range_null`; a sparse feature's range comes from
    few values).
    """

    detector: DataQualityDetector
    features: Literal["all"] | list[str] = "all"
    measure: Measure = "value"
    threshold: float = Field(ge=0)
    overrides: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _detector_defaults(cls, data: Any) -> Any:
        return _defaults(data, "measure")


class DataQualityGate(StrictModel):
    """While a fault lasts: run ``action`` only, block the tiers' actions."""

    signals: list[DataQualityRule] = Field(default_factory=list)
    action: Action = Field(default_factory=AlertAction)
    #: Clean windows in a row before the gate lifts.
    clear_after: int = Field(default=1, ge=1)
    cooldown: Duration = 0.0


class Combine(StrictModel):
    """How per-feature severities make one tier."""

    method: Literal["worst", "weighted_vote", "count"] = "worst"
    #: ``count``: a tier needs this many features (or model signals) at it or above.
    min_features: int = Field(default=1, ge=1)
    #: ``weighted_vote``: a tier needs this share of the total weight at it or above.
    quorum: float = Field(default=0.5, gt=0, le=1)


class TierCounts(_PerTier):
    mild: int = Field(default=1, ge=1)
    moderate: int = Field(default=1, ge=1)
    severe: int = Field(default=1, ge=1)


def _every_tier(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return {"mild": value, "moderate": value, "severe": value}
    return value


class Hysteresis(StrictModel):
    #: Clear level = trigger moved toward "better" by (1 - factor) x |trigger|.
    factor: float = Field(default=1.0, gt=0, le=1)


class TierDurations(_PerTier):
    mild: Duration = 0.0
    moderate: Duration = 0.0
    severe: Duration = 0.0


class Escalation(StrictModel):
    """``from`` persisting ``after`` windows in a row (at it or above) becomes ``to``."""

    from_: TierName = Field(alias="from")
    to: TierName
    after: int = Field(ge=1)


class TierLimits(_PerTier):
    mild: int | None = Field(default=None, ge=0)
    moderate: int | None = Field(default=None, ge=0)
    severe: int | None = Field(default=None, ge=0)


class Limits(StrictModel):
    """Blast radius: how much the daemon may change in a day."""

    #: Actions per tier in any 24 hours (by window end time); empty: no limit.
    max_actions_per_day: TierLimits = Field(default_factory=TierLimits)
    max_concurrent_retrains: int = Field(default=1, ge=0)


class TierActions(_PerTier):
    mild: Action = Field(default_factory=NoAction)
    moderate: Action = Field(default_factory=NoAction)
    severe: Action = Field(default_factory=NoAction)


PerTierCounts = Annotated[TierCounts, BeforeValidator(_every_tier)]


class Policy(StrictModel):
    """A whole policy file. ``source(path)`` says where a value was written."""

    api_version: Literal["driftwatch/v1"] = Field(alias="apiVersion")
    kind: Literal["DriftPolicy"]
    metadata: Metadata
    model: ModelRef
    #: How the reference table's columns are read (score, label, decision, ignore).
    reference: ReferenceColumns = Field(default_factory=ReferenceColumns)
    window: Window
    signals: list[SignalRule] = Field(min_length=1)
    combine: Combine = Field(default_factory=Combine)
    persistence: PerTierCounts = Field(default_factory=TierCounts)
    hysteresis: Hysteresis = Field(default_factory=Hysteresis)
    cooldown: TierDurations = Field(default_factory=TierDurations)
    escalation: list[Escalation] = Field(default_factory=list)
    data_quality: DataQualityGate = Field(default_factory=DataQualityGate)
    limits: Limits = Field(default_factory=Limits)
    actions: TierActions = Field(default_factory=TierActions)
    detectors: DetectorSettings = Field(default_factory=DetectorSettings)
    labels: LabelSettings = Field(default_factory=LabelSettings)
    segments: SegmentSettings = Field(default_factory=SegmentSettings)
    cohorts: CohortSettings = Field(default_factory=CohortSettings)

    _file: str = PrivateAttr(default="<policy>")
    _lines: dict[tuple[str | int, ...], int] = PrivateAttr(default_factory=dict)
    _digest: str = PrivateAttr(default="")
    #: Derived forms (compiled rules) built once per policy by the engine.
    _cache: dict[str, Any] = PrivateAttr(default_factory=dict)

    def attach_source(self, file: str, lines: dict[tuple[str | int, ...], int],
                      digest: str) -> None:
        """Remember the file, the line of every value, and the text's digest."""
        self._file, self._lines, self._digest = file, dict(lines), digest

    # The readers below take the private values from pydantic's own dict: a plain
    # ``self._cache`` misses the instance and goes through pydantic's ``__getattr__``
    # (about 2 µs), and the engine reads them several times for every window.

    @property
    def cache(self) -> dict[str, Any]:
        return self.__pydantic_private__["_cache"]  # type: ignore[index,no-any-return]

    @property
    def file(self) -> str:
        return self.__pydantic_private__["_file"]  # type: ignore[index,no-any-return]

    @property
    def digest(self) -> str:
        """sha256 of the policy text ("" when built in code): the policy's version."""
        return self.__pydantic_private__["_digest"]  # type: ignore[index,no-any-return]

    def calibrated_rates(self) -> dict[str, tuple[float, ...]]:
        """False-alarm rates each detector must calibrate for, e.g. ``{"ks": (0.01,)}``.

        The detector reports the levels in ``details[CALIBRATED_LEVELS]`` keyed by
        ``rate_key(rate)`` (:mod:`driftwatch.detectors.registry`); see
        :func:`driftwatch.policy.severity.resolve`.
        """
        rates: dict[str, set[float]] = {}
        for rule in self.signals:
            for th in (rule.thresholds, *rule.overrides.values()):
                for t in ("mild", "moderate", "severe"):
                    v = th.get(t)
                    if v is not None and not isinstance(v, float):
                        rates.setdefault(rule.detector, set()).add(
                            v.calibrated.false_alarm_rate)
        return {k: tuple(sorted(v, reverse=True)) for k, v in sorted(rates.items())}

    def source(self, path: tuple[str | int, ...]) -> str:
        """``file:line`` of the value at ``path`` (or its nearest written parent)."""
        private = self.__pydantic_private__
        lines, file = private["_lines"], private["_file"]  # type: ignore[index]
        p = tuple(path)
        while p:
            if p in lines:
                return f"{file}:{lines[p]}"
            p = p[:-1]
        return file  # type: ignore[no-any-return]
