"""A stream's ``event_id``: a path, or ``{source: order}`` for a table without an id column.

With ``source: order`` each record's id is its number in its file (its line in a JSON-lines
file, its row in a CSV, without the header line, or in a Parquet file), taken from where it
stands, never from a count of the good records before it: a bad record leaves the ids of
the others as they are, and so does the batch size the file is read in. A number is an id
only where the stream is a file read in its own order, so this is refused on Kafka, on a
Kafka recording and on a predictions stream whose records carry their own times
(:func:`event_id`); the source refuses it on a stream of several files, whose numbers would
repeat.
"""

from __future__ import annotations

from typing import Any

from driftwatch.connectors.mapping import FieldPath, TimeField
from driftwatch.connectors.spec import IdSpec, show
from driftwatch.errors import ConnectorError
from driftwatch.yamlio import LocatedDoc

__all__ = ["ORDER_ID", "event_id"]

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
    if role == "outcomes":
        raise _err(doc, where, "source: order ids are for a predictions stream",
                   found=f"role {role!r}",
                   hint="outcomes join their predictions by id: map the id field both "
                   "streams hold, or put the label in the predictions")
    return None
