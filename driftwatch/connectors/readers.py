"""Read one input file in chunks of decoded rows: JSONL, CSV (gzip or not), Parquet, and the
Kafka recording format. A CSV is read with the separator it is given, or the one its
header shows (:mod:`driftwatch.csvsep`), and the decimal mark it is given, or the one its
first rows show (:mod:`driftwatch.csvdecimal`).

A chunk holds, per stream, the decoded :class:`~driftwatch.batch.Batch` and the file line of
each row; the bad records with their lines; and the last line the chunk covers. Lines are
1-based. CSV counts its header as line 1; Parquet counts rows from 1. A recording's rows keep
their Kafka offset as ``Batch.position`` (as the live source would) while lines still say
where they sit in the file. A recorded Avro value whose writer schema the registry cannot
serve is asked again as the registry's backoff allows, for up to
:data:`RECORDED_REGISTRY_WAIT_S` seconds (a brief outage does not end a long replay); then
the read stops with a :class:`~driftwatch.errors.SourceError` naming the line: a replay
reads every record or none (the live source waits for the registry as long as it takes).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import logging
import mmap
import time
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from driftwatch.arrowdecimal import decimals_as_doubles
from driftwatch.batch import Batch
from driftwatch.connectors.avro import SCHEMA_UNAVAILABLE
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.decode import MAX_MESSAGE_BYTES, Decoder
from driftwatch.connectors.jsonblock import TIME_COUNTS
from driftwatch.connectors.lineends import line_ends
from driftwatch.connectors.mapped import drop_behind, map_file, shrank
from driftwatch.csvblank import BlankTee
from driftwatch.csvdecimal import file_decimal
from driftwatch.csvnulls import CSV_MISSING
from driftwatch.csvpad import csv_names, header_names, trimmed_table
from driftwatch.csvsep import file_separator
from driftwatch.errors import SourceError
from driftwatch.jsonloads import loads
from driftwatch.numbergroups import ungroup_array
from driftwatch.parquetread import row_group_batches
from driftwatch.workbook import SAVE_AS, refuse_as_text, workbook_kind

__all__ = ["MAX_BLOCK_BYTES", "RECORDED_REGISTRY_WAIT_S", "Chunk", "FileReader", "detect_format"]

log = logging.getLogger(__name__)

#: Seconds a replay waits in all, per block of a recording, for a schema registry that
#: cannot serve a recorded value's writer schema, before it stops at that value.
RECORDED_REGISTRY_WAIT_S = 60.0

_READ = 1 << 22
#: A CSV's compression by its name, as pyarrow's ``input_stream`` detects it
_CODECS = {".gz": "gzip", ".bz2": "bz2", ".lz4": "lz4", ".zst": "zstd"}
#: Bytes of lines one block may hold: a batch stops short of its size rather than grow
#: past this (ten thousand 1 MiB lines would otherwise be read at once).
MAX_BLOCK_BYTES = 1 << 26
_ENVELOPE = ("topic", "partition", "offset")
# what the decoder reads as a number (jsonblock.KINDS), and such a number's text with a
# decimal comma (3644,09), made 3644.09 in a decimal-comma CSV
_NUMBER_KINDS = ("number", "proba", *TIME_COUNTS, "time:auto")
_DECIMAL_COMMA = r"^(\s*[-+]?\d*),(\d+(?:[eE][-+]?\d+)?\s*)$"


@dataclass
class Chunk:
    parts: dict[int, tuple[Batch, np.ndarray]] = field(default_factory=dict)  # stream -> rows
    bad: list[BadRecord] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)
    end_line: int = 0
    nbytes: int = 0


def _open_bytes(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """``(stream, raw file)``: the stream decompresses gzip (found by its magic bytes and a
    header that reads as gzip; a text file whose first line happens to start with the two
    magic bytes is read as it is, and that line is a bad record like any other)."""
    raw = open(path, "rb")  # noqa: SIM115 - owned by the reader, closed in close()
    if raw.read(2) == b"\x1f\x8b":
        raw.seek(0)
        probe = gzip.GzipFile(fileobj=raw, mode="rb")
        try:
            probe.peek(1)
        except (OSError, EOFError, zlib.error):
            raw.seek(0)
            return raw, raw
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw  # type: ignore[return-value]
    raw.seek(0)
    return raw, raw


def detect_format(path: Path) -> str:
    """``jsonl``, ``csv``, ``parquet`` or ``kafka-recording`` from the name, then the content."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".tsv")):
        return "csv"
    try:
        f, raw = _open_bytes(path)
        with raw, f:
            head = f.read(1 << 16)
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceError(f"cannot read {path}: {exc}") from exc
    if kind := workbook_kind(head):
        raise SourceError(f"{path} is {kind}: driftwatch reads JSON lines, CSV or Parquet "
                          f"(gzip too); {SAVE_AS}")
    named_json = name.endswith((".jsonl", ".json", ".ndjson"))
    # a name that says JSON is JSON: a bad line that happens to start with b"PAR1" is a
    # bad record to dead-letter, not a Parquet file that stops the source
    if head.startswith(b"PAR1") and not named_json:
        return "parquet"
    if not named_json and not head.lstrip().startswith(b"{"):
        return "csv"
    for line in head.splitlines():
        if line.strip():
            try:
                first = loads(line)
            except orjson.JSONDecodeError:
                break
            if isinstance(first, dict) and all(k in first for k in _ENVELOPE) and "value" in first:
                return "kafka-recording"
            break
    return "jsonl"


