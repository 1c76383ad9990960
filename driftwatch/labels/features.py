"""Feature rows of predictions still waiting for their outcome, so a joined outcome can
become a labelled training row (what online updates learn and shadows are judged on).

Rows live in a :class:`~driftwatch.labels.store.KeyStore` keyed by event key, one column per
feature. Memory is bounded by ``capacity`` rows (oldest by event time go first) and by
``sample_rate``: on a high-volume stream, keep a deterministic share of predictions (by key
hash) so the store spans the whole label delay instead of only its last days.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.schema import FeatureSchema
>>> schema = FeatureSchema(numeric=("x",), categorical=("c",), levels=(("a",),))
>>> store = PendingFeatures(schema, capacity=10)
>>> b = Batch.build("predictions", n=3, n_numeric=1, n_categorical=1, ids=["p", "q", "r"],
...                 numeric=[[1.0], [2.0], [3.0]], categorical=[[0], [1], [-1]],
...                 event_time=[0.0, 1.0, 2.0])
>>> store.add(b)
>>> found, num, cat = store.take(b.keys[[2, 0]])
>>> found.tolist(), num[:, 0].tolist(), cat[:, 0].tolist(), len(store)
([True, True], [3.0, 1.0], [-1, 0], 1)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from driftwatch.batch import Batch
from driftwatch.labels.hashindex import first_occurrences
from driftwatch.labels.store import KeyStore
from driftwatch.schema import FeatureSchema
from driftwatch.statetree import Capture

__all__ = ["PendingFeatures"]

_SCALE = np.uint64(1 << 20)


class PendingFeatures:
    """Feature rows by event key until the outcome arrives (module docstring)."""

    def __init__(
        self, schema: FeatureSchema, capacity: int = 200_000, *, sample_rate: float = 1.0
    ) -> None:
        if capacity < 1 or not 0.0 < sample_rate <= 1.0:
            raise ValueError("capacity must be >= 1 and sample_rate in (0, 1]")
        self.schema = schema
        self.capacity = int(capacity)
        self.sample_rate = float(sample_rate)
        cols: dict[str, Any] = {"time": np.float64}
        cols.update({f"n{j}": np.float64 for j in range(schema.n_numeric)})
        cols.update({f"c{j}": np.int32 for j in range(schema.n_categorical)})
        self._store = KeyStore(cols)
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._store)

    def add(self, batch: Batch) -> None:
        """Keep the (sampled) rows of a prediction batch; keys already held are ignored."""
        keys = batch.keys
        keep = np.ones(len(keys), dtype=bool)
        if self.sample_rate < 1.0:
            keep &= (keys % _SCALE) < np.uint64(int(self.sample_rate * int(_SCALE)))
        unique = np.zeros(len(keys), dtype=bool)
        unique[first_occurrences(keys)] = True
        keep &= unique
        if len(self._store) and keep.any():
            keep[keep] = ~self._store.contains(keys[keep])
        if not keep.any():
            return
        rows = np.flatnonzero(keep)
        # a column at a time: gathering the rows of the row-major matrices first left
        # strided columns to copy into the store (1.7x slower per batch)
        num, cat = batch.numeric, batch.categorical
        cols: dict[str, np.ndarray] = {"time": batch.event_time[rows]}
        for j in range(self.schema.n_numeric):
            cols[f"n{j}"] = num[:, j][rows]
        for j in range(self.schema.n_categorical):
            cols[f"c{j}"] = cat[:, j][rows]
        self._store.insert(keys[rows], cols)
        over = len(self._store) - self.capacity
        if over > 0:
            self._store.evict_oldest(over, "time")
            self.evicted += over

    def resize(self, capacity: int) -> None:
        """Hold at most ``capacity`` rows from now on; the oldest beyond it are evicted."""
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = int(capacity)
        over = len(self._store) - self.capacity
        if over > 0:
            self._store.evict_oldest(over, "time")
            self.evicted += over

    def take(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Remove and return the rows of ``keys``: found mask, numeric and categorical rows
        (for the found keys, in the order of ``keys``; column-major ``[n, F]`` and
        ``[n, G]`` arrays)."""
        found, rows = self._store.pop(np.asarray(keys, dtype=np.uint64))
        n, f, g = int(found.sum()), self.schema.n_numeric, self.schema.n_categorical
        # columns stacked as rows, then seen transposed: one contiguous copy each, where
        # writing every column into a row-major matrix strides through it (4x slower)
        num = np.array([rows[f"n{j}"] for j in range(f)], dtype=np.float64).reshape(f, n).T
        cat = np.array([rows[f"c{j}"] for j in range(g)], dtype=np.int32).reshape(g, n).T
        return found, num, cat

    def expire(self, before: float) -> int:
        """Drop rows whose event time is before ``before`` (their outcome will not come)."""
        gone = self._store.pop_where_below("time", before)
        return len(gone["time"])

    def to_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """JSON-safe, or for a binary checkpoint with a ``capture``."""
        return {
            "capacity": self.capacity,
            "sample_rate": self.sample_rate,
            "evicted": self.evicted,
            "store": self._store.to_dict(capture),
        }

    @classmethod
    def from_dict(cls, schema: FeatureSchema, d: dict[str, Any]) -> PendingFeatures:
        out = cls(schema, int(d["capacity"]), sample_rate=float(d["sample_rate"]))
        out.evicted = int(d["evicted"])
        out._store = KeyStore.from_dict(d["store"])
        return out
