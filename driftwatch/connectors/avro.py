"""Avro Kafka values as records: the writer schema from a file or a schema registry.

A stream with ``avro:`` reads each value as one Avro record (``fastavro``, the ``avro``
extra). Which bytes are the body, by the first byte:

* a zero byte and at least four more: Confluent's wire format, the schema id (4 bytes,
  big-endian) then the body. With ``registry:`` the writer schema is that id's; with
  ``schema:`` it is the file's whatever the id (the file must be the writer schema). A
  value that reads as one whole record neither way is bad;
* anything else: with ``schema:``, a bare body (no framing); with ``registry:`` alone, a
  bad record (there is no id to look up).

A body must be read to its last byte: bytes left over mean the schema is not the writer's,
so the value is bad rather than half read. With ``schema:`` a bare body that happens to
start with a zero byte (a first field that is null, zero or empty) is read bare when the
framed reading fails.

A record comes out as a dict: nested records as dicts (dotted paths reach into them),
unions as their value, enums as their symbol's text, ``decimal`` as a float, ``uuid`` as
text, ``time-millis``/``time-micros`` as seconds past midnight. ``timestamp-*`` and
``date`` stay instants: the decoder reads them as their own time whatever the ``unit``
(as a Parquet timestamp column), and as epoch seconds (a date: its ISO text) elsewhere.

A value that does not read raises :class:`AvroProblem`, whose ``reason`` is the dead
letter's: ``invalid_avro`` (not a body of the schema, no framing with ``registry:`` alone,
an id the registry does not hold), ``not_an_object`` (a schema that is not a record), or
:data:`SCHEMA_UNAVAILABLE` (the registry could not be asked: see
:mod:`~driftwatch.connectors.schema_registry`). That last one is not a bad value but one
that cannot be read *yet*: the Kafka source holds its partition there until the registry
answers (:mod:`~driftwatch.connectors.kafka_hold`) and a replay stops; neither
dead-letters it.

>>> import io, fastavro
>>> schema = {"type": "record", "name": "P", "fields": [
...     {"name": "id", "type": "string"},
...     {"name": "m", "type": {"type": "record", "name": "M", "fields": [
...         {"name": "score", "type": ["null", "double"]}]}}]}
>>> buf = io.BytesIO()
>>> fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), {"id": "a", "m": {"score": 0.5}})
>>> from driftwatch.connectors.mapping import AvroSettings
>>> reader = AvroReader(AvroSettings(schema_text=json.dumps(schema), schema_file="p.avsc"))
>>> reader.read(buf.getvalue()), reader.read(b"\\x00\\x00\\x00\\x00\\x01" + buf.getvalue())
({'id': 'a', 'm': {'score': 0.5}}, {'id': 'a', 'm': {'score': 0.5}})
>>> try:
...     reader.read(buf.getvalue() + b"\\x01")
... except AvroProblem as exc:
...     print(exc.reason, exc)
invalid_avro a bare Avro body of the schema p.avsc: 1 byte left after the record
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from driftwatch.connectors.columns import Problems
from driftwatch.connectors.jsonblock import Lines, ParsedRows, extract_paths
from driftwatch.connectors.mapping import AvroSettings
from driftwatch.connectors.schema_registry import (
    RegistrySchemas,
    RegistryUnavailable,
    UnknownSchema,
)
from driftwatch.errors import MissingExtraError, SourceError

__all__ = ["AVRO_REASONS", "SCHEMA_UNAVAILABLE", "AvroProblem", "AvroReader", "fastavro_module",
           "parse_avro_schema", "read_rows"]

#: The reason of a value whose writer schema the registry cannot serve now (module doc).
SCHEMA_UNAVAILABLE = "schema_unavailable"
#: The reasons only an Avro stream gives.
AVRO_REASONS = ("invalid_avro", SCHEMA_UNAVAILABLE)
_HEADER = 5  # a zero byte and a 4-byte schema id
_DETAIL = 200


class AvroProblem(SourceError):
    """A value that is not a readable Avro record; ``reason`` names why (module docstring)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail[:_DETAIL])
        self.reason = reason


def fastavro_module() -> Any:
    """The ``fastavro`` module, or the error that names the extra that installs it."""
    try:
        import fastavro
    except ModuleNotFoundError:
        raise MissingExtraError("reading Avro (a stream's avro:) needs fastavro: "
                                "pip install 'driftwatch[avro]'", name="fastavro") from None
    return fastavro


def parse_avro_schema(schema: Any) -> Any:
    """``schema`` (parsed JSON) as fastavro's parsed schema; ValueError saying what is wrong
    when it is not an Avro schema."""
    fastavro = fastavro_module()
    try:
        return fastavro.parse_schema(schema)
    except Exception as exc:  # fastavro raises several types (SchemaParseException, ...)
        raise ValueError(f"not an Avro schema: {exc}") from None


