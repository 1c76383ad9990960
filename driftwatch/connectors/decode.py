"""Messages -> columnar :class:`~driftwatch.batch.Batch` plus the records that could not be read.

One :class:`Decoder` per stream. It takes JSON payloads (Kafka; Avro ones for a stream with
``avro:``, read by :mod:`~driftwatch.connectors.avro`), whole JSONL blocks (files)
or pyarrow tables (CSV, Parquet) and never raises for a bad record: each one comes back as
a :class:`~driftwatch.connectors.base.BadRecord` with the first problem found, in this order:
``message_too_large`` (before parsing), ``invalid_json`` (``invalid_avro`` or
``schema_unavailable`` for an Avro stream), ``not_an_object``, ``missing_id``,
``id_too_long``, ``missing_time`` / ``bad_time``, ``wrong_type`` (features, then score, model
version, decision, segment, exposure, metrics), ``text_too_long`` (model version, segment),
``non_finite_score``, ``score_out_of_range``, ``bad_label``.

Memory follows the caps, not the input: a message over :data:`MAX_MESSAGE_BYTES` is not
parsed (its dead letter keeps its first :data:`KEPT_BYTES`), and an id or a text over
:data:`MAX_TEXT_CHARS` never reaches a batch, whose text columns are fixed-width arrays.

A missing feature is not a bad record: numeric features are NaN, categorical ones code -1.
A stream that maps no features gets zero-width feature matrices; one that maps some gets
the schema's full width with the unmapped columns missing.

>>> from driftwatch.connectors.mapping import FieldPath, LabelField, StreamMapping, TimeField
>>> from driftwatch.schema import FeatureSchema, level_text
>>> m = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
...                   event_time=TimeField(FieldPath.parse("ts")), features=None,
...                   score=FieldPath.parse("m.score"))
>>> dec = Decoder(m, FeatureSchema(numeric=("income",), categorical=("purpose",),
...                                levels=(("car", "home"),)))
>>> batch, bad = dec.decode_block(
...     b'{"id": "a", "ts": 1704067200, "income": 5e4, "purpose": "home", "m": {"score": 0.1}}\\n'
...     b'{"id": "b", "ts": "2024-01-01T00:00:00Z", "m": {"score": 1.5}}\\n'
...     b'not json\\n', source="demo.jsonl")
>>> batch.ids.tolist(), batch.numeric.tolist(), batch.categorical.tolist()
(['a'], [[50000.0]], [[1]])
>>> [(b.reason, b.position) for b in bad]
[('score_out_of_range', 2), ('invalid_json', 3)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from driftwatch.batch import (
    DECISION_APPROVE,
    DECISION_DECLINE,
    DECISION_UNKNOWN,
    Batch,
    take_rows,
)
from driftwatch.clock import SystemClock
from driftwatch.connectors.avro import AvroReader, read_rows
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.columns import (
    CodeLookup,
    Problems,
    Raw,
    blank,
    code_lookup,
    describe,
    encode,
    fixed_width,
    is_arrow,
    keys,
    numeric,
    text_numbers,
    texts,
)
from driftwatch.connectors.eventtime import (
    UNIT_WORDS,
    digit_width,
    event_times,
    parse_origin,
)
from driftwatch.connectors.jsonblock import Lines, ParsedRows, RowParser
from driftwatch.connectors.jsonscan import ScanColumns
from driftwatch.connectors.mapping import FieldPath, StreamMapping, as_text
from driftwatch.connectors.scanbatch import ScanAssembler
from driftwatch.flags import flag_level, flag_levels
from driftwatch.percent import COMMA_FILE_DECIMAL
from driftwatch.schema import FeatureSchema, level_text
from driftwatch.textnumbers import help_for

__all__ = ["KEPT_BYTES", "MAX_MESSAGE_BYTES", "MAX_TEXT_CHARS", "Decoder", "record_ids"]

#: A message larger than this is dead-lettered unparsed (``message_too_large``).
MAX_MESSAGE_BYTES = 1 << 20
#: The bytes of a too-large message its dead letter keeps.
KEPT_BYTES = 1 << 16
#: Longest event id, model version or segment (characters): a batch's text columns are
#: fixed-width, so one 100,000-character id would make every row of its batch that wide.
MAX_TEXT_CHARS = 256

_Detail = Callable[[int], str]

#: A count's unit, in words (an ``origin`` makes numbers offsets)


def _value_at(raw: Raw, i: int) -> Any:
    return raw[i].as_py() if is_arrow(raw) else raw[i]  # type: ignore[union-attr,index]


def _isin(k: pa.Array, values: frozenset[str]) -> np.ndarray:
    return pc.fill_null(pc.is_in(k, value_set=pa.array(sorted(values), pa.string())),
                        False).to_numpy(zero_copy_only=False)


class _Distinct:
    """A text column's match keys (stripped, lower-cased), made once per distinct text: a
    decision or a label column holds a handful of texts over thousands of rows."""

    def __init__(self, vals: pa.Array) -> None:
        enc = pc.dictionary_encode(vals)
        self._keys = keys(enc.dictionary)
        # a null row points past the texts: never in a set
        self._at = pc.fill_null(enc.indices, len(enc.dictionary)).to_numpy(
            zero_copy_only=False)

    def isin(self, values: frozenset[str]) -> np.ndarray:
        """Rows whose key is one of ``values``, as :func:`_isin` of the keys says."""
        return np.append(_isin(self._keys, values), False)[self._at]


_PY_BOOLS = pa.array(["True", "TRUE", "False", "FALSE"], pa.string())
_COMMA_NUMBER = re.compile(COMMA_FILE_DECIMAL)  # 3,0 in a file of decimal commas


def _bool_text(vals: pa.Array) -> pa.Array:
    """``True``/``FALSE`` as the level text a boolean has (``true``/``false``)."""
    hit = pc.fill_null(pc.is_in(vals, value_set=_PY_BOOLS), False)
    return pc.if_else(hit, pc.utf8_lower(vals), vals) if pc.any(hit).as_py() else vals


def _number_text(s: str | None, decimal: str = ".") -> str | None:
    """The level a pandas-read reference gives the CSV text ``s`` of a number: ``3.0`` and
    ``03`` are ``3``, and so is ``3,0`` where ``decimal``, the file's decimal mark, is
    the comma (the reference was read with it too); other text is itself.

    >>> _number_text("3.0"), _number_text("3,0"), _number_text("3,0", ","), _number_text("x")
    ('3', '3,0', '3', 'x')
    """
    if s is None or "_" in s:  # float() reads 1_0, pandas does not
        return s
    if decimal == "," and (comma := _COMMA_NUMBER.fullmatch(s.strip())):
        s = f"{comma[1]}.{comma[2]}"
    try:
        v = float(s)
    except ValueError:
        return s
    return level_text(v) if np.isfinite(v) else s


def _recode_numbers(codes: np.ndarray, vals: pa.Array, lookup: CodeLookup,
                    n_levels: int, decimal: str = ".") -> None:
    """Codes unseen text again as the number it spells (in place): pandas writes an integer
    column holding a missing value as ``3.0`` (``3,0`` in a file of decimal commas, whose
    mark is ``decimal``), and reads the reference's back as 3.0."""
    idx = np.flatnonzero(codes == n_levels + 1)
    if len(idx):  # once per distinct text: a new category may fill the whole batch
        unseen = vals.take(pa.array(idx))
        distinct = pc.unique(unseen)
        again = pa.array([_number_text(v, decimal) for v in distinct.to_pylist()],
                         pa.string())
        where = pc.index_in(unseen, value_set=distinct).to_numpy(zero_copy_only=False)
        codes[idx] = encode(again, lookup, n_levels)[where.astype(np.int64)]


