"""The counting loop, compiled by numba (imported only when numba is; see
:mod:`driftwatch.windows.kernel` for the tables it reads).

Rows are taken in blocks that stay in cache; in each block the columns are counted one
after the other, so one column's tables stay hot while its values stream by.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba

__all__ = ["count_rows"]

_BLOCK = 512  # rows per block: 512 x 25 features x 8 bytes stays in L2


def _jit(**kw: Any) -> Callable[[Any], Any]:
    """``njit`` with an on-disk cache, or in memory where no cache folder can be used."""
    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, **kw}

    def deco(fn: Any) -> Any:
        try:
            return numba.njit(cache=True, **opts)(fn)
        except RuntimeError:  # numba found no writable cache location
            return numba.njit(cache=False, **opts)(fn)

    return deco


@_jit()
def count_rows(  # type: ignore[no-untyped-def]
    x, s, k, r0, r1, lo, inv, cells, edges, first, last, miss, ilo, ihi, ioff, itab, lut,
    fine, under, over, cat,
):
    """Add the counts of rows ``r0:r1`` of ``x[n, C]``, ``s[n]`` (column ``C`` of the
    tables, when ``s`` is not empty) and ``k[n, G]`` into ``fine``, ``under``, ``over``
    and ``cat``. A value's bin is ``searchsorted(edges[j], v, side="left")``.

    Everything is written out in one body: numba calls helpers with reference counting
    on every array argument, which would cost more than the counting itself.
    """
    nx = x.shape[1]
    nc = nx + (1 if s.shape[0] > 0 else 0)
    g = k.shape[1]
    kmax2 = lut.shape[1] - 1
    top = cells.shape[1] - 2  # last cell of the grid (the one after it is NaN's)
    for b0 in range(r0, r1, _BLOCK):
        b1 = min(b0 + _BLOCK, r1)
        for j in range(nc):
            m, f0, f1 = miss[j], first[j], last[j]
            a, z, o = ilo[j], ihi[j], ioff[j]
            base, step = lo[j], inv[j]
            whole = z < a  # no integer table: every value goes through the cells
            for i in range(b0, b1):
                v = x[i, j] if j < nx else s[i]
                if v != v:
                    fine[j, m] += 1
                    continue
                if not whole and a <= v <= z and v == math.floor(v):
                    b = itab[o + int(v - a)]
                else:
                    c = (v - base) * step
                    if not c > 0.0:  # below the grid, or NaN from 0 * inf
                        ci = 0
                    elif c >= top:
                        ci = top
                    else:
                        ci = int(c)
                    t = cells[j, ci]
                    if t >= 0:
                        b = t
                    else:
                        b = -t - 1
                        while edges[j, b] < v:  # the padding (+inf) stops it
                            b += 1
                fine[j, b] += 1
                if v < f0:
                    under[j] += 1
                elif v > f1:
                    over[j] += 1
        for j in range(g):
            for i in range(b0, b1):
                c = k[i, j] + 1
                if c < 0:
                    c = 0
                elif c > kmax2:
                    c = kmax2
                cat[j, lut[j, c]] += 1
