"""Per-bin sums of scored rows, grouped by cohort: the arithmetic of the cohort book.

Rows are binned on ``logit(P(bad))`` over ``[-10, 10]`` (``BINS`` bins plus a missing
column) and summed per (group, class, bin) in fixed point (``2**-32``) as integers, so
adding the same rows in any order or grouping gives the same numbers, bit for bit. With
numba a batch's sums are one compiled pass (:mod:`driftwatch.labels._cohortloops`;
``DRIFTWATCH_KERNEL=numpy`` forces the numpy fallback, which gives the same integers).

>>> import numpy as np
>>> score_bins(np.array([0.5, 1e-9, np.nan])).tolist()   # the middle, the low end, missing
[100, 0, 200]
>>> n, pd_, pq, ll = _bin_sums(np.array([0, 0, 1]), np.array([0.5, 0.5, 0.2]), 2)
>>> n[:, 0].sum(axis=1).tolist()   # rows per group
[2, 1]
"""

from __future__ import annotations

import functools
import math
from types import ModuleType

import numpy as np

from driftwatch.numba_setup import numba_enabled

__all__ = ["BINS", "SCALE", "compiled", "score_bins", "warm_up"]

#: Score bins on ``logit(P(bad))``, plus one column for a missing score.
BINS = 200
_LO, _HI = -10.0, 10.0
#: Fixed-point unit of the probability sums: exact, order-free integer sums.
SCALE = float(2**32)
_LL_CLIP = 1e-12
_SMALL = 16  # fewer rows than this: the numpy calls cost less than a compiled call


def score_bins(p: np.ndarray) -> np.ndarray:
    """Bin of each P(bad) on the book's logit grid; ``BINS`` for a missing score.

    >>> score_bins(np.array([0.5, 1e-9, 1.0, np.nan])).tolist()
    [100, 0, 199, 200]
    """
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, BINS, dtype=np.int64)
    ok = np.isfinite(p)
    with np.errstate(divide="ignore"):
        q = np.clip(p[ok], 0.0, 1.0)
        lg = np.log(q) - np.log1p(-q)
    idx = np.floor((lg - _LO) / (_HI - _LO) * BINS)
    out[ok] = np.clip(np.nan_to_num(idx, nan=0.0, posinf=BINS - 1, neginf=0), 0, BINS - 1)
    return out


def _fixed(x: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(x, dtype=np.float64) * SCALE).astype(np.int64)


@functools.cache
def compiled() -> ModuleType | None:
    """The compiled sums (:mod:`driftwatch.labels._cohortloops`), or None where the numpy
    fallback runs (numba off or not installed)."""
    if not numba_enabled():
        return None
    from driftwatch.labels import _cohortloops

    return _cohortloops


def warm_up() -> None:
    """Load the compiled sums now, with the types the book gives them: numba reads them
    from its disk cache on their first call, which a replay would otherwise pay in the
    middle of its stream. Nothing where the numpy fallback runs."""
    if compiled() is None:
        return
    _bin_sums(np.zeros(_SMALL, np.int64), np.full(_SMALL, 0.5), 1,
              np.zeros(_SMALL, dtype=bool), loss=True)


