"""How one stream's messages map to :class:`~driftwatch.batch.Batch` fields: the decoder's input.

A :class:`StreamMapping` is built by :mod:`driftwatch.connectors.config` from a connector
file; tests and tools may build one directly. Field paths are dotted (``applicant.income``);
for a flat table (CSV, Parquet) a column named exactly like the whole path wins.

Values that select a decision or a label (``approve: [approve, 1, true]``) are compared by
:func:`value_key`: text is stripped and lower-cased, ``true``/``false`` stand for booleans
and integral numbers lose their ``.0``, so ``1``, ``1.0`` and ``"1"`` all match ``1``.

>>> m = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
...                   event_time=TimeField(FieldPath.parse("ts")), features=None)
>>> from driftwatch.schema import FeatureSchema, level_text
>>> r = m.resolve(FeatureSchema(numeric=("income",), categorical=("purpose",)))
>>> [(f.name, f.path.text, f.kind) for f in r.features]
[('income', 'income', 'numeric'), ('purpose', 'purpose', 'categorical')]
>>> [value_key(v) for v in ("Approve ", True, 1.0, 1, 2.5)]
['approve', 'true', '1', '1', '2.5']
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from driftwatch.schema import FeatureSchema, level_text
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.sentinels import MissingValues

__all__ = [
    "DEFAULT_APPROVE",
    "DEFAULT_BAD",
    "DEFAULT_GOOD",
    "ROLES",
    "AvroSettings",
    "DecisionField",
    "FeatureField",
    "FieldPath",
    "LabelField",
    "ProbaField",
    "StreamMapping",
    "TimeField",
    "as_text",
    "value_key",
]

ROLES = ("predictions", "outcomes")
DEFAULT_APPROVE: tuple[Any, ...] = ("approve", "approved", 1, True)
DEFAULT_BAD: tuple[Any, ...] = (1, True, "bad", "default")
DEFAULT_GOOD: tuple[Any, ...] = (0, False, "good")


def as_text(v: Any) -> str:
    """Text of a scalar as decoded fields carry it (ids, levels, versions, segments): the
    reference profile's :func:`~driftwatch.schema.level_text`, so levels match."""
    return level_text(v)


def value_key(v: Any) -> str:
    """Normalised key used to match decision and label values."""
    return as_text(v).strip().lower()