class FileReader:
    """Reads one file for one or more streams (several only for a Kafka recording)."""

    def __init__(
        self,
        path: Path,
        key: str,
        fmt: str,
        decoders: Sequence[tuple[int, Decoder]],
        *,
        batch_size: int,
        skip_lines: int = 0,
        delimiter: str | None = None,
        decimal: str | None = None,
        names: Sequence[str] | None = None,
        named_header: bool = False,
        mapped: bool = False,
    ) -> None:
        self.path, self.key, self.format = path, key, fmt
        #: read an uncompressed JSON-lines file (or recording) through a read-only
        #: mapping, scanned in place (:mod:`driftwatch.connectors.mapped`: only where a
        #: ``SIGBUS`` from a file truncated while read would not end the daemon)
        self.mapped = mapped
        #: a CSV's separator; None: the one its header shows (:mod:`driftwatch.csvsep`)
        self.delimiter = delimiter
        #: a CSV's decimal mark; None: the one its first rows show
        self.decimal = decimal
        #: a headerless CSV's column names; None: its first line's
        self.names = tuple(names) if names is not None else None
        #: with ``names``: its first line is a header equal to them (skipped)
        self.named_header = named_header
        self.decoders = list(decoders)
        self.batch_size = max(1, batch_size)
        self.line = 0  # last line read
        self.exhausted = False
        self.skipped_topics: dict[str, int] = {}
        self._topics = {d.mapping.topic_name: i for i, d in self.decoders if d.mapping.topic_name}
        self._f: Any = None
        self._map: mmap.mmap | None = None
        self._size = path.stat().st_size if path.exists() else 0
        self._buf, self._pos, self._len = bytearray(), 0, 0
        self._nl, self._nl_at = np.zeros(0, np.int64), 0
        self._block_lines = 0
        self._block_nl = np.zeros(0, dtype=np.int64)
        #: the lines before a table's first row (a CSV's header): a record's number is
        #: its line less these (event_id: {source: order})
        self._header_lines = 0
        try:
            self._start(skip_lines)
        except (OSError, EOFError, zlib.error, pa.ArrowException) as exc:
            self.close()
            raise SourceError(f"cannot read {path}: {exc}") from exc
        except SourceError:
            self.close()
            raise
        # a fresh read starts at 0: pyarrow has read a CSV's first block for its header
        self._disk = self._disk_position() if skip_lines else 0

    # -- public ---------------------------------------------------------------------------
    def next_chunk(self) -> Chunk | None:
        if self.exhausted:
            return None
        try:
            if self.format == "parquet":
                chunk = self._parquet_chunk()
            elif self.format == "csv":
                chunk = self._csv_chunk()
            elif self.format == "kafka-recording":
                chunk = self._recording_chunk(self._read_lines())
            else:
                chunk = self._jsonl_chunk()
        except (OSError, EOFError, zlib.error, pa.ArrowException) as exc:
            raise SourceError(f"cannot read {self.path} after line {self.line}: {exc}") from exc
        at = self._disk_position()
        chunk.nbytes, self._disk = at - self._disk, at
        return chunk

    def _disk_position(self) -> int:
        """Bytes of the file read so far (compressed bytes for gzip), for progress."""
        if self.format in ("jsonl", "kafka-recording"):
            if self._map is not None:  # scanned so far: what reads would have read
                return self._len
            return self._raw.tell() if not self._raw.closed else self._size
        if self.format == "parquet":
            total = max(self._pq.metadata.num_rows, 1)
            return self._size * min(self.line, total) // total
        if self.format == "csv" and not self.exhausted and not self._raw.closed:
            # pyarrow reads far ahead of the rows it hands out (tens of MB): the bytes read
            # so far, times the share of the lines they end that are handed out
            ends = self._tee.blanks.ends
            at = int(self._raw.tell() * min(self.line / ends, 1.0)) if ends else 0
            return min(max(at, getattr(self, "_disk", 0)), self._size)
        return self._size if self.exhausted else 0

    def close(self) -> None:
        if self._map is not None:
            with contextlib.suppress(BufferError):  # views an error's traceback holds:
                self._map.close()  # the pages go with them
            self._map = None
        for f in (self._f, getattr(self, "_raw", None), getattr(self, "_pq", None)):
            if f is not None and hasattr(f, "close"):
                f.close()
        self._f = None

    # -- opening and skipping ---------------------------------------------------------------
    def _start(self, skip: int) -> None:
        if self.format == "parquet":
            self._pq = pq.ParquetFile(self.path)
            names = set(self._pq.schema_arrow.names)
            cols = sorted({p.text if p.text in names else p.parts[0]
                           for _, d in self.decoders for p, _ in d.fields.values()} & names)
            groups, rows = [], 0
            for g in range(self._pq.num_row_groups):
                n = self._pq.metadata.row_group(g).num_rows
                if groups or rows + n > skip:
                    groups.append(g)
                else:
                    rows += n
            self._f = row_group_batches(self._pq, groups, self.batch_size, cols)
            self._drop, self.line = skip - rows, skip
            return
        if self.format in ("csv", "jsonl"):
            refuse_as_text(self.path, self.format)
        if self.format == "csv":
            if self.delimiter is None:
                self.delimiter = file_separator(self.path, str(self.key))
            if self.decimal is None:
                self.decimal = file_decimal(self.path, self.delimiter).mark
            self._csv_bad: list[tuple[int, str, str]] = []
            cols = sorted({p.text for _, d in self.decoders for p, _ in d.fields.values()})
            self._csv_cols = cols
            # every column is read as text and the decoder reads the numbers in it, so a
            # grouped number loses its grouping ("1,234") and a decimal comma is made a
            # point in the columns it reads as numbers (categories keep their text: a
            # level is the reference's text)
            self._number_cols = sorted({
                p.text for _, d in self.decoders for p, kind in d.fields.values()
                if kind in _NUMBER_KINDS
            })
            # names written with spaces around them (``a, b``) are read without, and a
            # blank one as pandas names it (csvpad.csv_names)
            names = header_names(self.path, self.delimiter) if self.names is None else []
            read_as = csv_names(names)
            given = {"column_names": read_as, "skip_rows": 1} if read_as != names else {}
            # the lines of a file without a header count from its first: the data's
            header = self.names is None or self.named_header
            if self.names is not None:
                given = {"column_names": list(self.names), "skip_rows": int(header)}
            # pyarrow numbers rows as if empty lines were not there, but skips them as
            # lines when a read resumes: rows keep the file's line numbers (a row's id where
            # the stream numbers its rows, a bad row's line in the dead letters, the line a
            # checkpoint resumes after), the empty lines found in the bytes pyarrow reads
            # the file apart, to tell progress how far into it pyarrow has read (a stream
            # that decompresses knows no position in the file)
            self._raw = pa.OSFile(str(self.path))
            tee = BlankTee(pa.input_stream(self._raw, compression=_CODECS.get(self.path.suffix)))
            self._tee = tee
            self._blanks = tee.blanks
            self.line = max(skip, int(header))
            self._resumed_at = self.line
            self._shift: int | None = None  # see _resume_shift
            self._counted: int | None = None  # self.line as pyarrow counts, once known
            self._f = pacsv.open_csv(
                tee,
                read_options=pacsv.ReadOptions(block_size=_READ, use_threads=False,
                                               skip_rows_after_names=max(skip - header, 0),
                                               **given),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter,
                                                 invalid_row_handler=self._invalid_row),
                convert_options=pacsv.ConvertOptions(
                    column_types=dict.fromkeys(cols, pa.string()), include_columns=cols,
                    include_missing_columns=True, strings_can_be_null=True,
                    null_values=list(CSV_MISSING)),
            )
            self._table: pa.Table | None = None
            self._header_lines = int(header)
            return
        if self.format == "jsonl":
            _refuse_json_array(self.path, self.key)
        self._f, self._raw = _open_bytes(self.path)
        if self.mapped and self._f is self._raw:
            self._map = map_file(self._raw)
            self._dropped = 0  # the mapping's pages let go (mapped.drop_behind)
            if self._map is not None:
                self._buf = self._map  # type: ignore[assignment]
        while self.line < skip:
            block = self._read_lines(min(self.batch_size * 10, skip - self.line))
            if not block:
                break

    # -- JSON lines -------------------------------------------------------------------------
    def _read_lines(self, n: int | None = None) -> bytes:
        """The next ``n`` (default: batch size) lines as one block of ``bytes``."""
        pos, end = self._take_lines(n)
        with memoryview(self._buf) as view:  # one copy: a bytearray's slice would be another
            return bytes(view[pos:end])

    def _take_lines(self, n: int | None = None) -> tuple[int, int]:
        """Where the next ``n`` (default: batch size) lines lie in ``_buf``, as one
        block: ``(start, end)``; marks the end of file.

        The bytes held are ``_buf[_pos:_len]``, with the offsets of their line ends in
        ``_nl[_nl_at:]``, found once per byte read, so a small batch size never rescans
        the buffer. The file is read into the buffer in place (:meth:`_fill`) and a block
        is copied out of it once. A mapped file is its own buffer (``_buf`` is the
        mapping and ``_pos``, ``_len`` and ``_nl`` count from the file's start), and
        its JSON lines are decoded where they lie (:meth:`_jsonl_chunk`).
        """
        want = n or self.batch_size
        eof = False
        while len(self._nl) - self._nl_at < want:
            if self._len - self._pos >= MAX_BLOCK_BYTES:
                if len(self._nl) > self._nl_at:
                    break  # a shorter block: its bytes, not its lines, are the bound
                self._cut_long_line()
                continue
            if not self._fill():
                eof = True
                break
        buf, pos, at = self._buf, self._pos, self._nl_at
        have = len(self._nl) - at
        if have >= want or (have and not eof):
            take = min(have, want)
            end = int(self._nl[at + take - 1]) + 1
            self._nl_at += take
            self._block_lines = take
        else:
            end = self._len
            self._block_lines = have + (1 if end > pos and buf[end - 1] != 10 else 0)
            self._nl_at = len(self._nl)
            self.exhausted = True
        # the block's line ends, already found: the decoder need not look for them again
        self._block_nl = self._nl[at : self._nl_at] - pos
        self.line += self._block_lines
        self._pos = end
        return pos, end

    def _fill(self) -> bool:
        """Read up to :data:`_READ` more bytes into the buffer after the held ones (moved
        to its front first when the room after them is short); False at the end of file."""
        if self._map is not None:
            return self._fill_mapped()
        if self._len + _READ > len(self._buf):
            pos, held = self._pos, self._len - self._pos
            buf = self._buf if len(self._buf) >= held + _READ else bytearray(
                max(2 * _READ, held + _READ))
            buf[:held] = self._buf[pos : self._len]
            self._buf, self._len, self._pos = buf, held, 0
            self._nl, self._nl_at = self._nl[self._nl_at :] - pos, 0
        view = memoryview(self._buf)
        try:
            got = self._f.readinto(view[self._len : self._len + _READ])
        finally:
            view.release()
        if not got:
            return False
        found = line_ends(np.frombuffer(self._buf, np.uint8), self._len, got)
        self._nl = np.concatenate([self._nl[self._nl_at :], found])
        self._nl_at = 0
        self._len += got
        return True

    def _fill_mapped(self) -> bool:
        """:meth:`_fill` for a mapped file: the line ends of up to :data:`_READ` more of
        its bytes, found in place. At the mapping's end, or once the file holds fewer
        bytes than were mapped, it goes on with reads (:meth:`_unmap`), which see what
        the file holds from there: the end, or bytes appended since it was mapped."""
        m = self._map
        assert m is not None
        size = shrank(self._raw, len(m))
        if size is not None and size < self._len:
            # the bytes held are gone from the file: reading them would raise SIGBUS
            raise SourceError(f"{self.path} shrank to {size} bytes while it was read "
                              f"(after line {self.line}, {self._len} bytes read): read it "
                              f"again once it is written whole")
        if size is not None or self._len >= len(m):
            self._unmap()
            return self._fill()
        # the bytes before the first one held are in blocks already decoded
        self._dropped = drop_behind(m, self._dropped, self._pos)
        got = min(_READ, len(m) - self._len)
        found = line_ends(np.frombuffer(m, np.uint8), self._len, got)
        self._nl = np.concatenate([self._nl[self._nl_at :], found])
        self._nl_at = 0
        self._len += got
        return True

    def _unmap(self) -> None:
        """Leave the mapping for reads from the first byte not scanned: the bytes held
        (scanned, not yet in a block) are copied to a buffer, as reads would have left
        them, and the mapping is closed."""
        m, pos, held = self._map, self._pos, self._len - self._pos
        assert m is not None
        buf = bytearray(max(2 * _READ, held + _READ))
        buf[:held] = m[pos : self._len]
        self._raw.seek(self._len)
        self._nl, self._nl_at = self._nl[self._nl_at :] - pos, 0
        self._buf, self._pos, self._len, self._map = buf, 0, held, None
        m.close()

    def _cut_long_line(self) -> None:
        """The buffer holds one line longer than a block may be: keep its head (still over
        the decoder's message cap, so it is dead-lettered as too large) and drop the rest
        of it unread into memory."""
        if self._map is not None:  # the rest of the line is skipped by reads, as ever
            self._unmap()
        kept = bytes(self._buf[self._pos : self._pos + MAX_MESSAGE_BYTES + 1])
        rest = b""
        while data := self._f.read(_READ):
            cut = data.find(b"\n")
            if cut >= 0:
                rest = data[cut:]
                break
        held = kept + rest
        self._buf = bytearray(max(2 * _READ, len(held) + _READ))
        self._buf[: len(held)] = held
        self._len, self._pos, self._nl_at = len(held), 0, 0
        self._nl = line_ends(np.frombuffer(held, np.uint8), 0, len(held))

    def _jsonl_chunk(self) -> Chunk:
        pos, end = self._take_lines()
        if self._map is None:
            with memoryview(self._buf) as view:
                return self._jsonl_decoded(bytes(view[pos:end]))
        # a mapped file's lines are decoded in place. The decoder keeps no view of them,
        # which releasing the views checks (BufferError otherwise): no batch holds the
        # file's pages once its chunk is made. (An error leaves them to its traceback.)
        whole = memoryview(self._map)
        block = whole[pos:end]
        chunk = self._jsonl_decoded(block)
        block.release()
        whole.release()
        return chunk

    def _jsonl_decoded(self, block: bytes | memoryview) -> Chunk:
        first = self.line - self._block_lines + 1
        (si, dec), = self.decoders
        batch, bad = dec.decode_block(block, source=self.key, first_line=first,
                                      line_ends=self._block_nl)
        return Chunk({si: (batch, batch.position.copy())}, bad, [b.position for b in bad],
                     self.line)

    def _recording_chunk(self, block: bytes) -> Chunk:
        first = self.line - self._block_lines + 1
        chunk = Chunk(end_line=self.line)
        groups: dict[tuple[int, str, int], list[tuple[int, bytes, int, float]]] = defaultdict(list)
        for k, line in enumerate(block.split(b"\n")):
            if not line.strip():
                continue
            env, problem = _envelope(line)
            if problem is not None:
                chunk.bad.append(BadRecord(problem[0], problem[1], self.key, first + k, line))
                chunk.bad_lines.append(first + k)
                continue
            topic = env["topic"]
            si = self._topics.get(topic) if self._topics else self.decoders[0][0]
            if si is None:
                self.skipped_topics[topic] = self.skipped_topics.get(topic, 0) + 1
                continue
            groups[(si, topic, env["partition"])].append(
                (first + k, env["payload"], env["offset"], env["timestamp"]))
        per_stream: dict[int, list[tuple[Batch, np.ndarray]]] = defaultdict(list)
        decoders = dict(self.decoders)
        for (si, topic, part), rows in groups.items():
            lines = np.array([r[0] for r in rows], dtype=np.int64)
            offsets = dict(zip(lines.tolist(), (r[2] for r in rows), strict=True))
            ts = np.array([r[3] for r in rows], dtype=np.float64)
            batch, bad = _decode_recorded(self.key, decoders[si], [r[1] for r in rows],
                                          topic=topic, lines=lines, partition=part, ts=ts)
            good_lines = batch.position.copy()
            batch = replace(batch, position=np.array([offsets[x] for x in good_lines.tolist()],
                                                     dtype=np.int64))
            per_stream[si].append((batch, good_lines))
            for b in bad:
                chunk.bad.append(replace(b, position=offsets[b.position]))
                chunk.bad_lines.append(b.position)
        for si, parts in per_stream.items():
            lines = np.concatenate([p[1] for p in parts])
            order = np.argsort(lines, kind="stable")
            chunk.parts[si] = (Batch.concat([p[0] for p in parts]).take(order), lines[order])
        if chunk.bad:
            order = np.argsort(chunk.bad_lines, kind="stable").tolist()
            chunk.bad = [chunk.bad[i] for i in order]
            chunk.bad_lines = [chunk.bad_lines[i] for i in order]
        return chunk

    # -- tables ---------------------------------------------------------------------------------
    def _resume_shift(self) -> int:
        """The empty lines before the line the read started after: pyarrow numbers a row
        past the lines it skipped, empty ones included, and the rows after as if the empty
        ones were not there. Asked once pyarrow has read past them (its first rows)."""
        if self._shift is None:
            self._shift = self._resumed_at - self._blanks.counted(self._resumed_at)
        return self._shift

    def _invalid_row(self, row: Any) -> str:
        self._csv_bad.append((int(row.number) - self._resume_shift()
                              if row.number is not None else -1,
                              f"expected {row.expected_columns} fields, found "
                              f"{row.actual_columns}", row.text))
        return "skip"

    def _csv_chunk(self) -> Chunk:
        table = self._table
        while table is None or table.num_rows < self.batch_size:
            try:
                rb = self._f.read_next_batch()
            except StopIteration:
                self.exhausted = True
                break
            t = pa.Table.from_batches([rb])
            table = t if table is None else pa.concat_tables([table, t])
        if table is None:  # no rows at all (a bare header); pa.table({}) would slice badly
            table = pa.table({c: pa.array([], pa.string()) for c in self._csv_cols})
        take, self._table = table.slice(0, self.batch_size), table.slice(self.batch_size)
        take = _number_texts(trimmed_table(take), self._number_cols, self.decimal or ".")
        invalid = sorted(b for b in self._csv_bad)
        if self._counted is None:  # where the read started, as pyarrow counts lines
            self._counted = self._blanks.counted(self._resumed_at)
        lines = self._counted + 1 + np.arange(take.num_rows, dtype=np.int64)
        for v, _, _ in invalid:  # rows pyarrow skipped shift the lines after them
            lines[lines >= v] += 1
        end = int(lines[-1]) if len(lines) else self._counted
        mine = [b for b in invalid if b[0] <= end or self.exhausted]
        self._csv_bad = [b for b in invalid if b not in mine]
        if self.exhausted and self._table.num_rows == 0:
            end = max([end] + [b[0] for b in mine])
        self._counted, phys = end, self._blanks.physical  # from pyarrow's numbers to lines
        lines, end = phys(lines), int(phys(np.array([end]))[0])
        mine = [(int(phys(np.array([v]))[0]), d, t) for v, d, t in mine]
        chunk = self._table_chunk(take, lines, end, lenient=True)
        for num, detail, text in mine:
            chunk.bad.append(BadRecord("invalid_csv", detail, self.key, num, text.encode(),
                                       stream=self.decoders[0][1].mapping.name))
            chunk.bad_lines.append(num)
        if mine:
            order = np.argsort(chunk.bad_lines, kind="stable").tolist()
            chunk.bad = [chunk.bad[i] for i in order]
            chunk.bad_lines = [chunk.bad_lines[i] for i in order]
        self.exhausted = self.exhausted and self._table.num_rows == 0
        return chunk

    def _parquet_chunk(self) -> Chunk:
        try:
            rb = next(self._f)
        except StopIteration:
            self.exhausted = True
            return Chunk(end_line=self.line)
        if self._drop:
            drop = min(self._drop, rb.num_rows)
            rb, self._drop = rb.slice(drop), self._drop - drop
        table = decimals_as_doubles(pa.Table.from_batches([rb]))
        lines = self.line + 1 + np.arange(table.num_rows, dtype=np.int64)
        return self._table_chunk(table, lines, self.line + table.num_rows, lenient=False)

    def _table_chunk(self, table: pa.Table, lines: np.ndarray, end: int, lenient: bool) -> Chunk:
        (si, dec), = self.decoders
        batch, bad = dec.decode_table(table, source=self.key, positions=lines, lenient=lenient,
                                      decimal=self.decimal or ".",
                                      header_lines=self._header_lines)
        self.line = end
        return Chunk({si: (batch, batch.position.copy())}, bad, [b.position for b in bad], end)


