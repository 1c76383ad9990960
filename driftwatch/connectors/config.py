"""Connector definitions (top-level ``connectors/*.yaml``): where events come from, how they map.

The shape (see ``connectors/README.md`` for every key)::

    apiVersion: driftwatch/v1
    kind: Connector
    metadata: {name: credit-demo}
    source:
      kind: file                  # file | kafka
      # connection: {...}         # kafka only: the Kafka source's settings (checked)
      streams:
        predictions:              # role = the name (predictions | outcomes) unless `role:`
          paths: [data/demo/predictions.jsonl.gz]   # globs, relative to the working dir
          format: auto            # auto | jsonl | csv | parquet | kafka-recording
          # csv: {delimiter: ";", decimal: ","}   # default: what each file's head shows
          #                                       # names: [a, b]: files without a header
          # topic: credit.predictions               # kafka, and kafka recordings
          fields:
            event_id: application_id                # dotted path
            event_time: {path: ts, unit: auto}      # auto | s | ms | us | ns | iso; or
                                                    # {source: kafka_timestamp}
            features: infer       # or {name: path | {path:, type: numeric|categorical}}
            score: model.score
            proba: model.proba    # optional list of class probabilities
            model_version: model.version
            decision: {path: decision, approve: [approve, approved, 1, true]}
            segment: channel
            exposure: loan.amount
            metrics: {revenue: loan.fee}
        outcomes:
          paths: [data/demo/outcomes.jsonl.gz]
          fields:
            event_id: application_id
            event_time: {path: outcome_ts}
            label: {path: defaulted, bad: [1, true, bad, default]}
    dead_letter: {path: dead_letter.jsonl}  # run: relative to <state_dir>/out/<model>

Errors are :class:`~driftwatch.errors.ConnectorError` with ``file:line:col``:

>>> text = (
...     "apiVersion: driftwatch/v1\\nkind: Connector\\nmetadata: {name: t}\\n"
...     "source:\\n  kind: file\\n  streams:\\n    predictions:\\n      fields:\\n"
...     "        event_id: id\\n        event_time: ts\\n        scroe: p\\n")
>>> parse_connector(text, file="t.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConnectorError: t.yaml:11:9: unknown key 'scroe'
  at source.streams.predictions.fields.scroe
  hint: did you mean 'score'?
...
>>> c = parse_connector(text.replace("scroe", "score"), file="t.yaml")
>>> c.stream("predictions").score.text, c.stream("predictions").role
('p', 'predictions')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from driftwatch.connectors.clocks import one_clock
from driftwatch.connectors.eventid import paired_by_order
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.mapping import StreamMapping
from driftwatch.connectors.spec import ConnectorSpec, located_error, show
from driftwatch.connectors.streams import stream_mapping
from driftwatch.errors import ConfigError, ConnectorError
from driftwatch.schema import FeatureSchema
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.sentinels import MissingValues, is_number
from driftwatch.yamlio import LocatedDoc, load_yaml, nearest

__all__ = ["Connector", "load_connector", "load_connectors", "parse_connector"]

@dataclass(frozen=True, eq=False)
class Connector:
    """A validated connector: its streams (in file order) and pass-through settings."""

    name: str
    kind: str  # file | kafka
    streams: tuple[StreamMapping, ...]
    connection: Mapping[str, Any] | None = None
    dead_letter: str | None = None
    dead_letter_topic: str | None = None
    description: str = ""
    file: str = "<string>"
    base_dir: Path | None = None  # where relative globs start; None = the working directory
    doc: LocatedDoc | None = field(default=None, repr=False)

    def stream(self, name: str) -> StreamMapping:
        for s in self.streams:
            if s.name == name:
                return s
        raise LookupError(
            f"connector {self.name!r} has no stream {name!r}; "
            f"streams: {', '.join(s.name for s in self.streams)}"
        )

    def error(self, path: Sequence[str | int], message: str, **kw: Any) -> ConnectorError:
        """A located error about this connector (plain when it was built without a file)."""
        if self.doc is None:
            return ConnectorError(message, file=self.file, **kw)
        return self.doc.error(path, message, cls=ConnectorError, **kw)  # type: ignore[return-value]

    def declared_kinds(self) -> dict[str, str]:
        """Feature name -> ``numeric`` | ``categorical`` where a stream writes ``type:``."""
        out: dict[str, str] = {}
        for s in self.streams:
            for f in s.features or ():
                if f.kind:
                    out.setdefault(f.name, f.kind)
        return out

    def numbers_records(self) -> bool:
        """Whether event time is each prediction's number in its stream (``event_time:
        {source: order}``: the records carry no time): windows then count records."""
        return any(s.role == "predictions" and s.event_time.source == "order"
                   for s in self.streams)

    def pairs_by_row(self) -> bool:
        """Whether outcomes join their predictions by row (``event_id: {source: order}`` on
        an outcomes stream: outcome row k joins prediction row k)."""
        return any(s.role == "outcomes" and s.event_id is None for s in self.streams)

    def text_formats(self) -> dict[str, str]:
        """Features a stream reads as numbers written as text (``format: percent`` or
        ``money``), by name: the reference table's columns of those names are read so
        too."""
        return {f.name: f.format for s in self.streams for f in s.features or () if f.format}

    def score_scale(self, score_is: str = "p_bad") -> ScoreScale:
        """The scale the streams write the score in (``score: {percent | log_odds |
        points}``): a reference table whose score column is written in it is read so too
        (:meth:`ScoreScale.written_in`). Two streams that map a score in different scales
        are an error: the reference's score is read one way; so are points with a policy
        whose ``score_is`` (given here) is ``p_good``: points are read as P(bad)."""
        found: tuple[str, ScoreScale] | None = None
        for s in self.streams:
            if s.score is None:
                continue
            if found is not None and found[1] != s.score_scale:
                raise self.error(("source", "streams", s.name, "fields", "score"),
                                 f"stream {s.name!r} writes the score as "
                                 f"{s.score_scale.describe()}, stream {found[0]!r} as "
                                 f"{found[1].describe()}; the reference's score is read "
                                 "one way", hint="declare the same score scale in both")
            found = (s.name, s.score_scale)
            if s.score_scale.kind == "points" and score_is == "p_good":
                raise self.error(("source", "streams", s.name, "fields", "score", "points"),
                                 "scorecard points are read as P(bad) (higher points = "
                                 "safer), but the policy says the score is P(good) "
                                 "(reference.score_is: p_good)", key=True,
                                 hint="remove score_is: p_good from the policy's "
                                      "reference: block")
        return PROBABILITY if found is None else found[1]

    def stream_score_scale(self, score_is: str = "p_bad") -> ScoreScale | None:
        """:meth:`score_scale`, or None where no stream maps a score (a champion declared
        ``score_scale: stream`` then has no scale to read its output in)."""
        scale = self.score_scale(score_is)
        return scale if any(s.score is not None for s in self.streams) else None

    def missing_values(self) -> MissingValues:
        """The values read as missing, the same in the stream and the reference: those of
        the streams that map features (two that declare different ones are an error)."""
        found: tuple[str, MissingValues] | None = None
        for s in self.streams:
            if s.features == () or s.missing.is_empty:
                continue
            if found is not None and found[1] != s.missing:
                raise self.error(("source", "streams", s.name, "fields", "missing_values"),
                                 f"stream {s.name!r} reads other values as missing than "
                                 f"stream {found[0]!r}; the reference profile is read "
                                 "one way", key=True,
                                 hint="declare the same missing_values in both")
            found = (s.name, s.missing)
        return MissingValues() if found is None else found[1]

    def _check_missing(self, schema: FeatureSchema) -> None:
        """Each feature ``missing_values_by_feature`` names exists, and a numeric one lists
        numbers and texts that read as no number (``"?"``), not a number written as text
        (``"-9"``: which would it mean?)."""
        for s in self.streams:
            at = ("source", "streams", s.name, "fields", "missing_values_by_feature")
            for name, values in s.missing.by_feature.items():
                if name not in schema.names:
                    near = nearest(name, schema.names)
                    raise self.error((*at, name), f"feature {name!r} is not a feature of "
                                     "this connector", key=True,
                                     hint=f"did you mean {near!r}?" if near
                                     else "features: " + ", ".join(schema.names))
                if name in schema.numeric:
                    texts = s.missing.number_texts(name)
                    for i, v in enumerate(values):
                        if not (is_number(v) or (isinstance(v, str) and v.strip() in texts)):
                            raise self.error((*at, name, i), f"feature {name!r} is numeric: "
                                             "expected a number that means missing, or text "
                                             "that is no number (\"?\")", found=show(v))

    def schema_for(self, reference: FeatureSchema | None) -> FeatureSchema:
        """The feature schema decoding uses, checked against the reference profile's.

        Features a stream maps explicitly must exist in the reference with the same kind,
        and every reference feature must be mapped by some stream (a column nobody maps
        would be missing in every record); ``features: infer`` takes all of them. The
        result is the reference's schema. Without a reference every feature must be
        explicit with a ``type``.
        """
        wanted: dict[str, str | None] = {}
        infer = False
        for s in self.streams:
            if s.features is None:
                infer = True
                continue
            for f in s.features:
                where = ("source", "streams", s.name, "fields", "features", f.name)
                if reference is None:
                    if f.kind is None:
                        raise self.error(where, f"feature {f.name!r} needs a type "
                                         "(numeric or categorical) when there is no reference "
                                         "profile", key=True)
                elif f.name not in reference.names:
                    near = nearest(f.name, reference.names)
                    raise self.error(
                        where, f"feature {f.name!r} is not in the reference profile", key=True,
                        hint=f"did you mean {near!r}?" if near
                        else "reference features: " + ", ".join(reference.names),
                    )
                else:
                    ref_kind = "numeric" if f.name in reference.numeric else "categorical"
                    if f.kind and f.kind != ref_kind:
                        raise self.error(
                            (*where, "type"), f"feature {f.name!r} is {ref_kind} in the "
                            "reference profile", found=repr(f.kind),
                        )
                wanted.setdefault(f.name, f.kind)
        if reference is None:
            if infer:
                s = next(s for s in self.streams if s.features is None)
                raise self.error(("source", "streams", s.name, "fields", "features"),
                                 "features: infer needs a reference profile")
            declared = FeatureSchema(
                numeric=tuple(n for n, k in wanted.items() if k == "numeric"),
                categorical=tuple(n for n, k in wanted.items() if k == "categorical"),
            )
            self._check_missing(declared)
            return declared
        if not infer:
            unmapped = [n for n in reference.names if n not in wanted]
            if unmapped:
                s = next((s for s in self.streams if s.features), self.streams[0])
                raise self.error(
                    ("source", "streams", s.name, "fields", "features"),
                    f"the reference has feature columns this connector does not map: "
                    f"{', '.join(unmapped)}", key=True,
                    hint="map each under features (or write features: infer), or drop "
                    "those columns from the reference table",
                )
        self._check_missing(reference)
        return reference

    def resolved(self, schema: FeatureSchema) -> Connector:
        """The same connector with every stream's features resolved against ``schema``."""
        return replace(self, streams=tuple(s.resolve(schema) for s in self.streams))

    def dead_letter_path(self, out_dir: str | Path) -> Path | None:
        """Where dead letters go: ``dead_letter.path`` under ``out_dir`` unless absolute."""
        if self.dead_letter is None:
            return None
        p = Path(self.dead_letter)
        return p if p.is_absolute() else Path(out_dir) / p


