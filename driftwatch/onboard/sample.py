"""A few records of the live stream, as flat ``{dotted.path: value}`` rows.

A sample is a file (JSON lines, CSV, Parquet, any of them gzip) or a few messages of a
Kafka topic (kafka-python, the ``kafka`` extra). Nested objects are flattened to dotted
paths, the paths a connector maps; lists stay values.

>>> flatten({"id": 1, "applicant": {"income": 5.0, "home": {"own": True}}, "p": [0.1, 0.9]})
{'id': 1, 'applicant.income': 5.0, 'applicant.home.own': True, 'p': [0.1, 0.9]}
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from driftwatch.connectors.jsonblock import registry_json
from driftwatch.csvdecimal import DecimalMark, file_decimal
from driftwatch.csvheader import refuse_data_header
from driftwatch.csvnames import named_header
from driftwatch.csvpad import read_csv_trimmed
from driftwatch.csvrows import refuse_ragged
from driftwatch.csvsep import file_separator
from driftwatch.errors import SourceError
from driftwatch.jsonloads import loads
from driftwatch.numbergroups import grouped_columns
from driftwatch.workbook import refuse_as_text

__all__ = ["DEFAULT_ROWS", "Sample", "dotted_keys", "flatten", "kafka_sample", "read_sample",
           "sample_decimal", "sample_separator"]

DEFAULT_ROWS = 2000


@dataclass(frozen=True)
class Sample:
    """Flat records of a stream and where they came from (a file, or a Kafka topic)."""

    rows: list[dict[str, Any]]
    name: str  # the file, or "topic T"
    path: str | None = None  # a file path, for the connector's paths
    topic: str | None = None
    delimiter: str | None = None  # a CSV's separator when not the comma, for the connector
    decimal: DecimalMark | None = None  # what a CSV's first rows say of its decimal mark
    #: a headerless CSV's column names (init's --names), written as its csv: {names:}
    names: tuple[str, ...] | None = None
    dotted: tuple[str, ...] = ()  # a topic's keys with dots in them (see dotted_keys)

    @property
    def mark(self) -> str:
        """The decimal mark its money text is read with: a CSV's own, else the point."""
        return "," if self.decimal is not None and self.decimal.mark == "," else "."

    def paths(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.update(dict.fromkeys(r))
        return list(seen)

    def values(self, path: str) -> list[Any]:
        return [r.get(path) for r in self.rows]


def dotted_keys(records: Sequence[Mapping[str, Any]], prefix: str = "") -> list[str]:
    """The paths of ``records`` written as one key with dots in it (pandas' JSON of the
    Taiwan table: ``"default.payment.next.month": 0``), in order of first sight.

    >>> dotted_keys([{"id": 1, "default.payment.next.month": 0, "a": {"b.c": 2, "d": 3}}])
    ['default.payment.next.month', 'a.b.c']
    """
    seen: dict[str, None] = {}
    for rec in records:
        for k, v in rec.items():
            if isinstance(v, Mapping):
                seen.update(dict.fromkeys(dotted_keys([v], f"{prefix}{k}.")))
            elif "." in str(k):
                seen[f"{prefix}{k}"] = None
    return list(seen)


def flatten(rec: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings to dotted paths (lists and scalars are leaves)."""
    out: dict[str, Any] = {}
    for k, v in rec.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = None if isinstance(v, float) and math.isnan(v) else v
    return out


def _jsonl(path: Path, limit: int) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:  # type: ignore[operator]
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if line.strip() == b"[" or (line.lstrip().startswith(b"[") and i == 1
                                          and line.rstrip().endswith(b"]")):
                raise SourceError(f"{path} holds one JSON array; driftwatch reads JSON lines, "
                                  "one object per line (convert it: jq -c '.[]' "
                                  f"{path.name} > {path.stem}.jsonl)")
            try:
                rec = loads(line)
            except orjson.JSONDecodeError as exc:
                hint = ("; an object spread over several lines? driftwatch reads one object "
                        "per line (jq -c . FILE)" if line.strip() in (b"{", b"}") else
                        "; is it a CSV?")
                raise SourceError(f"{path}:{i}: not a JSON line ({exc}){hint}") from None
            if not isinstance(rec, dict):
                raise SourceError(f"{path}:{i}: expected a JSON object per line")
            yield rec
            limit -= 1
            if limit <= 0:
                return


def sample_separator(path: str | Path) -> str | None:
    """The separator of a CSV sample (the comma, or the one its header shows); None for
    JSON lines or Parquet."""
    from driftwatch.connectors.readers import detect_format

    p = Path(path)
    if not p.exists() or detect_format(p) != "csv":
        return None
    return file_separator(p, f"the sample {p}")


def sample_decimal(path: str | Path) -> DecimalMark | None:
    """The decimal mark of a CSV sample (the point, or the comma its first rows show);
    None for JSON lines or Parquet."""
    sep = sample_separator(path)
    return None if sep is None else file_decimal(path, sep)


def _numbers_read(frame: Any) -> Any:
    """``frame`` with its columns of numbers among texts for missing (``?``: see
    :mod:`~driftwatch.onboard.textcodes`) holding the numbers as numbers, as a CSV stream
    reads them, and the texts as they are."""
    from driftwatch.onboard.textcodes import missing_texts

    for c in frame.columns:
        if (hit := missing_texts(frame[c])) is not None:
            frame[c] = frame[c].where(hit[2].isna(), hit[2]).astype(object)
    return frame


def read_sample(path: str | Path, limit: int = DEFAULT_ROWS,
                names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The first ``limit`` records of a file, flattened (a CSV read with
    :func:`sample_separator` and :func:`sample_decimal`; ``names``: its columns when it
    has no header line, as a stream's ``csv: {names:}`` reads it)."""

    from driftwatch.connectors.readers import detect_format

    p = Path(path)
    if not p.exists():
        raise SourceError(f"the sample {p} does not exist")
    try:
        fmt = detect_format(p)
        refuse_as_text(p, fmt)
        if fmt == "parquet":
            from driftwatch.arrowdecimal import decimals_as_doubles
            from driftwatch.parquetread import read_parquet

            rows = decimals_as_doubles(read_parquet(p, limit)).to_pylist()
        elif fmt == "csv":
            sep = sample_separator(p) or ","
            given: dict[str, Any] = {}
            skip = False
            if names is None:
                refuse_data_header(p, sep, f"the sample {p}",
                                   fix="or give them to init: --names (--outcomes-names for the "
                                   "outcomes sample)")
            else:
                skip = named_header(p, sep, names, f"the sample {p}")
                given = {"header": None, "names": list(names), "skiprows": int(skip),
                         "index_col": False}
            refuse_ragged(p, sep, str(p), ", and replay counts such a row as a bad record "
                          "(invalid_csv): fix or drop that line of the sample", limit=limit,
                          names=names, skip=int(skip))
            mark = file_decimal(p, sep).mark
            frame = read_csv_trimmed(p, nrows=limit, sep=sep, decimal=mark, **given)
            # grouped thousands ("1,234") are numbers, as the reference and stream read them
            rows = _numbers_read(grouped_columns(frame, mark)).to_dict(orient="records")
        elif fmt == "jsonl":
            rows = list(_jsonl(p, limit))
        else:
            raise SourceError(f"{p}: a {fmt} file cannot be sampled; give JSON lines, CSV "
                              "or Parquet")
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read the sample {p}: {exc}") from exc
    if not rows:
        raise SourceError(f"the sample {p} holds no records")
    return [flatten(r) for r in rows]


def kafka_sample(topic: str, bootstrap: str, limit: int = 200,
                 timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """Up to ``limit`` JSON messages of ``topic`` (parsed, not flattened: see
    :func:`dotted_keys`), from the earliest offset, without joining a consumer group or
    committing anything."""
    try:
        from kafka import KafkaConsumer
    except ModuleNotFoundError:
        raise SourceError("reading a Kafka sample needs kafka-python: "
                          "pip install 'driftwatch[kafka]'") from None
    from driftwatch.connectors.kafka_client import build_client, topic_hint

    try:
        consumer = build_client(
            KafkaConsumer, bootstrap_servers=bootstrap.split(","), group_id=None,
            auto_offset_reset="earliest", enable_auto_commit=False,
            isolation_level="read_committed",  # as the daemon reads by default
            allow_auto_create_topics=False,  # a misspelt topic must not spring into being
            consumer_timeout_ms=int(timeout_s * 1000),
            bootstrap_timeout_ms=int(timeout_s * 1000))  # its default waits 30 s
    except Exception as exc:  # kafka-python raises its own tree; say what failed
        raise SourceError(f"cannot reach Kafka at {bootstrap} within {timeout_s:.0f} s "
                          f"({type(exc).__name__}): is the broker up, and is this its "
                          "address (host:port of a listener, as clients see it)?") from None
    rows: list[dict[str, Any]] = []
    try:
        on_cluster = consumer.topics()
        if topic not in on_cluster:
            names = sorted(on_cluster)
            listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more"
                                              if len(names) > 10 else "")
            raise SourceError(f"no topic {topic_hint(topic, on_cluster)} at {bootstrap}; "
                              f"topics there: {listed or 'none'}")
        consumer.subscribe([topic])
        binary = 0  # schema-registry values that are not JSON (Avro, Protobuf)
        for msg in consumer:
            try:
                rec = loads(registry_json(msg.value))
            except orjson.JSONDecodeError:
                binary += bool(msg.value) and msg.value[0] == 0
                continue  # not JSON: the decoder counts these later as bad records
            if isinstance(rec, dict):
                rows.append(rec)
            if len(rows) >= limit:
                break
    finally:
        consumer.close()
    if not rows and binary:
        raise SourceError(
            f"topic {topic!r} holds schema-registry values that are not JSON (Avro or "
            "Protobuf); init samples JSON only: write a sample of the topic as JSON lines "
            "(e.g. with your registry's Avro console consumer) and give it with "
            "--sample/--outcomes, then add avro: {schema: <writer .avsc>} or "
            "avro: {registry: <URL>} to each stream of the connector it writes")
    if not rows:
        raise SourceError(f"no JSON messages on topic {topic!r} within {timeout_s:g}s")
    return rows
