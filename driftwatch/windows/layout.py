"""Bin layouts fixed on the reference: where every value of a feature falls.

Numeric columns get *fine* bins on reference quantiles (default 200) whose edges include
the *coarse* decile edges, so the coarse histogram used for PSI/KL is an exact sum of
fine bins and one ``searchsorted`` per column serves both. A fine bin ``i`` covers
``(E[i-1], E[i]]`` (right-closed, like SAS PROC RANK groups); bin 0 also holds everything
``<= min(reference)`` and the last bin everything ``> max(reference)``. NaN goes to a
separate *missing* column (the last one), never dropped.

>>> import numpy as np
>>> lay = NumericLayout.fit(("x",), np.arange(1000.0)[:, None], coarse_bins=10, fine_bins=20)
>>> fine, under, over = lay.count(np.array([[-5.0], [0.0], [450.0], [np.nan], [2000.0]]))
>>> int(fine[0].sum()), int(fine[0, -1]), int(under[0]), int(over[0])
(5, 1, 1, 1)
>>> coarse = lay.coarse(fine)
>>> coarse.shape, int(coarse[0, 0]), int(coarse[0, 4]), int(coarse[0, 9]), int(coarse[0, -1])
((1, 11), 2, 1, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.schema import MISSING

__all__ = ["CategoricalLayout", "NumericLayout"]


def _quantile_edges(col: np.ndarray, n_bins: int) -> np.ndarray:
    finite = col[np.isfinite(col)]
    if finite.size == 0:
        return np.zeros(1)
    qs = np.quantile(finite, np.linspace(0.0, 1.0, n_bins + 1), method="linear")
    return np.unique(qs)


@dataclass(frozen=True, eq=False)
class NumericLayout:
    """Fine and coarse edges for a block of numeric columns (features, or the score)."""

    names: tuple[str, ...]
    fine_edges: tuple[np.ndarray, ...]  # per column: unique reference quantiles, min..max
    coarse_edges: tuple[np.ndarray, ...]  # per column: inner decile edges (subset of fine)
    _fine_width: int = field(init=False, repr=False)
    _coarse_width: int = field(init=False, repr=False)
    _f2c: np.ndarray = field(init=False, repr=False)
    _lo: np.ndarray = field(init=False, repr=False)
    _hi: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = len(self.names)
        fw = max((len(e) + 1 for e in self.fine_edges), default=1)
        cw = max((len(e) + 1 for e in self.coarse_edges), default=1)
        f2c = np.full((c, fw + 1), cw, dtype=np.intp)  # padding maps to the missing column
        for j, (fe, ce) in enumerate(zip(self.fine_edges, self.coarse_edges, strict=True)):
            idx = np.searchsorted(ce, fe, side="left")  # coarse bin of each fine upper edge
            f2c[j, : len(fe)] = idx
            f2c[j, len(fe)] = len(ce)  # overflow fine bin -> last coarse bin
            f2c[j, fw] = cw  # missing -> missing
        object.__setattr__(self, "_fine_width", fw)
        object.__setattr__(self, "_coarse_width", cw)
        object.__setattr__(self, "_f2c", f2c)
        object.__setattr__(self, "_lo", np.array([e[0] for e in self.fine_edges] or [0.0]))
        object.__setattr__(self, "_hi", np.array([e[-1] for e in self.fine_edges] or [0.0]))

    @classmethod
    def fit(
        cls,
        names: Sequence[str],
        data: np.ndarray,
        *,
        coarse_bins: int = 10,
        fine_bins: int = 200,
    ) -> NumericLayout:
        """Edges from reference data ``float64[n, C]``; ``fine_bins`` must be a multiple of
        ``coarse_bins`` so that every decile edge is also a fine edge."""
        if fine_bins % coarse_bins:
            raise ValueError("fine_bins must be a multiple of coarse_bins")
        data = np.asarray(data, dtype=np.float64).reshape(-1, len(names))
        fine, coarse = [], []
        for j in range(len(names)):
            fe = _quantile_edges(data[:, j], fine_bins)
            ce = _quantile_edges(data[:, j], coarse_bins)[1:-1]  # inner decile edges
            fine.append(fe)
            coarse.append(ce)
        return cls(tuple(names), tuple(fine), tuple(coarse))

    @property
    def fine_width(self) -> int:
        """Columns of a fine count row: bins (padded to the widest column) + missing."""
        return self._fine_width + 1

    @property
    def coarse_width(self) -> int:
        return self._coarse_width + 1

    @property
    def n_fine(self) -> np.ndarray:
        return np.array([len(e) + 1 for e in self.fine_edges], dtype=np.intp)

    @property
    def n_coarse(self) -> np.ndarray:
        return np.array([len(e) + 1 for e in self.coarse_edges], dtype=np.intp)

    def fine_valid(self) -> np.ndarray:
        """``bool[C, fine_width]``: real bins (and missing), False on padding."""
        v = np.arange(self.fine_width)[None, :] < self.n_fine[:, None]
        v[:, -1] = True
        return v

    def coarse_valid(self) -> np.ndarray:
        v = np.arange(self.coarse_width)[None, :] < self.n_coarse[:, None]
        v[:, -1] = True
        return v

    def count(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fine counts ``int64[C, fine_width]`` (last column missing), under and over counts."""
        values = np.asarray(values, dtype=np.float64)
        c, w = len(self.names), self.fine_width
        if values.shape[0] == 0 or c == 0:
            z = np.zeros(c, dtype=np.int64)
            return np.zeros((c, w), dtype=np.int64), z, z.copy()
        idx = np.empty(values.shape, dtype=np.intp)
        for j, edges in enumerate(self.fine_edges):
            idx[:, j] = np.searchsorted(edges, values[:, j], side="left")
        idx[np.isnan(values)] = w - 1
        idx += np.arange(c, dtype=np.intp)[None, :] * w
        counts = np.bincount(idx.ravel(), minlength=c * w).reshape(c, w).astype(np.int64)
        under = np.count_nonzero(values < self._lo[None, :], axis=0).astype(np.int64)
        over = np.count_nonzero(values > self._hi[None, :], axis=0).astype(np.int64)
        return counts, under, over

    def coarse(self, fine: np.ndarray) -> np.ndarray:
        """Coarse (decile + missing) counts from fine counts: ``[..., C, coarse_width]``."""
        fine = np.asarray(fine)
        c = len(self.names)
        out = np.zeros((*fine.shape[:-2], c, self.coarse_width), dtype=fine.dtype)
        for j in range(c):
            np.add.at(out[..., j, :], (..., self._f2c[j]), fine[..., j, :])
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "fine_edges": [e.tolist() for e in self.fine_edges],
            "coarse_edges": [e.tolist() for e in self.coarse_edges],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NumericLayout:
        return cls(
            tuple(d["names"]),
            tuple(np.asarray(e, dtype=np.float64) for e in d["fine_edges"]),
            tuple(np.asarray(e, dtype=np.float64) for e in d["coarse_edges"]),
        )