@dataclass(frozen=True)
class FieldPath:
    """A dotted path into a message (``loan.amount``), kept with its text."""

    parts: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        return cls(tuple(text.split(".")))

    @staticmethod
    def is_valid(text: str | None) -> bool:
        """Whether ``text`` is a path: no part empty or only spaces (``.1``, ``a..b`` and
        `` `` are none).

        >>> FieldPath.is_valid("loan.amount"), FieldPath.is_valid(".1"), FieldPath.is_valid("")
        (True, False, False)
        """
        return bool(text) and all(p.strip() for p in str(text).split("."))

    @property
    def text(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class TimeField:
    """Event time: a path and its unit, or the Kafka record timestamp. ``format`` (a
    strptime format) reads text times, a two-digit year of it in the hundred years from
    ``century_start`` (None: by the reader's today); ``origin`` (an ISO-8601 instant)
    makes numbers offsets from it in ``unit`` (see :mod:`driftwatch.connectors.eventtime`)."""

    path: FieldPath | None
    unit: str = "auto"  # auto | s | ms | us | ns | min | h | d | iso
    source: str = "payload"  # payload | kafka_timestamp | arrival | order
    format: str | None = None
    origin: str | None = None
    century_start: int | None = None

    @property
    def read_unit(self) -> str:
        """The unit its numbers are read in: an offset from an ``origin`` is a count in
        seconds unless the unit says otherwise (no epoch rule tells its unit), else
        ``unit`` as written (``auto``: epoch seconds or milliseconds, by the values)."""
        return "s" if self.origin is not None and self.unit == "auto" else self.unit


@dataclass(frozen=True)
class FeatureField:
    name: str
    path: FieldPath
    kind: str | None = None  # numeric | categorical; None = as in the reference
    #: the text a number is written as (:mod:`driftwatch.textnumbers`): ``percent``
    #: (``"13.56%"``) or ``money`` (``"$60,000.00 "``); None: a plain number
    format: str | None = None


@dataclass(frozen=True)
class DecisionField:
    path: FieldPath
    approve: frozenset[str] = frozenset(value_key(v) for v in DEFAULT_APPROVE)
    decline: frozenset[str] | None = None  # None: anything not approved is declined


@dataclass(frozen=True)
class LabelField:
    path: FieldPath
    bad: frozenset[str] = frozenset(value_key(v) for v in DEFAULT_BAD)
    good: frozenset[str] = frozenset(value_key(v) for v in DEFAULT_GOOD)
    required: bool = True  # an outcome without a label is a bad record
    pending: frozenset[str] = frozenset()  # "no outcome yet": left out, not a bad record


@dataclass(frozen=True)
class ProbaField:
    path: FieldPath
    classes: int = 2  # length every probability list must have
    #: the position in the list of the probability that is the score when the stream maps
    #: no ``score``: the class the reference's score is the probability of (bad, unless the
    #: policy says ``score_is: p_good``); by default 1 (``predict_proba``'s class 1, the
    #: last of two classes only)
    score_at: int = 1


@dataclass(frozen=True)
class AvroSettings:
    """A stream's ``avro:``: the writer schema's JSON text (read from ``schema_file`` when
    the connector was loaded) or a schema registry's URL; exactly one of the two
    (:mod:`~driftwatch.connectors.avro` reads the values)."""

    schema_text: str | None = None
    schema_file: str | None = None  # as written in the connector, for messages
    registry: str | None = None


@dataclass(frozen=True)
class StreamMapping:
    """Everything the decoder needs to turn one stream's messages into a Batch.

    ``features`` is ``None`` for ``features: infer`` until :meth:`resolve` fills it from a
    :class:`FeatureSchema`; an empty tuple means the stream carries no features.
    ``role`` (``predictions`` / ``outcomes``) becomes ``Batch.stream``. ``event_id`` is
    None for ``event_id: {source: order}``: each record's id is its number in its file.
    """

    name: str
    event_id: FieldPath | None
    event_time: TimeField
    features: tuple[FeatureField, ...] | None = ()
    role: str = "predictions"
    score: FieldPath | None = None
    #: the scale the score is written in (probability, percent, log-odds or scorecard
    #: points): the decoder reads it as a probability
    score_scale: ScoreScale = PROBABILITY
    proba: ProbaField | None = None
    model_version: FieldPath | None = None
    decision: DecisionField | None = None
    segment: FieldPath | None = None
    exposure: FieldPath | None = None
    label: LabelField | None = None
    metrics: tuple[tuple[str, FieldPath], ...] = ()
    paths: tuple[str, ...] = ()
    format: str = "auto"  # auto | jsonl | csv | parquet | kafka-recording
    delimiter: str | None = None  # a CSV's separator; None: found in each file's header
    decimal: str | None = None  # a CSV's decimal mark; None: found in each file's first rows
    #: a headerless CSV's column names (``csv: {names:}``); None: its first line holds them
    names: tuple[str, ...] | None = None
    #: numbers written as text read as numbers (always so in a CSV)
    numbers_as_text: bool = False
    topic: str | Mapping[str, Any] | None = None  # a name, or a mapping with only `name`
    options: Mapping[str, Any] = field(default_factory=dict)
    #: values read as missing (``missing_values`` / ``missing_values_by_feature``)
    missing: MissingValues = field(default_factory=MissingValues)
    #: values are Avro records, with this writer schema or registry (``avro:``)
    avro: AvroSettings | None = None

    @property
    def topic_name(self) -> str | None:
        """The topic as a name, whether ``topic:`` is a string or a mapping with ``name``."""
        if isinstance(self.topic, Mapping):
            name = self.topic.get("name")
            return str(name) if name is not None else None
        return self.topic

    @property
    def infers_features(self) -> bool:
        return self.features is None

    def resolve(self, schema: FeatureSchema) -> StreamMapping:
        """Fill ``features: infer`` from ``schema`` (path = name) and missing kinds."""
        kinds = {n: "numeric" for n in schema.numeric} | {
            n: "categorical" for n in schema.categorical
        }
        if self.features is None:
            feats = tuple(FeatureField(n, FieldPath.parse(n), kinds[n]) for n in schema.names)
        else:
            feats = tuple(
                f if f.kind or f.name not in kinds else replace(f, kind=kinds[f.name])
                for f in self.features
            )
        return replace(self, features=feats)

    def feature_paths(self, names: Iterable[str]) -> dict[str, FieldPath]:
        """Paths of the named features this stream maps (absent names are left out)."""
        mine = {f.name: f.path for f in self.features or ()}
        return {n: mine[n] for n in names if n in mine}

    def all_paths(self) -> dict[str, FieldPath]:
        """Every mapped path by field name (``feature:<name>``, ``metric:<name>``, ...)."""
        out: dict[str, FieldPath] = {}
        if self.event_id is not None:
            out["event_id"] = self.event_id
        if self.event_time.path is not None:
            out["event_time"] = self.event_time.path
        for f in self.features or ():
            out[f"feature:{f.name}"] = f.path
        for key in ("score", "model_version", "segment", "exposure"):
            p = getattr(self, key)
            if p is not None:
                out[key] = p
        if self.proba is not None:
            out["proba"] = self.proba.path
        if self.decision is not None:
            out["decision"] = self.decision.path
        if self.label is not None:
            out["label"] = self.label.path
        for name, p in self.metrics:
            out[f"metric:{name}"] = p
        return out

    def with_flat_keys(self, keys: Collection[str]) -> StreamMapping:
        """This mapping with each dotted path whose whole text is one of ``keys`` read as
        that one key: a JSON record's flat ``"default.payment.next.month"``, as a CSV's
        column of that name is read.

        >>> m = StreamMapping("o", FieldPath.parse("ID"), TimeField(None, source="arrival"),
        ...                   label=LabelField(FieldPath.parse("default.payment.next.month")))
        >>> m.with_flat_keys({"default.payment.next.month"}).label.path.parts
        ('default.payment.next.month',)
        """
        def flat(p: FieldPath | None) -> FieldPath | None:
            return FieldPath((p.text,)) if p is not None and p.text in keys else p

        def flat_in(f: Any) -> Any:
            return None if f is None else replace(f, path=flat(f.path))

        return replace(
            self, event_id=flat(self.event_id), event_time=flat_in(self.event_time),
            features=None if self.features is None else tuple(
                flat_in(f) for f in self.features),
            score=flat(self.score), proba=flat_in(self.proba),
            model_version=flat(self.model_version), decision=flat_in(self.decision),
            segment=flat(self.segment), exposure=flat(self.exposure),
            label=flat_in(self.label),
            metrics=tuple((n, flat(p)) for n, p in self.metrics))  # type: ignore[misc]
