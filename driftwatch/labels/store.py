"""Columnar rows keyed by ``uint64``, for bulk insert, lookup and delete without Python
objects per row.

Rows are appended in arrival order to typed columns with an ``alive`` mask; a
:class:`~driftwatch.labels.hashindex.HashIndex` maps each key to its row, so a lookup costs
a few vectorised probes whatever the store holds.

Predictions arrive in (nearly) event-time order, so a ``time`` column gets a FIFO:
the store keeps the running maximum of ``time`` in arrival order, and the few rows that
arrived *late* (older than a row before them). The ``count`` oldest rows are then among
the first ``count`` rows in arrival order plus the late ones, and the rows below a time
are a prefix plus late ones: :meth:`~KeyStore.evict_oldest` and
:meth:`~KeyStore.pop_where_below` look only there, instead of sorting every row on every
call. Other columns are searched whole. Dead rows are dropped (and the rows put back in
time order) when they outnumber the live ones or the columns are full; the columns then
grow to twice the live rows. Memory is at most twice the live rows' bytes (columns, plus 9
bytes per row for ``alive`` and the running maximum) and 24 to 96 bytes per key for the
index.

>>> import numpy as np
>>> s = KeyStore({"t": np.float64})
>>> s.insert(np.array([5, 1, 9], dtype=np.uint64), {"t": np.array([50.0, 10.0, 90.0])})
>>> found, rows = s.pop(np.array([9, 7], dtype=np.uint64))
>>> found.tolist(), rows["t"].tolist(), len(s)
([True, False], [90.0], 2)
>>> s.evict_oldest(1, "t")["t"].tolist(), len(s)
([10.0], 1)
>>> KeyStore.from_dict(s.to_dict()).to_dict() == s.to_dict()
True
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import numpy as np

from driftwatch.errors import StateError
from driftwatch.labels.hashindex import HashIndex
from driftwatch.statetree import Appended, Capture, new_table_id

__all__ = ["KeyStore"]

#: The column a payload written before rows were kept in arrival order is put back in.
_TIME = "time"


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def _union_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two ascending arrays of distinct rows (``np.union1d``, without
    sorting ``a`` again: ``b``, the few late rows, is merged into it)."""
    if not b.size:
        return a
    pos = np.searchsorted(a, b)
    new = pos >= a.size
    new[~new] = a[pos[~new]] != b[~new]
    return np.insert(a, pos[new], b[new])


