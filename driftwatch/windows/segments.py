"""Segments: a bounded set of values of the connector's ``segment`` field, and their sketches.

A drift confined to one channel (a broker sends other applicants, the web form changes)
is diluted in the whole window: ``online`` may be a quarter of the traffic, so its shift
moves the mixture by a quarter. Segments measure each channel against the same channel of
the reference.

The segments are the ``top_k`` most frequent values of the reference's segment column
(ties by name) plus :data:`OTHER`, which holds every other value: rarer ones, values the
reference never saw, and a missing or blank segment (so the label set of a metric stays
bounded whatever the feed sends). A literal value ``other`` falls in :data:`OTHER` too.

>>> import numpy as np
>>> coder = SegmentCoder.top(["web", "web", "branch", "mobile", "web", None, ""], 2)
>>> coder.values, coder.names
(('web', 'branch'), ('web', 'branch', 'other'))
>>> coder.code(np.array(["branch", "web", "", "fax", "mobile"])).tolist()
[1, 0, 2, 2, 2]
>>> SegmentCoder.from_dict(coder.to_dict()) == coder
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.batch import Batch
from driftwatch.schema import level_texts
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["DEFAULT_TOP_K", "OTHER", "SegmentCoder", "SegmentProfile", "segment_sketches",
           "segment_texts"]

#: The bucket of every value outside the top-K (and of a missing segment).
OTHER = "other"
#: Segment values kept when nobody says (the policy's ``segments.top_k``).
DEFAULT_TOP_K = 5


@dataclass(frozen=True)
class SegmentCoder:
    """Maps segment texts to codes ``0..K-1`` (the kept values) and ``K`` (:data:`OTHER`)."""

    values: tuple[str, ...]

    @classmethod
    def top(cls, texts: Sequence[object] | np.ndarray, k: int) -> SegmentCoder:
        """The ``k`` most frequent non-blank values of ``texts`` (ties by name)."""
        s = level_texts(texts).dropna()
        counts = s[s != OTHER].value_counts(sort=False)
        order = sorted(counts.items(), key=lambda kv: (-int(kv[1]), str(kv[0])))
        return cls(tuple(str(v) for v, _ in order[: max(0, int(k))]))

    @property
    def names(self) -> tuple[str, ...]:
        """Every segment's name, in code order: the kept values, then :data:`OTHER`."""
        return (*self.values, OTHER)

    def __len__(self) -> int:
        return len(self.values) + 1

    def code(self, segment: np.ndarray) -> np.ndarray:
        """The code of each text (``K`` for anything not kept)."""
        seg = np.asarray(segment).astype(str)
        k = len(self.values)
        out = np.full(seg.shape[0], k, dtype=np.intp)
        if k and seg.size:
            kept = np.asarray(self.values)
            order = np.argsort(kept, kind="stable")
            ranked = kept[order]
            pos = np.minimum(np.searchsorted(ranked, seg), k - 1)
            hit = ranked[pos] == seg
            out[hit] = order[pos[hit]]
        return out

    def split(self, batch: Batch) -> Iterator[tuple[int, Batch]]:
        """``(code, rows of that segment)`` for each segment present in ``batch``."""
        if len(batch) == 0:
            return
        codes = self.code(batch.segment)
        if (codes == codes[0]).all():
            yield int(codes[0]), batch
            return
        # one reordering copy, then a view per segment (not one masked copy each)
        order = np.argsort(codes, kind="stable")
        grouped = batch.take(order)
        ranked = codes[order]
        present = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
        for lo, hi in zip(present, np.r_[present[1:], len(ranked)], strict=True):
            yield int(ranked[lo]), grouped.take(slice(int(lo), int(hi)))

    def to_dict(self) -> dict[str, Any]:
        return {"values": list(self.values)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SegmentCoder:
        return cls(tuple(str(v) for v in d["values"]))


@dataclass(eq=False)
class SegmentProfile:
    """The reference's segments: which values are kept, the column they came from, and
    one sketch per segment (code order) on the profile's layout."""

    column: str
    coder: SegmentCoder
    sketches: tuple[Sketch, ...]

    @classmethod
    def build(cls, layout: SketchLayout, batch: Batch, column: str,
              texts: Sequence[object] | np.ndarray, top_k: int) -> SegmentProfile:
        """Sketch each segment of a reference ``batch`` whose segment texts are ``texts``."""
        coder = SegmentCoder.top(texts, top_k)
        sketches = [Sketch.empty(layout) for _ in range(len(coder))]
        codes = coder.code(segment_texts(texts))
        for c in range(len(coder)):
            rows = codes == c
            if rows.any():
                sketches[c].add_batch(batch.take(rows))
        return cls(column, coder, tuple(sketches))

    @property
    def names(self) -> tuple[str, ...]:
        return self.coder.names

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, **self.coder.to_dict(),
                "sketches": [s.to_dict() for s in self.sketches]}

    @classmethod
    def from_dict(cls, layout: SketchLayout, d: dict[str, Any]) -> SegmentProfile:
        coder = SegmentCoder.from_dict(d)
        sketches = tuple(Sketch.from_dict(layout, s) for s in d["sketches"])
        if len(sketches) != len(coder):
            raise ValueError(f"a segment profile holds {len(sketches)} sketches for "
                             f"{len(coder)} segments")
        return cls(str(d["column"]), coder, sketches)


def segment_texts(texts: Sequence[object] | np.ndarray) -> np.ndarray:
    """Segment texts as a batch carries them (a table's column, say): blank for a
    missing value."""
    return level_texts(texts).fillna("").to_numpy(dtype=str)


def segment_sketches(layout: SketchLayout, coder: SegmentCoder,
                     batch: Batch) -> tuple[Sketch, ...]:
    """One sketch per segment (code order) of the events in ``batch``."""
    out = [Sketch.empty(layout) for _ in range(len(coder))]
    for code, rows in coder.split(batch):
        out[code].add_batch(rows)
    return tuple(out)
