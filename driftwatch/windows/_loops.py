"""The counting loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.windows.kernel` for the tables it reads).

Values are counted a column at a time, in blocks of rows that stay in cache, so one
column's tables stay hot while its values stream by: a column of a column-major batch is
read in place, a block of a row-major one (a group of columns) is transposed first. Per
value: a cell (vectorised), a lookup, one comparison and an increment, with a branch
only for the rare cells that hold several edges. Values above the last edge are not
counted apart: they are the last bin.
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["count_rows"]

#: Rows per block: a column's run of a block (16 KiB) and its cell numbers stay in the
#: first-level cache, and the run is long enough to vectorise.
_BLOCK = 2048
#: Columns of a row-major batch transposed together: their block (512 KiB) and their
#: cell tables (1 MiB) stay in L2 while every block of rows goes through.
_GROUP = 32
#: The transposed block's rows are this much longer than a block, so that its columns
#: do not fall on the same cache sets (a stride of a power of two would).
_PAD = 24


_jit = compiled


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
        ci[i] = np.uint32(c) if x == x else nan
        under += x < first
    # unsigned indices: numba checks a signed index for a negative one (Python's
    # wrap-around) on every lookup, which cost a quarter of the loop's time
    for i in range(m):
        t = cells[np.uintp(ci[i])]
        x = v[i]
        if t >= 0:
            b = np.uintp(t)
            fine[b + np.uintp(edges[b] < x)] += 1
        else:  # several edges close together: search
            b = np.uintp(-t - 1)
            while edges[b] < x:  # the padding (+inf) stops it
                b += np.uintp(1)
            fine[b] += 1
    return under


@_jit()
def count_rows(  # type: ignore[no-untyped-def]
    x, by_column, s, k, r0, r1, lo, inv, top, cells, edges, first, lut, fine, under, cat
):
    """Add the counts of rows ``r0:r1`` of the features, ``s[n]`` (column ``C`` of the
    tables, when ``s`` is not empty) and ``k[n, G]`` into ``fine``, ``under`` and
    ``cat``. The features are ``x[C, n]`` when ``by_column`` (a column-major batch,
    transposed: each column is read in place, its tables hot for all its rows), else
    ``x[n, C]`` (row-major: a group of columns at a time, each block of rows transposed
    first). A value's bin is ``searchsorted(edges[j], v, side="left")``; the values
    above the last edge are the last bin's count.
    """
    nx = x.shape[0] if by_column else x.shape[1]
    has_score = s.shape[0] > 0
    g = k.shape[1]
    kmax2 = lut.shape[1] - 1
    nan = np.uint32(cells.shape[1] - 1)  # the NaN cell, after every column's grid
    ci = np.empty(_BLOCK, np.uint32)
    if by_column:  # a column at a time, its tables hot for the whole run of rows
        for j in range(nx):
            for b0 in range(r0, r1, _BLOCK):
                b1 = min(b0 + _BLOCK, r1)
                under[j] += _column(x[j, b0:b1], b1 - b0, ci, lo[j], inv[j], top[j], cells[j],
                                    edges[j], first[j], fine[j], nan)
    else:  # a group of columns at a time, each block of rows transposed first
        xb = np.empty((min(nx, _GROUP), _BLOCK + _PAD))
        for g0 in range(0, nx, _GROUP):
            g1 = min(g0 + _GROUP, nx)
            for b0 in range(r0, r1, _BLOCK):
                b1 = min(b0 + _BLOCK, r1)
                m = b1 - b0
                w = g1 - g0
                for i in range(m):
                    row = x[b0 + i, g0:g1]
                    for jj in range(w):
                        xb[jj, i] = row[jj]
                for jj in range(w):
                    j = g0 + jj
                    under[j] += _column(xb[jj], m, ci, lo[j], inv[j], top[j], cells[j],
                                        edges[j], first[j], fine[j], nan)
    for b0 in range(r0, r1, _BLOCK):
        b1 = min(b0 + _BLOCK, r1)
        if has_score:
            under[nx] += _column(s[b0:b1], b1 - b0, ci, lo[nx], inv[nx], top[nx], cells[nx],
                                 edges[nx], first[nx], fine[nx], nan)
        # codes a row at a time: a row-major batch's are read in order, and a column-major
        # one's row stays in cache (a column at a time, row-major codes were read strided
        # and cost twice as much)
        for i in range(b0, b1):
            row = k[i]
            for j in range(g):
                c = row[j] + 1
                c = 0 if c < 0 else c
                c = kmax2 if c > kmax2 else c
                cat[j, np.uintp(lut[j, np.uintp(c)])] += 1
