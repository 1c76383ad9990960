"""Parse many JSON lines at once: the compiled scanner, a pyarrow fast path, and orjson per
line as the reference.

Where numba runs, :mod:`driftwatch.connectors.jsonscan` reads the lines first, in one
compiled pass that releases the GIL; the lines it hands back go on as below.

``pyarrow.json`` parses a block of lines into columns in C++, reading only the mapped paths
(an explicit schema), several times faster than building a dict per line. It is used only
where it must agree with ``orjson``; anything else goes line by line:

* a line goes to the block parser only if it starts with ``{`` and ends with ``}``
  (pyarrow accepts a top-level ``null`` or crashes on it), is valid UTF-8 and has no
  ``NaN``/``Infinity`` token (pyarrow lets both through, JSON does not), and is short
  enough that its nesting cannot pass orjson's depth limit;
* the block must yield exactly one row per line; a block that fails (a value of another
  type, invalid JSON, a duplicate key) is split in two and retried, down to small pieces
  that go line by line.

Types of the paths whose type is not fixed by the mapping (ids, levels, labels) are learnt
from the lines decoded one by one; a block that disagrees just falls back, so the result
never depends on which path decoded a line.

A time field that holds numbers in some lines and text in others (epoch seconds beside an
ISO string) would make every block holding one of each fall back, down to pieces that go
line by line (a stream with 1% text times decoded 19 times slower). Once the lines decoded
one by one show both, the lines whose time is written the other way (found by a search of
the raw bytes for the key and its value's first character) are parsed apart, as a block
with that field typed their way; a line the search misplaces only falls back.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from driftwatch.connectors.columns import BAD_PARENT, Problems, describe
from driftwatch.connectors.jsonscan import Scanner, path_tree, scanner_for, scanner_settled
from driftwatch.connectors.mapping import FieldPath
from driftwatch.jsonloads import loads

__all__ = ["KINDS", "TIME_COUNTS", "Lines", "ParsedRows", "RowParser", "extract_paths",
           "registry_json"]

#: The epoch counts, read as doubles (a count of nanoseconds past 2**53 is rounded, to
#: within a microsecond).
TIME_COUNTS = ("time:s", "time:ms", "time:us", "time:ns", "time:min", "time:h", "time:d")
# what a path holds: "number", "proba", the epoch counts and the text times ("time:iso",
# "time:format": a strptime format) have fixed types; "time:auto" and "any" are learnt
KINDS = ("number", "proba", "any", "time:auto", *TIME_COUNTS, "time:iso", "time:format")
#: A schema registry's header before a JSON value: a zero byte and a 4-byte schema id
_HEADER = 5
_MAX_SAFE_LEN = 1000  # a line this short cannot nest deeper than orjson's 1024 levels
_SMALLEST_BLOCK = 64
# Fewer lines than this go through orjson: pyarrow's reader costs about a millisecond a
# call whatever the block holds, more than orjson takes for a few dozen lines
_FEWEST_FOR_BLOCK = 32
# Blocks up to this size (a Kafka poll's values, a file chunk) are parsed on the calling
# thread: handing their few 1 MiB pieces to pyarrow's pool cost CPU beyond the parse call
# worth a third of the decode itself (measured with benchmarks/kafka_throughput.py)
_THREADED_BYTES = 8 << 20
_OPEN = np.uint8(ord("{"))
_CLOSE = np.uint8(ord("}"))


@dataclass
class Lines:
    """Rows as ``buf[starts[i]:ends[i]]`` (line ends and ``\\r`` excluded).

    ``buf`` is a memoryview for a block read in place (a file mapped by its reader): the
    scanner and numpy read it where it lies, a bytes search or pyarrow takes
    :attr:`data` (copied once, when first asked), and a row's :meth:`raw` is always its
    own ``bytes``. Nothing built from the rows keeps a view of it.
    """

    buf: bytes | memoryview
    starts: np.ndarray
    ends: np.ndarray
    whole: bool  # buf is exactly these rows, one per line (pyarrow may parse it as is)

    def __len__(self) -> int:
        return len(self.starts)

    def raw(self, i: int) -> bytes:
        row = self.buf[int(self.starts[i]) : int(self.ends[i])]
        return row if type(row) is bytes else bytes(row)

    @functools.cached_property
    def data(self) -> bytes:
        """:attr:`buf` as ``bytes`` (itself when it is)."""
        return self.buf if type(self.buf) is bytes else bytes(self.buf)

    @classmethod
    def from_block(cls, block: bytes | memoryview,
                   nl: np.ndarray | None = None) -> tuple[Lines, np.ndarray]:
        """Non-blank lines of a JSONL block and their 0-based line numbers in the block;
        ``nl``: the offsets of its line feeds, when known. A memoryview block is read in
        place (see the class docstring)."""
        arr = np.frombuffer(block, dtype=np.uint8)
        if nl is None:
            nl = np.flatnonzero(arr == 10)
        ends = nl if (len(arr) == 0 or arr[-1] == 10) else np.append(nl, len(arr))
        starts = np.concatenate(([0], nl + 1))[: len(ends)]
        cr = (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13) if len(arr) else ends > 0
        ends = ends - cr
        keep = ends > starts
        odd = np.flatnonzero(keep & (arr[np.minimum(starts, max(len(arr) - 1, 0))] != _OPEN))
        for i in odd.tolist():  # whitespace-only lines are blank too
            if not bytes(block[starts[i] : ends[i]]).strip():
                keep[i] = False
        line_no = np.flatnonzero(keep)
        return cls(block, starts[keep], ends[keep], whole=True), line_no

    @classmethod
    def from_payloads(cls, payloads: list[bytes]) -> Lines:
        """One row per payload (an empty payload is a row, and an invalid one)."""
        n = len(payloads)
        lengths = np.fromiter(map(len, payloads), dtype=np.int64, count=n)
        starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])) if n else lengths
        buf = b"\n".join(payloads)
        # n - 1 separators and no more: no payload holds a line break (counted by numpy,
        # several times faster than bytes.count); ``\r`` is a memchr
        breaks = int(np.count_nonzero(np.frombuffer(buf, dtype=np.uint8) == 10))
        whole = breaks == max(n - 1, 0) and b"\r" not in buf
        return cls(buf, starts, starts + lengths, whole)

    def subset(self, idx: np.ndarray) -> Lines:
        if len(idx) == len(self) and self.whole:
            return self
        parts = [self.buf[s:e] for s, e in zip(self.starts[idx].tolist(), self.ends[idx].tolist(),
                                                strict=True)]
        sub = Lines.from_payloads(parts)
        sub.whole = True  # rows passed the screen: no line breaks inside
        return sub

    def without_registry_header(self) -> Lines:
        """These rows with the 5-byte header of a schema registry's JSON serializer cut off
        (Confluent's wire format: a zero byte, a 4-byte schema id, then the JSON object);
        JSON itself never starts with a zero byte, so no other row changes.

        >>> lines = Lines.from_payloads([b"\\x00\\x00\\x00\\x00\\x07{\\"a\\": 1}", b'{"b": 2}'])
        >>> [lines.without_registry_header().raw(i) for i in range(2)]
        [b'{"a": 1}', b'{"b": 2}']
        """
        arr = np.frombuffer(self.buf, dtype=np.uint8)
        s, e = self.starts, self.ends
        framed = e - s > _HEADER
        framed[framed] &= arr[s[framed]] == 0
        if not framed.any():  # every poll but a registry's: one gather and out
            return self
        framed[framed] &= arr[s[framed] + _HEADER] == _OPEN
        if not framed.any():  # zero bytes, but no JSON after them: left for the parsers
            return self
        return Lines(self.buf, np.where(framed, s + _HEADER, s), e, whole=False)

    def screen(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` the block parser may take (see the module docstring)."""
        arr = np.frombuffer(self.buf, dtype=np.uint8)
        starts, ends = self.starts[rows], self.ends[rows]
        if len(rows) == 0:
            return np.zeros(0, bool)
        nonempty = ends > starts
        ok = nonempty.copy()
        ok[nonempty] &= arr[starts[nonempty]] == _OPEN
        ok[nonempty] &= arr[ends[nonempty] - 1] == _CLOSE
        ok &= (ends - starts) <= _MAX_SAFE_LEN
        # a one-byte search is a memchr: cheap when the block has no capital N or I at all
        if int(arr.max(initial=0)) >= 0x80:  # pyarrow lets some invalid UTF-8 through
            for k in np.flatnonzero(ok).tolist():
                try:
                    self.raw(int(rows[k])).decode("utf-8")
                except UnicodeDecodeError:
                    ok[k] = False
        data = self.data
        if (b"N" in data and b"NaN" in data) or (b"I" in data and b"Infinity" in data):
            for k in np.flatnonzero(ok).tolist():
                r = self.raw(int(rows[k]))
                ok[k] = b"NaN" not in r and b"Infinity" not in r
        return ok


@dataclass
class ParsedRows:
    """Raw columns for some rows (indices into the Lines), plus row-level problems."""

    rows: np.ndarray
    columns: dict[str, Any]  # key -> pyarrow array or list of Python values
    problems: Problems


class RowParser:
    """Parses rows to raw columns for a fixed set of paths, learning types as it goes."""

    def __init__(self, fields: Mapping[str, tuple[FieldPath, str]], *, block: bool = True,
                 scan: bool = True) -> None:
        self.fields = dict(fields)
        self._paths = {key: path.parts for key, (path, _) in self.fields.items()}
        self.block = block  # False: every line through orjson (the reference path)
        self.scan = scan  # False: no compiled scanner, pyarrow first
        self.types: dict[str, pa.DataType] = {}
        for key, (_, kind) in self.fields.items():
            if kind == "number" or kind in TIME_COUNTS:
                self.types[key] = pa.float64()
            elif kind == "proba":
                self.types[key] = pa.list_(pa.float64())
            elif kind in ("time:iso", "time:format"):
                self.types[key] = pa.string()
            else:
                self.types[key] = pa.null()  # learnt from the first lines
        self.fast_enabled = self._tree() is not None
        self._learnt = False
        self.fast_rows = 0
        self.slow_rows = 0
        self.scanned_rows = 0
        self._scanner_types: tuple[pa.DataType, ...] | None = None
        self._scanner_built: Scanner | None = None
        #: time fields seen holding numbers in some lines and text in others
        self._mixed: set[str] = set()

    # -- public ---------------------------------------------------------------------------
    def parse(self, lines: Lines) -> list[ParsedRows]:
        """Parse every row; the parts come back in no particular order."""
        n = len(lines)
        rows = np.arange(n)
        scanner = self._scanner()
        if n == 0 or (scanner is None and (not (self.block and self.fast_enabled)
                                          or n < _FEWEST_FOR_BLOCK)):
            return [self._slow(lines, rows)]
        out: list[ParsedRows] = []
        if not self._learnt:
            out.append(self._slow(lines, rows[:_SMALLEST_BLOCK]))
            rows = rows[_SMALLEST_BLOCK:]
            scanner = self._scanner()  # the types just learnt
        if self._mixed and rows.size:
            rows = self._apart(lines, rows, out)  # a mixed time's minority: typed its way
        if scanner is not None and rows.size:
            rows = self._scan(scanner, lines, rows, out)  # the rows it hands back
        if rows.size < _FEWEST_FOR_BLOCK:
            if rows.size:
                out.append(self._slow(lines, rows))
            return out
        ok = lines.screen(rows)
        if (~ok).any():
            out.append(self._slow(lines, rows[~ok]))
        if ok.any():
            self._fast(lines, rows[ok], out)
        return out

    # -- slow path: orjson per line ---------------------------------------------------------
    def slow(self, lines: Lines, rows: np.ndarray) -> ParsedRows:
        """Parse ``rows`` line by line (the reference path)."""
        return self._slow(lines, rows)

    def _slow(self, lines: Lines, rows: np.ndarray) -> ParsedRows:
        n = len(rows)
        self.slow_rows += n
        prob = Problems(n)
        objs: list[Any] = [None] * n
        invalid: dict[int, str] = {}
        not_obj: dict[int, str] = {}
        for k, i in enumerate(rows.tolist()):
            raw = lines.raw(i)
            try:
                o = loads(raw)
            except orjson.JSONDecodeError as exc:
                invalid[k] = "empty payload" if not raw.strip() else (
                    _registry_binary(raw) or str(exc)[:200])
                continue
            if type(o) is dict:
                objs[k] = o
            else:
                not_obj[k] = f"expected a JSON object, found {describe(o)}"
        if invalid:
            m = np.zeros(n, bool)
            m[list(invalid)] = True
            prob.flag(m, "invalid_json", invalid.__getitem__)
        if not_obj:
            m = np.zeros(n, bool)
            m[list(not_obj)] = True
            prob.flag(m, "not_an_object", not_obj.__getitem__)
        cols = extract_paths(objs, self._paths)
        self._learn(cols)
        return ParsedRows(rows, cols, prob)

    def _learn(self, cols: dict[str, list[Any]]) -> None:
        self._learnt = True
        changed = False
        for key, (_, kind) in self.fields.items():
            if not (kind == "any" or kind.startswith("time:")):
                continue
            kinds = {type(v) for v in cols[key] if v is not None}
            if kind.startswith("time:") and str in kinds and kinds & {int, float}:
                self._mixed.add(key)  # numbers and text: each parsed apart (_apart)
            if kind not in ("any", "time:auto"):
                continue
            if key in self._mixed:
                kinds -= {str}  # the numbers type the field; the text lines go apart
            old = self.types[key]
            new = old
            if kinds == {str}:
                new = pa.string()
            elif kinds == {bool}:
                new = pa.bool_()
            elif kinds == {int} and pa.types.is_null(old):
                new = pa.int64()
            elif kinds and kinds <= {int, float}:
                new = pa.float64()
            widen = pa.types.is_null(old) or (pa.types.is_int64(old) and pa.types.is_float64(new))
            if widen and new != old:
                self.types[key] = new
                changed = True
        if changed:
            self.fast_enabled = self._tree() is not None

    # -- a time field of numbers and text: the lines of the other kind apart -----------------
    def _other_types(self) -> dict[str, pa.DataType]:
        """The types with each mixed time field typed the other way: text where it is a
        number, a number where it is text."""
        out = dict(self.types)
        for key in self._mixed:
            out[key] = pa.float64() if pa.types.is_string(out[key]) else pa.string()
        return out

    def _apart(self, lines: Lines, rows: np.ndarray, out: list[ParsedRows]) -> np.ndarray:
        """Parse the ``rows`` whose mixed time field is written the other way as a block of
        their own (:meth:`_other_types`); returns the rest."""
        other = np.zeros(len(lines), bool)
        for key in self._mixed:
            found = _token_rows(lines, self._paths[key][-1],
                                not pa.types.is_string(self.types[key]))
            if found is None:  # a key the byte search cannot find: all go the usual way
                return rows
            other |= found
        take = other[rows]
        if not take.any():
            return rows
        them = rows[take]
        if len(them) < _FEWEST_FOR_BLOCK:
            out.append(self._slow(lines, them))
        else:
            ok = lines.screen(them)
            if (~ok).any():
                out.append(self._slow(lines, them[~ok]))
            if ok.any():
                self._fast(lines, them[ok], out, self._other_types())
        return rows[~take]

    # -- fastest path: the compiled scanner ------------------------------------------------
    def _scanner(self) -> Scanner | None:
        """The scanner for the paths as typed now (built once per set of types)."""
        if not (self.scan and self.block and self.fast_enabled):
            return None
        types = tuple(self.types[key] for key in self.fields)
        if self._scanner_types != types:
            self._scanner_built = scanner_for(self._paths, self.types)
            if self._scanner_built is not None or scanner_settled():  # else: asked again
                self._scanner_types = types
        return self._scanner_built

    def _scan(self, scanner: Scanner, lines: Lines, rows: np.ndarray,
              out: list[ParsedRows]) -> np.ndarray:
        """Scan ``rows``: the rows taken go to ``out``, the rows handed back are returned."""
        taken, cols = scanner.scan(lines.buf, lines.starts[rows], lines.ends[rows])
        if len(taken):
            self.fast_rows += len(taken)
            self.scanned_rows += len(taken)
            out.append(ParsedRows(rows[taken], cols, Problems(len(taken))))
        if len(taken) == len(rows):
            return rows[:0]
        left = np.ones(len(rows), bool)
        left[taken] = False
        return rows[left]

    # -- fast path: pyarrow per block -------------------------------------------------------
    def _tree(self, types: Mapping[str, pa.DataType] | None = None) -> pa.Schema | None:
        tree = path_tree(self._paths, self.types if types is None else types)
        if tree is None:
            return None

        def build(node: dict[str, Any]) -> list[pa.Field]:
            return [pa.field(k, pa.struct(build(v)) if isinstance(v, dict) else v)
                    for k, v in node.items()]

        return pa.schema(build(tree))

    def _fast(self, lines: Lines, rows: np.ndarray, out: list[ParsedRows],
              types: Mapping[str, pa.DataType] | None = None) -> None:
        schema = self._tree(types)
        if schema is None:
            out.append(self._slow(lines, rows))
            return
        sub = lines.subset(rows)
        try:
            longest = int((sub.ends - sub.starts).max())
            table = pj.read_json(
                io.BytesIO(sub.data),
                read_options=pj.ReadOptions(block_size=max(1 << 20, 2 * longest + 2),
                                          use_threads=len(sub.buf) > _THREADED_BYTES),
                parse_options=pj.ParseOptions(
                    explicit_schema=schema, unexpected_field_behavior="ignore"
                ),
            )
            if table.num_rows != len(rows):
                raise pa.ArrowInvalid("row count differs from line count")
        except pa.ArrowException:
            if len(rows) <= _SMALLEST_BLOCK:
                out.append(self._slow(lines, rows))
            else:
                half = len(rows) // 2
                self._fast(lines, rows[:half], out, types)
                self._fast(lines, rows[half:], out, types)
            return
        self.fast_rows += len(rows)
        cols = {key: _column(table, path.parts) for key, (path, _) in self.fields.items()}
        out.append(ParsedRows(rows, cols, Problems(len(rows))))


#: A key the byte search finds as written: no character JSON may escape
_PLAIN_KEY = re.compile(r"[ -!#-\[\]-~]+")


def _token_rows(lines: Lines, key: str, text: bool) -> np.ndarray | None:
    """Which rows hold ``"key":`` followed by text (``text``) or else a number, found in
    the raw bytes (a guess: the same key may sit at another depth); None for a key that
    may be written escaped."""
    if not _PLAIN_KEY.fullmatch(key):
        return None
    first = rb'"' if text else rb"[-0-9]"
    found = re.compile(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*' + first)
    at = np.fromiter((m.start() for m in found.finditer(lines.buf)), dtype=np.int64)
    hit = np.zeros(len(lines), bool)
    if len(at) and len(lines):
        order = np.argsort(lines.starts, kind="stable")  # rows in the order of the buffer
        k = np.searchsorted(lines.starts[order], at, side="right") - 1
        keep = k >= 0
        at, row = at[keep], order[k[keep]]
        hit[row[at < lines.ends[row]]] = True
    return hit


def extract_paths(objs: list[Any], paths: dict[str, tuple[str, ...]]) -> dict[str, list[Any]]:
    """Every path's values in ``objs`` (dicts, or None for a row that has none), as the
    line-by-line path reads them; paths sharing a first key share one lookup of it."""
    groups: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for key, parts in paths.items():
        groups.setdefault(parts[0], []).append((key, parts[1:]))
    out: dict[str, list[Any]] = {}
    for first, members in groups.items():
        top = [o.get(first) if o is not None else None for o in objs]
        for key, rest in members:
            out[key] = top if not rest else _descend(top, rest)
    return out


def _descend(values: list[Any], parts: tuple[str, ...]) -> list[Any]:
    for p in parts:
        values = [v.get(p) if type(v) is dict else None if v is None else BAD_PARENT
                  for v in values]
    return values


def _column(table: pa.Table, parts: tuple[str, ...]) -> pa.Array:
    col = table.column(parts[0]).combine_chunks()
    for p in parts[1:]:
        col = pc.struct_field(col, [col.type.get_field_index(p)])
    return col


def _registry_binary(raw: bytes) -> str | None:
    """What a schema registry's binary value (Avro, Protobuf) is, for its dead letter."""
    if len(raw) < _HEADER or raw[0] != 0:
        return None
    schema_id = int.from_bytes(raw[1:_HEADER], "big")
    return (f"a schema-registry value (zero byte, schema id {schema_id}) that is not JSON: "
            "Avro or Protobuf, which driftwatch does not read; publish JSON (values of the "
            "registry's JSON Schema serializer are read)")


def registry_json(payload: Any) -> Any:
    """One value without a schema registry's JSON-serializer header (see
    :meth:`Lines.without_registry_header`); any other value as it is.

    >>> registry_json(b"\\x00\\x00\\x00\\x00\\x01{}"), registry_json(b"{}")
    (b'{}', b'{}')
    """
    if (isinstance(payload, bytes | bytearray | memoryview) and len(payload) > _HEADER
            and payload[0] == 0 and payload[_HEADER] == _OPEN):
        return payload[_HEADER:]
    return payload
