"""Look at the first records of a recording before replaying it.

Two checks a user would otherwise learn about from 90 alerts: where ``features: infer``
finds each reference feature (at the top level, or nested: ``income`` may sit at
``applicant.income``), and which mapped fields are absent from most records (a mistyped
path such as ``applicant.incme`` matches nothing, and every value comes out missing).

>>> recs = [{"id": 1, "applicant": {"income": 5.0, "age": 30}, "purpose": "car"}] * 3
>>> {k: p.text for k, p in infer_paths(["income", "age", "purpose"], recs).items()}
{'income': 'applicant.income', 'age': 'applicant.age', 'purpose': 'purpose'}
>>> absent_share(FieldPath.parse("applicant.incme"), recs)
1.0
"""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.csv as pcsv

from driftwatch.arrowdecimal import decimals_as_doubles
from driftwatch.connectors.config import Connector
from driftwatch.connectors.mapping import FeatureField, FieldPath, StreamMapping
from driftwatch.csvdecimal import file_decimal
from driftwatch.csvpad import trimmed_table
from driftwatch.csvsep import file_separator
from driftwatch.errors import ConnectorError
from driftwatch.jsonloads import loads
from driftwatch.parquetread import read_parquet
from driftwatch.schema import FeatureSchema
from driftwatch.workbook import refuse_as_text

__all__ = [
    "ABSENT_WARN",
    "Probe",
    "absent_share",
    "flat_key_warnings",
    "flat_keys",
    "infer_paths",
    "probe_inputs",
    "probe_records",
    "sample_records",
]

#: Records looked at per stream.
SAMPLE = 1000
#: A mapped field absent from more than this share of the first records gets a warning.
ABSENT_WARN = 0.5

_ABSENT = object()


def _get(rec: Any, parts: Sequence[str]) -> Any:
    for p in parts:
        if type(rec) is not dict or p not in rec:
            return _ABSENT
        rec = rec[p]
    return rec


def _lookup(rec: Mapping[str, Any], path: FieldPath) -> Any:
    """The value at ``path``: nested keys, or a flat column named like the dotted path."""
    if path.text in rec:
        return rec[path.text]
    return _get(rec, path.parts)


def absent_share(path: FieldPath, records: Sequence[Mapping[str, Any]], *,
                 whole: bool = True) -> float:
    """Share of ``records`` without ``path`` (absent, not null); NaN without records.
    ``whole=False`` reads a dotted path as nested keys only, as a Kafka decoder does."""
    if not records:
        return float("nan")
    look = _lookup if whole else (lambda r, p: _get(r, p.parts))
    return sum(look(r, path) is _ABSENT for r in records) / len(records)


def flat_keys(stream: StreamMapping, records: Sequence[Mapping[str, Any]]) -> set[str]:
    """The dotted paths of ``stream`` that ``records`` hold as one key named like the whole
    path (pandas' JSON of the Taiwan table: ``"default.payment.next.month": 0``): the key
    wins, as :func:`absent_share` and a CSV's column of that name read it."""
    dotted = {p.text for p in stream.all_paths().values() if len(p.parts) > 1}
    return {t for t in dotted if any(t in r for r in records)}


