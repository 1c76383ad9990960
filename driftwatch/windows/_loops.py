"""The counting loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.windows.kernel` for the tables it reads).

Rows are taken in blocks that stay in cache; in each block the columns are counted one
after the other, so one column's tables stay hot while its values stream by: a column
of a column-major batch is read in place, a block of a row-major one is transposed
first. Per value: a cell (vectorised), a lookup, one comparison and an increment, with
a branch only for the rare cells that hold several edges. Values above the last edge are
not counted apart: they are the last bin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

__all__ = ["count_rows"]

#: Rows per block: a block of a row-major batch, transposed (1024 x 25 features x 8
#: bytes), stays in L2, and a column's run is long enough to vectorise.
_BLOCK = 1024
#: The transposed block's rows are this much longer than a block, so that its columns
#: do not fall on the same cache sets (a stride of a power of two would).
_PAD = 24


def _jit(**kw: Any) -> Callable[[Any], Any]:
    """``njit`` with an on-disk cache, or in memory where no cache folder can be used."""
    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, **kw}

    def deco(fn: Any) -> Any:
        try:
            return numba.njit(cache=True, **opts)(fn)
        except RuntimeError:  # numba found no writable cache location
            return numba.njit(cache=False, **opts)(fn)

    return deco


# The helper is inlined into ``count_rows`` at numba's IR level: a call would take and
# drop a reference to every array argument, per block and column.
@_jit(inline="always")
def _column(  # type: ignore[no-untyped-def]
    v, m, ci, lo, inv, top, cells, edges, first, fine, nan
):
    """Count the values ``v[:m]`` of one column (``ci``: scratch for ``m`` cell numbers);
    return how many lie below the first edge.

    First every value's cell, with no dependence between values (vectorised); then per
    value a lookup, and for most cells (those holding at most one edge) its bin is one
    comparison away, with no branch on the data. NaN has a cell of its own, the missing
    column, whose edge is padding (``NaN < inf`` is false).
    """
    under = 0
    for i in range(m):
        x = v[i]
        c = (x - lo) * inv
        c = c if c > 0.0 else 0.0  # below the grid, or NaN
        c = c if c < top else top
        ci[i] = np.int32(c) if x == x else nan
        under += x < first
    for i in range(m):
        t = cells[ci[i]]
        x = v[i]
        if t >= 0:
            fine[t + (edges[t] < x)] += 1
        else:  # several edges close together: search
            b = -t - 1
            while edges[b] < x:  # the padding (+inf) stops it
                b += 1
            fine[b] += 1
    return under


@_jit()
def count_rows(  # type: ignore[no-untyped-def]
    x, by_column, s, k, r0, r1, lo, inv, top, cells, edges, first, lut, fine, under, cat
):
    """Add the counts of rows ``r0:r1`` of the features, ``s[n]`` (column ``C`` of the
    tables, when ``s`` is not empty) and ``k[n, G]`` into ``fine``, ``under`` and
    ``cat``. The features are ``x[C, n]`` when ``by_column`` (a column-major batch,
    transposed: read in place), else ``x[n, C]`` (row-major: each block is transposed
    first). A value's bin is ``searchsorted(edges[j], v, side="left")``; the values
    above the last edge are the last bin's count.
    """
    nx = x.shape[0] if by_column else x.shape[1]
    has_score = s.shape[0] > 0
    g = k.shape[1]
    kmax2 = lut.shape[1] - 1
    nan = cells.shape[1] - 1  # the NaN cell, after every column's grid
    ci = np.empty(_BLOCK, np.int32)
    xb = np.empty((0 if by_column else nx, _BLOCK + _PAD))
    for b0 in range(r0, r1, _BLOCK):
        b1 = min(b0 + _BLOCK, r1)
        m = b1 - b0
        if by_column:
            for j in range(nx):
                under[j] += _column(x[j, b0:b1], m, ci, lo[j], inv[j], top[j], cells[j],
                                    edges[j], first[j], fine[j], nan)
        else:
            for i in range(m):
                row = x[b0 + i]
                for j in range(nx):
                    xb[j, i] = row[j]
            for j in range(nx):
                under[j] += _column(xb[j], m, ci, lo[j], inv[j], top[j], cells[j], edges[j],
                                    first[j], fine[j], nan)
        if has_score:
            under[nx] += _column(s[b0:b1], m, ci, lo[nx], inv[nx], top[nx], cells[nx],
                                 edges[nx], first[nx], fine[nx], nan)
        for j in range(g):
            row = lut[j]
            out = cat[j]
            for i in range(b0, b1):
                c = k[i, j] + 1
                c = 0 if c < 0 else c
                c = kmax2 if c > kmax2 else c
                out[row[c]] += 1
