"""The structural schema of a connector file (pydantic v2) and its errors, located in the YAML.

:mod:`driftwatch.connectors.config` validates a document with :class:`ConnectorSpec`, then
turns it into :class:`~driftwatch.connectors.mapping.StreamMapping` s. Every pydantic error
becomes a :class:`~driftwatch.errors.ConnectorError` that names ``file:line:col``, the path in
the document, what was expected and what was found, with a nearest-key suggestion for
unknown keys and misspelt choices.

>>> from driftwatch.yamlio import load_yaml
>>> doc = load_yaml("source:\\n  kind: fiel\\n", file="c.yaml")
>>> try:
...     ConnectorSpec.model_validate(doc.data)
... except ValidationError as exc:
...     print(located_error(doc, exc, ConnectorSpec).render().splitlines()[0])
c.yaml:2:9: expected one of 'file', 'kafka', found 'fiel'
"""

from __future__ import annotations

import datetime
import math
import types
from collections.abc import Sequence
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from driftwatch.errors import ConnectorError
from driftwatch.scorescale import LOG_ODDS, PERCENT, PROBABILITY, ScoreScale
from driftwatch.yamlio import LocatedDoc, nearest

__all__ = [
    "API_VERSION",
    "FORMATS",
    "AvroSpec",
    "ConnectorSpec",
    "CsvSpec",
    "DecisionSpec",
    "FeatureSpec",
    "FieldsSpec",
    "IdSpec",
    "LabelSpec",
    "PathSpec",
    "PointsSpec",
    "ProbaSpec",
    "ScoreSpec",
    "StreamSpec",
    "TimeSpec",
    "located_error",
    "show",
]

API_VERSION = "driftwatch/v1"
FORMATS = ("auto", "jsonl", "csv", "parquet", "kafka-recording")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _path_or_mapping(v: Any) -> Any:
    if isinstance(v, str):
        return {"path": v}
    if isinstance(v, dict):
        return v
    raise PydanticCustomError("path_or_mapping", "expected a dotted path or a mapping")


def _scalars(v: Any) -> list[Any]:
    items = v if isinstance(v, list) else [v]
    if not all(isinstance(x, str | int | float | bool) for x in items) or not items:
        raise PydanticCustomError("scalar_list", "expected a list of text, numbers or booleans")
    return items