def _recode_padded(codes: np.ndarray, vals: pa.Array, lookup: CodeLookup,
                   n_levels: int) -> None:
    """Codes unseen text again without the spaces around it, against the levels so
    trimmed (in place): a level read from a CSV lost them (Lending Club's `` 36 months``
    is ``36 months`` in a CSV reference) where a JSON stream keeps them, or the other
    way round. ``lookup``: the feature's coding with its texts trimmed."""
    idx = np.flatnonzero(codes == n_levels + 1)
    if len(idx):
        codes[idx] = encode(pc.utf8_trim_whitespace(vals.take(pa.array(idx))), lookup,
                            n_levels)


def _trimmed_lookup(levels: Sequence[str], other: frozenset[str]) -> CodeLookup:
    """The coding of ``levels`` and ``other`` with their texts trimmed (the first level a
    trimmed text comes from keeps it)."""
    trimmed: dict[str, int] = {}
    for i, v in enumerate(levels):
        trimmed.setdefault(v.strip(), i)
    kept = [v for v in trimmed]
    extra = frozenset(v.strip() for v in other) - set(kept)
    return code_lookup(kept, extra)._replace(
        codes=np.append(np.array(list(trimmed.values()), dtype=np.int32),
                        np.full(len(extra), len(levels), dtype=np.int32)))