def _number_texts(table: pa.Table, cols: Sequence[str], decimal: str) -> pa.Table:
    """``table`` with each number in ``cols`` written as Python writes it: its thousands
    ungrouped (:mod:`driftwatch.numbergroups`) and, where ``decimal`` is ``,``, its
    decimal comma a point; other text is left as it is (a bad value stays bad)."""
    for c in cols:
        i = table.schema.get_field_index(c)
        if i < 0 or not table.num_rows:
            continue
        col = table.column(i)
        # the regex passes only where a byte could be a grouping character or a decimal
        # comma: a column of plain numbers (the usual) is left as it is, at a byte scan
        text = _text_bytes(col)
        if text is None or not text.isascii() or any(g in text for g in _GROUP_BYTES[decimal]):
            col = ungroup_array(col, decimal)
        if decimal == "," and (text is None or b"," in text):
            col = pc.replace_substring_regex(col, pattern=_DECIMAL_COMMA, replacement=r"\1.\2")
        table = table.set_column(i, c, col)
    return table


#: The bytes that may group a number's thousands, by the decimal mark (spaces beyond ASCII
#: are told by a text not being ASCII)
_GROUP_BYTES = {".": (b",", b" "), ",": (b".", b" ")}


def _text_bytes(col: pa.ChunkedArray) -> bytes | None:
    """The UTF-8 bytes of a text column's values, one after the other (only the rows of
    its slice); None for a column of another layout."""
    out = []
    for chunk in col.chunks:
        if chunk.type != pa.string():
            return None
        _, offsets, data = chunk.buffers()
        if data is None or not len(chunk):
            continue
        offs = np.frombuffer(offsets, dtype=np.int32)
        start, end = int(offs[chunk.offset]), int(offs[chunk.offset + len(chunk)])
        out.append(data.slice(start, end - start).to_pybytes())
    return b"".join(out)