class KeyStore:
    """Rows with unique ``uint64`` keys and typed columns (see the module docstring)."""

    def __init__(self, columns: Mapping[str, Any]) -> None:
        self.dtypes = {k: np.dtype(v).newbyteorder("<") for k, v in columns.items()}
        self._index = HashIndex()
        self._keys = np.zeros(0, dtype=np.uint64)
        self._cols = {k: np.zeros(0, dtype=dt) for k, dt in self.dtypes.items()}
        self._live = np.zeros(0, dtype=bool)
        self._n = 0  # rows appended (live or dead)
        self._head = 0  # rows before it are all dead
        self._alive = 0
        self._fifo = _TIME in self.dtypes and self.dtypes[_TIME].kind == "f"
        self._cummax = np.zeros(0)  # running maximum of time, in arrival order
        self._late = np.zeros(0, dtype=np.int64)  # rows with time below that maximum (or NaN)
        self._table = new_table_id()  # checkpoints number rows in order of insertion
        self._seqno = np.zeros(0, dtype=np.int64)  # each row's number in that order
        self._next_seqno = 0

    def __len__(self) -> int:
        return self._alive

    def __repr__(self) -> str:
        return f"KeyStore(rows={self._alive}, dead={self._n - self._alive})"

    # -- writes ----------------------------------------------------------------------------
    def insert(self, keys: np.ndarray, cols: Mapping[str, np.ndarray]) -> None:
        """Add rows; the caller guarantees their keys are unique and not already alive."""
        keys = np.asarray(keys, dtype=np.uint64)
        n = keys.size
        if n == 0:
            return
        if self._n + n > self._keys.size:  # full: drop dead rows first, grow if need be
            if self._alive < self._n or self._late.size:  # else compacting changes nothing
                self.compact()
            if self._n + n > self._keys.size:
                self._grow(2 * (self._n + n))
        a, b = self._n, self._n + n
        self._keys[a:b] = keys
        self._seqno[a:b] = self._next_seqno + np.arange(n)
        self._next_seqno += n
        for k, dt in self.dtypes.items():
            self._cols[k][a:b] = np.asarray(cols[k], dtype=dt)
        if self._fifo:
            self._note_times(a, b)
        self._live[a:b] = True
        self._index.insert(keys, np.arange(a, b, dtype=np.int64))
        self._n = b
        self._alive += n

    def _note_times(self, a: int, b: int) -> None:
        t = self._cols[_TIME][a:b]
        prev = self._cummax[a - 1] if a else -np.inf
        run = np.fmax.accumulate(np.concatenate(([prev], t)))[1:]
        self._cummax[a:b] = run
        late = ~(t >= run)  # older than a row before it, or NaN
        if late.any():
            self._late = np.concatenate((self._late, a + np.flatnonzero(late)))

    def _grow(self, need: int) -> None:
        """Columns of ``max(need, 1024)`` rows, the first ``_n`` copied: the rest is left
        unwritten (only ``alive``, zeroed, is read past ``_n``), so a restore or a growth
        costs the rows held, not the room made."""
        cap, n = max(need, 1024), self._n

        def grown(a: np.ndarray) -> np.ndarray:
            out = np.empty(cap, dtype=a.dtype)
            out[:n] = a[:n]
            return out

        self._keys, self._seqno = grown(self._keys), grown(self._seqno)
        self._cols = {k: grown(v) for k, v in self._cols.items()}
        self._cummax = grown(self._cummax)
        live = np.zeros(cap, dtype=bool)
        live[:n] = self._live[:n]
        self._live = live

    def compact(self) -> None:
        """Drop deleted rows and renumber the index; rows go back in time order."""
        keep = np.flatnonzero(self._live[: self._n])
        in_order = not self._late.size  # every row at or above the rows before it
        if self._fifo and not in_order:
            keep = keep[np.argsort(self._cols[_TIME][keep], kind="stable")]
        mapping = np.full(self._n, -1, dtype=np.int64)
        mapping[keep] = np.arange(keep.size)
        self._index.renumber(mapping)
        m = keep.size
        self._keys[:m] = self._keys[keep]
        for v in self._cols.values():
            v[:m] = v[keep]
        self._live[:m] = True
        self._live[m : self._n] = False
        self._seqno[:m] = self._seqno[keep]
        self._n, self._head = m, 0
        if self._fifo and in_order:  # kept rows of a non-decreasing column: their own maximum
            self._cummax[:m] = self._cols[_TIME][:m]
        elif self._fifo:
            self._late = np.zeros(0, dtype=np.int64)
            self._note_times(0, m)

    def _column(self, name: str) -> np.ndarray:
        return self._keys if name == "key" else self._cols[name]

    def _kill(self, rows: np.ndarray) -> None:
        self._live[rows] = False
        self._alive -= int(rows.size)
        if self._head < self._n and not self._live[self._head]:
            rest = self._live[self._head : self._n]
            self._head += int(np.argmax(rest)) if rest.any() else rest.size
        if self._n - self._alive > max(self._alive, 1024):
            self.compact()

    # -- reads -----------------------------------------------------------------------------
    def contains(self, keys: np.ndarray) -> np.ndarray:
        return self._index.contains(keys)

    def live_keys(self) -> np.ndarray:
        """The keys of the rows held, in row order."""
        return self._keys[self._live_rows()]

    def _rows_of(self, rows: np.ndarray, *, key: bool = False) -> dict[str, np.ndarray]:
        out = {"key": self._keys[rows]} if key else {}
        out.update({k: v[rows] for k, v in self._cols.items()})
        return out

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``found[len(keys)]`` and the found rows' columns, in query order."""
        rows = self._index.lookup(np.asarray(keys, dtype=np.uint64))
        found = rows >= 0
        return found, self._rows_of(rows[found])

    def pop(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Like :meth:`get`, and delete the found rows."""
        before = len(self._index)
        rows = self._index.remove(np.asarray(keys, dtype=np.uint64))
        found = rows >= 0
        hit = rows[found]
        out = self._rows_of(hit)
        if before - len(self._index) != hit.size:  # a key asked twice: its row dies once
            hit = np.unique(hit)
        self._kill(hit)
        return found, out

    def _take(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Delete and return these (live) rows, with their keys."""
        out = self._rows_of(rows, key=True)
        self._index.remove(out["key"])
        self._kill(rows)
        return out

    def _late_live(self) -> np.ndarray:
        """Late rows still alive (and the list trimmed to them)."""
        if self._late.size:
            self._late = self._late[self._live[self._late]]
        return self._late

    def pop_where_below(self, column: str, limit: float) -> dict[str, np.ndarray]:
        """Delete and return the rows whose ``column`` is below ``limit`` (plus ``key``)."""
        a, b = self._head, self._n
        col = self._cols[column]
        if column == _TIME and self._fifo:  # a prefix in arrival order, and late rows
            cut = a + int(np.searchsorted(self._cummax[a:b], limit, side="left"))
            late = self._late_live()
            late = late[late >= cut]
            rows = np.concatenate((a + np.flatnonzero(self._live[a:cut]), late))
        else:
            rows = a + np.flatnonzero(self._live[a:b])
        rows = rows[col[rows] < limit]
        if not rows.size:  # the common case (a TTL checked every poll): no index work
            return self._rows_of(rows, key=True)
        return self._take(np.sort(rows))

    def evict_oldest(self, count: int, column: str) -> dict[str, np.ndarray]:
        """Delete and return the ``count`` rows with the smallest ``column`` values."""
        count = min(count, self._alive)
        if count <= 0:
            return self._take(np.zeros(0, dtype=np.int64))
        a, b = self._head, self._n
        if column == _TIME and self._fifo:  # the first rows in arrival order, and late ones
            span = count
            while True:
                first = a + np.flatnonzero(self._live[a : min(a + span, b)])
                if first.size >= count or a + span >= b:
                    break
                span *= 2
            cand = _union_sorted(first[:count], self._late_live())
        else:
            cand = a + np.flatnonzero(self._live[a:b])
        if count < cand.size:
            cand = np.sort(cand[np.argpartition(self._cols[column][cand], count - 1)[:count]])
        return self._take(cand)

    # -- persistence -----------------------------------------------------------------------
    def _live_rows(self) -> np.ndarray:
        return self._head + np.flatnonzero(self._live[self._head : self._n])

    def _numbered(self, a: int, b: int) -> dict[str, np.ndarray]:
        """Rows numbered ``[a, b)`` in insertion order: the live ones, zeros for rows
        deleted since (the checkpoint's ``order`` never names those)."""
        rows = self._live_rows()
        rows = rows[self._seqno[rows] >= a]
        at = self._seqno[rows] - a
        cols = {"key": self._keys, **self._cols}
        if rows.size == b - a and bool((np.diff(at) > 0).all()):  # every row, in order
            if rows.size and int(rows[-1]) - int(rows[0]) == rows.size - 1:  # one slice
                r0 = int(rows[0])
                return {k: v[r0 : r0 + rows.size].copy() for k, v in cols.items()}
            return {k: v[rows] for k, v in cols.items()}
        out = {k: np.zeros(b - a, v.dtype) for k, v in cols.items()}
        for k, v in cols.items():
            out[k][at] = v[rows]
        return out

    def to_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """JSON-safe: alive rows in arrival order, each column as base64 little-endian bytes.

        With a ``capture`` (a binary checkpoint): rows numbered in insertion order, from
        the oldest live one on, as an append-only table (only rows the checkpoint store
        lacks are copied), and ``live``, the numbers of the live rows in arrival order."""
        if capture is not None:
            live = self._seqno[self._live_rows()]
            lo = int(live.min()) if live.size else self._next_seqno
            return {
                "n": self._alive, "order": "arrival",
                "dtypes": {k: dt.str for k, dt in self.dtypes.items()},
                "rows": Appended.capture(capture, self._table, lo, self._next_seqno,
                                         self._numbered),
                "live": live,
            }
        rows = self._head + np.flatnonzero(self._live[self._head : self._n])
        return {
            "n": int(rows.size),
            "order": "arrival",
            "dtypes": {k: dt.str for k, dt in self.dtypes.items()},
            "key": _b64(self._keys[rows].astype("<u8")),
            "cols": {k: _b64(v[rows].astype(self.dtypes[k])) for k, v in self._cols.items()},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KeyStore:
        """Read :meth:`to_dict`; also the older payload whose rows are sorted by key, which
        is put back in ``time`` order when it has that column."""
        store = cls({k: np.dtype(v) for k, v in d["dtypes"].items()})
        if isinstance(d.get("rows"), Appended):
            store._restore(d["rows"], d["live"])
            if store._alive != int(d["n"]):
                raise StateError("key store: live rows do not match their count")
            return store
        keys = np.frombuffer(base64.b64decode(d["key"]), dtype="<u8").astype(np.uint64)
        cols = {
            k: np.frombuffer(base64.b64decode(v), dtype=store.dtypes[k]).copy()
            for k, v in d["cols"].items()
        }
        if keys.size != int(d["n"]) or any(c.size != keys.size for c in cols.values()):
            raise StateError("key store: column lengths do not match")
        if set(cols) != set(store.dtypes):
            raise StateError("key store: columns do not match their dtypes")
        if d.get("order") != "arrival" and _TIME in cols:
            order = np.argsort(cols[_TIME], kind="stable")
            keys, cols = keys[order], {k: v[order] for k, v in cols.items()}
        store.insert(keys, cols)
        return store

    def _restore(self, t: Appended, live: np.ndarray) -> None:
        """The live rows in their arrival order, numbered as when they were captured, so
        the next checkpoint appends to the same table."""
        if set(t.columns) != {"key", *self.dtypes}:
            raise StateError("key store: columns do not match their dtypes")
        live = np.asarray(live, dtype=np.int64)
        if live.size and (live.min() < t.start or live.max() >= t.stop):
            raise StateError("key store: live rows outside the stored table")
        at = live - t.start
        m = at.size
        self._grow(2 * m)  # room to insert as much again before a compaction
        # rows still held in the order they were numbered (the common case: rows leave
        # oldest first) are one slice of each column; others are gathered
        lo = int(at[0]) if m else 0
        run = m > 0 and int(at[-1]) - lo == m - 1 and bool((np.diff(at) > 0).all())
        for k, dt in {"key": np.dtype(np.uint64), **self.dtypes}.items():
            col, out = np.asarray(t.columns[k], dtype=dt), self._column(k)[:m]
            if run:
                out[:] = col[lo : lo + m]
            else:
                np.take(col, at, out=out)
        self._seqno[:m] = live
        self._live[:m] = True
        self._n, self._head, self._alive = m, 0, m
        if self._fifo:
            self._note_times(0, m)
        self._index = HashIndex(2 * m)  # sized once: no rebuild while the keys go in
        self._index.insert(self._keys[:m], np.arange(m, dtype=np.int64))
        self._next_seqno = t.stop
        self._table = t.table
