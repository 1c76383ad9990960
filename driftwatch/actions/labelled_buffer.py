"""A bounded ring of the most recent labelled rows: what online updates and retraining learn.

The monitor keeps sketches, not rows; an action that learns needs rows. The pipeline feeds
this ring with each joined prediction (its features, the champion's score, the outcome):
numeric features as floats, categorical codes decoded back to the reference levels
(outside the top K: ``__other__``, never seen: ``__unseen__``, missing: NA). The ring
holds at most ``capacity`` rows, so memory is fixed; ``seq`` counts every row ever added,
so a reader (a shadow evaluation) can ask for the rows after the last one it saw.

>>> import numpy as np
>>> from driftwatch.schema import FeatureSchema
>>> schema = FeatureSchema(numeric=("income",), categorical=("purpose",),
...                        levels=(("car", "home"),), other=(frozenset({"boat"}),))
>>> buf = LabelledBuffer(schema, capacity=3)
>>> buf.add(numeric=np.array([[1.0], [2.0]]), categorical=np.array([[0], [2]], np.int32),
...         label=np.array([0.0, 1.0]), score=np.array([0.1, 0.7]))
>>> buf.add(numeric=np.array([[3.0], [4.0]]), categorical=np.array([[3], [-1]], np.int32),
...         label=np.array([1.0, 0.0]), score=np.array([0.2, 0.3]))
>>> len(buf), buf.seq
(3, 4)
>>> f = buf.frame()
>>> f["income"].tolist(), f["purpose"].fillna("<NA>").tolist(), f["label"].tolist()
([2.0, 3.0, 4.0], ['__other__', '__unseen__', '<NA>'], [1.0, 1.0, 0.0])
>>> buf.frame(after_seq=3)["income"].tolist()
[4.0]
>>> LabelledBuffer.from_dict(schema, buf.to_dict()).frame().equals(buf.frame())
True
>>> wider = FeatureSchema(numeric=("income",), categorical=("purpose",),
...                       levels=(("car", "home", "boat"),))
>>> rebased = buf.rebase(wider)
>>> rebased.seq, rebased.frame()["purpose"].fillna("<NA>").tolist()
(4, ['__unseen__', '__unseen__', '<NA>'])
"""

from __future__ import annotations

import base64
import threading
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.batch import Batch
from driftwatch.errors import StateError
from driftwatch.schema import MISSING, OTHER_LEVEL, UNSEEN_LEVEL, FeatureSchema
from driftwatch.statetree import Appended, Capture, new_table_id

__all__ = ["OTHER_LEVEL", "UNSEEN_LEVEL", "LabelledBuffer", "decode_levels", "features_frame"]

_COLUMNS = ("label", "score", "event_time", "exposure", "decision")


def decode_levels(schema: FeatureSchema, j: int, codes: np.ndarray) -> np.ndarray:
    """Categorical codes of feature ``j`` back to level strings (see the module doc)."""
    levels = schema.levels[j]
    k = len(levels)
    table = np.array([*levels, OTHER_LEVEL, UNSEEN_LEVEL, None], dtype=object)
    return table[np.where(codes == MISSING, k + 2, np.clip(codes, 0, k + 1))]


def features_frame(schema: FeatureSchema, batch: Batch) -> pd.DataFrame:
    """A batch's features as a DataFrame of connector feature names (categoricals as
    levels): what a model version scores live traffic on.

    >>> from driftwatch.schema import FeatureSchema
    >>> schema = FeatureSchema(numeric=("income",), categorical=("purpose",),
    ...                        levels=(("car", "home"),))
    >>> b = Batch.empty("predictions", n_numeric=1, n_categorical=1)
    >>> list(features_frame(schema, b).columns)
    ['income', 'purpose']
    """
    out: dict[str, Any] = {}
    for j, name in enumerate(schema.numeric):
        out[name] = np.asarray(batch.numeric[:, j], np.float64)
    for j, name in enumerate(schema.categorical):
        out[name] = decode_levels(schema, j, np.asarray(batch.categorical[:, j]))
    return pd.DataFrame(out, index=pd.RangeIndex(len(batch)))


