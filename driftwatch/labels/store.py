"""Columnar rows keyed by ``uint64``, for bulk insert, lookup and delete without Python
objects per row.

Rows live in a few *runs*, each sorted by key with an ``alive`` mask (a log-structured
merge): a batch becomes a new run, and the newest runs are merged while a run is no more
than twice the size of the one after it, so there are ``O(log n)`` runs and every row is
re-sorted ``O(log n)`` times. A lookup is one ``searchsorted`` per run; a delete clears
``alive``; runs are compacted when half of the rows are dead. Memory is the columns'
bytes plus one byte per row for ``alive``.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.errors import StateError

__all__ = ["KeyStore"]


@dataclass
class _Run:
    keys: np.ndarray  # uint64, sorted, unique among alive rows
    cols: dict[str, np.ndarray]
    alive: np.ndarray  # bool

    @property
    def n_alive(self) -> int:
        return int(np.count_nonzero(self.alive))


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


class KeyStore:
    """Rows with unique ``uint64`` keys and typed columns (see the module docstring)."""

    def __init__(self, columns: Mapping[str, Any]) -> None:
        self.dtypes = {k: np.dtype(v).newbyteorder("<") for k, v in columns.items()}
        self._runs: list[_Run] = []
        self._alive = 0
        self._rows = 0

    def __len__(self) -> int:
        return self._alive

    def __repr__(self) -> str:
        return f"KeyStore(rows={self._alive}, runs={len(self._runs)})"

    # -- writes ----------------------------------------------------------------------------
    def insert(self, keys: np.ndarray, cols: Mapping[str, np.ndarray]) -> None:
        """Add rows; the caller guarantees their keys are unique and not already alive."""
        keys = np.asarray(keys, dtype=np.uint64)
        if keys.size == 0:
            return
        order = np.argsort(keys, kind="stable")
        run = _Run(
            keys[order],
            {k: np.asarray(cols[k], dtype=dt)[order] for k, dt in self.dtypes.items()},
            np.ones(keys.size, dtype=bool),
        )
        self._runs.append(run)
        self._alive += keys.size
        self._rows += keys.size
        while len(self._runs) >= 2 and self._runs[-2].keys.size <= 2 * self._runs[-1].keys.size:
            b, a = self._runs.pop(), self._runs.pop()
            self._runs.append(self._merge([a, b]))
        if self._rows > 2 * self._alive + 1024:
            self.compact()

    def _merge(self, runs: list[_Run]) -> _Run:
        keys = np.concatenate([r.keys[r.alive] for r in runs])
        cols = {k: np.concatenate([r.cols[k][r.alive] for r in runs]) for k in self.dtypes}
        order = np.argsort(keys, kind="stable")
        self._rows -= sum(r.keys.size for r in runs) - keys.size
        return _Run(keys[order], {k: v[order] for k, v in cols.items()},
                    np.ones(keys.size, dtype=bool))

    def compact(self) -> None:
        """Merge every run into one, dropping deleted rows."""
        if self._runs:
            self._runs = [self._merge(self._runs)]

    # -- reads -----------------------------------------------------------------------------
    def _locate(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        run_of = np.full(keys.size, -1, dtype=np.intp)
        pos_of = np.zeros(keys.size, dtype=np.intp)
        for i, r in enumerate(self._runs):
            if r.keys.size == 0:
                continue
            pos = np.searchsorted(r.keys, keys)
            pc = np.minimum(pos, r.keys.size - 1)
            hit = (r.keys[pc] == keys) & r.alive[pc] & (run_of < 0)
            run_of[hit] = i
            pos_of[hit] = pc[hit]
        return run_of, pos_of

    def contains(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.uint64)
        return self._locate(keys)[0] >= 0

    def _gather(self, run_of: np.ndarray, pos_of: np.ndarray, kill: bool) -> dict[str, np.ndarray]:
        found = np.nonzero(run_of >= 0)[0]
        out = {k: np.empty(found.size, dtype=dt) for k, dt in self.dtypes.items()}
        for i, r in enumerate(self._runs):
            sel = run_of[found] == i
            if not sel.any():
                continue
            p = pos_of[found[sel]]
            for k in self.dtypes:
                out[k][sel] = r.cols[k][p]
            if kill:
                r.alive[p] = False
        if kill:
            self._alive -= found.size
        return out

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``found[len(keys)]`` and the found rows' columns, in query order."""
        keys = np.asarray(keys, dtype=np.uint64)
        run_of, pos_of = self._locate(keys)
        return run_of >= 0, self._gather(run_of, pos_of, kill=False)

    def pop(self, keys: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Like :meth:`get`, and delete the found rows."""
        keys = np.asarray(keys, dtype=np.uint64)
        run_of, pos_of = self._locate(keys)
        return run_of >= 0, self._gather(run_of, pos_of, kill=True)

    def pop_where_below(self, column: str, limit: float) -> dict[str, np.ndarray]:
        """Delete and return the rows whose ``column`` is below ``limit`` (plus ``key``)."""
        parts: list[dict[str, np.ndarray]] = []
        for r in self._runs:
            m = r.alive & (r.cols[column] < limit)
            if m.any():
                parts.append({"key": r.keys[m], **{k: v[m] for k, v in r.cols.items()}})
                r.alive[m] = False
                self._alive -= int(m.sum())
        return self._concat(parts)

    def evict_oldest(self, count: int, column: str) -> dict[str, np.ndarray]:
        """Delete and return the ``count`` rows with the smallest ``column`` values."""
        if count <= 0 or not self._runs:
            return self._concat([])
        count = min(count, self._alive)
        idx = [np.nonzero(r.alive)[0] for r in self._runs]
        vals = np.concatenate([r.cols[column][i] for r, i in zip(self._runs, idx, strict=True)])
        which = np.concatenate([np.full(i.size, j) for j, i in enumerate(idx)])
        pos = np.concatenate(idx)
        if count < vals.size:
            pick = np.argpartition(vals, count - 1)[:count]
        else:
            pick = np.arange(vals.size)
        parts = []
        for j, r in enumerate(self._runs):
            p = pos[pick[which[pick] == j]]
            if p.size:
                parts.append({"key": r.keys[p], **{k: v[p] for k, v in r.cols.items()}})
                r.alive[p] = False
        self._alive -= count
        return self._concat(parts)

    def _concat(self, parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        names = {"key": np.dtype(np.uint64), **self.dtypes}
        return {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, dt)
                for k, dt in names.items()}

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: alive rows, sorted by key, each column as base64 little-endian bytes."""
        self.compact()
        empty = {k: np.zeros(0, dt) for k, dt in self.dtypes.items()}
        run = self._runs[0] if self._runs else _Run(np.zeros(0, np.uint64), empty,
                                                    np.zeros(0, bool))
        return {
            "n": int(run.keys.size),
            "dtypes": {k: dt.str for k, dt in self.dtypes.items()},
            "key": _b64(run.keys.astype("<u8")),
            "cols": {k: _b64(v.astype(self.dtypes[k])) for k, v in run.cols.items()},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KeyStore:
        store = cls({k: np.dtype(v) for k, v in d["dtypes"].items()})
        keys = np.frombuffer(base64.b64decode(d["key"]), dtype="<u8").astype(np.uint64)
        cols = {
            k: np.frombuffer(base64.b64decode(v), dtype=store.dtypes[k]).copy()
            for k, v in d["cols"].items()
        }
        if keys.size != int(d["n"]) or any(c.size != keys.size for c in cols.values()):
            raise StateError("key store: column lengths do not match")
        store.insert(keys, cols)
        return store