def _refuse_json_array(path: Path, key: str) -> None:
    """A file holding one JSON array of objects (``[`` alone on the first line and no whole
    object on the next, or one line that is the whole array) is not JSON lines: refused
    with how to convert it, rather than read as a single bad record and an empty stream.
    Any other line that is not an object is a bad record like any other."""
    f, raw = _open_bytes(path)
    with raw, f:
        first = b""
        while not first.strip():
            first = f.readline(1 << 20)
            if not first:
                return
        second = b""
        while not second.strip():
            second = f.readline(1 << 20)
            if not second:
                break
    head = first.strip()
    if head == b"[":
        refuse = not second.strip() or not _is_object(second)
    else:
        cut = len(first) >= 1 << 20  # a line too long to read whole: its start decides
        refuse = head.startswith(b"[{") and not second.strip() and (
            cut or _is_array_of_objects(head))
    if refuse:
        raise SourceError(f"{key} holds one JSON array; driftwatch reads JSON lines, one "
                          f"object per line (convert it: jq -c '.[]' {path.name} > "
                          f"{path.stem}.jsonl)")


def _is_object(line: bytes) -> bool:
    try:
        return type(loads(line)) is dict
    except orjson.JSONDecodeError:
        return False


def _is_array_of_objects(line: bytes) -> bool:
    try:
        v = loads(line)
    except orjson.JSONDecodeError:
        return False
    return type(v) is list and bool(v) and type(v[0]) is dict