class LabelledBuffer:
    """The last ``capacity`` joined rows, oldest first; serialisable for checkpoints."""

    def __init__(self, schema: FeatureSchema, capacity: int = 50_000) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, found {capacity}")
        self.schema = schema
        self.capacity = int(capacity)
        # a slot is read only once written (``_order`` names the held ones): zeros, which
        # the system hands out untouched, not a fill of the whole ring
        self._numeric = np.zeros((capacity, schema.n_numeric))
        self._categorical = np.zeros((capacity, schema.n_categorical), dtype=np.int32)
        self._cols = {c: np.zeros(capacity) for c in _COLUMNS}
        self._seq = np.zeros(capacity, dtype=np.int64)
        self.seq = 0  # rows ever added; the last row added has number ``seq``
        self._held = 0  # rows held: the newest, numbered ``seq - _held + 1`` to ``seq``
        self._table = new_table_id()  # rows are numbered by ``seq`` for good: one table
        # the run loop adds while an action's thread reads (an export, a shadow's rows)
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return self._held

    # -- feeding ---------------------------------------------------------------------
    def add(
        self,
        *,
        numeric: np.ndarray,
        categorical: np.ndarray,
        label: np.ndarray,
        score: np.ndarray,
        event_time: np.ndarray | None = None,
        exposure: np.ndarray | None = None,
        decision: np.ndarray | None = None,
    ) -> None:
        """Append joined rows (``numeric[n, F]``, ``categorical[n, G]`` codes, outcomes).
        Rows without a label (NaN) are skipped."""
        with self._lock:
            self._add(numeric, categorical, label, score, event_time, exposure, decision)

    def _add(self, numeric: np.ndarray, categorical: np.ndarray, label: np.ndarray,
             score: np.ndarray, event_time: np.ndarray | None, exposure: np.ndarray | None,
             decision: np.ndarray | None) -> None:
        label = np.asarray(label, dtype=np.float64)
        keep = np.isfinite(label)
        n_all = len(label)

        def col(a: np.ndarray | None) -> np.ndarray:
            return np.full(n_all, np.nan) if a is None else np.asarray(a, np.float64)

        cols = {
            "label": label,
            "score": col(score),
            "event_time": col(event_time),
            "exposure": col(exposure),
            "decision": col(decision),
        }
        num = np.asarray(numeric, np.float64).reshape(n_all, self.schema.n_numeric)[keep]
        cat = np.asarray(categorical, np.int32).reshape(n_all, self.schema.n_categorical)[keep]
        cols = {k: v[keep] for k, v in cols.items()}
        n = len(num)
        if n > self.capacity:  # only the newest rows fit
            drop = n - self.capacity
            self.seq += drop
            num, cat = num[drop:], cat[drop:]
            cols = {k: v[drop:] for k, v in cols.items()}
            n = self.capacity
        slots = (self.seq + np.arange(n)) % self.capacity
        self._numeric[slots] = num
        self._categorical[slots] = cat
        for k, v in cols.items():
            self._cols[k][slots] = v
        self._seq[slots] = self.seq + 1 + np.arange(n)
        self.seq += n
        self._held = min(self._held + n, self.capacity)

    def add_batch(self, batch: Batch) -> None:
        """Append the labelled rows of a prediction batch whose ``label`` is filled in."""
        self.add(
            numeric=batch.numeric,
            categorical=batch.categorical,
            label=batch.label,
            score=batch.score,
            event_time=batch.event_time,
            exposure=batch.exposure,
            decision=batch.decision,
        )

    def add_frame(self, df: pd.DataFrame) -> None:
        """Append rows given as a DataFrame of raw features (categoricals as levels) with
        ``label`` and ``score`` columns (``event_time``, ``exposure``, ``decision`` optional);
        for seeding the buffer from a labelled dataset."""
        n = len(df)
        num = (
            df[list(self.schema.numeric)].to_numpy(np.float64, na_value=np.nan)
            if self.schema.numeric
            else np.zeros((n, 0))
        )
        cat = (
            np.stack(
                [
                    self.schema.encode_categorical(j, df[c].to_numpy())
                    for j, c in enumerate(self.schema.categorical)
                ],
                axis=1,
            )
            if self.schema.categorical
            else np.zeros((n, 0), np.int32)
        )
        decision = df["decision"] if "decision" in df.columns else None
        if decision is not None and not pd.api.types.is_numeric_dtype(decision):
            decision = decision.map({"approve": 1.0, "decline": 0.0})

        def opt(name: str) -> np.ndarray | None:
            return df[name].to_numpy(np.float64) if name in df.columns else None

        self.add(
            numeric=num,
            categorical=cat,
            label=df["label"].to_numpy(np.float64),
            score=df["score"].to_numpy(np.float64),
            event_time=opt("event_time"),
            exposure=opt("exposure"),
            decision=None if decision is None else decision.to_numpy(np.float64),
        )

    def adopt(self, other: LabelledBuffer) -> None:
        """Hold ``other``'s rows and counters in place of this buffer's own: readers that
        hold this object (the actions) see them."""
        with self._lock:
            self.capacity, self.seq, self._table = other.capacity, other.seq, other._table
            self._held = other._held
            self._numeric, self._categorical = other._numeric, other._categorical
            self._cols, self._seq = other._cols, other._seq

    # -- reading ---------------------------------------------------------------------
    def summary(self) -> dict[str, int]:
        """Rows held now, rows ever added, and the bad outcomes among those held (what
        ``/status`` shows)."""
        with self._lock:
            bad = int(np.count_nonzero(self._cols["label"][self._order(0)] > 0.5))
            return {"held": len(self), "added": self.seq, "bad": bad}

    def _order(self, after_seq: int) -> np.ndarray:
        n = len(self)
        start = self.seq - n
        slots = (start + np.arange(n)) % self.capacity
        return slots[self._seq[slots] > after_seq]

    def frame(self, *, after_seq: int = 0, last: int | None = None) -> pd.DataFrame:
        """Rows oldest first: one column per feature (categoricals as level strings) plus
        ``label``, ``score``, ``event_time``, ``exposure``, ``decision`` and ``seq``."""
        with self._lock:
            return self._frame(after_seq, last)

    def _frame(self, after_seq: int, last: int | None) -> pd.DataFrame:
        idx = self._order(after_seq)
        if last is not None:
            idx = idx[max(0, len(idx) - last) :]
        out: dict[str, Any] = {}
        for j, name in enumerate(self.schema.numeric):
            out[name] = self._numeric[idx, j]
        for j, name in enumerate(self.schema.categorical):
            out[name] = self._decode(j, self._categorical[idx, j])
        for k in _COLUMNS:
            out[k] = self._cols[k][idx]
        out["seq"] = self._seq[idx]
        return pd.DataFrame(out)

    def _decode(self, j: int, codes: np.ndarray) -> np.ndarray:
        return decode_levels(self.schema, j, codes)

    def resized(self, capacity: int) -> LabelledBuffer:
        """The newest rows that fit ``capacity``, numbered as here (a policy that changes
        ``labels.labelled_rows``): actions that read rows by number read the same rows."""
        with self._lock:
            out = LabelledBuffer(self.schema, capacity)
            n = min(len(self), out.capacity)
            a, b = self.seq - n, self.seq
            rows = self._rows(a, b)
            for ring, got in out._spans(a, b):
                out._numeric[ring] = rows["numeric"][got]
                out._categorical[ring] = rows["categorical"][got]
                for k in _COLUMNS:
                    out._cols[k][ring] = rows[k][got]
                out._seq[ring] = a + 1 + np.arange(got.start, got.stop)
            out.seq, out._held = b, n
            return out

    def rebase(self, schema: FeatureSchema) -> LabelledBuffer:
        """The same rows encoded for another schema (a new reference profile's levels),
        keeping ``seq``: call it when the monitor adopts a new champion's profile. Levels the
        old schema had folded into ``__other__`` or never seen become unseen ones."""
        out = LabelledBuffer(schema, self.capacity)
        frame = self.frame()
        out.seq = self.seq - len(frame)
        if len(frame):
            for name in schema.numeric:
                if name not in frame.columns:
                    frame[name] = np.nan
            for name in schema.categorical:
                if name not in frame.columns:
                    frame[name] = None
            out.add_frame(frame)
        return out

    # -- checkpoints -----------------------------------------------------------------
    def _spans(self, a: int, b: int) -> list[tuple[slice, slice]]:
        """Rows ``[a, b)`` (0-based, as added; ``b - a <= capacity``) as ``(ring slots,
        rows from a)`` slices: one, or two where they wrap round the ring."""
        lo, n = a % self.capacity, b - a
        first = min(n, self.capacity - lo)
        spans = [(slice(lo, lo + first), slice(0, first))]
        if first < n:
            spans.append((slice(0, n - first), slice(first, n)))
        return spans

    def _rows(self, a: int, b: int) -> dict[str, np.ndarray]:
        """Copies of rows ``a`` to ``b - 1`` (0-based, as added; all still held)."""
        rings = {"numeric": self._numeric, "categorical": self._categorical, **self._cols}
        spans = self._spans(a, b)
        return {k: np.concatenate([ring[s] for s, _ in spans]) for k, ring in rings.items()}

    def to_dict(self, capture: Capture | None = None, *, last: int | None = None
                ) -> dict[str, Any]:
        """See :meth:`_to_dict` (under the lock: the loop may be adding rows)."""
        with self._lock:
            return self._to_dict(capture, last)

    def _to_dict(self, capture: Capture | None = None, last: int | None = None
                 ) -> dict[str, Any]:
        """JSON-safe, rows oldest first; columns as base64 of little-endian arrays (a
        checkpoint holds up to ``capacity`` rows: lists of floats were most of its bytes).
        ``last`` keeps only the newest rows (a message with a size limit).

        With a ``capture`` (a binary checkpoint) the rows are an append-only table, of
        which only those the checkpoint store lacks are copied."""
        if capture is not None:
            return {"capacity": self.capacity, "seq": self.seq,
                    "features": list(self.schema.names),
                    "rows": Appended.capture(capture, self._table, self.seq - len(self),
                                             self.seq, self._rows)}
        idx = self._order(0)
        if last is not None:
            idx = idx[max(0, idx.size - last):]
        return {
            "capacity": self.capacity,
            "seq": self.seq,
            "rows": int(idx.size),
            "features": list(self.schema.names),
            "numeric": _b64(self._numeric[idx].astype("<f8")),
            "categorical": _b64(self._categorical[idx].astype("<i4")),
            **{k: _b64(self._cols[k][idx].astype("<f8")) for k in _COLUMNS},
        }

    @classmethod
    def from_dict(cls, schema: FeatureSchema, d: dict[str, Any]) -> LabelledBuffer:
        if list(d.get("features", [])) != list(schema.names):
            raise StateError("labelled buffer checkpoint has other features than the schema")
        buf = cls(schema, int(d["capacity"]))
        rows = d["rows"]
        if isinstance(rows, Appended):  # a binary checkpoint: the same table goes on
            n = rows.stop - rows.start
            if int(d["seq"]) != rows.stop or n > buf.capacity:
                raise StateError("labelled buffer checkpoint: rows do not match its counters")
            c = rows.columns
            if not np.isfinite(c["label"]).all():  # rows without a label are never added
                raise StateError("labelled buffer checkpoint: rows without a label")
            num = c["numeric"].reshape(n, schema.n_numeric)
            cat = c["categorical"].reshape(n, schema.n_categorical)
            for ring, got in buf._spans(rows.start, rows.stop):  # straight into the ring
                buf._numeric[ring] = num[got]
                buf._categorical[ring] = cat[got]
                for k in _COLUMNS:
                    buf._cols[k][ring] = c[k][got]
                buf._seq[ring] = rows.start + 1 + np.arange(got.start, got.stop)
            buf.seq, buf._held = rows.stop, n
            buf._table = rows.table
            return buf
        buf.seq = int(d["seq"]) - int(rows)
        buf.add(**cls.columns_of(schema, d))
        return buf

    @staticmethod
    def columns_of(schema: FeatureSchema, d: dict[str, Any], *, after_seq: int = 0
                   ) -> dict[str, np.ndarray]:
        """The rows of a JSON-safe :meth:`to_dict` (those numbered after ``after_seq``) as
        raw columns, oldest first, the keywords of :meth:`add`, without building a buffer.

        >>> from driftwatch.schema import FeatureSchema
        >>> buf = LabelledBuffer(FeatureSchema(numeric=("x",)), capacity=2)
        >>> buf.add(numeric=np.array([[1.0], [2.0], [3.0]]), categorical=np.zeros((3, 0)),
        ...         label=np.array([0.0, 1.0, 1.0]), score=np.array([0.1, 0.2, 0.3]))
        >>> cols = LabelledBuffer.columns_of(buf.schema, buf.to_dict(), after_seq=2)
        >>> cols["numeric"][:, 0].tolist(), cols["label"].tolist()
        ([3.0], [1.0])
        """
        n, seq = int(d["rows"]), int(d["seq"])
        keep = slice(max(0, n - max(0, seq - after_seq)), n)
        num = _unb64(d["numeric"], "<f8").reshape(n, schema.n_numeric)
        cat = _unb64(d["categorical"], "<i4").reshape(n, schema.n_categorical)
        return {"numeric": num[keep], "categorical": cat[keep],
                **{k: _unb64(d[k], "<f8")[keep] for k in _COLUMNS}}


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def _unb64(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).astype(dtype[1:])
