"""One compiled counting pass per batch: numeric, categorical and score bins together.

The pure-numpy counters in :mod:`driftwatch.windows.layout` stay the reference (and the
fallback); this module runs the same binning as one loop in compiled code (numba) when
numba is installed. Per value it does one multiply and one lookup in a cell table
(``int32[C, cells + 1]``: the bin of a cell that lies inside one bin, or ``-(first bin) -
1`` for a cell an edge crosses, which is then placed by a few comparisons), and for
*integer-valued* columns (every reference edge a whole number, a small range) a direct
value-to-bin table, so counts and other discrete features never go down the exact path.
Rows are cut into chunks counted on a thread pool; the compiled loop releases the GIL, so
every core counts. Counts are integers: the kernel and the fallback give identical
results (property-tested).

``DRIFTWATCH_KERNEL=numpy`` forces the fallback, ``DRIFTWATCH_KERNEL=numba`` requires the
kernel; ``DRIFTWATCH_KERNEL_THREADS`` caps the threads (default: the usable cores).
Compiled code is cached on disk under ``NUMBA_CACHE_DIR`` when set, else under the
user's cache folder (``$XDG_CACHE_HOME/driftwatch/numba``), never inside the installed
package; where no folder is writable it compiles in memory.

Edges ``0, 1, 2, 3`` are whole numbers: the values ``-1 .. 4`` get a direct table (bin =
number of edges below the value), every other value goes through the cells.

>>> import numpy as np
>>> t = BinTables.build([np.array([0.0, 1.0, 2.0, 3.0])], 6, [5])
>>> t.ilo.tolist(), t.ihi.tolist(), t.itab.tolist()
([-1.0], [4.0], [0, 0, 1, 2, 3, 4])
>>> if kernel_name() == "numba":  # the same counts as the numpy counter (tested)
...     fine, under, over = count_numeric(t, np.array([[-1.0], [1.0], [1.5], [np.nan], [9.0]]))
...     assert fine.tolist() == [[1, 1, 1, 0, 1, 1]] and under[0] == over[0] == 1
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from driftwatch.windows import _compiled

__all__ = [
    "BinTables",
    "CategoricalTable",
    "cell_span",
    "count_fused",
    "count_numeric",
    "kernel_name",
]

#: Values per thread below which splitting a batch costs more than it saves.
_MIN_VALUES_PER_TASK = 1 << 16
#: Widest integer range (values) that gets a direct value-to-bin table.
_INT_RANGE = 1 << 16

_pool: ThreadPoolExecutor | None = None


def kernel_name() -> str:
    """``"numba"`` when the compiled kernel counts, ``"numpy"`` for the fallback."""
    return "numpy" if _compiled.loop() is None else "numba"


def _threads() -> int:
    raw = os.environ.get("DRIFTWATCH_KERNEL_THREADS", "")
    if raw.strip():
        return max(int(raw), 1)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


def _executor(threads: int) -> ThreadPoolExecutor:
    global _pool
    if _pool is None or _pool._max_workers < threads:
        _pool = ThreadPoolExecutor(threads, thread_name_prefix="driftwatch-count")
    return _pool


@dataclass(frozen=True, eq=False)
class BinTables:
    """Lookup tables of a block of numeric columns, in the layout the kernel reads.

    Bin ``b`` of a value is ``searchsorted(edges, x, side="left")``; NaN goes to the
    column ``miss[j]``; ``under``/``over`` count values below the first / above the last
    edge.
    """

    lo: np.ndarray  # float64[C] start of the gridded range
    inv: np.ndarray  # float64[C] cells per unit
    cells: np.ndarray  # int32[C, ncell + 1]: bin of a whole cell, or -(first bin) - 1
    edges: np.ndarray  # float64[C, E] edges padded with +inf
    first: np.ndarray  # float64[C]
    last: np.ndarray  # float64[C]
    miss: np.ndarray  # intp[C] output column of NaN
    ilo: np.ndarray  # float64[C] smallest value of the integer table (ihi < ilo: none)
    ihi: np.ndarray  # float64[C]
    ioff: np.ndarray  # intp[C] offset of the column's integer table in ``itab``
    itab: np.ndarray  # int32[sum of ranges]
    width: int  # output columns

    @classmethod
    def build(
        cls, edges: Sequence[np.ndarray], width: int, miss: Sequence[int], *, ncell: int = 16384
    ) -> BinTables:
        """Tables for columns with these edges, ``width`` output columns, NaN counted in
        column ``miss[j]`` of column ``j``."""
        c = len(edges)
        lo, inv, base, crossed = _grid(edges, ncell)
        cells = np.where(crossed, -base - 1, base).astype(np.int32)
        # NaN cell: always a whole cell of the missing column
        cells[:, ncell] = np.asarray(miss, dtype=np.int32)
        wide = max((len(e) for e in edges), default=0) + 1
        padded = np.full((c, wide), np.inf)
        for j, e in enumerate(edges):
            padded[j, : len(e)] = e
        ilo, ihi = np.zeros(c), np.full(c, -1.0)
        ioff = np.zeros(c, dtype=np.intp)
        parts, at = [], 0
        for j, e in enumerate(edges):
            if len(e) == 0 or not np.all(np.isfinite(e)) or np.any(e != np.floor(e)):
                continue
            a, b = float(e[0]) - 1.0, float(e[-1]) + 1.0
            if b - a > _INT_RANGE:
                continue
            vals = a + np.arange(int(b - a) + 1, dtype=np.float64)
            parts.append(np.searchsorted(e, vals, side="left").astype(np.int32))
            ilo[j], ihi[j], ioff[j] = a, b, at
            at += vals.size
        return cls(
            lo=np.ascontiguousarray(lo, dtype=np.float64),
            inv=np.ascontiguousarray(inv, dtype=np.float64),
            cells=np.ascontiguousarray(cells),
            edges=padded,
            first=np.array([e[0] if len(e) else np.inf for e in edges], dtype=np.float64),
            last=np.array([e[-1] if len(e) else -np.inf for e in edges], dtype=np.float64),
            miss=np.asarray(miss, dtype=np.intp),
            ilo=ilo,
            ihi=ihi,
            ioff=ioff,
            itab=np.concatenate(parts) if parts else np.zeros(1, np.int32),
            width=int(width),
        )

    @property
    def n_columns(self) -> int:
        return int(self.lo.size)


def cell_span(e: np.ndarray, cells: int) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Cut one column's central range into ``cells`` equal cells over its edges ``e``.

    Returns the grid start, its inverse cell width, and per cell the first and one past
    the last fine bin it may fall in (equal where a cell lies inside one bin). Shared by
    the numpy counter and the compiled kernel, so both place values alike.
    """
    m = len(e)
    a, b = (e[1], e[-2]) if m >= 4 else (e[0], e[-1])
    step = (b - a) / cells if b > a else 1.0
    bounds = a + step * np.arange(cells + 1)
    slack = step * 1e-6  # far above the rounding error of the cell arithmetic
    first = np.searchsorted(e, bounds[:-1] - slack, side="left")
    last = np.searchsorted(e, bounds[1:] + slack, side="left")
    # the end cells also hold everything beyond them, and are always placed
    # exactly: that is where out-of-range values are counted
    first[0], last[-1] = 0, m
    first[-1] = min(first[-1], m - 1)
    last[0] = max(last[0], 1)
    if b <= a:  # a (nearly) constant reference: place every value exactly
        first[:], last[:] = 0, m
    return float(a), 1.0 / step, first, last