def _envelope(line: bytes) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """A recording line's routing fields and payload, or ``(reason, detail)``."""
    try:
        env = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return {}, ("invalid_json", f"recording line: {exc}"[:200])
    if type(env) is not dict:
        return {}, ("not_an_object", "recording line is not a JSON object")
    topic, part, off, ts = (env.get("topic"), env.get("partition"), env.get("offset"),
                            env.get("timestamp"))
    if type(topic) is not str or type(part) is not int or type(off) is not int or not (
        ts is None or type(ts) in (int, float)
    ):
        return {}, ("bad_envelope", "recording line needs topic (text), partition and offset "
                    "(integers) and timestamp (epoch ms or null)")
    value = env.get("value")
    if value is None:
        payload = b""
    elif type(value) is not str:
        payload = orjson.dumps(value)
    elif env.get("value_encoding") == "base64":
        try:
            payload = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return {}, ("bad_envelope", "value is not valid base64")
    else:
        payload = value.encode("utf-8", "surrogatepass")
    ts_s = np.nan if ts is None or ts < 0 else ts / 1000.0
    return {"topic": topic, "partition": part, "offset": off, "timestamp": ts_s,
            "payload": payload}, None


def _decode_recorded(key: str, dec: Decoder, payloads: list[bytes], *, topic: str,
                     lines: np.ndarray, partition: int, ts: np.ndarray,
                     ) -> tuple[Batch, list[BadRecord]]:
    """Recorded values decoded; while a value's writer schema cannot be fetched, asked again
    when the registry's backoff allows, up to :data:`RECORDED_REGISTRY_WAIT_S` seconds in
    all, then stopped at (:func:`_no_schema_unavailable`)."""
    waited = 0.0
    while True:
        batch, bad = dec.decode(payloads, source=topic, positions=lines, partition=partition,
                                timestamps=ts)
        registry = dec.avro.registry if dec.avro is not None else None
        outage = registry.outage if registry is not None else None
        if outage is None or not any(b.reason == SCHEMA_UNAVAILABLE for b in bad):
            return batch, bad
        pause = max(0.0, outage.retry_at - registry.now())  # type: ignore[union-attr]
        if waited + pause > RECORDED_REGISTRY_WAIT_S:
            _no_schema_unavailable(key, bad)
        log.warning("%s: schema registry unreachable (%s); asking again in %.0fs",
                    key, outage.reason, pause)
        time.sleep(pause)
        waited += pause


def _no_schema_unavailable(key: str, bad: Sequence[BadRecord]) -> None:
    """Stop at a recorded value whose writer schema the registry cannot serve now: skipping
    it (or dead-lettering it) would make the replay's timeline depend on the registry being
    up, and a replay reads every record or stops."""
    for b in bad:
        if b.reason == SCHEMA_UNAVAILABLE:
            raise SourceError(
                f"{key}:{b.position}: {b.detail}. A replay does not skip a record whose "
                "writer schema it cannot fetch: run it again once the registry answers, or "
                "read the values with the writer schema file (avro: {schema: writer.avsc})")