def load_connector(path: str | Path, *, base_dir: str | Path | None = None) -> Connector:
    """Load and validate one connector file."""
    return _build(_load(Path(path)), base_dir)


def parse_connector(
    text: str, *, file: str = "<string>", base_dir: str | Path | None = None
) -> Connector:
    """Validate connector YAML given as text (``file`` names it in errors)."""
    return _build(_load(text, file), base_dir)


def load_connectors(
    folder: str | Path, *, base_dir: str | Path | None = None
) -> dict[str, Connector]:
    """Every ``*.yaml`` / ``*.yml`` in ``folder`` by ``metadata.name`` (names must be unique)."""
    out: dict[str, Connector] = {}
    files = sorted([*Path(folder).glob("*.yaml"), *Path(folder).glob("*.yml")])
    for f in files:
        c = load_connector(f, base_dir=base_dir)
        if c.name in out:
            raise c.error(("metadata", "name"), f"connector name {c.name!r} is also used by "
                          f"{out[c.name].file}")
        out[c.name] = c
    return out


# -- building -------------------------------------------------------------------------------


def _load(source: str | Path, file: str | None = None) -> LocatedDoc:
    try:
        return load_yaml(source, file=file)
    except ConnectorError:
        raise
    except ConfigError as e:  # YAML syntax: same error, as a connector error
        raise ConnectorError(e.message, file=e.file, line=e.line, col=e.col, path=e.path,
                             found=e.found, excerpt=e.excerpt, hint=e.hint) from None