def _grid(
    edges: Sequence[np.ndarray], ncell: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Equal-width cells over each column's central range, as the numpy counter cuts them:
    a cell is *crossed* when an edge lies within a small slack of it (far above the
    rounding error of the cell arithmetic); the end cells, which also hold everything
    beyond them, are always crossed."""
    c = len(edges)
    lo, inv = np.zeros(c), np.ones(c)
    base = np.zeros((c, ncell + 1), dtype=np.intp)
    crossed = np.ones((c, ncell + 1), dtype=bool)
    for j, e in enumerate(edges):
        m = len(e)
        if m == 0:
            continue
        lo[j], inv[j], first, last = cell_span(e, ncell)
        base[j, :ncell] = first
        crossed[j, :ncell] = last != first
    return lo, inv, base, crossed


@dataclass(frozen=True, eq=False)
class CategoricalTable:
    """``lut[G, kmax + 3]``: output column of code ``c`` (``-1 .. K + 1``) at ``c + 1``."""

    lut: np.ndarray  # intp[G, kmax + 3]
    width: int

    @classmethod
    def build(cls, n_levels: Sequence[int]) -> CategoricalTable:
        g = len(n_levels)
        kmax = max(n_levels, default=0)
        lut = np.empty((g, kmax + 3), dtype=np.intp)
        for j, k in enumerate(n_levels):
            lut[j, 0] = kmax + 2  # missing
            lut[j, 1 : k + 1] = np.arange(k)
            lut[j, k + 1] = kmax  # other
            lut[j, k + 2 :] = kmax + 1  # unseen (and anything past it)
        return cls(lut, kmax + 3)


def _either_order(a: np.ndarray, dtype: type) -> np.ndarray:
    """``a`` as is when it is contiguous by rows or by columns (the loop is compiled for
    both; a frame's ``to_numpy`` is by columns), else a row-major copy."""
    a = np.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


def _chunks(n: int, per_row: int) -> list[tuple[int, int]]:
    tasks = min(_threads(), max(n * max(per_row, 1) // _MIN_VALUES_PER_TASK, 1))
    cuts = np.linspace(0, n, tasks + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a]


def count_fused(
    tables: BinTables,
    numeric: np.ndarray,
    score: np.ndarray,
    cat: CategoricalTable | None = None,
    codes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Count ``numeric[n, C]`` and ``score[n]`` on ``tables`` (``C + 1`` columns, the score
    last; ``score`` may be ``None`` with ``C`` columns) and ``codes[n, G]`` on ``cat``.

    Returns fine counts ``int64[C(+1), width]``, under and over counts, and categorical
    counts ``int64[G, cat.width]``. Requires the compiled kernel (:func:`kernel_name`).
    """
    loop = _compiled.loop()
    if loop is None:
        raise RuntimeError("the compiled kernel is not in use (numba missing or disabled)")
    x = _either_order(numeric, np.float64)
    n = x.shape[0]
    s = np.zeros(0) if score is None else np.ascontiguousarray(score, dtype=np.float64)
    if cat is None or codes is None:
        lut = np.zeros((0, 3), dtype=np.intp)
        k = np.zeros((n, 0), dtype=np.int32)
    else:
        lut = cat.lut
        k = _either_order(codes, np.int32)
    cw = 3 if cat is None else cat.width
    ncol = tables.n_columns
    g = lut.shape[0]
    spans = _chunks(n, x.shape[1] + g + (s.size > 0))
    outs = [
        (
            np.zeros((ncol, tables.width), np.int64),
            np.zeros(ncol, np.int64),
            np.zeros(ncol, np.int64),
            np.zeros((g, cw), np.int64),
        )
        for _ in spans
    ]

    def run(i: int) -> None:
        a, b = spans[i]
        fine, under, over, cc = outs[i]
        loop(
            x, s, k, a, b, tables.lo, tables.inv, tables.cells, tables.edges, tables.first,
            tables.last, tables.miss, tables.ilo, tables.ihi, tables.ioff, tables.itab, lut,
            fine, under, over, cc,
        )

    if len(spans) == 1:
        run(0)
    elif spans:
        list(_executor(len(spans)).map(run, range(len(spans))))
    else:  # no rows
        return (np.zeros((ncol, tables.width), np.int64), np.zeros(ncol, np.int64),
                np.zeros(ncol, np.int64), np.zeros((g, cw), np.int64))
    fine, under, over, cc = outs[0]
    for more in outs[1:]:  # integer counts: the order of the sum does not matter
        fine += more[0]
        under += more[1]
        over += more[2]
        cc += more[3]
    return fine, under, over, cc


def count_numeric(
    tables: BinTables, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fine counts ``int64[C, width]``, under and over counts of ``values[n, C]``."""
    fine, under, over, _ = count_fused(tables, values, None)
    return fine, under, over