def _recode_flags(codes: np.ndarray, vals: pa.Array, lookup: CodeLookup, n_levels: int,
                  sides: dict[bool, str]) -> None:
    """Codes unseen flag text again as the reference's level of its side (in place; see
    :mod:`~driftwatch.flags`)."""
    idx = np.flatnonzero(codes == n_levels + 1)
    if len(idx):  # once per distinct text, as for numbers
        unseen = vals.take(pa.array(idx))
        distinct = pc.unique(unseen)
        again = pa.array([flag_level(v, sides) for v in distinct.to_pylist()], pa.string())
        where = pc.index_in(unseen, value_set=distinct).to_numpy(zero_copy_only=False)
        recoded = encode(again, lookup, n_levels)[where.astype(np.int64)]
        # a text no side reads stays a new category (encode made it missing: None)
        codes[idx] = np.where(recoded >= 0, recoded, codes[idx])


def _without(vals: pa.Array, missing: frozenset[str], lenient: bool,
             decimal: str = ".") -> pa.Array:
    """``vals`` with the texts in ``missing`` made null; ``lenient`` (CSV): a number
    (``-1.0``, or ``-1,0`` where ``decimal`` is the comma) matches by the level a
    pandas-read reference gives it (``-1``)."""
    distinct = [v for v in pc.unique(vals).to_pylist() if v is not None]
    hits = [v for v in distinct
            if v in missing or (lenient and _number_text(v, decimal) in missing)]
    if not hits:
        return vals
    hit = pc.fill_null(pc.is_in(vals, value_set=pa.array(hits, pa.string())), False)
    return pc.if_else(hit, pa.scalar(None, pa.string()), vals)


def _text_in(raw: Raw, missing: frozenset[str]) -> np.ndarray:
    """Rows of ``raw`` holding text that is one of ``missing`` once stripped."""
    if is_arrow(raw):
        arr = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            return np.zeros(len(arr), bool)
        return _isin(pc.utf8_trim_whitespace(arr.cast(pa.string())), missing)
    return np.fromiter((isinstance(v, str) and v.strip() in missing for v in raw), bool,
                       len(raw))