class _Short(_Spec):
    """Accepts ``key: a.b`` as short for ``key: {path: a.b}``."""

    @model_validator(mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return _path_or_mapping(v)


class PathSpec(_Short):
    """``score: model.score`` or ``score: {path: model.score}``."""

    path: str


class PointsSpec(_Spec):
    """A scorecard's scaling: ``{base: 600, odds: 50, pdo: 20}``: at ``base`` points the
    good:bad odds are ``odds``, and every ``pdo`` points double them (higher = safer)."""

    base: float
    odds: float
    pdo: float

    @field_validator("base", "odds", "pdo", mode="before")
    @classmethod
    def _number(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise PydanticCustomError("finite_number", "expected a finite number")
        return v

    @field_validator("odds", "pdo")
    @classmethod
    def _positive(cls, v: float, info: ValidationInfo) -> float:
        if v <= 0:
            why = ("the good:bad odds at base points" if info.field_name == "odds" else
                   "the points that double the odds; higher points always mean safer")
            raise PydanticCustomError("positive", "expected a number above 0 ({why})",
                                      {"why": why})
        return v


class ScoreSpec(PathSpec):
    """``score: model.score`` (a probability) or ``score: {path: model.score, ...}`` with at
    most one of ``percent: true`` (0 to 100, read divided by 100), ``log_odds: true`` (the
    log-odds of the score's class, read as ``1 / (1 + exp(-x))``) and ``points: {base:,
    odds:, pdo:}`` (a scorecard's points, read as P(bad), see
    :class:`~driftwatch.scorescale.ScoreScale`)."""

    percent: bool = False
    log_odds: bool = False
    points: PointsSpec | None = None

    def scales(self) -> list[str]:
        """The scale keys given (more than one is refused where the mapping is built)."""
        given = [k for k in ("percent", "log_odds") if getattr(self, k)]
        return given + (["points"] if self.points is not None else [])

    def scale(self) -> ScoreScale:
        """The scale these keys name (the first of :meth:`scales`)."""
        if self.points is not None:
            p = self.points
            return ScoreScale.points(base=p.base, odds=p.odds, pdo=p.pdo)
        return LOG_ODDS if self.log_odds else PERCENT if self.percent else PROBABILITY


class IdSpec(_Short):
    """``event_id: application_id`` (a path) or ``event_id: {source: order}``: each record's
    id is its number in its file (a table without an id column); the checks between keys
    are :mod:`driftwatch.connectors.eventid`'s."""

    path: str | None = None
    source: Literal["payload", "order"] = "payload"


class TimeSpec(_Short):
    """``event_time: ts`` or ``{path:, unit:, format:, century_start:, origin:}`` or
    ``{source:}``; the checks between keys are :mod:`driftwatch.connectors.streams`'s."""

    path: str | None = None
    unit: Literal["auto", "s", "ms", "us", "ns", "min", "h", "d", "iso"] = "auto"
    source: Literal["payload", "kafka_timestamp", "arrival", "order"] = "payload"
    format: str | None = None  # a strptime format for text times
    #: the first of the hundred years a two-digit year (%y) of ``format`` is read in;
    #: checked (a year, not a boolean) in streams, which names what it found
    century_start: Any = None
    origin: str | None = None  # an ISO-8601 instant: numbers are offsets from it

    @field_validator("origin", mode="before")
    @classmethod
    def _instant(cls, v: Any) -> Any:
        # YAML reads an unquoted 2013-09-01T00:00:00Z as a datetime, 2013-09-01 as a date
        return v.isoformat() if isinstance(v, datetime.date) else v


class FeatureSpec(_Short):
    """``income: applicant.income`` or ``{path:, type:, format:}``; ``format: percent``
    reads percent text (``"13.56%"``) as the number before the sign (13.56), ``format:
    money`` money text (``"$60,000.00 "``) as the amount (60000), in the stream and the
    reference table alike (numbers pass as they are)."""

    path: str | None = None
    type: Literal["numeric", "categorical"] | None = None
    format: Literal["percent", "money"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {} if v is None else _path_or_mapping(v)


class ProbaSpec(_Short):
    path: str
    classes: int = 2
    score: int | None = None  # the position of the score's class (default: the last)


class DecisionSpec(_Short):
    path: str
    approve: list[Any] = ["approve", "approved", 1, True]
    decline: list[Any] | None = None

    @field_validator("approve", "decline", mode="before")
    @classmethod
    def _values(cls, v: Any) -> Any:
        return None if v is None else _scalars(v)


class LabelSpec(_Short):
    path: str
    bad: list[Any] = [1, True, "bad", "default"]
    good: list[Any] = [0, False, "good"]
    #: values that say "no outcome yet" (a loan still ``Current``): not a label and not a
    #: bad record; the join leaves such a record out (counted in ``invalid_outcomes``)
    pending: list[Any] = []
    required: bool | None = None  # default: true on an outcomes stream

    @field_validator("bad", "good", "pending", mode="before")
    @classmethod
    def _values(cls, v: Any) -> Any:
        return _scalars(v)


class FieldsSpec(_Spec):
    event_id: IdSpec
    event_time: TimeSpec
    features: Any = None  # 'infer' or {name: FeatureSpec}: checked by the config builder
    score: ScoreSpec | None = None
    proba: ProbaSpec | None = None
    model_version: PathSpec | None = None
    decision: DecisionSpec | None = None
    segment: PathSpec | None = None
    exposure: PathSpec | None = None
    label: LabelSpec | None = None
    metrics: dict[str, PathSpec] = {}
    #: values that mean "missing" in every feature, and per feature (replacing that list):
    #: checked by :mod:`driftwatch.connectors.streams`, element by element
    missing_values: Any = None
    missing_values_by_feature: Any = None


class CsvSpec(_Spec):
    """How a stream's CSV files are written: ``csv: {delimiter: ";", decimal: ","}``, and
    for files without a header line the column names (``names: [loan_id, period]``); the
    checks of the values are :mod:`driftwatch.connectors.streams`'s."""

    delimiter: str | None = None  # None: the one each file's header shows
    decimal: str | None = None  # None: the one each file's first rows show
    names: Any = None  # None: the file's first line holds them (checked in streams.py)


class AvroSpec(_Spec):
    """A stream's ``avro:`` (the writer schema: a file or a registry); the checks of the
    values are :mod:`driftwatch.connectors.streams`'s."""

    # ``schema`` is a BaseModel method's name: the key is read through an alias
    schema_file: str | None = Field(default=None, alias="schema")
    registry: str | None = None


class StreamSpec(_Spec):
    role: Literal["predictions", "outcomes"] | None = None
    paths: list[str] = []
    format: Literal["auto", "jsonl", "csv", "parquet", "kafka-recording"] = "auto"
    csv: CsvSpec | None = None
    #: numbers written as JSON text ("52000") are read as numbers, as a CSV's are
    numbers_as_text: bool = False
    topic: Any = None  # a name or a mapping with only `name` (checked in streams.py)
    avro: AvroSpec | None = None
    fields: FieldsSpec

    @field_validator("paths", mode="before")
    @classmethod
    def _one_path(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


class SourceSpec(_Spec):
    kind: Literal["file", "kafka"]
    connection: dict[str, Any] | None = None  # passed through to the Kafka source
    streams: dict[str, StreamSpec]


class MetadataSpec(_Spec):
    name: str
    description: str = ""


class DeadLetterSpec(_Spec):
    path: str | None = None
    topic: str | None = None


class ConnectorSpec(_Spec):
    apiVersion: Literal["driftwatch/v1"]  # the YAML key
    kind: Literal["Connector"]
    metadata: MetadataSpec
    source: SourceSpec
    dead_letter: DeadLetterSpec | None = None


# -- errors ---------------------------------------------------------------------------------


def show(v: Any) -> str:
    """How a found value is named in a message."""
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return repr(v)
    return str(v)


def _unwrap(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _annotation_at(root: type[BaseModel], loc: Sequence[str | int]) -> Any:
    """The type annotation at ``loc`` in the model tree, or None when it cannot be told."""
    tp: Any = root
    for part in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            f = tp.model_fields.get(str(part))
            if f is None:
                return None
            tp = f.annotation
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        elif get_origin(tp) is list:
            tp = get_args(tp)[0]
        else:
            return None
    return _unwrap(tp)


_EXPECTED = {
    "string_type": "expected text",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "dict_type": "expected a mapping",
    "list_type": "expected a list",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
}


def _one(
    doc: LocatedDoc, err: dict[str, Any], root: type[BaseModel], prefix: tuple[str | int, ...]
) -> tuple[tuple[bool, int, int], ConnectorError]:
    loc = tuple(err["loc"])
    path = prefix + loc
    kind = err["type"]
    hint = None
    key = False
    found: str | None = show(err.get("input"))
    if kind == "extra_forbidden":
        name = str(loc[-1])
        allowed = _annotation_at(root, loc[:-1])
        # the keys as written: a field read through an alias (avro's schema) by its alias
        choices = [f.alias or n for n, f in allowed.model_fields.items()] if isinstance(
            allowed, type) and issubclass(allowed, BaseModel) else []
        msg, found, key = f"unknown key {name!r}", None, True
        near = nearest(name, choices)
        if near:
            hint = f"did you mean {near!r}?"
        elif choices:
            hint = "valid keys: " + ", ".join(choices)
    elif kind == "missing":
        msg, found = f"missing required key {str(loc[-1])!r}", None
    elif kind == "literal_error":
        options = [str(a) for a in get_args(_annotation_at(root, loc))]
        msg = "expected one of " + ", ".join(repr(o) for o in options)
        near = nearest(str(err.get("input")), options)
        hint = f"did you mean {near!r}?" if near else None
    elif kind in _EXPECTED:
        msg = _EXPECTED[kind]
    else:
        msg = str(err["msg"])
        msg = msg[0].lower() + msg[1:]
    # a missing key is located at its parent: list the more precise problems first
    order = (kind == "missing", *doc.locate(path, key=key))
    return order, doc.error(path, msg, found=found, key=key, hint=hint, cls=ConnectorError)


def located_error(
    doc: LocatedDoc,
    exc: ValidationError,
    root: type[BaseModel],
    prefix: tuple[str | int, ...] = (),
) -> ConnectorError:
    """One :class:`ConnectorError` for a pydantic failure: the first problem in document
    order (missing keys last), with the others listed under it."""
    located = sorted(
        (_one(doc, e, root, prefix) for e in exc.errors()), key=lambda t: t[0]
    )
    first = located[0][1]
    if len(located) == 1:
        return first
    more = [f"  also {e.location}: {e.message} (at {e.path})" for _, e in located[1:]]
    return first.recast(ConnectorError, excerpt="\n".join(filter(None, [first.excerpt, *more])))
