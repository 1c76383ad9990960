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

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from driftwatch.schema import MISSING
from driftwatch.windows import kernel

__all__ = ["PAD", "CategoricalLayout", "NumericLayout", "level_label"]

#: Label of a padding column (a column a narrower feature does not have; never counted).
PAD = ""


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def level_label(level: str) -> str:
    """How a categorical level is shown: itself, or ``'""'`` for the empty string."""
    return level if level else '""'


def _quantiles(col: np.ndarray, n_bins: int) -> np.ndarray:
    finite = col[np.isfinite(col)]
    if finite.size == 0:
        return np.zeros(n_bins + 1)
    return np.quantile(finite, np.linspace(0.0, 1.0, n_bins + 1), method="linear")


#: Cells per column of the lookup grid that replaces a binary search per value.
_CELLS = 16384


@dataclass(frozen=True, eq=False)
class _BinCounter:
    """Histogram counts on uneven edges for many columns at once, without a binary search.

    Each column's central range is cut into equal-width cells, plus one cell for NaN. A
    cell that lies inside one fine bin (most of them) is counted whole: one ``bincount``
    of cell indices. Only values in the few cells an edge crosses are placed exactly,
    by a handful of comparisons. A cell counts as crossed when an edge lies within a
    small slack of it (far more than the rounding error of the cell arithmetic), so
    rounding can never misplace a value. The counts equal
    ``searchsorted(edges, x, side="left")`` binning (tested).
    """

    lo: np.ndarray  # [C] start of the gridded range
    inv_width: np.ndarray  # [C]
    base: np.ndarray  # [C * (cells + 1)] first possible bin of each cell
    target: np.ndarray  # [C * (cells + 1)] flat output column of a whole cell
    crossed: np.ndarray  # [C * (cells + 1)] bool: an edge crosses the (widened) cell
    edges: np.ndarray  # [C, width] edges padded with +inf
    span: int
    width: int  # output columns per feature (bins + missing)
    first: np.ndarray  # [C] first edge (reference minimum)
    last: np.ndarray  # [C] last edge (reference maximum)
    fine_edges: tuple[np.ndarray, ...] = ()  # the unpadded edges, for the compiled kernel

    @classmethod
    def build(cls, edges: tuple[np.ndarray, ...], width: int) -> _BinCounter:
        c, cells = len(edges), _CELLS
        lo, inv = np.zeros(c), np.zeros(c)
        base = np.zeros((c, cells + 1), dtype=np.intp)
        top = np.zeros((c, cells + 1), dtype=np.intp)  # one past the last possible bin
        for j, e in enumerate(edges):
            lo[j], inv[j], first, last = kernel.cell_span(e, cells)
            base[j, :cells] = first
            top[j, :cells] = last
            base[j, cells] = top[j, cells] = width - 1  # NaN: the missing column
        span = int((top - base).max()) if c else 0
        padded = np.full((c, max((len(e) for e in edges), default=0) + span + 1), np.inf)
        for j, e in enumerate(edges):
            padded[j, : len(e)] = e
        target = base + np.arange(c, dtype=np.intp)[:, None] * width
        first_edge = np.array([e[0] for e in edges])
        last_edge = np.array([e[-1] for e in edges])
        return cls(
            lo,
            inv,
            base.ravel(),
            target.ravel(),
            (top != base).ravel(),
            padded,
            span,
            width,
            first_edge,
            last_edge,
            tuple(edges),
        )

    @functools.cached_property
    def tables(self) -> kernel.BinTables:
        """The same bins as lookup tables for the compiled kernel (built on first use)."""
        c = len(self.fine_edges)
        return kernel.BinTables.build(self.fine_edges, self.width, [self.width - 1] * c)

    def count(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``int64[C, width]`` counts (NaN in the last column), and the counts of values
        below the first edge and above the last one (out of the reference range).

        The compiled kernel counts when it is in use; :meth:`count_numpy` otherwise."""
        if kernel.kernel_name() == "numba":
            return kernel.count_numeric(self.tables, x)
        return self.count_numpy(x)

    def count_runs(self, x: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Counts of one column's runs ``x[starts[g]:starts[g + 1]]``, row ``g`` as
        :meth:`count` counts it (see :meth:`NumericLayout.count_runs`)."""
        if kernel.kernel_name() == "numba":
            return kernel.count_runs(self.tables, x, starts)
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros((max(len(starts) - 1, 0), self.width), np.int64)
        for g, (a, b) in enumerate(pairwise(np.asarray(starts).tolist())):
            if b > a:
                out[g] = self.count_numpy(x[a:b, None])[0][0]
        return out

    def count_numpy(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`count` in numpy only: the fallback, and the reference the kernel is
        tested against."""
        c = x.shape[1]
        cells = _CELLS + 1
        with np.errstate(invalid="ignore", over="ignore"):
            cell = (x - self.lo) * self.inv_width
            np.clip(cell, 0, _CELLS - 1, out=cell)
        np.copyto(cell, _CELLS, where=np.isnan(cell))
        cell += np.arange(c) * float(cells)
        cell = cell.astype(np.intp)
        if cell.size >= c * cells:  # large batch: count whole cells, then map them to bins
            per_cell = np.bincount(cell.ravel(), minlength=c * cells)
            whole = ~self.crossed
            out = np.bincount(
                self.target[whole], weights=per_cell[whole], minlength=c * self.width
            ).astype(np.int64)
            uncrossed = None
        else:  # small batch: a pass over every cell would cost more than the values
            uncrossed = ~self.crossed[cell]
            out = np.bincount(self.target[cell[uncrossed]], minlength=c * self.width)
        under = np.zeros(c, dtype=np.int64)
        over = np.zeros(c, dtype=np.int64)
        exact = self.crossed[cell] if uncrossed is None else ~uncrossed
        if exact.any():
            # values beyond the reference range sit in the (always crossed) end cells
            cols = np.broadcast_to(np.arange(c, dtype=np.intp), x.shape)[exact]
            xs = x[exact]
            idx = self.base[cell[exact]]
            flat = self.edges.ravel()
            off = cols * self.edges.shape[1]
            for _ in range(self.span):
                idx += flat[idx + off] < xs
            out += np.bincount(idx + cols * self.width, minlength=c * self.width)
            under = np.bincount(cols[xs < self.first[cols]], minlength=c).astype(np.int64)
            over = np.bincount(cols[xs > self.last[cols]], minlength=c).astype(np.int64)
        return out.reshape(c, self.width), under, over


@dataclass(frozen=True, eq=False)
class NumericLayout:
    """Fine and coarse edges for a block of numeric columns (features, or the score)."""

    names: tuple[str, ...]
    fine_edges: tuple[np.ndarray, ...]  # per column: unique reference quantiles, min..max
    coarse_edges: tuple[np.ndarray, ...]  # per column: inner decile edges (subset of fine)
    _fine_width: int = field(init=False, repr=False)
    _coarse_width: int = field(init=False, repr=False)
    _f2c: np.ndarray = field(init=False, repr=False)
    _f2c_flat: np.ndarray = field(init=False, repr=False)
    _counter: _BinCounter = field(init=False, repr=False)

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
        # the coarse cell of every fine cell of a [C, fw + 1] row block, flattened
        flat = (np.arange(c, dtype=np.intp)[:, None] * (cw + 1) + f2c).ravel()
        object.__setattr__(self, "_f2c_flat", flat)
        object.__setattr__(self, "_counter", _BinCounter.build(self.fine_edges, fw + 1))

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
        data = np.asarray(data, dtype=np.float64)
        data = data.reshape(-1, len(names)) if len(names) else np.empty((0, 0))
        step = fine_bins // coarse_bins
        fine, coarse = [], []
        for j in range(len(names)):
            q = _quantiles(data[:, j], fine_bins)
            fine.append(np.unique(q))
            coarse.append(np.unique(q[step:-1:step]))  # inner decile edges, bit-equal to fine
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

    def coarse_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bound of every coarse column but the missing one, ``[C, Wc-1]``:
        ``-inf``/``inf`` at the open ends, NaN on padding."""
        c, wc = len(self.names), self.coarse_width
        lo = np.full((c, wc - 1), np.nan)
        hi = np.full((c, wc - 1), np.nan)
        for j, ce in enumerate(self.coarse_edges):
            b = np.concatenate(([-np.inf], ce, [np.inf]))
            lo[j, : len(b) - 1] = b[:-1]
            hi[j, : len(b) - 1] = b[1:]
        return lo, hi

    def coarse_labels(self) -> tuple[tuple[str, ...], ...]:
        """A label for every column of a coarse count row (``coarse_width`` per feature):
        ``(lo, hi]`` per bin, :data:`PAD` on padding, ``missing`` last.

        >>> lay = NumericLayout.fit(("x", "k"), np.c_[np.arange(100.0), np.full(100, 3.0)],
        ...                         coarse_bins=2, fine_bins=4)
        >>> lay.coarse_labels()
        (('(-inf, 49.5]', '(49.5, inf)', 'missing'), ('(-inf, 3]', '(3, inf)', 'missing'))
        """
        out = []
        for ce in self.coarse_edges:
            b = np.concatenate(([-np.inf], ce, [np.inf]))
            bins = [f"({_fmt(x)}, {_fmt(y)}]" for x, y in pairwise(b)]
            bins[-1] = bins[-1][:-1] + ")"  # the overflow bin is open: (max, inf)
            out.append((*bins, *([PAD] * (self.coarse_width - 1 - len(bins))), "missing"))
        return tuple(out)

    def count(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fine counts ``int64[C, fine_width]`` (last column missing), under and over counts."""
        values = np.asarray(values, dtype=np.float64)
        c, w = len(self.names), self.fine_width
        if values.shape[0] == 0 or c == 0:
            z = np.zeros(c, dtype=np.int64)
            return np.zeros((c, w), dtype=np.int64), z, z.copy()
        return self._counter.count(values)

    def count_runs(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Fine counts ``int64[len(starts) - 1, fine_width]`` of a one-column layout (the
        score): row ``g`` counts ``values[starts[g]:starts[g + 1]]`` as :meth:`count` does,
        in one call however many runs (joined outcomes, by pane and label).

        >>> lay = NumericLayout.fit(("s",), np.arange(10.0)[:, None], coarse_bins=2, fine_bins=4)
        >>> lay.count_runs(np.array([0.5, 9.0, np.nan, 3.0]), np.array([0, 1, 1, 4]))
        array([[0, 1, 0, 0, 0, 0, 0],
               [0, 0, 0, 0, 0, 0, 0],
               [0, 0, 1, 0, 1, 0, 1]])
        """
        if len(self.names) != 1:
            raise ValueError(f"runs are counted on one column, not {len(self.names)}")
        return self._counter.count_runs(values, starts)

    def coarse(self, fine: np.ndarray) -> np.ndarray:
        """Coarse (decile + missing) counts from fine counts: ``[..., C, coarse_width]``."""
        fine = np.asarray(fine)
        lead, c = fine.shape[:-2], len(self.names)
        # one add.at over the flattened columns (not one per column): each coarse cell
        # sums the same fine cells in the same order
        out = np.zeros((*lead, c * self.coarse_width), dtype=fine.dtype)
        np.add.at(out, (..., self._f2c_flat), fine.reshape(*lead, c * fine.shape[-1]))
        return out.reshape(*lead, c, self.coarse_width)

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

    @functools.cached_property
    def kmax(self) -> int:
        """The most levels any feature has (every column index below is read from it, a
        few times a window, and the levels never change)."""
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

    def column_labels(self) -> tuple[tuple[str, ...], ...]:
        """A label for every column of a count row (``width`` per feature): the levels,
        :data:`PAD` on padding, then ``other``, ``unseen``, ``missing`` (in parentheses
        when a level has the same name, so labels stay unique).

        >>> CategoricalLayout(("flag", "p"), (("Y",), ("a", "other", "c"))).column_labels()
        (('Y', '', '', 'other', 'unseen', 'missing'), ('a', 'other', 'c', '(other)', 'unseen', \
'missing'))
        """
        out = []
        for lv in self.levels:
            names = {level_label(v) for v in lv}
            tail = [t if t not in names else f"({t})" for t in ("other", "unseen", "missing")]
            out.append((*map(level_label, lv), *([PAD] * (self.kmax - len(lv))), *tail))
        return tuple(out)

    def valid(self) -> np.ndarray:
        """``bool[G, width]``: the feature's levels plus other/unseen/missing."""
        v = np.arange(self.width)[None, :] < np.array([len(lv) for lv in self.levels])[:, None]
        v[:, self.kmax :] = True
        return v.reshape(len(self.names), self.width)

    def count(self, codes: np.ndarray) -> np.ndarray:
        g, w, kmax = len(self.names), self.width, self.kmax
        if g == 0 or codes.shape[0] == 0:
            return np.zeros((g, w), dtype=np.int64)
        # one gather: code c of feature j (c in -1 .. K_j + 1) -> its flat output column
        lut = np.empty((g, kmax + 3), dtype=np.intp)
        for j, lv in enumerate(self.levels):
            k = len(lv)
            lut[j, 0] = kmax + 2  # missing
            lut[j, 1 : k + 1] = np.arange(k)
            lut[j, k + 1] = kmax  # other
            lut[j, k + 2 :] = kmax + 1  # unseen (and anything past it)
            lut[j] += j * w
        flat = codes.astype(np.intp) - MISSING  # missing (-1) first
        np.clip(flat, 0, kmax + 2, out=flat)
        flat += np.arange(g, dtype=np.intp) * (kmax + 3)
        return np.bincount(lut.ravel()[flat.ravel()], minlength=g * w).reshape(g, w).astype(
            np.int64
        )

    def to_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "levels": [list(lv) for lv in self.levels]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CategoricalLayout:
        return cls(tuple(d["names"]), tuple(tuple(lv) for lv in d["levels"]))