class Decoder:
    """Decodes one stream's records with its :class:`StreamMapping` into ``schema`` columns.

    ``block_parse=False`` reads every JSON line with orjson (slower; the same result);
    ``scan=False`` leaves out the compiled scanner, so blocks go to pyarrow (the same
    result again).
    """

    def __init__(
        self, mapping: StreamMapping, schema: FeatureSchema, *, block_parse: bool = True,
        scan: bool = True, now: float | None = None,
    ) -> None:
        self.mapping = mapping.resolve(schema)
        # where a two-digit year falls without century_start (two_digit_years): today,
        # once, unless given
        self._now = SystemClock().now() if now is None else now
        self.schema = schema
        feats = self.mapping.feature_paths(schema.names)
        self.width = (schema.n_numeric, schema.n_categorical) if feats else (0, 0)
        self._num = [(j, n, feats[n]) for j, n in enumerate(schema.numeric) if n in feats]
        self._cat = [(j, n, feats[n]) for j, n in enumerate(schema.categorical) if n in feats]
        self._lookups = [code_lookup(lv, o) for lv, o in zip(schema.levels, schema.other,
                                                              strict=True)]
        self._trimmed: dict[int, CodeLookup] = {}  # made when a feature first needs it
        # a yes/no feature: another spelling of a flag reads as the reference's same side
        self._flags = [flag_levels(lv) if not o else None
                       for lv, o in zip(schema.levels, schema.other, strict=True)]
        miss = self.mapping.missing
        # both parsers meet in _assemble: the sentinels are applied once, there
        self._missing_num = {n: miss.numbers(n) for _, n, _ in self._num}
        self._missing_num_text = {n: miss.number_texts(n) for _, n, _ in self._num}
        self._missing_cat = {n: miss.texts(n) for _, n, _ in self._cat}
        m = self.mapping
        t = m.event_time
        self._unit = t.read_unit
        self._origin = None if t.origin is None else parse_origin(t.origin)
        fields: dict[str, tuple[FieldPath, str]] = {}
        if m.event_id is not None:  # else each record's number in its file (_ids)
            fields["event_id"] = (m.event_id, "any")
        if t.path is not None:
            kind = f"time:{self._unit}"
            if t.format is not None:  # a date in digits comes as a number or text: learnt
                kind = "time:auto" if digit_width(t.format) else "time:format"
            fields["event_time"] = (t.path, kind)
        # percent or money text ("13.56%", "$60,000.00 ") is text to the parsers: read as a
        # number in _assemble
        self._formats = {f.name: f.format for f in self.mapping.features or () if f.format}
        for _, n, p in self._num:
            fields[f"feature:{n}"] = (p, "any" if n in self._formats else "number")
        for _, n, p in self._cat:
            fields[f"feature:{n}"] = (p, "any")
        for key, kind in (("score", "number"), ("model_version", "any"), ("segment", "any"),
                          ("exposure", "number")):
            p = getattr(m, key)
            if p is not None:
                fields[key] = (p, kind)
        if m.proba is not None:
            fields["proba"] = (m.proba.path, "proba")
        if m.decision is not None:
            fields["decision"] = (m.decision.path, "any")
        if m.label is not None:
            fields["label"] = (m.label.path, "any")
        for name, p in m.metrics:
            fields[f"metric:{name}"] = (p, "number")
        self.fields = fields
        self._parser = RowParser(fields, block=block_parse, scan=scan)
        #: an ``avro:`` stream's reader (values are Avro records, never JSON)
        self.avro = AvroReader(m.avro) if m.avro is not None else None
        # the scanned lines without a problem: straight from the scan's arrays
        self._direct = ScanAssembler(
            m, schema, self.width, [(j, n) for j, n, _ in self._num],
            [(j, n) for j, n, _ in self._cat], self._missing_num,
            has_formats=bool(self._formats), max_text=MAX_TEXT_CHARS,
            read_categorical=self._categorical, read_decision=self._decision,
            read_label=self._label, read_times=self._times)

    @property
    def rows_block_parsed(self) -> int:
        """Rows the block parsers (the scanner, pyarrow) took so far (the rest went line by
        line)."""
        return self._parser.fast_rows

    @property
    def rows_scanned(self) -> int:
        """Rows the compiled scanner took so far."""
        return self._parser.scanned_rows

    @property
    def rows_assembled_from_scan(self) -> int:
        """Scanned rows whose batch was read straight from the scan's arrays so far
        (:mod:`~driftwatch.connectors.scanbatch`)."""
        return self._direct.rows

    # -- entry points -----------------------------------------------------------------------
    def decode(
        self,
        payloads: Sequence[bytes],
        *,
        source: str,
        positions: np.ndarray,
        partition: int | np.ndarray | None = None,
        timestamps: np.ndarray | None = None,
    ) -> tuple[Batch, list[BadRecord]]:
        """Decode JSON payloads (one per Kafka message). ``positions`` are their offsets;
        ``timestamps`` the record timestamps in epoch seconds (NaN where none);
        ``partition`` one partition for all, or each payload's (one call for a poll's
        partitions of a topic: the parse's fixed cost is paid once)."""
        return self.decode_lines(Lines.from_payloads(list(payloads)), source=source,
                                 positions=positions, partition=partition,
                                 timestamps=timestamps)

    def decode_lines(
        self,
        lines: Lines,
        *,
        source: str,
        positions: np.ndarray,
        partition: int | np.ndarray | None = None,
        timestamps: np.ndarray | None = None,
    ) -> tuple[Batch, list[BadRecord]]:
        """As :meth:`decode`, for payloads already laid out as spans of one buffer (Kafka
        record batches read in bulk: :mod:`driftwatch.connectors.kafka_records`)."""
        pos = np.asarray(positions, dtype=np.int64)
        return self._run(lines, pos, source, partition, timestamps)

    def decode_block(
        self, block: bytes | memoryview, *, source: str, first_line: int = 1,
        partition: int | None = None,
        line_ends: np.ndarray | None = None,
    ) -> tuple[Batch, list[BadRecord]]:
        """Decode a block of JSON lines; blank lines are skipped, positions are line numbers
        counted from ``first_line`` (the block's first line). ``line_ends``: the offsets of
        the block's line feeds, where the caller has them (a file reader found them). A
        memoryview (a mapped file's lines) is read in place and no view of it is kept."""
        lines, line_no = Lines.from_block(block, line_ends)
        return self._run(lines, line_no.astype(np.int64) + first_line, source, partition, None)

    def decode_table(
        self,
        table: pa.Table,
        *,
        source: str,
        positions: np.ndarray,
        partition: int | None = None,
        timestamps: np.ndarray | None = None,
        lenient: bool = False,
        decimal: str = ".",
        header_lines: int = 0,
    ) -> tuple[Batch, list[BadRecord]]:
        """Decode a table (CSV, Parquet). A column named like a whole dotted path wins over
        struct fields. ``lenient`` reads numbers written as text (CSV); ``decimal`` is the
        CSV's decimal mark, which money text is read with (``1.234,56 €`` where it is
        ``,``); ``header_lines``: the lines of the file before its first row (a CSV's
        header), which ``positions`` count and a record's number does not."""
        n = table.num_rows
        cols = {key: _table_column(table, path) for key, (path, _) in self.fields.items()}

        def raw(i: int) -> bytes:
            return orjson.dumps(table.slice(i, 1).to_pylist()[0], default=str)

        part = ParsedRows(np.arange(n), cols, Problems(n))
        pos = np.asarray(positions, dtype=np.int64)
        ts = None if timestamps is None else np.asarray(timestamps, dtype=np.float64)
        batch, bad, _ = self._assemble(part, pos, raw, source, partition, ts, lenient,
                                       decimal, header_lines)
        return batch, bad

    # -- internals ----------------------------------------------------------------------------
    def _run(
        self,
        lines: Lines,
        positions: np.ndarray,
        source: str,
        partition: int | np.ndarray | None,
        timestamps: np.ndarray | None,
    ) -> tuple[Batch, list[BadRecord]]:
        ts = None if timestamps is None else np.asarray(timestamps, dtype=np.float64)
        if self.avro is None:  # an Avro body may start with what looks like a JSON header
            lines = lines.without_registry_header()
        size = lines.ends - lines.starts
        big = size > MAX_MESSAGE_BYTES
        if big.any():  # refused unparsed; the rest is decoded as if they were not there
            keep = np.flatnonzero(~big)
            batch, bad = self._run(lines.subset(keep), positions[keep], source,
                                   _rows_of(partition, keep), None if ts is None else ts[keep])
            huge = [BadRecord("message_too_large", f"{int(size[i])} bytes, over the "
                              f"{MAX_MESSAGE_BYTES} byte limit", source, int(positions[i]),
                              lines.raw(int(i))[:KEPT_BYTES], _partition_at(partition, i),
                              self.mapping.name)
                    for i in np.flatnonzero(big).tolist()]
            # in the payloads' order (offsets repeat across partitions: not a sort key alone)
            row = {(_partition_at(partition, i), int(positions[i])): i
                   for i in range(len(positions))}
            return batch, sorted(bad + huge, key=lambda b: row[(b.partition, b.position)])
        results = []
        parts = (self._parser.parse(lines) if self.avro is None else
                 [read_rows(self.avro, lines, {k: p.parts for k, (p, _) in self.fields.items()})])
        for part in parts:
            rows = part.rows

            def raw(k: int, rows: np.ndarray = rows) -> bytes:
                return lines.raw(int(rows[k]))

            pos, stamps = positions[rows], None if ts is None else ts[rows]
            args = (pos, raw, source, _rows_of(partition, rows), stamps,
                    self.mapping.numbers_as_text)
            try:
                direct = (self._direct.assemble(part.columns, pos, source, stamps)
                          if isinstance(part.columns, ScanColumns) else None)
                if direct is not None:  # every row good: no dead letter
                    batch, bad, ok = direct, [], np.ones(len(rows), bool)
                else:
                    batch, bad, ok = self._assemble(part, *args)
            except pa.ArrowException:  # a value the block parser let through: read it again
                if self.avro is not None:
                    raise
                batch, bad, ok = self._assemble(self._parser.slow(lines, rows), *args)
            results.append((rows[ok], batch, rows[~ok], bad))
        if len(results) == 1:
            return results[0][1], results[0][3]
        good_rows = np.concatenate([r[0] for r in results])
        batch = Batch.concat([r[1] for r in results]).take(np.argsort(good_rows, kind="stable"))
        bad_rows = np.concatenate([r[2] for r in results])
        bads = [b for r in results for b in r[3]]
        return batch, [bads[i] for i in np.argsort(bad_rows, kind="stable").tolist()]

    def _assemble(
        self,
        part: ParsedRows,
        positions: np.ndarray,
        raw_of: Callable[[int], bytes],
        source: str,
        partition: int | np.ndarray | None,
        timestamps: np.ndarray | None,
        lenient: bool,
        decimal: str = ".",
        header_lines: int = 0,
    ) -> tuple[Batch, list[BadRecord], np.ndarray]:
        m, cols, prob = self.mapping, part.columns, part.problems
        n = len(positions)

        def wrong(key: str, what: str, expected: str) -> _Detail:
            return lambda i: f"{what} ({self.fields[key][0].text}): expected {expected}, " \
                f"found {describe(_value_at(cols[key], i))}"

        if m.event_id is None:
            ids = record_ids(positions, header_lines)
        else:
            id_path = m.event_id.text
            ids, bad = texts(cols["event_id"], bools=False)
            no_id = blank(ids) & ~bad
            prob.flag(no_id, "missing_id", lambda i: f"event_id ({id_path}) is "
                      + ("missing" if not ids[i].is_valid else "empty"))
            prob.flag(bad, "wrong_type", wrong("event_id", "event_id", "text or a number"))
            prob.flag(_too_long(ids), "id_too_long", lambda i: f"event_id ({id_path}) "
                      f"has {len(ids[i].as_py())} characters, over the {MAX_TEXT_CHARS} "
                      "limit")
        secs = self._times(cols, prob, timestamps, n)
        # column-major: filled a column at a time, and read so by the window kernel
        num = np.full((n, self.width[0]), np.nan, order="F")
        for j, name, _ in self._num:
            if fmt := self._formats.get(name):
                num[:, j], bad, _ = text_numbers(cols[f"feature:{name}"], fmt, decimal)
                expected = help_for(fmt)
            else:
                num[:, j], bad, _ = numeric(cols[f"feature:{name}"], lenient=lenient,
                                            bools=True)
                expected = "a number"
            if self._missing_num_text[name] and bad.any():  # "?" among numbers: missing
                bad &= ~_text_in(cols[f"feature:{name}"], self._missing_num_text[name])
            prob.flag(bad, "wrong_type", wrong(f"feature:{name}", f"feature {name!r}", expected))
            if len(self._missing_num[name]):
                num[np.isin(num[:, j], self._missing_num[name]), j] = np.nan
        cat = np.full((n, self.width[1]), -1, dtype=np.int32, order="F")
        for j, name, _ in self._cat:
            cat[:, j] = self._categorical(j, name, cols[f"feature:{name}"], prob, wrong,
                                          lenient, decimal)
        extra: dict[str, Any] = {}
        if m.score is not None:
            raw, bad, null = numeric(cols["score"], lenient=lenient)
            prob.flag(bad, "wrong_type", wrong("score", "score", "a number"))
            # finiteness is the written value's: log-odds or points of inf read as 0 or 1
            finite = np.isfinite(raw)
            prob.flag(~null & ~finite, "non_finite_score",
                      wrong("score", "score", "a finite number"))
            score = m.score_scale.to_probability(raw)
            prob.flag(finite & ((score < 0) | (score > 1)), "score_out_of_range",
                      wrong("score", "score", m.score_scale.expected()))
            extra["score"] = score
        if m.proba is not None:
            extra["proba"] = self._proba(cols["proba"], prob, n)
            if m.score is None:  # one class's probability is the score
                extra["score"] = extra["proba"][:, m.proba.score_at]
        for key in ("model_version", "segment"):
            if getattr(m, key) is not None:
                vals, bad = texts(cols[key])
                prob.flag(bad, "wrong_type", wrong(key, key, "text or a number"))
                prob.flag(_too_long(vals), "text_too_long",
                          lambda i, k=key, v=vals: f"{k} has {len(v[i].as_py())} characters, "
                          f"over the {MAX_TEXT_CHARS} limit")
                extra[key] = vals
        if m.decision is not None:
            extra["decision"] = self._decision(cols["decision"], prob, wrong)
        for key, what in [("exposure", "exposure")] + [(f"metric:{k}", f"metric {k!r}")
                                                       for k, _ in m.metrics]:
            if key in cols:
                extra[key], bad, _ = numeric(cols[key], lenient=lenient)
                prob.flag(bad, "wrong_type", wrong(key, what, "a number"))
        if m.label is not None:
            extra["label"] = self._label(cols["label"], prob)
        ok = prob.ok
        keep = pa.array(ok)
        for key in ("model_version", "segment"):  # text: filtered first, so as wide as kept
            if key in extra:
                extra[key] = fixed_width(extra.pop(key).filter(keep))
        metrics = {k[7:]: extra.pop(k)[ok] for k in list(extra) if k.startswith("metric:")}
        batch = Batch.build(
            m.role, n=int(ok.sum()), n_numeric=self.width[0], n_categorical=self.width[1],
            ids=fixed_width(ids.filter(keep)), event_time=secs[ok],
            position=positions[ok],
            numeric=take_rows(num, ok), categorical=take_rows(cat, ok), metrics=metrics,
            source=source,
            **{k: v if k in ("model_version", "segment") else v[ok] for k, v in extra.items()},
        )
        bad_idx = np.flatnonzero(~ok)
        bads = [
            BadRecord(prob.reason(i), prob.detail[i], source, int(positions[i]), raw_of(i),
                      _partition_at(partition, i), m.name, prob.value.get(i))
            for i in bad_idx.tolist()
        ]
        return batch, bads, ok

    def _categorical(self, j: int, name: str, raw: Raw, prob: Problems,
                     wrong: Callable[..., _Detail], lenient: bool,
                     decimal: str = ".") -> np.ndarray:
        """Categorical feature ``j``'s codes (``name``, read from ``raw``; ``decimal``: a
        CSV's decimal mark); its rows holding no text or number are flagged
        ``wrong_type``."""
        vals, bad = texts(raw)
        if lenient:  # CSV text: a pandas-written True/False is the boolean level
            vals = _bool_text(vals)
        if self._missing_cat[name]:
            vals = _without(vals, self._missing_cat[name], lenient, decimal)
        n_levels = len(self.schema.levels[j])
        codes = encode(vals, self._lookups[j], n_levels)
        if lenient:
            _recode_numbers(codes, vals, self._lookups[j], n_levels, decimal)
        if (codes == n_levels + 1).any():  # unseen texts: a level with spaces around it?
            if j not in self._trimmed:
                self._trimmed[j] = _trimmed_lookup(self.schema.levels[j], self.schema.other[j])
            _recode_padded(codes, vals, self._trimmed[j], n_levels)
        if self._flags[j] is not None:
            _recode_flags(codes, vals, self._lookups[j], n_levels, self._flags[j])
        prob.flag(bad, "wrong_type", wrong(f"feature:{name}", f"feature {name!r}",
                                           "text or a number"))
        return codes

    def _times(
        self, cols: Mapping[str, Any], prob: Problems, timestamps: np.ndarray | None, n: int
    ) -> np.ndarray:
        t = self.mapping.event_time
        if t.source in ("arrival", "order"):  # stamped where it arrives (ModelMonitor.process)
            return np.full(n, np.nan)
        if t.source == "kafka_timestamp":
            secs = np.full(n, np.nan) if timestamps is None else timestamps.astype(np.float64)
            prob.flag(~np.isfinite(secs), "missing_time", lambda i: "the record has no Kafka "
                      "timestamp")
            return secs
        raw, path = cols["event_time"], t.path.text  # type: ignore[union-attr]
        secs, missing, bad = event_times(raw, self._unit, fmt=t.format, origin=self._origin,
                                         now=self._now, century_start=t.century_start)
        prob.flag(missing, "missing_time", lambda i: f"event_time ({path}) is missing")
        if t.format is not None:
            unit = f"text in the format {t.format!r}"
        elif t.origin is not None:
            unit = f"{UNIT_WORDS[self._unit]} after {t.origin}"
        else:
            unit = {"auto": "epoch seconds, ms, µs or ns, or ISO-8601", "s": "epoch seconds",
                    "ms": "epoch milliseconds", "us": "epoch microseconds",
                    "ns": "epoch nanoseconds", "min": "epoch minutes", "h": "epoch hours",
                    "d": "epoch days", "iso": "ISO-8601"}[t.unit]
        prob.flag(bad, "bad_time", lambda i: f"event_time ({path}): expected {unit}, found "
                  f"{describe(_value_at(raw, i))}")
        return secs

    def _proba(self, raw: Raw, prob: Problems, n: int) -> np.ndarray:
        c = self.mapping.proba.classes  # type: ignore[union-attr]
        out = np.full((n, c), np.nan)
        vals = raw.to_pylist() if is_arrow(raw) else raw  # type: ignore[union-attr]
        wrong = np.zeros(n, bool)
        for i, v in enumerate(vals):
            if v is None:
                continue
            if (type(v) is not list or len(v) != c
                    or not all(type(x) is float or type(x) is int for x in v)):
                wrong[i] = True
            else:
                out[i] = v
        path = self.mapping.proba.path.text  # type: ignore[union-attr]
        prob.flag(wrong, "wrong_type", lambda i: f"proba ({path}): expected a list of {c} "
                  f"numbers, found {describe(vals[i])}")
        finite = np.isfinite(out).all(axis=1) | np.isnan(out).all(axis=1)
        prob.flag(~finite, "non_finite_score", lambda i: f"proba ({path}) is not finite")
        outside = ((out < 0) | (out > 1)).any(axis=1)
        # the numbers as read (floats): the line parser keeps JSON integers as ints, the
        # block parser reads every element as a float; the detail must not tell them apart
        prob.flag(outside, "score_out_of_range", lambda i: f"proba ({path}): expected "
                  f"probabilities in [0, 1], found {out[i].tolist()!r}"[:200])
        return out

    def _decision(self, raw: Raw, prob: Problems, wrong: Callable[..., _Detail]) -> np.ndarray:
        d = self.mapping.decision
        assert d is not None
        vals, bad = texts(raw)
        prob.flag(bad, "wrong_type", wrong("decision", "decision", "text, a number or a boolean"))
        k = _Distinct(vals)
        out = np.full(len(vals), DECISION_UNKNOWN, dtype=np.int8)
        if d.decline is None:
            out[vals.is_valid().to_numpy(zero_copy_only=False)] = DECISION_DECLINE
        else:
            out[k.isin(d.decline)] = DECISION_DECLINE
        out[k.isin(d.approve)] = DECISION_APPROVE
        return out

    def _label(self, raw: Raw, prob: Problems) -> np.ndarray:
        lb = self.mapping.label
        assert lb is not None
        vals, bad = texts(raw)
        k = _Distinct(vals)
        null = vals.is_null().to_numpy(zero_copy_only=False) & ~bad
        is_bad = k.isin(lb.bad)
        is_good = k.isin(lb.good)
        # a pending value is read as no label (NaN): the joiner leaves the record out and
        # counts it in ``invalid_outcomes``; the outcome itself may come later
        pending = k.isin(lb.pending) if lb.pending else np.zeros(len(vals), bool)
        out = np.where(is_bad, 1.0, np.where(is_good, 0.0, np.nan))
        path = lb.path.text
        prob.flag(bad | (null & lb.required), "bad_label", lambda i: f"label ({path}): "
                  f"expected one of {sorted(lb.bad)} (bad) or {sorted(lb.good)} (good), "
                  f"found {describe(_value_at(raw, i))}")
        # a value on none of the lists is not guessed: its side is the user's to say
        named = f"bad {sorted(lb.bad)}, good {sorted(lb.good)}" + (
            f", pending ({len(lb.pending)} values)" if lb.pending else "")
        prob.flag(~null & ~is_bad & ~is_good & ~pending, "bad_label", lambda i: (
            f"label ({path}): {describe(_value_at(raw, i))} is on none of the connector's "
            f"label lists ({named}); if it is an outcome add it to this stream's "
            "fields.label bad: or good:, if it is no outcome yet to pending:"),
            value=lambda i: as_text(_value_at(raw, i)))
        return out


