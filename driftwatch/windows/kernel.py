"""One compiled counting pass per batch: numeric, categorical and score bins together.

The pure-numpy counters in :mod:`driftwatch.windows.layout` stay the reference (and the
fallback); this module runs the same binning as one loop in compiled code (numba) when
numba is installed. Per value it does one multiply, one lookup in a cell table and one
comparison: a column's range is cut into equal cells, and a cell holding at most one
edge stores the bin ``b`` it starts in, so a value's bin is ``b + (edges[b] < value)``,
with no branch on the data. The few cells that hold several edges store ``-b - 1`` and
are searched. An
*integer-valued* column (every reference edge a whole number, a range of at most
``ncell`` numbers) gets one cell per whole number, so counts and other discrete features
never go down the searched path. Rows are cut into chunks counted on a thread pool; the
compiled loop releases the GIL, so every core counts; other work on the batch (a
sketch's sums, in numpy) runs beside on one of them, whose chunk is shorter. Counts are
integers: the kernel and the fallback give identical results (property-tested).

``DRIFTWATCH_KERNEL=numpy`` forces the fallback, ``DRIFTWATCH_KERNEL=numba`` requires the
kernel; ``DRIFTWATCH_KERNEL_THREADS`` caps the threads (default: the usable cores).
Compiled code is cached on disk under ``NUMBA_CACHE_DIR`` when set, else under the
user's cache folder (``$XDG_CACHE_HOME/driftwatch/numba``), never inside the installed
package; where no folder is writable it compiles in memory.

Edges ``0, 1, 2, 3`` are whole numbers: cell ``k`` holds ``[k - 1, k)``, and starts in
bin ``searchsorted(edges, k - 1)``.

>>> import numpy as np
>>> t = BinTables.build([np.array([0.0, 1.0, 2.0, 3.0])], 6, [5], ncell=8)
>>> t.unit.tolist(), t.lo.tolist(), t.top.tolist(), t.cells[0, :5].tolist()
([True], [-1.0], [4.0], [0, 0, 1, 2, 3])
>>> if kernel_name() == "numba":  # the same counts as the numpy counter (tested)
...     fine, under, over = count_numeric(t, np.array([[-1.0], [1.0], [1.5], [np.nan], [9.0]]))
...     assert fine.tolist() == [[1, 1, 1, 0, 1, 1]] and under[0] == over[0] == 1
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from driftwatch.cores import usable_cores
from driftwatch.windows import _compiled

__all__ = [
    "BinTables",
    "CategoricalTable",
    "cell_span",
    "count_fused",
    "count_numeric",
    "count_runs",
    "kernel_name",
]

#: Values per thread below which splitting a batch costs more than it saves.
_MIN_VALUES_PER_TASK = 1 << 16

_pool: ThreadPoolExecutor | None = None


def kernel_name() -> str:
    """``"numba"`` when the compiled kernel counts, ``"numpy"`` for the fallback."""
    return "numpy" if _compiled.loop() is None else "numba"


def _threads() -> int:
    raw = os.environ.get("DRIFTWATCH_KERNEL_THREADS", "")
    if raw.strip():
        return max(int(raw), 1)
    return usable_cores()


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
    edge (``over`` is the last bin, ``nedge[j]``).
    """

    lo: np.ndarray  # float64[C] start of the grid
    inv: np.ndarray  # float64[C] cells per unit
    top: np.ndarray  # float64[C] last cell of the column's grid
    cells: np.ndarray  # int16/int32[C, ncell + 1]: first bin b of a cell, -b - 1 if searched
    edges: np.ndarray  # float64[C, max(E + 1, width)] edges padded with +inf
    first: np.ndarray  # float64[C]
    nedge: np.ndarray  # intp[C] edges of the column: its last bin holds what is above them
    unit: np.ndarray  # bool[C] whole-number edges, on a grid of one cell per whole number
    width: int  # output columns

    @classmethod
    def build(
        cls, edges: Sequence[np.ndarray], width: int, miss: Sequence[int], *, ncell: int = 16384
    ) -> BinTables:
        """Tables for columns with these edges, ``width`` output columns, NaN counted in
        column ``miss[j]`` of column ``j``."""
        c = len(edges)
        lo, inv, base, span = _grid(edges, ncell)
        top = np.full(c, ncell - 1.0)
        unit = np.zeros(c, dtype=bool)
        for j, e in enumerate(edges):
            whole = len(e) > 0 and bool(np.all(np.isfinite(e)) and np.all(e == np.floor(e)))
            if whole and e[-1] - e[0] + 2 <= ncell:
                # cell k holds [e0 - 1 + k, e0 + k): at most one edge, at its start, so
                # every value is one comparison from its bin, however x - lo rounds
                k = int(e[-1] - e[0]) + 2
                lo[j], inv[j], top[j], unit[j] = e[0] - 1.0, 1.0, k - 1.0, True
                base[j, :k] = np.searchsorted(e, lo[j] + np.arange(k), side="left")
                base[j, k:ncell] = base[j, k - 1]
                span[j, :ncell] = 1
        searched = span > 1
        # int16 keeps a column's cells (32 KiB) in the first-level cache beside its values
        small = width < np.iinfo(np.int16).max
        cells = np.where(searched, -base - 1, base).astype(np.int16 if small else np.int32)
        # NaN cell: the missing column, whose edge is padding (NaN < inf is false)
        cells[:, ncell] = np.asarray(miss, dtype=np.int32)
        wide = max(max((len(e) for e in edges), default=0) + 1, int(width))
        padded = np.full((c, wide), np.inf)
        for j, e in enumerate(edges):
            padded[j, : len(e)] = e
        return cls(
            lo=np.ascontiguousarray(lo, dtype=np.float64),
            inv=np.ascontiguousarray(inv, dtype=np.float64),
            top=top,
            cells=np.ascontiguousarray(cells),
            edges=padded,
            first=np.array([e[0] if len(e) else np.inf for e in edges], dtype=np.float64),
            nedge=np.array([len(e) for e in edges], dtype=np.intp),
            unit=unit,
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
    """Equal-width cells over each column's central range, as the numpy counter cuts them.

    Returns the grid start and inverse cell width per column, and per cell its first
    possible bin and *span*: how many edges lie within a small slack of it (far above
    the rounding error of the cell arithmetic). A value in a cell of span 0 or 1 is in
    bin ``first + (edges[first] < value)``; a wider cell is searched. The end cells,
    which also hold everything beyond them, are ``cell_span``'s."""
    c = len(edges)
    lo, inv = np.zeros(c), np.ones(c)
    base = np.zeros((c, ncell + 1), dtype=np.intp)
    span = np.full((c, ncell + 1), 2, dtype=np.intp)  # no edges: every cell is searched
    for j, e in enumerate(edges):
        if len(e) == 0:
            continue
        lo[j], inv[j], first, last = cell_span(e, ncell)
        base[j, :ncell] = first
        span[j, :ncell] = last - first
    return lo, inv, base, span


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
    """``a`` as is when it is contiguous by rows or by columns (the loop reads both),
    else a row-major copy."""
    a = np.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


def _chunks(n: int, per_row: int, beside: int = 0) -> list[tuple[int, int]]:
    """Row spans ``(a, b)`` from 0 to ``n``, one per thread worth starting.

    ``beside``: work the last span's thread also does, in values counted per row; that
    span is shortened so that every thread has about the same share of the whole (and
    holds at least a row)."""
    per = max(per_row, 1)
    most = max(n * per // _MIN_VALUES_PER_TASK, 1)
    # the cores are asked (an environment read and a system call) only for a batch worth
    # splitting: a pane's slice of a poll, the common call, is not
    tasks = 1 if most == 1 else min(_threads(), most)
    if tasks == 1:  # a poll's batch, mostly: one span, without numpy's 15 us of linspace
        return [(0, n)] if n > 0 else []
    last = n // tasks
    if beside > 0:  # (last * per + n * beside) is 1 / tasks of n * (per + beside)
        last = min(max(n * (per - (tasks - 1) * beside) // (tasks * per), 1), last)
    cuts = [*np.linspace(0, n - last, tasks).astype(np.int64).tolist(), n]
    return [(int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a]


def count_fused(
    tables: BinTables,
    numeric: np.ndarray,
    score: np.ndarray,
    cat: CategoricalTable | None = None,
    codes: np.ndarray | None = None,
    *,
    beside: Callable[[], object] | None = None,
    beside_cost: int = 4,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Count ``numeric[n, C]`` and ``score[n]`` on ``tables`` (``C + 1`` columns, the score
    last; ``score`` may be ``None`` with ``C`` columns) and ``codes[n, G]`` on ``cat``.

    Returns fine counts ``int64[C(+1), width]``, under and over counts, and categorical
    counts ``int64[G, cat.width]``. Requires the compiled kernel (:func:`kernel_name`).

    ``beside``: other work on the same batch (a sketch's sums: numpy, which releases the
    GIL), run once before this returns, and raising here if it raises. On a batch split
    across threads it runs on the last one, whose rows are cut by ``beside_cost`` (what
    it costs, in values counted per row: a sketch's sums cost about four, measured) so
    that the threads finish together; otherwise
    after the count, on the calling thread.
    """
    loop = _compiled.loop()
    if loop is None:
        raise RuntimeError("the compiled kernel is not in use (numba missing or disabled)")
    x = np.asarray(numeric, dtype=np.float64)
    n = x.shape[0]
    # column-major (a frame's to_numpy, a decoder's columns, or rows sliced from either):
    # every column is contiguous, and is read in place
    by_column = x.ndim == 2 and n > 0 and (x.flags.f_contiguous or x.strides[0] == x.itemsize)
    x = x.T if by_column else np.ascontiguousarray(x)
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
    spans = _chunks(n, ncol + g, beside_cost if beside is not None else 0)
    outs = [
        (np.zeros((ncol, tables.width), np.int64), np.zeros(ncol, np.int64),
         np.zeros((g, cw), np.int64))
        for _ in spans or [(0, 0)]
    ]

    def run(i: int) -> None:
        if i and i == len(spans) - 1 and beside is not None:
            beside()
        a, b = spans[i]
        fine, under, cc = outs[i]
        loop(x, by_column, s, k, a, b, tables.lo, tables.inv, tables.top, tables.cells,
             tables.edges, tables.first, lut, fine, under, cc)

    if len(spans) > 1:  # the calling thread counts the first chunk: one hand-off fewer
        pool = _executor(len(spans) - 1)
        rest = [pool.submit(run, i) for i in range(1, len(spans))]
        run(0)
        for done in rest:
            done.result()
    else:
        if spans:
            run(0)
        if beside is not None:
            beside()
    fine, under, cc = outs[0]
    for more in outs[1:]:  # integer counts: the order of the sum does not matter
        fine += more[0]
        under += more[1]
        cc += more[2]
    over = fine[np.arange(ncol), tables.nedge]  # the bin above the last edge
    return fine, under, over, cc


def count_numeric(
    tables: BinTables, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fine counts ``int64[C, width]``, under and over counts of ``values[n, C]``."""
    fine, under, over, _ = count_fused(tables, values, None)
    return fine, under, over


def count_runs(tables: BinTables, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Fine counts ``int64[len(starts) - 1, width]`` of one column's ``values``: row ``g``
    counts the run ``values[starts[g]:starts[g + 1]]``, as :func:`count_numeric` would.

    One call of the compiled loop per non-empty run, on outputs made once: many small
    runs (a poll's joined outcomes, by pane and label) cost a few microseconds each,
    not a whole :func:`count_fused` each. Requires the compiled kernel."""
    loop = _compiled.loop()
    if loop is None:
        raise RuntimeError("the compiled kernel is not in use (numba missing or disabled)")
    if tables.n_columns != 1:
        raise ValueError(f"runs are counted on one column's tables, not {tables.n_columns}")
    s = np.ascontiguousarray(values, dtype=np.float64)
    bounds = np.asarray(starts, dtype=np.int64).tolist()
    fine = np.zeros((max(len(bounds) - 1, 0), tables.width), np.int64)
    under = np.zeros(1, np.int64)
    none = np.zeros((0, s.size))  # no feature columns: the values are the "score" column
    codes, lut, cat = np.zeros((s.size, 0), np.int32), np.zeros((0, 3), np.intp), \
        np.zeros((0, 3), np.int64)
    for g, (a, b) in enumerate(itertools.pairwise(bounds)):
        if b > a:
            loop(none, True, s, codes, a, b, tables.lo, tables.inv, tables.top, tables.cells,
                 tables.edges, tables.first, lut, fine[g : g + 1], under, cat)
    return fine
