"""What ``driftwatch init`` decides, as data: the user's options and the plan they lead to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftwatch.onboard.sample import Sample

__all__ = ["Feature", "Options", "Plan", "StreamPlan"]


@dataclass
class Options:
    """What the user said (flags); None leaves it to the heuristics."""

    model: str = "my-model"
    id_field: str | None = None
    time_field: str | None = None
    time_format: str | None = None  # strptime format of a text event time
    #: the unit of a numeric event time (``--time-unit``): PaySim's step counts hours
    time_unit: str | None = None
    score_field: str | None = None
    label_field: str | None = None
    decision_field: str | None = None
    exposure_field: str | None = None
    score_is: str | None = None
    #: the position of the score's class in a stream's list of class probabilities
    proba_at: int | None = None
    label_bad: list[str] = field(default_factory=list)
    approve: list[str] = field(default_factory=list)
    decline: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Feature:
    name: str  # the reference column
    path: str  # the stream path
    kind: str  # numeric | categorical
    why: str
    missing: tuple[int | float | str, ...] = ()  # likely codes for missing ...
    missing_why: str = ""  # ... and what gave them away
    #: numbers written as text, the connector's format: percent ('13.56%') or money
    #: ('$60,000.00 ')
    format: str | None = None
    #: one of the text values and the number it reads as, in its file's own decimal mark
    #: and currency placement (``('1.234,56 €', 1234.56)``), for the connector's comment
    example: tuple[str, float] | None = None


@dataclass
class StreamPlan:
    name: str  # predictions | outcomes
    sample: Sample
    id_path: str  # "": id_source says where ids come from
    time_path: str | None  # None: time_source says where time comes from
    time_unit: str = "auto"
    time_source: str = "payload"  # payload | kafka_timestamp | arrival | order
    time_format: str | None = None  # strptime format of a text time
    #: the first of the hundred years a two-digit year (%y) of ``time_format`` is read in
    time_century_start: int | None = None
    time_offsets: bool = False  # counts from a start: the connector needs an origin
    #: payload | order (``event_id: {source: order}``: each record's number in its file)
    id_source: str = "payload"
    score: str | None = None
    score_percent: bool = False  # the stream writes the score as a percentage (0 to 100)
    score_log_odds: bool = False  # the stream writes the score as its log-odds
    #: a list of class probabilities (predict_proba's row) standing for the score, and
    #: the position of the class whose probability the score is
    proba: str | None = None
    proba_at: int = 1
    proba_classes: int = 2  # the length of each list
    decision: str | None = None
    approve: list[Any] = field(default_factory=list)
    decline: list[Any] | None = None  # None: every value not approved declines
    exposure: str | None = None
    model_version: str | None = None
    label: str | None = None
    bad: list[Any] = field(default_factory=list)
    good: list[Any] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)  # label values: no outcome yet
    #: of ``pending``, the loan states the sample lacks (they come later)
    later: list[str] = field(default_factory=list)
    #: of ``bad`` and ``good``, the final outcomes of a recognised status the sample lacks
    later_bad: list[str] = field(default_factory=list)
    later_good: list[str] = field(default_factory=list)
    later_from: list[str] = field(default_factory=list)  # the statuses they come from
    #: the sample's final outcomes of a recognised status the reference lacks, with
    #: their sides (Lending Club's 'Default': bad)
    sided: list[tuple[Any, str]] = field(default_factory=list)
    numbers_as_text: bool = False  # numeric features written as JSON text ("52000")


@dataclass
class Plan:
    model: str
    reference: str
    features: list[Feature]
    ignore: list[str]
    predictions: StreamPlan
    outcomes: StreamPlan | None
    ref_score: str | None = None
    score_is: str = "p_bad"
    ref_label: str | None = None
    ref_bad: list[Any] = field(default_factory=list)
    ref_good: list[Any] = field(default_factory=list)
    ref_pending: list[Any] = field(default_factory=list)  # label values: no outcome yet
    ref_decision: str | None = None
    ref_approve: list[Any] = field(default_factory=list)
    ref_decline: list[Any] | None = None  # None: every value not approved declines
    ref_exposure: str | None = None
    #: a headerless CSV reference's column names (init's --reference-names)
    ref_names: tuple[str, ...] | None = None
    #: ``labels.ttl`` where the samples' outcomes come later than the default wait
    label_ttl: str | None = None
    lines: list[str] = field(default_factory=list)

    def say(self, what: str, why: str) -> None:
        self.lines.append(f"{what:<34} {why}")
