"""Named scenarios for the synthetic credit stream: when drift happens, how much, of what kind.

A scenario is a time line of :class:`Episode` s over a quiet baseline. Each episode carries
the :class:`Effects` the generator applies to events inside it, and the tier a sensible
policy should reach (``mild`` / ``moderate`` / ``severe``, or ``alert`` for a data-quality
fault that must alert and block retraining rather than trigger a model action).

>>> plan = scenario_plan("demo")
>>> [(e.tier, e.kind) for e in plan.episodes]  # doctest: +NORMALIZE_WHITESPACE
[('mild', 'covariate'), ('moderate', 'covariate'), ('alert', 'feed_fault'),
 ('severe', 'covariate+concept')]
>>> plan.episode_at(plan.start + 45 * 86400).name
'mild-income-utilization'
>>> scenario_plan("quiet").episodes
()
>>> scenario_plan("nope")
Traceback (most recent call last):
...
LookupError: unknown scenario 'nope'; valid: concept, demo, feed_fault, large, quiet
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "DAY",
    "DEFAULT_START",
    "HISTORY_PIVOT",
    "SCENARIOS",
    "Effects",
    "Episode",
    "ScenarioPlan",
    "scenario_plan",
]

DAY = 86_400
#: log1p(credit history months) of the quiet population's mean applicant (about 12 years)
HISTORY_PIVOT = 5.0
DEFAULT_START = 1_704_067_200  # 2024-01-01T00:00:00Z

SCENARIOS = ("concept", "demo", "feed_fault", "large", "quiet")


@dataclass(frozen=True)
class Effects:
    """What an episode changes, relative to the quiet population.

    ``income_shift`` is added to log-income; ``utilization_shift`` and ``dti_shift`` move
    those features' means; ``purpose_tilt`` moves weight to debt consolidation and
    business loans; ``thin_file`` is the share of young, thin-file applicants (it spreads the
    scores); ``concept`` is added to the TRUE default log-odds only (the model does not see
    it); ``dti_missing`` is the share of ``debt_to_income`` values the feed loses;
    ``history_weight`` is added to the TRUE default log-odds per unit of
    ``log1p(credit_history_months)`` below :data:`HISTORY_PIVOT` (short histories default more
    than the model says: a change of ranking, which only a model learned on outcomes sees).
    """

    income_shift: float = 0.0
    utilization_shift: float = 0.0
    dti_shift: float = 0.0
    purpose_tilt: float = 0.0
    thin_file: float = 0.0
    concept: float = 0.0
    dti_missing: float = 0.0
    history_weight: float = 0.0


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Episode:
    """A stretch of event time ``[start, end)`` (epoch seconds) with one kind of change."""

    name: str
    tier: str  # mild | moderate | severe | alert
    kind: str  # covariate | concept | feed_fault | covariate+concept
    start: float
    end: float
    effects: Effects
    features: tuple[str, ...] = ()
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["start_utc"], d["end_utc"] = _utc(self.start), _utc(self.end)
        d["features"] = list(self.features)
        d["effects"] = {k: v for k, v in asdict(self.effects).items() if v}
        return d


@dataclass(frozen=True)
class ScenarioPlan:
    """A scenario: its time span, event count and episodes (sorted, non-overlapping), and
    ``lasting`` changes of the world: effects from a time on to the end, added to the
    episodes' (a regime that does not go back)."""

    name: str
    start: float
    days: float
    n_events: int
    episodes: tuple[Episode, ...] = field(default=())
    lasting: tuple[tuple[float, Effects], ...] = field(default=())

    @property
    def end(self) -> float:
        return self.start + self.days * DAY

    def episode_at(self, t: float) -> Episode | None:
        for e in self.episodes:
            if e.start <= t < e.end:
                return e
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.name,
            "start": self.start,
            "end": self.end,
            "start_utc": _utc(self.start),
            "end_utc": _utc(self.end),
            "days": self.days,
            "n_events": self.n_events,
            "episodes": [e.to_dict() for e in self.episodes],
            "lasting": [
                {"start": t, "start_utc": _utc(t),
                 "effects": {k: v for k, v in asdict(eff).items() if v}}
                for t, eff in self.lasting
            ],
        }


