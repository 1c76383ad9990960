"""A validated stream spec -> :class:`~driftwatch.connectors.mapping.StreamMapping`.

The checks pydantic cannot express (they involve several keys or the source kind) live
here, each failing with a :class:`~driftwatch.errors.ConnectorError` located in the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from driftwatch.connectors.avro import parse_avro_schema
from driftwatch.connectors.eventid import event_id
from driftwatch.connectors.eventtime import (
    CENTURY_STARTS,
    format_problem,
    parse_origin,
    writes_two_digit_year,
)
from driftwatch.connectors.mapping import (
    ROLES,
    AvroSettings,
    DecisionField,
    FeatureField,
    FieldPath,
    LabelField,
    ProbaField,
    StreamMapping,
    TimeField,
    value_key,
)
from driftwatch.connectors.spec import (
    FeatureSpec,
    FieldsSpec,
    PathSpec,
    StreamSpec,
    TimeSpec,
    located_error,
    show,
)
from driftwatch.errors import ConnectorError
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.sentinels import MissingValues, is_number
from driftwatch.yamlio import LocatedDoc, nearest

__all__ = ["stream_mapping"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_METRIC = re.compile(r"^[a-z][a-z0-9_]*$")
_PathT = tuple[str | int, ...]


def _err(doc: LocatedDoc, path: _PathT, msg: str, **kw: Any) -> ConnectorError:
    return doc.error(path, msg, cls=ConnectorError, **kw)  # type: ignore[return-value]


def _path(doc: LocatedDoc, where: _PathT, text: str | None) -> FieldPath:
    if text is None or not FieldPath.is_valid(text):
        raise _err(doc, where, "expected a dotted path like 'applicant.income'",
                   found=show(text))
    return FieldPath.parse(text)


def stream_mapping(doc: LocatedDoc, kind: str, name: str, s: StreamSpec,
                   folder: Path | None = None) -> StreamMapping:
    """The mapping of stream ``name`` (``kind`` is the source kind: file or kafka);
    ``folder``: where a relative ``avro: {schema:}`` file is (default: the working
    directory)."""
    at: _PathT = ("source", "streams", name)
    if not _NAME.match(name):
        raise _err(doc, at, f"stream name {name!r} may hold only letters, digits, '_', '.', '-'",
                   key=True)
    role = s.role or (name if name in ROLES else None)
    if role is None:
        raise _err(doc, at, f"cannot tell whether stream {name!r} carries predictions or "
                   "outcomes", key=True, hint="add `role: predictions` or `role: outcomes`")
    topic = s.topic
    if topic is not None and not isinstance(topic, str) and not (
        isinstance(topic, dict) and isinstance(topic.get("name"), str)
    ):
        raise _err(doc, (*at, "topic"), "expected a topic name or a mapping with 'name'",
                   found=show(topic))
    for extra in sorted(topic) if isinstance(topic, dict) else ():
        if extra != "name":  # nothing reads it: the source consumes every partition
            raise _err(doc, (*at, "topic", extra), f"unknown key {extra!r} in topic: only "
                       "'name' is read (the source consumes every partition of the topic)",
                       key=True, hint="write topic: <name>")
    if kind == "kafka":
        if topic is None:
            raise _err(doc, at, "missing required key 'topic' (kind: kafka)")
        if s.paths:
            raise _err(doc, (*at, "paths"), "paths are for kind: file; a Kafka stream reads "
                       "its topic", key=True)
    fld = s.fields
    fat: _PathT = (*at, "fields")
    event_time = _time(doc, (*fat, "event_time"), fld.event_time, role, kind, s.format)
    delimiter = _delimiter(doc, at, s, kind)
    decimal = _decimal(doc, at, s, delimiter)
    if role == "outcomes" and fld.label is None:
        raise _err(doc, fat, "an outcomes stream needs a label", hint="add `label: <path>`")
    return StreamMapping(
        name=name,
        role=role,
        event_id=event_id(doc, (*fat, "event_id"), fld.event_id, role, kind, s.format,
                          event_time),
        event_time=event_time,
        features=_features(doc, fat, fld),
        score=_opt(doc, fat, "score", fld.score),
        score_scale=_score_scale(doc, fat, fld),
        proba=_proba(doc, fat, fld),
        model_version=_opt(doc, fat, "model_version", fld.model_version),
        decision=_decision(doc, fat, fld),
        segment=_opt(doc, fat, "segment", fld.segment),
        exposure=_opt(doc, fat, "exposure", fld.exposure),
        label=_label(doc, fat, fld, role),
        metrics=_metrics(doc, fat, fld),
        paths=tuple(s.paths),
        format=s.format,
        delimiter=delimiter,
        decimal=decimal,
        names=_names(doc, at, s),
        numbers_as_text=s.numbers_as_text,
        topic=topic,
        missing=_missing(doc, fat, fld),
        avro=_avro(doc, at, s, kind, folder),
    )


def _avro(doc: LocatedDoc, at: _PathT, s: StreamSpec, kind: str, folder: Path | None
          ) -> AvroSettings | None:
    """The stream's ``avro:``: one of a writer schema file (read and checked now) or a
    registry URL, for Kafka values (a Kafka stream or a recording of one)."""
    a = s.avro
    if a is None:
        return None
    where = (*at, "avro")
    if kind == "file" and s.format not in ("auto", "kafka-recording"):
        raise _err(doc, where, "avro is for Kafka values: a kind: kafka stream or a Kafka "
                   f"recording (format: kafka-recording), not format: {s.format}", key=True)
    if (a.schema_file is None) == (a.registry is None):
        raise _err(doc, where, "expected one of 'schema' (a writer schema file) or "
                   "'registry' (a schema registry's URL)",
                   found="both" if a.schema_file is not None else "neither",
                   hint="avro: {schema: schemas/prediction.avsc} or "
                   "avro: {registry: http://schema-registry:8081}")
    if a.registry is not None:
        url = urlsplit(a.registry)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise _err(doc, (*where, "registry"), "expected the registry's http:// or "
                       "https:// URL", found=show(a.registry),
                       hint="e.g. registry: http://schema-registry:8081")
        return AvroSettings(registry=a.registry)
    assert a.schema_file is not None
    path = Path(a.schema_file).expanduser()
    if not path.is_absolute():
        path = (folder or Path.cwd()) / path
    sat = (*where, "schema")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else str(exc)
        raise _err(doc, sat, "expected a readable Avro schema file (.avsc, JSON), relative "
                   "to the connector file", found=f"{path} ({why})") from None
    try:
        parse_avro_schema(json.loads(text))
    except ValueError as exc:  # json.JSONDecodeError is one
        raise _err(doc, sat, "expected an Avro schema (JSON)",
                   found=f"{path}: {str(exc)[:200]}") from None
    return AvroSettings(schema_text=text, schema_file=a.schema_file)


#: Delimiter words a connector may write instead of the character (a tab is easy to
#: lose in YAML).
_DELIMITER_WORDS = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|"}


def _delimiter(doc: LocatedDoc, at: _PathT, s: StreamSpec, kind: str) -> str | None:
    """The stream's ``csv: {delimiter:}``: one character other than a quote or a line end
    (or comma / semicolon / tab / pipe), for CSV files only."""
    if s.csv is None:
        return None
    if kind != "file" or s.format not in ("auto", "csv"):
        what = "kind: kafka" if kind != "file" else f"format: {s.format}"
        raise _err(doc, (*at, "csv"), f"csv options are for CSV files, not {what}", key=True)
    d = s.csv.delimiter
    if d is None:
        return None
    d = _DELIMITER_WORDS.get(d.lower(), d) if len(d) > 1 else d
    if len(d) != 1 or d in "\"\r\n":
        raise _err(doc, (*at, "csv", "delimiter"), "expected one character other than a "
                   "quote or a line end", found=show(s.csv.delimiter),
                   hint='e.g. delimiter: ";" (or comma, semicolon, tab, pipe)')
    return d


def _decimal(doc: LocatedDoc, at: _PathT, s: StreamSpec, delimiter: str | None
             ) -> str | None:
    """The stream's ``csv: {decimal:}``: ``.`` or ``,``, and not ``,`` in a file whose
    separator is the comma (``_delimiter`` has checked that ``csv:`` belongs here)."""
    if s.csv is None or s.csv.decimal is None:
        return None
    d = s.csv.decimal
    where = (*at, "csv", "decimal")
    if d not in (".", ","):
        raise _err(doc, where, 'expected the decimal mark "." or ","', found=show(d),
                   hint='e.g. decimal: "," for numbers written 3644,09')
    if d == "," and delimiter == ",":
        raise _err(doc, where, "a comma-separated file cannot hold decimal commas",
                   hint='name its separator, e.g. csv: {delimiter: ";", decimal: ","}')
    return d


def _names(doc: LocatedDoc, at: _PathT, s: StreamSpec) -> tuple[str, ...] | None:
    """The stream's ``csv: {names:}``: the column names of files written without a header
    line, one distinct non-empty name per field (``_delimiter`` has checked that ``csv:``
    belongs here)."""
    if s.csv is None or s.csv.names is None:
        return None
    names = s.csv.names
    where = (*at, "csv", "names")
    if not isinstance(names, list) or not names:
        raise _err(doc, where, "expected a list of column names, one per field of a line",
                   found=show(names), hint="e.g. names: [loan_id, period, rate]")
    seen: set[str] = set()
    for i, n in enumerate(names):
        if not isinstance(n, str) or not n.strip():
            raise _err(doc, (*where, i), "expected a column name (text)", found=show(n),
                       hint="quote a name YAML reads otherwise, e.g. \"1st_payment\"")
        if n.strip() in seen:
            raise _err(doc, (*where, i), f"column name {n.strip()!r} is given twice")
        seen.add(n.strip())
    return tuple(n.strip() for n in names)


def _time(doc: LocatedDoc, at: _PathT, t: TimeSpec, role: str, kind: str, fmt: str
          ) -> TimeField:
    """The event time mapping at ``at`` (``fmt``: the stream's file format)."""
    if (t.source != "payload") == (t.path is not None):
        raise _err(doc, at, "event_time needs a path, or source: kafka_timestamp, arrival "
                   "or order (not both)")
    if t.source == "arrival" and role != "outcomes":
        raise _err(doc, (*at, "source"), "source: arrival is for an outcomes stream",
                   found=f"role {role!r}",
                   hint="predictions without times: source: order (a file replay, in count "
                   "windows)")
    if t.source == "order" and role != "predictions":
        raise _err(doc, (*at, "source"), "source: order is for a predictions stream",
                   found=f"role {role!r}",
                   hint="outcomes without times: source: arrival (joined by id where they "
                   "arrive)")
    if t.source == "order" and kind != "file":
        raise _err(doc, (*at, "source"), "source: order numbers the records of files, in "
                   "the order they stand there: expected kind: file", found=f"kind {kind!r}",
                   hint="a Kafka stream without times in its records: source: "
                   "kafka_timestamp")
    if t.source == "kafka_timestamp" and kind == "file" and fmt not in (
        "auto", "kafka-recording"
    ):
        raise _err(doc, (*at, "source"), "kafka_timestamp needs a Kafka source or format: "
                   "kafka-recording", found=f"format {fmt!r}")
    for key in ("format", "origin", "century_start"):
        if getattr(t, key) is not None and t.source != "payload":
            raise _err(doc, (*at, key), f"{key} reads the values at a path; source: "
                       f"{t.source} has no path", key=True)
    if t.format is not None:
        if t.origin is not None:
            raise _err(doc, (*at, "origin"), "origin cannot be combined with format: a format "
                       "reads text times, an origin makes numbers offsets", key=True,
                       hint="keep format for text like 'Dec-2015', origin for numbers")
        if problem := format_problem(t.format):
            raise _err(doc, (*at, "format"), problem, found=show(t.format),
                       hint="strptime directives: %Y year, %m month, %b month name, %d day, "
                       "%H:%M:%S time, %z zone; quote the format in YAML")
        if t.unit not in ("auto", "iso"):
            raise _err(doc, (*at, "unit"), "a format reads text: expected unit auto or iso "
                       "(or none)", found=show(t.unit))
    if t.origin is not None:
        try:
            parse_origin(t.origin)
        except ValueError:
            raise _err(doc, (*at, "origin"), "expected an ISO-8601 instant such as "
                       "'2013-09-01T00:00:00Z' (no zone: UTC)", found=show(t.origin)) from None
        if t.unit == "iso":
            raise _err(doc, (*at, "unit"), "an origin makes numbers offsets: expected unit s, "
                       "ms, us, ns, min, h or d (auto: s)", found=show(t.unit))
    path = _path(doc, (*at, "path"), t.path) if t.path is not None else None
    return TimeField(path, t.unit, t.source, t.format, t.origin,
                     _century_start(doc, (*at, "century_start"), t))


def _century_start(doc: LocatedDoc, at: _PathT, t: TimeSpec) -> int | None:
    """``century_start``: a year within :data:`CENTURY_STARTS`, beside a ``format`` that
    writes a two-digit year (elsewhere it would place nothing)."""
    v = t.century_start
    if v is None:
        return None
    first, last = CENTURY_STARTS[0], CENTURY_STARTS[-1]
    if isinstance(v, bool) or not isinstance(v, int) or v not in CENTURY_STARTS:
        raise _err(doc, at, f"expected a year from {first} to {last}, the first of the "
                   "hundred years a two-digit year (%y) is read in", found=show(v),
                   hint="e.g. century_start: 1928 reads '66' as 1966 and '27' as 2027")
    if not writes_two_digit_year(t.format):
        found = "no format" if t.format is None else f"format {t.format!r}"
        raise _err(doc, at, "century_start places a two-digit year: expected a format "
                   "with %y", found=found, key=True,
                   hint="remove century_start, or write the year as %y in format")
    return v


def _opt(doc: LocatedDoc, fat: _PathT, key: str, p: PathSpec | None) -> FieldPath | None:
    return None if p is None else _path(doc, (*fat, key, "path"), p.path)


def _score_scale(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> ScoreScale:
    """The scale ``score:`` is written in: at most one of percent, log_odds, points."""
    if fld.score is None:
        return PROBABILITY
    given = fld.score.scales()
    if len(given) > 1:
        raise _err(doc, (*fat, "score", given[1]), f"{given[0]} and {given[1]} both say "
                   "what scale the score is written in: expected at most one of percent, "
                   "log_odds and points", key=True,
                   hint=f"keep the one the model writes: {given[0]} or {given[1]}")
    return fld.score.scale()


def _features(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> tuple[FeatureField, ...] | None:
    raw = fld.features
    at = (*fat, "features")
    if raw == "infer":
        return None
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise _err(doc, at, "expected 'infer' or a mapping of feature name to path",
                   found=show(raw), hint="did you mean 'infer'?" if isinstance(raw, str)
                   and nearest(raw, ["infer"]) else None)
    out = []
    for fname, v in raw.items():
        try:
            spec = FeatureSpec.model_validate(v)
        except ValidationError as exc:
            raise located_error(doc, exc, FeatureSpec, (*at, fname)) from None
        path = _path(doc, (*at, fname, "path"), spec.path) if spec.path else FieldPath.parse(
            str(fname)
        )
        fmt = spec.format
        if fmt and spec.type == "categorical":
            raise _err(doc, (*at, fname, "format"), f"format: {fmt} reads a number: the "
                       "feature is numeric", key=True, found="type: categorical",
                       hint=f"remove type: categorical, or format: {fmt}")
        out.append(FeatureField(str(fname), path, spec.type or ("numeric" if fmt else None),
                                format=fmt))
    return tuple(out)


def _sentinel_list(doc: LocatedDoc, at: _PathT, raw: Any) -> tuple[Any, ...]:
    if not isinstance(raw, list):
        raise _err(doc, at, "expected a list of numbers or text, like [-9, -8, -7]",
                   found=show(raw))
    for i, v in enumerate(raw):
        if not (is_number(v) or (isinstance(v, str) and v.strip())):
            raise _err(doc, (*at, i), "expected a finite number or non-blank text "
                       "(a value that means missing)", found=show(v))
    return tuple(raw)


def _missing(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> MissingValues:
    """``missing_values`` and ``missing_values_by_feature``; whether each named feature
    exists, and is numeric where a value is text, is checked against the reference
    (:meth:`~driftwatch.connectors.config.Connector.schema_for`)."""
    default, per = fld.missing_values, fld.missing_values_by_feature
    if default is None and per is None:
        return MissingValues()
    if fld.features is None:
        key = "missing_values" if default is not None else "missing_values_by_feature"
        raise _err(doc, (*fat, key), f"{key} needs features: this stream maps none",
                   key=True)
    values = () if default is None else _sentinel_list(doc, (*fat, "missing_values"), default)
    by: dict[str, tuple[Any, ...]] = {}
    if per is not None:
        at = (*fat, "missing_values_by_feature")
        if not isinstance(per, dict):
            raise _err(doc, at, "expected a mapping of feature name to a list of values",
                       found=show(per))
        by = {str(k): _sentinel_list(doc, (*at, k), v) for k, v in per.items()}
    return MissingValues(values, by)


def _proba(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> ProbaField | None:
    p = fld.proba
    if p is None:
        return None
    if p.classes < 2:
        raise _err(doc, (*fat, "proba", "classes"), "expected at least 2 classes",
                   found=str(p.classes))
    at = p.classes - 1 if p.score is None else p.score
    if not 0 <= at < p.classes:
        raise _err(doc, (*fat, "proba", "score"), "expected the position of the score's class "
                   f"in the list, 0 to {p.classes - 1}", found=str(p.score))
    return ProbaField(_path(doc, (*fat, "proba", "path"), p.path), p.classes, at)


def _decision(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> DecisionField | None:
    d = fld.decision
    if d is None:
        return None
    return DecisionField(
        _path(doc, (*fat, "decision", "path"), d.path),
        frozenset(value_key(v) for v in d.approve),
        None if d.decline is None else frozenset(value_key(v) for v in d.decline),
    )


def _label(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec, role: str) -> LabelField | None:
    lb = fld.label
    if lb is None:
        return None
    bad = frozenset(value_key(v) for v in lb.bad)
    good = frozenset(value_key(v) for v in lb.good)
    both = sorted(bad & good)
    if both:
        raise _err(doc, (*fat, "label"), "a label value cannot be both bad and good",
                   found=", ".join(both))
    pending = frozenset(value_key(v) for v in lb.pending)
    clash = sorted(pending & (bad | good))
    if clash:
        raise _err(doc, (*fat, "label", "pending"), "a pending label value cannot also be "
                   "bad or good", found=", ".join(clash))
    required = lb.required if lb.required is not None else role == "outcomes"
    return LabelField(_path(doc, (*fat, "label", "path"), lb.path), bad, good, required,
                      pending)


def _metrics(doc: LocatedDoc, fat: _PathT, fld: FieldsSpec) -> tuple[tuple[str, FieldPath], ...]:
    out = []
    for name, p in fld.metrics.items():
        if not _METRIC.match(name):
            raise _err(doc, (*fat, "metrics", name), f"metric name {name!r} must be snake_case "
                       "(it becomes a metric label)", key=True)
        out.append((name, _path(doc, (*fat, "metrics", name, "path"), p.path)))
    return tuple(out)
