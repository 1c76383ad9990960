"""The counting loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.windows.kernel` for the tables it reads).

Rows are taken in blocks that stay in cache; in each block the columns are counted one
after the other, so one column's tables stay hot while its values stream by (a column
of a column-major batch is read in order). Per value: a cell, a lookup, one comparison
and an increment, with a branch only for the rare cells that hold several edges. Values
above the last edge are not counted apart: they are the last bin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba

__all__ = ["count_rows"]

#: Rows per block: 2048 x 25 features x 8 bytes stays in L2, and a column's run of a
#: block is long enough that the switch between columns costs nothing.
_BLOCK = 2048


def _jit(**kw: Any) -> Callable[[Any], Any]:
    """``njit`` with an on-disk cache, or in memory where no cache folder can be used."""
    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, **kw}

    def deco(fn: Any) -> Any:
        try:
            return numba.njit(cache=True, **opts)(fn)
        except RuntimeError:  # numba found no writable cache location
            return numba.njit(cache=False, **opts)(fn)

    return deco


# The helpers are inlined into ``count_rows`` at numba's IR level: a call would take and
# drop a reference to every array argument, per block and column.
@_jit(inline="always")
def _place(x, lo, inv, cells, edges, fine, top, nan):  # type: ignore[no-untyped-def]
    """Count one value through the cells.

    Most cells hold at most one edge: the bin is one comparison away, with no branch on
    the data (NaN has a cell of its own, the missing column, whose edge is padding).
    """
    c = (x - lo) * inv
    c = c if c > 0.0 else 0.0  # below the grid, or NaN
    c = c if c < top else top
    t = cells[int(c) if x == x else nan]
    if t >= 0:
        fine[t + (edges[t] < x)] += 1
        return
    b = -t - 1  # several edges close together: search
    while edges[b] < x:  # the padding (+inf) stops it
        b += 1
    fine[b] += 1


@_jit(inline="always")
def _column(v, lo, inv, top, cells, edges, first, fine, nan):  # type: ignore[no-untyped-def]
    """Count the values ``v`` of one column; return how many lie below the first edge."""
    under = 0
    for i in range(v.shape[0]):
        x = v[i]
        _place(x, lo, inv, cells, edges, fine, top, nan)
        under += x < first
    return under


@_jit()
def count_rows(  # type: ignore[no-untyped-def]
    x, s, k, r0, r1, lo, inv, top, cells, edges, first, lut, fine, under, cat
):
    """Add the counts of rows ``r0:r1`` of ``x[n, C]``, ``s[n]`` (column ``C`` of the
    tables, when ``s`` is not empty) and ``k[n, G]`` into ``fine``, ``under`` and
    ``cat``. A value's bin is ``searchsorted(edges[j], v, side="left")``; the values
    above the last edge are the last bin's count.
    """
    nx = x.shape[1]
    has_score = s.shape[0] > 0
    g = k.shape[1]
    kmax2 = lut.shape[1] - 1
    nan = cells.shape[1] - 1  # the NaN cell, after every column's grid
    for b0 in range(r0, r1, _BLOCK):
        b1 = min(b0 + _BLOCK, r1)
        for j in range(nx):
            under[j] += _column(x[b0:b1, j], lo[j], inv[j], top[j], cells[j], edges[j],
                                first[j], fine[j], nan)
        if has_score:
            under[nx] += _column(s[b0:b1], lo[nx], inv[nx], top[nx], cells[nx], edges[nx],
                                 first[nx], fine[nx], nan)
        for j in range(g):
            row = lut[j]
            out = cat[j]
            for i in range(b0, b1):
                c = k[i, j] + 1
                c = 0 if c < 0 else c
                c = kmax2 if c > kmax2 else c
                out[row[c]] += 1