# (name, tier, kind, start day, end day, effects, features, description) as fractions of
# the demo's 140 days, so `large` and custom spans keep the same shape.
_DEMO_DAYS = 140.0
_DEMO = (
    ("mild-income-utilization", "mild", "covariate", 40, 50,
     Effects(income_shift=-0.25, utilization_shift=0.06),
     ("income", "utilization"),
     "small income drop and utilization rise: max PSI about 0.1-0.2 per window"),
    ("moderate-shift-spread", "moderate", "covariate", 62, 74,
     Effects(income_shift=-0.28, utilization_shift=0.08, dti_shift=0.03, purpose_tilt=0.4,
             thin_file=0.06),
     ("income", "utilization", "debt_to_income", "purpose", "credit_history_months", "age"),
     "clear shift in several features and a wider score spread"),
    ("feed-fault-dti-missing", "alert", "feed_fault", 84, 88,
     Effects(dti_missing=0.4),
     ("debt_to_income",),
     "pipeline fault: 40% of debt_to_income values missing; scores unaffected"),
    ("severe-shift-bad-rate", "severe", "covariate+concept", 98, 112,
     Effects(income_shift=-0.45, utilization_shift=0.18, dti_shift=0.12, purpose_tilt=1.2,
             thin_file=0.45, concept=0.9),
     ("income", "utilization", "debt_to_income", "purpose", "credit_history_months", "age",
      "score"),
     "large shift and a broken business metric: the true bad rate rises past the model's"),
)  # fmt: skip
# From the moderate episode on, short credit histories default more than the scorecard
# says and do not go back: its ranking weakens, worst in the severe episode's flood of thin
# files, and a model retrained on the outcomes that have matured by then ranks better.
_DEMO_LASTING = ((62, Effects(history_weight=1.5)),)


def _episodes(spec: tuple, start: float, days: float, base_days: float) -> tuple[Episode, ...]:
    scale = days / base_days
    return tuple(
        Episode(name, tier, kind, start + d0 * scale * DAY, start + d1 * scale * DAY, eff,
                feats, desc)
        for name, tier, kind, d0, d1, eff, feats, desc in spec
    )


def scenario_plan(
    name: str,
    *,
    n_events: int | None = None,
    days: float | None = None,
    start: float = DEFAULT_START,
) -> ScenarioPlan:
    """The plan of a named scenario; ``n_events`` and ``days`` override its defaults.

    ``demo`` (90k events, 140 days): quiet, then mild, moderate, a feed fault and severe
    episodes with quiet gaps, and from the moderate episode on a lasting change of who
    defaults (``history_weight``). ``quiet``: no drift. ``concept``: features unchanged, the true
    default rate rises from 45% of the span on. ``feed_fault``: a data-quality fault only.
    ``large``: the demo's shape with 1M events (for benchmarks).
    """
    if name not in SCENARIOS:
        raise LookupError(f"unknown scenario {name!r}; valid: {', '.join(SCENARIOS)}")
    if name in ("demo", "large"):
        d = days or _DEMO_DAYS
        n = n_events or (90_000 if name == "demo" else 1_000_000)
        lasting = tuple((start + d0 * d / _DEMO_DAYS * DAY, eff) for d0, eff in _DEMO_LASTING)
        return ScenarioPlan(name, start, d, n, _episodes(_DEMO, start, d, _DEMO_DAYS), lasting)
    if name == "quiet":
        return ScenarioPlan(name, start, days or 60.0, n_events or 40_000)
    if name == "concept":
        d = days or 90.0
        spec = (("concept-default-rate-up", "moderate", "concept", 40, 90,
                 Effects(concept=0.8), ("label",),
                 "same applicants default more: only label-based signals should move"),)
        return ScenarioPlan(name, start, d, n_events or 50_000, _episodes(spec, start, d, 90.0))
    d = days or 60.0
    spec = (("feed-fault-dti-missing", "alert", "feed_fault", 30, 34,
             Effects(dti_missing=0.4), ("debt_to_income",),
             "pipeline fault: 40% of debt_to_income values missing"),)
    return ScenarioPlan(name, start, d, n_events or 40_000, _episodes(spec, start, d, 60.0))