def _build(doc: LocatedDoc, base_dir: str | Path | None) -> Connector:
    if not isinstance(doc.data, dict):
        raise doc.error((), "a connector file must be a mapping", found=show(doc.data),
                        cls=ConnectorError)
    try:
        spec = ConnectorSpec.model_validate(doc.data)
    except ValidationError as exc:
        raise located_error(doc, exc, ConnectorSpec) from None
    src = spec.source
    if not src.streams:
        raise doc.error(("source", "streams"), "a connector needs at least one stream",
                        cls=ConnectorError)
    if src.kind == "file" and src.connection is not None:
        raise doc.error(("source", "connection"), "connection is only for kind: kafka",
                        key=True, cls=ConnectorError)
    # an avro schema file is found beside the connector file (a text: the base directory)
    own = Path(doc.file)
    folder = own.parent if own.is_file() else (Path(base_dir) if base_dir is not None
                                               else None)
    streams = tuple(stream_mapping(doc, src.kind, name, s, folder)
                    for name, s in src.streams.items())
    preds = [s for s in streams if s.role == "predictions"]
    numbered = [s for s in preds if s.event_time.source == "order"]
    if numbered and len(numbered) != len(preds):
        # record numbers and epoch seconds on one axis would order nothing
        timed = next(s for s in preds if s.event_time.source != "order")
        raise doc.error(("source", "streams", numbered[0].name, "fields", "event_time",
                         "source"), "source: order numbers the predictions of every "
                        "predictions stream, or of none", found=f"stream {timed.name!r} "
                        "with times of its own", cls=ConnectorError,
                        hint="give each predictions stream source: order, or a time field")
    paired_by_order(doc, streams)
    one_clock(doc, streams)
    dl = spec.dead_letter
    if src.kind == "file" and dl is not None and dl.topic is not None:
        # a file source writes dead letters to a file only: the topic would be dropped
        raise doc.error(("dead_letter", "topic"), "dead_letter.topic is only for kind: kafka",
                        key=True, cls=ConnectorError,
                        hint="write dead_letter: {path: dead_letter.jsonl}")
    connector = Connector(
        name=spec.metadata.name,
        kind=src.kind,
        streams=streams,
        connection=src.connection,
        dead_letter=dl.path if dl else None,
        dead_letter_topic=dl.topic if dl else None,
        description=spec.metadata.description,
        file=doc.file,
        base_dir=Path(base_dir) if base_dir is not None else None,
        doc=doc,
    )
    if src.connection is not None:
        # checked where the file is read (no I/O, no ${ENV} expanded), so `policy check
        # --connector` and `replay` catch a misspelt key or a bad value, not only the
        # daemon's start
        KafkaSourceSettings.from_connector(connector)
    return connector
