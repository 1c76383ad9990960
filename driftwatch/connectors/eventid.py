"""A stream's ``event_id``: a path, or ``{source: order}`` for a table without an id column.

With ``source: order`` each record's id is its number in its file (its line in a JSON-lines
file, its row in a CSV, without the header line, or in a Parquet file), taken from where it
stands, never from a count of the good records before it: a bad record leaves the ids of
the others as they are, and so does the batch size the file is read in. A number is an id
only where the stream is a file read in its own order, so this is refused on Kafka, on a
Kafka recording, on a predictions stream whose records carry their own times and on an
outcomes stream that has times (:func:`event_id`); the source refuses it on a stream of
several files, whose numbers would repeat.

An outcomes stream numbered so joins by position: the outcome in row k of its file joins
the prediction in row k of the predictions' file (a table of outcomes written in the
predictions' order, without an id). Both streams number their records, or neither does
(:func:`~driftwatch.connectors.config.parse_connector` checks the two together).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.spec import IdSpec, show
from driftwatch.errors import ConnectorError
from driftwatch.yamlio import LocatedDoc

__all__ = ["ORDER_ID", "event_id", "paired_by_order"]

#: How a connector spells ids that are the records' numbers in their file.
ORDER_ID = "event_id: {source: order}"

_PathT = tuple[str | int, ...]


def _err(doc: LocatedDoc, path: _PathT, msg: str, **kw: Any) -> ConnectorError:
    return doc.error(path, msg, cls=ConnectorError, **kw)  # type: ignore[return-value]


def event_id(doc: LocatedDoc, at: _PathT, spec: IdSpec, role: str, kind: str, fmt: str,
             time: TimeField) -> FieldPath | None:
    """The id mapping at ``at``: its path, or None for ``source: order`` (``kind``: the
    source's kind, ``fmt``: the stream's file format, ``time``: its event time)."""
    if (spec.source == "order") == (spec.path is not None):
        raise _err(doc, at, "event_id needs a path, or source: order (not both)",
                   hint="a table without an id column: event_id: {source: order}")
    if spec.source == "payload":
        if spec.path is None or not FieldPath.is_valid(spec.path):
            raise _err(doc, (*at, "path"), "expected a dotted path like 'applicant.id'",
                       found=show(spec.path))
        return FieldPath.parse(spec.path)
    where = (*at, "source")
    if kind != "file":
        raise _err(doc, where, "source: order numbers the records of files, in the order "
                   "they stand there: expected kind: file", found=f"kind {kind!r}",
                   hint="a Kafka stream needs an id field in its records")
    if fmt == "kafka-recording":
        raise _err(doc, where, "source: order numbers the records of a table; a Kafka "
                   "recording's records are Kafka messages, numbered per partition",
                   found="format 'kafka-recording'", hint="map the records' id field")
    if role == "predictions" and time.source != "order":
        raise _err(doc, where, "source: order ids are for predictions read in file order: "
                   "expected event_time: {source: order}",
                   found="event_time source " + repr(time.source) if time.path is None
                   else f"event_time path {time.path.text!r}",
                   hint="records with times are read in time order: map an id field")
    if role == "outcomes" and time.source != "arrival":
        # numbered outcomes pair with the numbered predictions, whose times are their
        # numbers: a time of the outcomes' own would be on another axis
        raise _err(doc, where, "source: order ids are for outcomes read in file order: "
                   "expected event_time: {source: arrival}",
                   found="event_time source " + repr(time.source) if time.path is None
                   else f"event_time path {time.path.text!r}",
                   hint="an outcome numbered by its row joins the prediction of the same "
                   "row and takes its time: event_time: {source: arrival}")
    return None


def paired_by_order(doc: LocatedDoc, streams: Sequence[StreamMapping]) -> None:
    """Refuse outcomes and predictions of which one numbers its records and the other maps
    an id field: a row number and an id written in the data never name the same record
    (but for a chance match of numbers). Located at the outcomes stream's ``event_id``."""
    preds = [s for s in streams if s.role == "predictions"]
    by_path = next((s for s in preds if s.event_id is not None), None)
    numbered = next((s for s in preds if s.event_id is None), None)
    for s in streams:
        if s.role != "outcomes":
            continue
        at = ("source", "streams", s.name, "fields", "event_id")
        if s.event_id is None and by_path is not None:
            raise _err(doc, (*at, "source"), "outcomes numbered by their row join "
                       "predictions numbered the same way: expected event_id: {source: "
                       f"order}} on stream {by_path.name!r}",
                       found=f"stream {by_path.name!r} with event_id path "
                       f"{by_path.event_id.text!r}",  # type: ignore[union-attr]
                       hint="map the id field both streams hold, or number both streams' "
                       "records: event_id: {source: order}")
        if s.event_id is not None and numbered is not None:
            raise _err(doc, at, f"stream {numbered.name!r} numbers its records (event_id: "
                       "{source: order}): expected event_id: {source: order} here too, "
                       "each outcome joining the prediction of its row",
                       found=f"event_id path {s.event_id.text!r}",
                       hint="outcomes written in the predictions' order, without an id: "
                       "event_id: {source: order}; else map an id field in both streams")
