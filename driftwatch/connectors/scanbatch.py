"""A batch's columns read straight from the compiled scanner's arrays, for lines with no
problem.

The decoder's general assembly (:meth:`~driftwatch.connectors.decode.Decoder._assemble`)
turns each mapped path into an Arrow column and reads it with a few Arrow and numpy calls
per column and per check: about thirty columns and a hundred calls for each block of a
file, whatever the block holds, which cost a replay's reader more than the scan itself.
:class:`ScanAssembler` reads the scan's own arrays instead (:class:`~driftwatch.connectors.
jsonscan.ScanColumns`): numbers where they are valid, ids as fixed-width text from their
bytes, and every column whose values a mapping judges (categories, decision, label, model
version, segment) once per distinct value, through the very code the general assembly
runs, kept for the blocks after.

It gives a batch only where the general assembly would give the same one with no bad
record: at the first sign of a problem (a missing or blank id, a text past the length
cap, a bad time, a score out of range, a value a mapping refuses), and for a column kind
it does not read (a feature written as percent or money text, class probabilities), it
gives ``None`` and the general assembly decodes the lines, with their dead letters.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from driftwatch.batch import Batch
from driftwatch.connectors.columns import Problems
from driftwatch.connectors.jsonscan import ScanColumns
from driftwatch.connectors.mapping import StreamMapping
from driftwatch.schema import FeatureSchema

__all__ = ["MAX_DISTINCT", "ScanAssembler"]

#: Distinct texts a column may hold in a block to be judged value by value; a column with
#: more (an id-like segment) is judged whole, as the general assembly does.
MAX_DISTINCT = 1024
#: Values judged a column keeps for the blocks after (a new category in every block does
#: not grow it without end).
_KEPT = 4096
_PROBLEM = object()  # a value the mapping refuses: the general assembly dead-letters it
_UNSEEN = object()

#: A column's judge: its values for an Arrow column, problems flagged in the Problems given
Judge = Callable[[pa.Array, Problems], np.ndarray]
#: A block's text columns by key: each row's text number and the texts (bytes) in the order
#: first seen, or ``None`` for a column of more than :data:`MAX_DISTINCT` texts
Numbered = dict[str, tuple[np.ndarray, list[bytes]] | None]


def _no_detail(*_: Any) -> Callable[[int], str]:
    return lambda i: ""


class ScanAssembler:
    """Builds one stream's batch from a scan (see the module docstring).

    ``categorical(j, name, raw, prob, wrong, lenient)``, ``decision(raw, prob, wrong)``,
    ``label(raw, prob)`` and ``times(cols, prob, timestamps, n)`` are the decoder's own
    readers of those columns.
    """

    def __init__(
        self, mapping: StreamMapping, schema: FeatureSchema, width: tuple[int, int],
        numeric: list[tuple[int, str]], categorical: list[tuple[int, str]],
        missing_numbers: dict[str, np.ndarray], *, has_formats: bool, max_text: int,
        read_categorical: Callable[..., np.ndarray], read_decision: Callable[..., np.ndarray],
        read_label: Callable[..., np.ndarray], read_times: Callable[..., np.ndarray],
    ) -> None:
        self.mapping = mapping
        self.schema = schema
        self.width = width
        self._num = numeric
        self._cat = categorical
        self._missing_num = missing_numbers
        self._max_text = max_text
        lenient = mapping.numbers_as_text
        #: whether it reads a stream at all: not with class probabilities, features in
        #: percent or money text, or records numbered in their file
        self.enabled = (mapping.proba is None and not has_formats
                        and mapping.event_id is not None and mapping.avro is None)
        self._judges: dict[str, tuple[Judge, np.dtype[Any]]] = {}
        for j, name in categorical:
            self._judges[f"feature:{name}"] = (
                lambda raw, prob, j=j, name=name: read_categorical(j, name, raw, prob,
                                                                   _no_detail, lenient),
                np.dtype(np.int32))
        if mapping.decision is not None:
            self._judges["decision"] = (lambda raw, prob: read_decision(raw, prob, _no_detail),
                                        np.dtype(np.int8))
        if mapping.label is not None:
            self._judges["label"] = (read_label, np.dtype(np.float64))
        self._times = read_times
        #: the columns that may be numbered as text (:meth:`_text_codes`)
        self._text_keys = [*self._judges, *(key for key in ("model_version", "segment")
                                            if getattr(mapping, key) is not None)]
        #: each judged column's values so far, by (column kind, value)
        self._seen: dict[str, dict[tuple[int, Any], Any]] = {key: {} for key in self._judges}
        self._loops: ModuleType | None = None
        #: rows given a batch here so far (the rest went to the general assembly)
        self.rows = 0

    def assemble(self, cols: ScanColumns, positions: np.ndarray, source: str,
                 timestamps: np.ndarray | None) -> Batch | None:
        """The batch of the scanned rows at ``positions`` (with their record timestamps,
        where they have some), or ``None`` where the general assembly must read them
        (some row has a problem, or a column is of a kind not read here)."""
        if not self.enabled:
            return None
        if self._loops is None:
            from driftwatch.connectors import _spanloops

            self._loops = _spanloops
        m, n = self.mapping, cols.n
        ids = self._ids(cols)
        if ids is None:
            return None
        scratch = Problems(n)
        secs = self._times(cols, scratch, timestamps, n)
        if scratch.code.any():
            return None
        num = np.full((n, self.width[0]), np.nan, order="F")
        for j, name in self._num:
            num[:, j] = self._number(cols, f"feature:{name}")
            if len(self._missing_num[name]):
                num[np.isin(num[:, j], self._missing_num[name]), j] = np.nan
        texts = self._text_codes(cols)
        cat = np.full((n, self.width[1]), -1, dtype=np.int32, order="F")
        for j, name in self._cat:
            codes = self._judged(cols, f"feature:{name}", texts)
            if codes is None:
                return None
            cat[:, j] = codes
        extra: dict[str, Any] = {}
        if m.score is not None:
            raw = self._number(cols, "score")
            finite = np.isfinite(raw)
            score = m.score_scale.to_probability(raw)
            # NaN only where null: the scan reads finite numbers alone
            if (finite & ((score < 0) | (score > 1))).any():
                return None
            extra["score"] = score
        for key in ("model_version", "segment"):
            if getattr(m, key) is not None:
                text = self._texts(cols, key, texts)
                if text is None:
                    return None
                extra[key] = text
        for key in ("decision", "label"):
            if key in self._judges:
                got = self._judged(cols, key, texts)
                if got is None:
                    return None
                extra[key] = got
        if m.exposure is not None:
            extra["exposure"] = self._number(cols, "exposure")
        metrics = {name: self._number(cols, f"metric:{name}") for name, _ in m.metrics}
        self.rows += n
        return Batch.build(m.role, n=n, n_numeric=self.width[0], n_categorical=self.width[1],
                           ids=ids, event_time=secs, position=positions, numeric=num,
                           categorical=cat, metrics=metrics, source=source, **extra)

    # -- columns ------------------------------------------------------------------------------
    def _number(self, cols: ScanColumns, key: str) -> np.ndarray:
        """A number column (the scan types every number path as doubles): NaN where null."""
        return np.where(cols.valid(key).view(bool), cols.values(key), np.nan)

    def _ids(self, cols: ScanColumns) -> np.ndarray | None:
        """The ids as fixed-width text, where every one is ASCII text, not blank and
        within the length cap (the general assembly flags the others)."""
        loops = self._loops
        assert loops is not None
        if cols.kind("event_id") != _kinds().K_TEXT:
            return None
        if not cols.valid("event_id").all():
            return None
        s0, s1 = cols.spans("event_id")
        widest = int((s1 - s0).max(initial=0))
        if widest > self._max_text:
            return None
        width = max(1, widest)
        out = np.zeros((cols.n, width), dtype=np.uint32)
        if loops.ascii_texts(cols.buf, s0, s1, out):
            return None
        return out.view(f"U{width}").ravel()

    def _text_codes(self, cols: ScanColumns) -> Numbered:
        """Every text column judged or read as text, numbered in one pass over the
        block's lines (see :data:`Numbered`)."""
        k = _kinds()
        keys = [key for key in self._text_keys if cols.kind(key) == k.K_TEXT]
        if not keys:
            return {}
        assert self._loops is not None
        s0, s1, valid, slots, at = cols.text_table(keys)
        codes = np.empty((len(keys), cols.n), np.int64)
        firsts = np.empty((len(keys), MAX_DISTINCT), np.int64)
        tables = np.full((len(keys), 2 * MAX_DISTINCT), -1, np.int64)
        found = np.zeros(len(keys), np.int64)
        self._loops.distinct_columns(cols.buf, s0, s1, valid, slots, at, codes, firsts, tables,
                                     found)
        buf = cols.buf
        out: Numbered = {}
        for c, key in enumerate(keys):
            if found[c] < 0:
                out[key] = None
                continue
            a, b, rows = s0[:, slots[c]], s1[:, slots[c]], firsts[c, : found[c]].tolist()
            out[key] = codes[c], [buf[a[i] : b[i]].tobytes() for i in rows]
        return out

    def _distinct(self, cols: ScanColumns, key: str,
                  texts: Numbered) -> tuple[np.ndarray, list[Any]] | None:
        """Each row's index into the column's distinct values (texts as bytes, integers,
        booleans; ``None`` for null, last, where a row is null), or ``None`` for a column
        of another kind or of more than :data:`MAX_DISTINCT` texts. ``texts``: the text
        columns' codes (:meth:`_text_codes`)."""
        k, valid = _kinds(), cols.valid(key)
        kind = cols.kind(key)
        if kind == k.K_TEXT:
            got = texts[key]
            if got is None:
                return None
            codes, values = got[0], list[Any](got[1])
        elif kind in (k.K_INT, k.K_BOOL):
            present = valid.view(bool)
            raw = cols.values(key)[present]
            uniq, inv = np.unique(raw.astype(bool) if kind == k.K_BOOL else raw,
                                  return_inverse=True)
            codes = np.full(cols.n, -1, np.int64)
            codes[present] = inv
            values = uniq.tolist()
        elif kind == k.K_NULL:
            codes, values = np.full(cols.n, -1, np.int64), []
        else:
            return None
        null = codes < 0
        if null.any():
            codes[null] = len(values)
            values.append(None)
        return codes, values

    def _judged(self, cols: ScanColumns, key: str,
                texts: Numbered) -> np.ndarray | None:
        """A judged column's values: its judge run once per distinct value (kept for the
        blocks after), or on the whole column where it has too many; ``None`` where the
        judge flags a row."""
        judge, dtype = self._judges[key]
        got = self._distinct(cols, key, texts)
        if got is None:
            scratch = Problems(cols.n)
            out = judge(cols[key], scratch)
            return None if scratch.code.any() else out
        codes, values = got
        kind, seen = cols.kind(key), self._seen[key]
        results = [seen.get((kind, v), _UNSEEN) for v in values]
        todo = [i for i, r in enumerate(results) if r is _UNSEEN]
        if todo:
            fresh = pa.array([_py(values[i]) for i in todo], _arrow_type(kind))
            scratch = Problems(len(todo))
            judged = judge(fresh, scratch)
            for t, i in enumerate(todo):
                results[i] = _PROBLEM if scratch.code[t] else judged[t]
                if len(seen) < _KEPT:
                    seen[(kind, values[i])] = results[i]
        if any(r is _PROBLEM for r in results):
            return None
        return np.array(results, dtype=dtype)[codes]

    def _texts(self, cols: ScanColumns, key: str,
               texts: Numbered) -> np.ndarray | None:
        """A text column (model version, segment) as fixed-width text, null as ``""``;
        ``None`` for a column of another kind, of too many texts, or with one past the
        length cap."""
        if cols.kind(key) != _kinds().K_TEXT:
            return None
        got = self._distinct(cols, key, texts)
        if got is None:
            return None
        codes, values = got
        words = [v.decode() if v is not None else "" for v in values]
        widest = max(map(len, words))
        if widest > self._max_text:
            return None
        return np.array(words, dtype=f"U{max(1, widest)}")[codes]


def _kinds() -> ModuleType:
    from driftwatch.connectors import _scanloops

    return _scanloops


def _arrow_type(kind: int) -> pa.DataType:
    k = _kinds()
    return {k.K_TEXT: pa.string(), k.K_INT: pa.int64(), k.K_BOOL: pa.bool_(),
            k.K_NULL: pa.null()}[kind]


def _py(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value