def _log_loss(s: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """Each (scored) row's log loss, its P(bad) clipped away from 0 and 1."""
    p = np.clip(s, _LL_CLIP, 1 - _LL_CLIP)
    return np.where(bad, -np.log(p), -np.log1p(-p))


def _compiled_terms(s: np.ndarray, bad: np.ndarray | None, loss: bool
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the compiled pass takes after the rows' groups and scores, in its order: the
    class flags (empty: one class), each scored row's logit and (with ``loss`` and
    ``bad``) log loss, computed by numpy as the fallback does."""
    fin = np.isfinite(s)
    sf = s[fin]
    with np.errstate(divide="ignore"):  # as score_bins: the same logits, bit for bit
        q = np.clip(sf, 0.0, 1.0)
        lg = np.log(q) - np.log1p(-q)
    terms = _log_loss(sf, bad[fin]) if loss and bad is not None else np.zeros(0)
    flags = np.zeros(0, dtype=np.bool_) if bad is None else bad
    return flags, lg, terms


def _bin_sums(g: np.ndarray, s: np.ndarray, groups: int, bad: np.ndarray | None = None,
              *, loss: bool = False, loops: ModuleType | bool | None = True
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows' sums per group ``g`` (and class, with ``bad``; else one class) and score bin:
    counts ``[G, C, BINS + 1]``, fixed-point P(bad) ``[G, C, BINS + 1]``, fixed-point
    ``Σ p(1 - p)`` ``[G]`` and, with ``loss`` (and ``bad``), fixed-point log loss ``[G]``
    (else zeros). Integer sums: the same numbers however the rows are grouped.

    ``loops``: the compiled pass where it runs (``None``: the numpy fallback, which it
    matches bit for bit; the logarithms are numpy's in both)."""
    if loops is True:
        loops = compiled()
    classes = 1 if bad is None else 2
    shape = (groups, classes, BINS + 1)
    if loops is not None and s.size >= _SMALL:
        n = np.zeros(int(np.prod(shape)), dtype=np.int64)
        pd_ = np.zeros_like(n)
        pq, ll = np.zeros(groups, dtype=np.int64), np.zeros(groups, dtype=np.int64)
        if loops.bin_sums(g, s, *_compiled_terms(s, bad, loss), BINS, _LO,  # type: ignore[union-attr]
                          _HI - _LO, SCALE, n, pd_, pq, ll):
            return n.reshape(shape), pd_.reshape(shape), pq, ll
    b = score_bins(s)
    fin = b < BINS
    slot = g if bad is None else g * 2 + bad
    cell = slot * (BINS + 1) + b
    n = np.bincount(cell, minlength=int(np.prod(shape))).reshape(shape)
    pd_ = np.zeros(int(np.prod(shape)), dtype=np.int64)
    np.add.at(pd_, cell[fin], _fixed(s[fin]))
    pq = np.zeros(groups, dtype=np.int64)
    np.add.at(pq, g[fin], _fixed(s[fin] * (1 - s[fin])))
    ll = np.zeros(groups, dtype=np.int64)
    if loss and bad is not None:
        np.add.at(ll, g[fin], _fixed(_log_loss(s[fin], bad[fin])))
    return n, pd_.reshape(shape), pq, ll


def _add_bin_sums(rows: np.ndarray, g: np.ndarray, s: np.ndarray, n_out: np.ndarray,
                  pd_out: np.ndarray, bad: np.ndarray | None = None, *, loss: bool = False,
                  loops: ModuleType | bool | None = True) -> tuple[np.ndarray, np.ndarray]:
    """Add what :func:`_bin_sums` gives group ``k`` to row ``rows[k]`` of ``n_out`` and
    ``pd_out`` (``[R, C, BINS + 1]``, distinct rows); returns the ``Σ p(1 - p)`` and
    log loss per group. The compiled pass adds each row of the batch straight into its
    cohort's row (no array of the batch's sums made and added again), the fallback adds
    :func:`_bin_sums`' arrays: the same integers."""
    if loops is True:
        loops = compiled()
    if loops is not None and s.size >= _SMALL:
        cap = n_out.shape[0]
        pq, ll = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64)
        if loops.bin_sums(rows[g], s, *_compiled_terms(s, bad, loss), BINS,  # type: ignore[union-attr]
                          _LO, _HI - _LO, SCALE, n_out.reshape(-1), pd_out.reshape(-1),
                          pq, ll):
            return pq[rows], ll[rows]
    n, pd_, pq, ll = _bin_sums(g, s, rows.size, bad, loss=loss, loops=None)
    n_out[rows] += n
    pd_out[rows] += pd_
    return pq, ll


def _kept(gid: np.ndarray, *cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows that have a group (``gid >= 0``): ``cols`` and then ``gid``, gathered, or
    as they are when every row has one."""
    if gid.size and gid.min() >= 0:
        return (*cols, gid)
    rows = np.flatnonzero(gid >= 0)
    return (*(c[rows] for c in cols), gid[rows])


def _time_spans(g: np.ndarray, t: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group the least and the greatest finite ``t`` (inf and -inf for none): a
    reduction per group where they are few (a poll holds one or two cohorts), else
    ``ufunc.at``; min and max are exact, so both give the same numbers."""
    t_min, t_max = np.full(groups, math.inf), np.full(groups, -math.inf)
    timed = np.isfinite(t)
    if groups <= 2:
        for k in range(groups):
            tk = t[timed & (g == k)] if groups > 1 else t[timed]
            if tk.size:
                t_min[k], t_max[k] = tk.min(), tk.max()
        return t_min, t_max
    np.minimum.at(t_min, g[timed], t[timed])
    np.maximum.at(t_max, g[timed], t[timed])
    return t_min, t_max
