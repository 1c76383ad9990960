"""The compiled JSON line scanner: mapped paths straight into Arrow columns, one pass.

For the lines of a block it gives the same columns ``pyarrow.json`` gives with the
mapped paths as its explicit schema (a float, integer, text, boolean or still-unknown
column per path), but it walks each line once in compiled code, releasing the GIL,
and builds nothing else: no table, no struct columns, no Python object per value. A
line it cannot take exactly as orjson would (see :mod:`driftwatch.connectors._scanloops`)
is handed back for the block parser or orjson to read; the result never depends on
which parser took a line.

It runs where numba does (``DRIFTWATCH_KERNEL``, :mod:`driftwatch.numba_setup`), once its
loops have loaded on a background thread (see :data:`_LOOPS`); until then, and without
numba, :func:`scanner_for` gives ``None`` and blocks go to ``pyarrow.json`` as before.

>>> import numpy as np, pyarrow as pa
>>> sc = scanner_for({"id": ("id",), "x": ("a", "x")}, {"id": pa.string(), "x": pa.float64()},
...                  wait=True)
>>> if sc is not None:  # numba installed
...     buf = b'{"id": "e1", "a": {"x": 2.5}}\\n{"id": "e2", "a": null}\\n{"id": 3}'
...     ends = np.array([i for i, b in enumerate(buf) if b == 10] + [len(buf)])
...     taken, cols = sc.scan(buf, np.r_[0, ends[:-1] + 1], ends)
...     assert taken.tolist() == [0, 1] and cols["x"].to_pylist() == [2.5, None]
...     assert cols["id"].to_pylist() == ["e1", "e2"]  # line 3's id is not text: handed back
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from driftwatch.cores import usable_cores
from driftwatch.numba_setup import LoadedLater

__all__ = ["PART_LINES", "ScanColumns", "Scanner", "finish_scanner_load", "fnv1a",
           "leave_cores", "line_finder", "load_scanner_ahead", "path_tree", "scan_pool",
           "scan_threads", "scanner_for", "scanner_settled"]



# the smallest block of every kind of column: loading the loops runs each signature once
_WARM_UP = (b'{"t": "a", "f": 1.5, "i": 2, "b": true, "n": null}',
            {"t": ("t",), "f": ("f",), "i": ("i",), "b": ("b",), "n": ("n",)},
            {"t": pa.string(), "f": pa.float64(), "i": pa.int64(), "b": pa.bool_(),
             "n": pa.null()})


def _load() -> ModuleType:
    from driftwatch.connectors import _scanloops as loops
    from driftwatch.connectors import _spanloops

    line, paths, types = _WARM_UP
    built = _build(loops, paths, types)
    assert built is not None
    _, cols = built.scan(line, np.zeros(1, np.int64), np.array([len(line)], np.int64))
    # and the loops that read a batch straight from a scan's text spans
    _spanloops.warm_up(cols.buf, *cols.spans("t"), cols.valid("t"))
    # and the one that finds a file's line ends, on a mapping's bytes and a read buffer's
    from driftwatch.connectors import _lineloops

    for held in (np.frombuffer(line, np.uint8), np.frombuffer(bytearray(line), np.uint8)):
        _lineloops.line_ends(held, 0, held.size, np.empty(held.size, np.int64))
    return loops


#: The loops, loaded in the background (see :class:`~driftwatch.numba_setup.LoadedLater`);
#: until they run, blocks go to the other parsers, which give the same batches.
_LOOPS = LoadedLater("JSON scanner", _load)


def load_scanner_ahead() -> None:
    """Start loading the scanner's loops now, on their thread, for a process that will
    fork a reader (:mod:`~driftwatch.connectors.file_process`), which waits for them
    (:func:`finish_scanner_load`) so that its child has them from its first block: forked
    without them, the child loaded them itself and decoded its first blocks on the slower
    path meanwhile."""
    _LOOPS.get(False)


def finish_scanner_load() -> None:
    """Wait for a load of the scanner's loops under way (see
    :meth:`~driftwatch.numba_setup.LoadedLater.finish`); none started: nothing."""
    _LOOPS.finish()


def scanner_settled() -> bool:
    """True once :func:`scanner_for` gives its final answer for a set of types: numba off,
    or the loops loaded (or failed to)."""
    return _LOOPS.settled()


def line_finder() -> Any:
    """The compiled line-end loop (:func:`driftwatch.connectors._lineloops.line_ends`),
    loaded with the scanner's loops; ``None`` where they are not (yet) loaded."""
    if _LOOPS.get(False) is None:
        return None
    from driftwatch.connectors import _lineloops

    return _lineloops.line_ends