class AvroReader:
    """Reads one stream's values as records (module docstring). ``registry`` replaces the
    client built from ``settings.registry`` (tests)."""

    def __init__(self, settings: AvroSettings, *, registry: RegistrySchemas | None = None,
                 monotonic: Callable[[], float] | None = None) -> None:
        self._fastavro = fastavro_module()
        self.settings = settings
        self._file = (parse_avro_schema(json.loads(settings.schema_text))
                      if settings.schema_text is not None else None)
        if registry is None and settings.registry is not None:
            registry = (RegistrySchemas(settings.registry) if monotonic is None
                        else RegistrySchemas(settings.registry, monotonic=monotonic))
        self.registry = registry
        self._by_id: dict[int, Any] = {}

    def read(self, payload: bytes) -> dict[str, Any]:
        """The record in ``payload``; :class:`AvroProblem` when there is none."""
        if len(payload) >= _HEADER and payload[0] == 0:
            schema_id = int.from_bytes(payload[1:_HEADER], "big")
            if self.registry is not None:
                return self._record(payload, _HEADER, self._schema(schema_id),
                                    f"the body of schema id {schema_id}")
            try:
                return self._record(payload, _HEADER, self._file,
                                    f"a framed body (schema id {schema_id}) of the schema "
                                    f"{self.settings.schema_file}")
            except AvroProblem as framed:
                try:  # a bare body whose first byte is a zero (a null, 0 or "" first)
                    return self._record(payload, 0, self._file, "")
                except AvroProblem:
                    raise framed from None
        if self._file is None:
            first = f"first byte 0x{payload[0]:02x}" if payload else "an empty value"
            raise AvroProblem("invalid_avro", "expected a schema registry's framing (a zero "
                              f"byte, then a 4-byte schema id), found {first}")
        return self._record(payload, 0, self._file,
                            f"a bare Avro body of the schema {self.settings.schema_file}")

    def _schema(self, schema_id: int) -> Any:
        parsed = self._by_id.get(schema_id)
        if parsed is not None:
            return parsed
        assert self.registry is not None
        try:
            raw = self.registry.schema(schema_id)
        except RegistryUnavailable as exc:
            raise AvroProblem(SCHEMA_UNAVAILABLE, str(exc)) from None
        except UnknownSchema as exc:
            raise AvroProblem("invalid_avro", str(exc)) from None
        try:
            parsed = parse_avro_schema(raw)
        except ValueError as exc:
            raise AvroProblem("invalid_avro", f"schema id {schema_id} from the registry is "
                              f"{exc}") from None
        self._by_id[schema_id] = parsed
        return parsed

    def _record(self, payload: bytes, start: int, schema: Any, what: str) -> dict[str, Any]:
        fo = io.BytesIO(payload)
        fo.seek(start)
        try:
            rec = self._fastavro.schemaless_reader(fo, schema)
        except Exception as exc:  # a corrupt body raises EOFError, IndexError, ValueError...
            raise AvroProblem("invalid_avro", f"{what}: {type(exc).__name__}: {exc}") from None
        left = len(payload) - fo.tell()
        if left:
            raise AvroProblem("invalid_avro", f"{what}: {left} byte{'s' * (left != 1)} left "
                              "after the record")
        if type(rec) is not dict:
            raise AvroProblem("not_an_object", f"{what}: expected an Avro record, found "
                              f"{type(rec).__name__}")
        return _plain(rec)


def _plain(v: Any) -> Any:
    """``v`` with the logical types the decoder does not read made numbers or text."""
    if type(v) is dict:
        return {k: _plain(x) for k, x in v.items()}
    if type(v) is list:
        return [_plain(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, dt.time):
        return (v.hour * 3600 + v.minute * 60 + v.second) + v.microsecond / 1e6
    return v  # datetimes and dates: instants (see the module docstring)


def read_rows(reader: AvroReader, lines: Lines, paths: dict[str, tuple[str, ...]],
              *, time_key: str = "event_time") -> ParsedRows:
    """Every row of ``lines`` read by ``reader``, as the raw columns of ``paths`` (the
    decoder's keys to their path parts), with each unreadable row's problem flagged.
    Instants stay instants in ``time_key``'s column only (module docstring)."""
    n = len(lines)
    objs: list[Any] = [None] * n
    problems: dict[str, dict[int, str]] = {}
    for i in range(n):
        try:
            objs[i] = reader.read(lines.raw(i))
        except AvroProblem as exc:
            problems.setdefault(exc.reason, {})[i] = str(exc)
    prob = Problems(n)
    for reason, found in problems.items():
        mask = np.zeros(n, bool)
        mask[list(found)] = True
        prob.flag(mask, reason, found.__getitem__)
    cols = extract_paths(objs, paths)
    for key, values in cols.items():
        if key != time_key and any(isinstance(v, dt.date) for v in values):
            cols[key] = [_instant_value(v) for v in values]
    return ParsedRows(np.arange(n), cols, prob)


def _instant_value(v: Any) -> Any:
    """A timestamp as epoch seconds and a date as its ISO text (outside the event time)."""
    if isinstance(v, dt.datetime):
        return (v if v.tzinfo is not None else v.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(v, dt.date):
        return v.isoformat()
    return v