def flat_key_warnings(connector: Connector,
                      records: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """What to say of a Kafka stream whose first ``records`` write a mapped dotted path as
    one key: its decoder reads the path as nested objects, so the field reads as absent."""
    out = []
    for s in connector.streams:
        for key in sorted(flat_keys(s, records.get(s.name, ()))):
            out.append(f"the {s.name} records write {key!r} as one key with dots in it; a "
                       f"Kafka stream reads the path {key} as nested objects, so it finds "
                       "nothing there and the field reads as absent (a file's probe reads "
                       "such a key whole); rename the key without dots in the producer "
                       f"(e.g. {key.replace('.', '_')}) and map that name")
    return out


def _leaves(rec: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for k, v in rec.items():
        if type(v) is dict:
            yield from _leaves(v, (*prefix, k))
        else:
            yield (*prefix, k)


def infer_paths(
    names: Sequence[str], records: Sequence[Mapping[str, Any]]
) -> dict[str, FieldPath]:
    """Where each feature sits: its own name if records carry it, else the one nested path
    ending in that name (``applicant.income`` for ``income``). Features found nowhere keep
    their name (the absent-field check then says so).

    Raises
    ------
    ConnectorError
        When a name ends several nested paths (``applicant.income``, ``co.income``).
    """
    seen: dict[str, set[tuple[str, ...]]] = {}
    for r in records:
        for leaf in _leaves(r):
            seen.setdefault(leaf[-1], set()).add(leaf)
    out = {}
    for n in names:
        own = FieldPath.parse(n)
        if records and absent_share(own, records) < 1.0:
            out[n] = own
            continue
        found = sorted(p for p in seen.get(n, ()) if len(p) > 1)
        if len(found) > 1:
            raise ConnectorError(
                f"features: infer finds feature {n!r} at several paths: "
                + ", ".join(".".join(p) for p in found),
                hint=f"map it explicitly: {n}: {{path: {'.'.join(found[0])}}}")
        out[n] = FieldPath(found[0]) if found else own
    return out


def _skip_row(row: Any) -> str:
    return "skip"


def sample_records(path: Path, fmt: str, n: int = SAMPLE,
                   delimiter: str | None = None,
                   decimal: str | None = None, names: Sequence[str] | None = None,
                   named_header: bool = False) -> list[dict[str, Any]]:
    """The first ``n`` readable records of a JSONL, CSV or Parquet file, as dicts (Kafka
    recordings and unreadable lines are skipped: the replay reports those). A CSV is read
    with ``delimiter`` and ``decimal``, by default the ones its head shows; ``names``:
    its columns when it has no header line (``named_header``: its first line equals them,
    and is skipped)."""
    if fmt == "parquet":
        return decimals_as_doubles(read_parquet(path, n)).to_pylist()
    refuse_as_text(path, fmt)
    raw = path.open("rb")
    with raw:
        head = raw.read(2)
        raw.seek(0)
        f: Any = gzip.GzipFile(fileobj=raw) if head == b"\x1f\x8b" else raw
        if fmt == "csv":
            sep = delimiter or file_separator(path)
            mark = decimal or file_decimal(path, sep).mark
            # a row with too few or too many fields is the reader's bad record to count,
            # not a parse error that stops the replay before it starts
            parse = pcsv.ParseOptions(delimiter=sep, invalid_row_handler=_skip_row)
            given = {} if names is None else {"column_names": list(names),
                                              "skip_rows": int(named_header)}
            reader = pcsv.open_csv(f, read_options=pcsv.ReadOptions(block_size=1 << 20,
                                                                    **given),
                                   parse_options=parse,
                                   convert_options=pcsv.ConvertOptions(decimal_point=mark))
            batch = next(iter(reader), None)
            if batch is None:
                return []
            return trimmed_table(pa.Table.from_batches([batch.slice(0, n)])).to_pylist()
        if fmt != "jsonl":
            return []
        out = []
        for line in itertools.islice(f, n * 2):
            try:
                rec = loads(line)
            except orjson.JSONDecodeError:
                continue
            if type(rec) is dict:
                out.append(rec)
            if len(out) >= n:
                break
        return out


@dataclass(frozen=True)
class Probe:
    """The connector with inferred feature paths filled in, and what to warn about.

    ``absent`` maps ``(stream, field)`` to the share of sampled records without it, for
    the fields absent from more than :data:`ABSENT_WARN` of them.
    """

    connector: Connector
    absent: dict[tuple[str, str], float]
    sampled: dict[str, int]

    def absent_features(self) -> dict[str, tuple[int, int, str]]:
        """Feature -> (records without its path, records sampled, path), for the features
        absent from most sampled records of the stream that maps them."""
        out = {}
        for (stream, key), share in sorted(self.absent.items()):
            if not key.startswith("feature:"):
                continue
            s = next(x for x in self.connector.streams if x.name == stream)
            n = self.sampled[stream]
            out[key.removeprefix("feature:")] = (round(share * n), n, s.all_paths()[key].text)
        return out

    def warnings(self) -> list[str]:
        out = []
        for (stream, key), share in sorted(self.absent.items()):
            s = next(x for x in self.connector.streams if x.name == stream)
            path = s.all_paths()[key].text
            what = key.removeprefix("feature:")
            out.append(f"{what!r} ({path}) is absent from {share:.0%} of the first "
                       f"{self.sampled[stream]} {stream} records: check its path")
        return out


def _stream_inputs(inputs: Sequence[Any], stream: str) -> list[Any]:
    return [i for i in inputs if stream in i.streams and i.format != "kafka-recording"]


def probe_inputs(
    connector: Connector, reference: FeatureSchema | None, inputs: Sequence[Any],
    *, n: int = SAMPLE, missing: Mapping[str, float] | None = None,
) -> Probe:
    """Sample each stream's first input files (``FileInput`` s), infer the paths of
    ``features: infer`` and measure which mapped fields are absent.

    ``missing``: each feature's missing share in the reference. A feature is absent when
    its path is missing from more than :data:`ABSENT_WARN` of the records that should hold
    a value: an exporter that leaves nulls out drops the key as often as the reference
    misses the value, and that is the missing rate's business, not a wrong path."""
    records: dict[str, list[dict[str, Any]]] = {}
    for s in connector.streams:
        recs: list[dict[str, Any]] = []
        for inp in _stream_inputs(inputs, s.name):
            recs += sample_records(inp.path, inp.format, n - len(recs),
                                   getattr(inp, "delimiter", None), getattr(inp, "decimal", None),
                                   getattr(inp, "names", None),
                                   getattr(inp, "named_header", False))
            if len(recs) >= n:
                break
        records[s.name] = recs
    return probe_records(connector, reference, records, missing=missing)


def probe_records(
    connector: Connector, reference: FeatureSchema | None,
    records: Mapping[str, Sequence[Mapping[str, Any]]], *,
    missing: Mapping[str, float] | None = None, flat: bool = True,
) -> Probe:
    """:func:`probe_inputs` on records already read: ``records`` maps a stream's name to
    its first records (a stream left out, or with none, is not judged). With ``reference``
    ``features: infer`` is filled from them; without it the streams stay as they are.
    ``flat``: read a dotted path whose whole text is a key of the records as that key (a
    file's decoder is built from the probe's connector); False for a Kafka stream, whose
    decoders are built before any record and read every dotted path as nested."""
    streams: list[StreamMapping] = []
    absent: dict[tuple[str, str], float] = {}
    sampled: dict[str, int] = {}
    for s in connector.streams:
        recs = list(records.get(s.name, ()))
        if s.features is None and reference is not None:
            try:
                paths = infer_paths(reference.names, recs)
            except ConnectorError as exc:  # located at the stream's `features: infer`
                raise connector.error(("source", "streams", s.name, "fields", "features"),
                                      exc.message, hint=exc.hint) from exc
            s = replace(s, features=tuple(FeatureField(name, p) for name, p in paths.items()))
        if flat and (keys := flat_keys(s, recs)):
            s = s.with_flat_keys(keys)
        streams.append(s)
        if not recs:
            continue
        sampled[s.name] = len(recs)
        for key, path in s.all_paths().items():
            share = absent_share(path, recs, whole=flat)
            m = (missing or {}).get(key.removeprefix("feature:"), 0.0)
            if key.startswith("feature:") and m > 0 and (
                    m >= 1.0 or (share - m) / (1.0 - m) <= ABSENT_WARN):
                continue
            if share > ABSENT_WARN:
                absent[(s.name, key)] = share
    return Probe(replace(connector, streams=tuple(streams)), absent, sampled)
