"""The columnar micro-batch every source yields and every stage consumes.

No per-event Python objects past decoding: each field is one numpy array of length ``n``
(or ``n x F`` for features).

>>> import numpy as np
>>> b = Batch.empty("predictions", n_numeric=2, n_categorical=1)
>>> len(b), b.numeric.shape, b.categorical.shape
(0, (0, 2), (0, 1))
>>> b2 = Batch.concat([b, b])
>>> len(b2)
0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from types import ModuleType

import numpy as np
import pandas as pd

from driftwatch.numba_setup import LoadedLater

__all__ = [
    "DECISION_APPROVE",
    "DECISION_DECLINE",
    "DECISION_UNKNOWN",
    "Batch",
    "hash_ids",
    "take_rows",
]

DECISION_UNKNOWN = -1
DECISION_DECLINE = 0
DECISION_APPROVE = 1

_ROW_FIELDS = (
    "ids",
    "keys",
    "event_time",
    "position",
    "numeric",
    "categorical",
    "score",
    "model_version",
    "decision",
    "segment",
    "label",
    "exposure",
)

_DTYPES: dict[str, type] = {
    "event_time": np.float64,
    "position": np.int64,
    "numeric": np.float64,
    "categorical": np.int32,
    "score": np.float64,
    "decision": np.int8,
    "label": np.float64,
    "exposure": np.float64,
}

#: each column's missing value, made for ``(n, n_numeric, n_categorical)``
_MISSING: dict[str, Callable[[int, int, int], np.ndarray]] = {
    "event_time": lambda n, f, g: np.full(n, np.nan),
    "position": lambda n, f, g: np.arange(n, dtype=np.int64),
    "numeric": lambda n, f, g: np.full((n, f), np.nan),
    "categorical": lambda n, f, g: np.full((n, g), -1, dtype=np.int32),
    "score": lambda n, f, g: np.full(n, np.nan),
    "model_version": lambda n, f, g: np.full(n, "", dtype="<U1"),
    "decision": lambda n, f, g: np.full(n, DECISION_UNKNOWN, dtype=np.int8),
    "segment": lambda n, f, g: np.full(n, "", dtype="<U1"),
    "label": lambda n, f, g: np.full(n, np.nan),
    "exposure": lambda n, f, g: np.full(n, np.nan),
}


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """Stable 64-bit keys for event ids (vectorised; same id, same key across runs).

    The keys are pandas' ``hash_array(ids, categorize=False)`` of the ids as Python strings
    (SipHash-2-4 of their UTF-8 bytes, then a bit mix); checkpoints and the label join keep
    them, so they must never change. Where numba runs, a compiled loop computes the same
    keys from a text array's code points (:mod:`driftwatch._idhashloops`, about a tenth of
    pandas' time per id); an id it cannot encode (a lone surrogate) goes to pandas.

    >>> hash_ids(np.array(["a", "b", "a"])).tolist() == hash_ids(np.array(["a", "b", "a"])).tolist()
    True
    >>> int(hash_ids(np.array(["app-1"]))[0]) == int(pd.util.hash_array(
    ...     np.array(["app-1"], dtype=object), categorize=False)[0])
    True
    """
    if len(ids) == 0:
        return np.zeros(0, dtype=np.uint64)
    loops = _ID_LOOPS.get()
    arr = np.asarray(ids)
    if loops is not None and arr.dtype.kind == "U" and arr.ndim == 1 and arr.itemsize:
        points = np.ascontiguousarray(arr).view(np.uint32).reshape(len(arr), -1)
        out = np.empty(len(arr), np.uint64)
        if loops.hash_utf32(points, out) < 0:
            return out
    return pd.util.hash_array(np.asarray(ids, dtype=object), categorize=False)


def _load_id_loops() -> ModuleType:
    from driftwatch import _idhashloops as loops

    out = np.empty(1, np.uint64)
    loops.hash_utf32(np.zeros((1, 1), np.uint32), out)
    assert out[0] == pd.util.hash_array(np.array([""], dtype=object), categorize=False)[0]
    return loops


_ID_LOOPS: LoadedLater[ModuleType] = LoadedLater("event-id hash", _load_id_loops)


def take_rows(a: np.ndarray, index: np.ndarray | slice) -> np.ndarray:
    """``a[index]``, except that a column-major matrix (each column contiguous) stays
    column-major: the window kernel reads such columns in place, and a decoder fills them
    a column at a time, so neither pays a transpose.

    >>> a = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    >>> b = take_rows(a, np.array([True, False, True, True]))
    >>> b.tolist(), b.flags.f_contiguous
    ([[0.0, 1.0, 2.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], True)
    >>> take_rows(a, np.array([3, -4])).tolist() == a[[3, -4]].tolist()
    True
    """
    if (isinstance(index, slice) or a.ndim != 2 or a.shape[1] < 2
            # one row is both layouts, whatever its strides say
            or (a.strides[0] != a.itemsize and not a.flags.f_contiguous)):
        return a[index]
    idx = np.asarray(index)
    if idx.dtype == bool and idx.shape == a.shape[:1]:
        return np.compress(idx, a.T, axis=1).T
    if idx.dtype.kind in "iu" and idx.ndim == 1:
        return np.take(a.T, idx, axis=1).T
    return a[index]


@dataclass(frozen=True, slots=True, eq=False)
class Batch:
    """A micro-batch of events from one stream (``predictions`` or ``outcomes``).

    Fields not carried by a stream hold their missing value: NaN for floats, ``-1`` for
    ``decision``, empty string for ``model_version`` / ``segment``.
    ``label`` is 1.0 for a bad outcome (default, fraud), 0.0 for good, NaN for unknown.
    ``position`` is the record's position in its source (line number or Kafka offset),
    used for dead letters and exactly-once accounting.
    """

    stream: str
    ids: np.ndarray  # str (numpy unicode)
    keys: np.ndarray  # uint64, hash_ids(ids)
    event_time: np.ndarray  # float64 epoch seconds
    position: np.ndarray  # int64
    numeric: np.ndarray  # float64[n, F], NaN = missing; row- or column-major
    categorical: np.ndarray  # int32[n, G], codes per FeatureSchema; row- or column-major
    score: np.ndarray  # float64[n], probability of the bad class; NaN = absent
    model_version: np.ndarray  # str
    decision: np.ndarray  # int8: 1 approve, 0 decline, -1 unknown
    segment: np.ndarray  # str
    label: np.ndarray  # float64: 1 bad, 0 good, NaN unknown
    exposure: np.ndarray  # float64, NaN = not mapped
    proba: np.ndarray | None = None  # float64[n, C] class probabilities, when mapped
    metrics: dict[str, np.ndarray] = field(default_factory=dict)  # user metric fields
    source: str = ""  # partition / file the batch came from

    def __len__(self) -> int:
        return int(self.event_time.shape[0])

    @classmethod
    def empty(cls, stream: str, n_numeric: int = 0, n_categorical: int = 0) -> Batch:
        return cls.build(stream, n=0, n_numeric=n_numeric, n_categorical=n_categorical)

    @classmethod
    def build(
        cls,
        stream: str,
        *,
        n: int,
        n_numeric: int = 0,
        n_categorical: int = 0,
        **columns: object,
    ) -> Batch:
        """Make a batch of ``n`` rows, filling any column not given with its missing value."""
        ids = columns.pop("ids", None)
        if ids is None:
            ids = np.arange(n).astype(str)
        ids = np.asarray(ids)
        if ids.dtype.kind != "U":  # text already (a decoder's columns): no copy
            ids = ids.astype(str)
        values: dict[str, object] = {"ids": ids}
        for k, v in columns.items():
            if k in _DTYPES:
                values[k] = np.asarray(v, dtype=_DTYPES[k])
            elif k in ("model_version", "segment"):
                text = np.asarray(v)
                values[k] = text if text.dtype.kind == "U" else text.astype(str)
            else:
                values[k] = v
        # only the columns not given: a decoder gives most, and filling each of its
        # rows first cost a poll's reader a fresh n-row array per column, then threw it away
        for k, missing in _MISSING.items():
            if k not in values:
                values[k] = missing(n, n_numeric, n_categorical)
        if "keys" not in values:
            values["keys"] = hash_ids(ids)
        return cls(stream=stream, **values)  # type: ignore[arg-type]

    def take(self, index: np.ndarray | slice) -> Batch:
        """Rows selected by a boolean mask, integer index or slice."""
        kw = {f: take_rows(getattr(self, f), index) for f in _ROW_FIELDS}
        proba = None if self.proba is None else self.proba[index]
        metrics = {k: v[index] for k, v in self.metrics.items()}
        return replace(self, proba=proba, metrics=metrics, **kw)

    @staticmethod
    def concat(batches: Sequence[Batch]) -> Batch:
        """Concatenate batches of the same stream and shape, in order."""
        if not batches:
            raise ValueError("concat needs at least one batch")
        if len(batches) == 1:
            return batches[0]
        first = batches[0]
        kw = {f: np.concatenate([getattr(b, f) for b in batches]) for f in _ROW_FIELDS}
        proba = (
            None if first.proba is None else np.concatenate([b.proba for b in batches])  # type: ignore[misc]
        )
        metrics = {k: np.concatenate([b.metrics[k] for b in batches]) for k in first.metrics}
        return replace(first, proba=proba, metrics=metrics, **kw)

    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))