def scanner_for(paths: Mapping[str, tuple[str, ...]], types: Mapping[str, pa.DataType], *,
                wait: bool = False) -> Scanner | None:
    """A scanner for ``paths`` (key -> path parts) read as ``types``; ``None`` without
    numba, while its loops load (``wait`` waits for them), for a type it does not build
    (a list), or where two paths clash (one is the other's parent, or the same path with
    two types)."""
    loops = _LOOPS.get(wait)
    return None if loops is None else _build(loops, paths, types)


def path_tree(paths: Mapping[str, tuple[str, ...]],
              types: Mapping[str, pa.DataType]) -> dict[str, Any] | None:
    """The mapped paths as nested dicts whose leaves are their types, or ``None`` where two
    clash: a path that is another's parent, or one path with two types.

    >>> path_tree({"a": ("x", "a"), "b": ("x", "b")}, {"a": pa.string(), "b": pa.string()})
    {'x': {'a': DataType(string), 'b': DataType(string)}}
    >>> path_tree({"a": ("x",), "b": ("x", "b")}, {"a": pa.string(), "b": pa.string()})
    """
    tree: dict[str, Any] = {}
    for key, parts in paths.items():
        node = tree
        for part in parts[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                return None
            node = nxt
        leaf = parts[-1]
        if leaf in node and (isinstance(node[leaf], dict) or node[leaf] != types[key]):
            return None
        node[leaf] = types[key]
    return tree


def _build(loops: ModuleType, paths: Mapping[str, tuple[str, ...]],
           types: Mapping[str, pa.DataType]) -> Scanner | None:
    kind_of = {pa.float64(): loops.K_FLOAT, pa.int64(): loops.K_INT,
               pa.string(): loops.K_TEXT, pa.bool_(): loops.K_BOOL, pa.null(): loops.K_NULL}
    tree = path_tree(paths, types)
    if tree is None or any(t not in kind_of for t in types.values()):
        return None
    col_of: dict[str, int] = {}
    col_at: dict[tuple[str, ...], int] = {}  # one column per path, whatever keys name it
    kinds: list[int] = []
    for key, parts in paths.items():
        if parts not in col_at:
            col_at[parts] = len(kinds)
            kinds.append(kind_of[types[key]])
            node = tree
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = col_at[parts]  # the leaf: its column instead of its type
        col_of[key] = col_at[parts]
    return Scanner(loops, tree, col_of, np.array(kinds, dtype=np.int64))


class Scanner:
    """Reads one fixed set of paths; built by :func:`scanner_for`."""

    def __init__(self, loops: ModuleType, tree: dict[str, Any], col_of: dict[str, int],
                 kinds: np.ndarray) -> None:
        self._loops = loops
        self._col_of = col_of
        self._kinds = kinds
        self._tree = _flatten(tree)
        self._text = kinds == loops.K_TEXT
        self._int = kinds == loops.K_INT
        self._fv_cols = ~self._text & ~self._int  # doubles, booleans (and unknown: unused)
        self._slots = np.zeros(len(kinds), np.int64)
        for group in (self._text, self._int, self._fv_cols):
            self._slots[group] = np.arange(int(group.sum()))
        self._text_cols = np.flatnonzero(self._text).astype(np.int64)  # by text slot

    def scan(self, buf: bytes, starts: np.ndarray,
             ends: np.ndarray) -> tuple[np.ndarray, ScanColumns]:
        """Scan the lines ``buf[starts[i]:ends[i]]``: the indices of the lines taken, and
        each key's column over those lines, in order (built when first read).

        A block of many lines is cut into parts scanned at once on :func:`scan_pool`'s
        threads (the loop releases the GIL); the parts' rows are then put back end to end,
        so the columns are the same however many parts there were."""
        n = len(starts)
        arr = np.frombuffer(buf, dtype=np.uint8)
        # a row per line: a line's cells are written side by side
        fv = np.empty((n, int(self._fv_cols.sum())))
        iv = np.empty((n, int(self._int.sum())), dtype=np.int64)
        s0 = np.empty((n, int(self._text.sum())), dtype=np.int64)
        s1 = np.empty_like(s0)
        valid = np.empty((n, len(self._kinds)), dtype=np.uint8)
        taken = np.empty(n, dtype=np.int64)
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        outs = (fv, iv, s0, s1, valid, taken)

        def part(a: int, b: int) -> int:
            return int(self._loops.scan(arr, starts[a:b], ends[a:b], self._tree, self._kinds,
                                        self._slots, *(o[a:b] for o in outs)))

        cuts = _cuts(n)
        if len(cuts) == 2:
            k = part(0, n)
        else:
            pool = scan_pool()
            later = [pool.submit(part, a, b) for a, b in itertools.pairwise(cuts[1:])]
            got = [part(0, cuts[1]), *(f.result() for f in later)]
            k = got[0]
            for a, m in zip(cuts[1:-1], got[1:], strict=True):  # rows taken, end to end
                for o in outs:
                    o[k : k + m] = o[a : a + m]
                taken[k : k + m] += a
                k += m
        return taken[:k], ScanColumns(self, arr, k, fv, iv, s0, s1, valid)

    def _column(self, c: int, k: int, fv: np.ndarray, iv: np.ndarray,
                text: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
                valid: np.ndarray) -> pa.Array:
        loops, kind, slot = self._loops, int(self._kinds[c]), int(self._slots[c])
        if kind == loops.K_NULL:
            return pa.nulls(k)
        nulls = k - int(np.count_nonzero(valid))
        bitmap = None if nulls == 0 else pa.py_buffer(np.packbits(valid, bitorder="little"))
        if kind == loops.K_TEXT:
            assert text is not None
            everything, at, all_offsets = text
            data = everything[at[slot] : at[slot + 1]]
            offsets = all_offsets[slot]
            typ = pa.string()
            if len(data) < 2**31:  # Arrow's text: 32-bit offsets
                offsets = offsets.astype(np.int32)
            else:
                typ = pa.large_string()
            return pa.Array.from_buffers(typ, k, [bitmap, pa.py_buffer(offsets),
                                                  pa.py_buffer(data)], null_count=nulls)
        if kind == loops.K_BOOL:
            bits = np.packbits(fv[:k, slot] != 0, bitorder="little")
            return pa.Array.from_buffers(pa.bool_(), k, [bitmap, pa.py_buffer(bits)],
                                         null_count=nulls)
        values = iv[:k, slot] if kind == loops.K_INT else fv[:k, slot]
        typ = pa.int64() if kind == loops.K_INT else pa.float64()
        return pa.Array.from_buffers(typ, k, [bitmap, pa.py_buffer(np.ascontiguousarray(values))],
                                     null_count=nulls)


class ScanColumns(Mapping[str, pa.Array]):
    """The columns of the lines a scan took, by key: each an Arrow array built the first
    time it is asked for (every text column's bytes gathered at the first text one), so a
    reader of the scan's own arrays (:meth:`kind`, :meth:`values`, :meth:`valid`,
    :meth:`spans`) pays for no Arrow array it does not read."""

    def __init__(self, scanner: Scanner, buf: np.ndarray, n: int, fv: np.ndarray,
                 iv: np.ndarray, s0: np.ndarray, s1: np.ndarray, valid: np.ndarray) -> None:
        self._scanner = scanner
        #: the scanned block's bytes (text spans index them)
        self.buf = buf
        self.n = n
        self._fv, self._iv, self._s0, self._s1 = fv[:n], iv[:n], s0[:n], s1[:n]
        self._valid = valid[:n]
        self._text: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._built: dict[int, pa.Array] = {}

    def __getitem__(self, key: str) -> pa.Array:
        c = self._scanner._col_of[key]
        if c not in self._built:
            sc = self._scanner
            if self._text is None and sc._text[c]:
                # every text column's bytes, gathered in one pass over the rows
                offsets = np.empty((self._s0.shape[1], self.n + 1), dtype=np.int64)
                data, at = sc._loops.gather_texts(self.buf, self._s0, self._s1, self._valid,
                                                  sc._text_cols, self.n, offsets)
                self._text = (data, at, offsets)
            self._built[c] = sc._column(c, self.n, self._fv, self._iv, self._text,
                                        np.ascontiguousarray(self._valid[:, c]))
        return self._built[c]

    def __contains__(self, key: object) -> bool:
        return key in self._scanner._col_of

    def __iter__(self) -> Iterator[str]:
        return iter(self._scanner._col_of)

    def __len__(self) -> int:
        return len(self._scanner._col_of)

    def kind(self, key: str) -> int:
        """The key's column kind (``_scanloops.K_FLOAT``, ``K_INT``, ``K_TEXT``, ...)."""
        return int(self._scanner._kinds[self._scanner._col_of[key]])

    def valid(self, key: str) -> np.ndarray:
        """Which rows hold a value for the key (the others are null or absent), as bytes
        0/1."""
        return np.ascontiguousarray(self._valid[:, self._scanner._col_of[key]])

    def values(self, key: str) -> np.ndarray:
        """A number or boolean column's values (only where :meth:`valid`)."""
        sc = self._scanner
        c = sc._col_of[key]
        table = self._iv if sc._kinds[c] == sc._loops.K_INT else self._fv
        return table[:, sc._slots[c]]

    def text_table(self, keys: list[str]) -> tuple[np.ndarray, ...]:
        """The scan's own tables for text columns ``keys``, for a loop that reads them
        in one pass: ``(starts, ends, valid, slots, at)``, where key ``k``'s spans are
        column ``slots[k]`` of ``starts`` and ``ends`` (a row per line) and its
        :meth:`valid` column ``at[k]`` of ``valid``."""
        sc = self._scanner
        cols = [sc._col_of[key] for key in keys]
        return (self._s0, self._s1, self._valid, sc._slots[cols],
                np.array(cols, dtype=np.int64))

    def spans(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """A text column's ``(starts, ends)`` in :attr:`buf` (only where :meth:`valid`),
        each contiguous: the compiled loops that read them take one layout."""
        slot = self._scanner._slots[self._scanner._col_of[key]]
        return (np.ascontiguousarray(self._s0[:, slot]),
                np.ascontiguousarray(self._s1[:, slot]))


#: Lines a scan part holds at least: fewer are scanned in one go (a thread's hand-off
#: costs tens of microseconds, a line about one)
PART_LINES = 2048


_here = threading.local()


def leave_cores(n: int) -> None:
    """Scans on the calling thread leave ``n`` cores to other busy threads: a file's
    read-ahead thread leaves one to the loop judging the windows, which a scan in parts
    would otherwise slow down on a machine of two cores."""
    _here.left = n


def _cuts(n: int) -> list[int]:
    """Where a block of ``n`` lines is cut into parts, one per core the calling thread may
    use (at most four; see :func:`leave_cores`).

    >>> _cuts(100), len(_cuts(10**6)) - 1 == min(scan_threads(), 4)
    ([0, 100], True)
    """
    cores = scan_threads() - getattr(_here, "left", 0)
    parts = max(1, min(cores, 4, n // PART_LINES))
    return [n * i // parts for i in range(parts + 1)]


@functools.cache
def scan_threads() -> int:
    """The cores this process may run on (:func:`~driftwatch.cores.usable_cores`, once)."""
    return usable_cores()


@functools.cache
def scan_pool() -> Any:
    """The threads that scan a block's later parts (daemon threads, started on first use)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=min(scan_threads(), 4) - 1 or 1,
                              thread_name_prefix="driftwatch-scan")


def fnv1a(raw: bytes) -> int:
    """64-bit FNV-1a, as the scanner's loops hash a key's bytes (``_scanloops._key``)."""
    h = 0xCBF29CE484222325
    for b in raw:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _flatten(tree: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """The path tree as arrays, breadth first. Node ``i``'s children are found through
    its hash table ``htab[hoff[i]:hoff[i] + hmask[i] + 1]`` (child indices, -1 empty, by
    :func:`fnv1a` of the name); child ``c`` is named ``keys[koff[c]:koff[c] + klen[c]]``
    (UTF-8) and is either node ``cnode[c]`` or column ``ccol[c]`` (the other is -1).

    Each name in ``keys`` is followed by a quote, and eight zero bytes end them: the
    scanner compares a key and its closing quote at once, eight bytes at a time."""
    nodes = [tree]
    hoff: list[int] = []
    hmask: list[int] = []
    htab: list[int] = []
    koff: list[int] = []
    klen: list[int] = []
    cnode: list[int] = []
    ccol: list[int] = []
    keys = bytearray()
    i = 0
    while i < len(nodes):
        size = 1 << max(1, (2 * len(nodes[i])).bit_length())  # at most half full
        table = [-1] * size
        for name, sub in nodes[i].items():
            raw = name.encode()
            slot = fnv1a(raw) & (size - 1)
            while table[slot] >= 0:
                slot = (slot + 1) & (size - 1)
            table[slot] = len(koff)
            koff.append(len(keys))
            klen.append(len(raw))
            keys += raw + b'"'
            if isinstance(sub, dict):
                cnode.append(len(nodes))
                ccol.append(-1)
                nodes.append(sub)
            else:
                cnode.append(-1)
                ccol.append(sub)
        hoff.append(len(htab))
        hmask.append(size - 1)
        htab += table
        i += 1
    as_int = functools.partial(np.array, dtype=np.int64)
    return (as_int(hoff), as_int(hmask), as_int(htab), as_int(koff), as_int(klen),
            np.frombuffer(bytes(keys) + bytes(8), dtype=np.uint8).copy(), as_int(cnode),
            as_int(ccol))