@dataclass(frozen=True, eq=False)
class CategoricalLayout:
    """Columns of a categorical count row: ``[levels..., (padding), other, unseen, missing]``.

    >>> lay = CategoricalLayout(("p",), (("a", "b"),))
    >>> lay.count(np.array([[0], [1], [2], [3], [-1], [1]], dtype=np.int32)).tolist()
    [[1, 2, 1, 1, 1]]
    """

    names: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]

    @property
    def kmax(self) -> int:
        return max((len(lv) for lv in self.levels), default=0)

    @property
    def width(self) -> int:
        return self.kmax + 3

    @property
    def other_col(self) -> int:
        return self.kmax

    @property
    def unseen_col(self) -> int:
        return self.kmax + 1

    @property
    def missing_col(self) -> int:
        return self.kmax + 2

    def valid(self) -> np.ndarray:
        """``bool[G, width]``: the feature's levels plus other/unseen/missing."""
        v = np.arange(self.width)[None, :] < np.array([len(lv) for lv in self.levels])[:, None]
        v[:, self.kmax :] = True
        return v.reshape(len(self.names), self.width)

    def count(self, codes: np.ndarray) -> np.ndarray:
        g, w, kmax = len(self.names), self.width, self.kmax
        if g == 0 or codes.shape[0] == 0:
            return np.zeros((g, w), dtype=np.int64)
        k = np.array([len(lv) for lv in self.levels], dtype=np.int64)[None, :]
        c = codes.astype(np.int64)
        cols = np.where(c < k, c, c - k + kmax)
        cols = np.where(c == MISSING, kmax + 2, cols)
        cols += np.arange(g, dtype=np.int64)[None, :] * w
        return np.bincount(cols.ravel(), minlength=g * w).reshape(g, w).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "levels": [list(lv) for lv in self.levels]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CategoricalLayout:
        return cls(tuple(d["names"]), tuple(tuple(lv) for lv in d["levels"]))