def record_ids(positions: np.ndarray, header_lines: int = 0) -> pa.Array:
    """The ids of records without an id field (``event_id: {source: order}``): each one's
    number in its file, from its line (``positions``) less the ``header_lines`` before the
    first record; where a record stands, never how many good ones came before it.

    >>> record_ids(np.array([2, 3, 5]), header_lines=1).to_pylist()
    ['1', '2', '4']
    """
    return pa.array(np.asarray(positions, dtype=np.int64) - header_lines).cast(pa.string())


def _too_long(values: pa.Array) -> np.ndarray:
    """Rows over :data:`MAX_TEXT_CHARS` characters; counted only where some row has more
    bytes than that (a character is at least one byte)."""
    if values.type == pa.string() and len(values):
        offs = np.frombuffer(values.buffers()[1], dtype=np.int32)[
            values.offset : values.offset + len(values) + 1]
        if int(np.diff(offs).max()) <= MAX_TEXT_CHARS:
            return np.zeros(len(values), dtype=bool)
    n = pc.fill_null(pc.utf8_length(values), 0)
    return np.asarray(n.to_numpy(zero_copy_only=False)) > MAX_TEXT_CHARS


def _table_column(table: pa.Table, path: FieldPath) -> pa.Array:
    names = table.column_names
    if path.text in names:
        return table.column(path.text).combine_chunks()
    if path.parts[0] in names:
        col = table.column(path.parts[0]).combine_chunks()
        for p in path.parts[1:]:
            if not pa.types.is_struct(col.type) or col.type.get_field_index(p) < 0:
                return pa.nulls(table.num_rows)
            col = pc.struct_field(col, [col.type.get_field_index(p)])
        return col
    return pa.nulls(table.num_rows)


def _rows_of(partition: int | np.ndarray | None, rows: np.ndarray) -> int | np.ndarray | None:
    """The partitions of ``rows``: one for all, or each row's."""
    return partition[rows] if isinstance(partition, np.ndarray) else partition


def _partition_at(partition: int | np.ndarray | None, i: int) -> int | None:
    return int(partition[i]) if isinstance(partition, np.ndarray) else partition
