"""Benjamini–Hochberg false-discovery-rate control across features.

A window tests every feature at once; without a correction a 25-feature model flags one
feature in four windows at ``p < 0.01`` on pure noise. BH rejects the ``k`` smallest
p-values where ``k`` is the largest rank with ``p_(k) <= k q / m`` (``m`` = number of
finite p-values; NaN means "no test" and is never rejected).

``p_cut`` is a level strictly between the largest rejected and the smallest kept p-value
(their geometric mean, or ``q / m`` when nothing is rejected, or halfway from the largest
to 1 when everything is): a feature is rejected iff ``p < p_cut``, so a per-feature
statistic threshold (e.g. the chi-square quantile at ``p_cut``) reproduces the BH decision
with a strict ``value > threshold``. ``p_cut`` is always a probability (at most 1), so a
quantile taken at it is finite.

>>> import numpy as np
>>> r = benjamini_hochberg(np.array([0.001, 0.008, 0.039, 0.041, 0.6, np.nan]), 0.05)
>>> r.rejected.tolist()
[True, True, False, False, False, False]
>>> [round(x, 3) for x in r.adjusted[:5].tolist()]
[0.005, 0.02, 0.051, 0.051, 0.6]
>>> 0.008 < r.p_cut < 0.039
True
>>> every = benjamini_hochberg(np.array([1e-9, 1e-6]), 0.05)
>>> every.rejected.tolist(), 1e-6 < every.p_cut <= 1.0
([True, True], True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SMALL", "BHResult", "benjamini_hochberg"]


@dataclass(frozen=True, slots=True)
class BHResult:
    rejected: np.ndarray  # bool, like p
    adjusted: np.ndarray  # BH-adjusted p-values (q-values), NaN where p is NaN
    p_cut: float  # reject iff p < p_cut


#: Up to this many p-values BH runs on Python floats: a window's family (one test per
#: feature) is a handful, where each of the array path's twenty numpy calls costs more
#: than its arithmetic.
SMALL = 16


def benjamini_hochberg(p: np.ndarray, q: float) -> BHResult:
    """Step-up BH at level ``q`` over the finite entries of ``p``."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 1 and p.size <= SMALL:
        pl = p.tolist()
        if 0.0 not in pl:  # a zero's sign would hang on how numpy breaks a tie of minima
            return _small(pl, q)
    return _arrays(p, q)


def _small(p: list[float], q: float) -> BHResult:
    """:func:`_arrays` on floats without zeros, operation for operation (the same IEEE
    products and quotients, a stable sort, the same running minimum), so the same bits."""
    n, isfinite = len(p), math.isfinite
    at = [i for i in range(n) if isfinite(p[i])]
    m = len(at)
    adjusted = [math.nan] * n
    if m == 0:
        return BHResult(np.zeros(n, dtype=bool), np.array(adjusted), q)
    order = sorted(at, key=p.__getitem__)  # stable, like argsort(kind="stable")
    run = math.inf
    for r in range(m, 0, -1):  # np.minimum.accumulate over the reversed products
        i = order[r - 1]
        x = p[i] * m / r
        if x < run:
            run = x
        adjusted[i] = run if run <= 1.0 else 1.0  # np.minimum(adj, 1.0)
    for r in range(m, 0, -1):  # the largest rank that passes
        if p[order[r - 1]] <= r * q / m:
            break
    else:
        return BHResult(np.zeros(n, dtype=bool), np.array(adjusted), q / m)
    largest = p[order[r - 1]]
    rejected = [False] * n
    least_kept = math.inf
    for i in at:
        x = p[i]
        if x <= largest:
            rejected[i] = True
        elif x < least_kept:
            least_kept = x
    out_r, out_a = np.array(rejected, dtype=bool), np.array(adjusted)
    if least_kept == math.inf:  # everything rejected (a kept p-value is finite)
        return BHResult(out_r, out_a, float((largest + 1.0) / 2))
    return BHResult(out_r, out_a, _between(float(largest), float(least_kept)))


def _arrays(p: np.ndarray, q: float) -> BHResult:
    """Step-up BH on numpy arrays, for any shape."""
    ok = np.isfinite(p)
    m = int(ok.sum())
    adjusted = np.full(p.shape, np.nan)
    rejected = np.zeros(p.shape, dtype=bool)
    if m == 0:
        return BHResult(rejected, adjusted, q)
    pv = p[ok]
    order = pv.argsort(kind="stable")
    ps = pv[order]
    ranks = np.arange(1, m + 1)
    adj = np.minimum.accumulate((ps * m / ranks)[::-1])[::-1]
    adj_full = np.empty(m)
    adj_full[order] = np.minimum(adj, 1.0)
    adjusted[ok] = adj_full
    passing = np.nonzero(ps <= ranks * q / m)[0]
    if passing.size == 0:
        return BHResult(rejected, adjusted, q / m)
    k = int(passing[-1])
    largest = ps[k]
    rej = pv <= largest
    rejected[ok] = rej
    kept = pv[~rej]
    if not kept.size:
        # everything rejected: any level above the largest p will do, but it must stay a
        # probability (a quantile at a level past 1 is NaN, and NaN never alarms)
        return BHResult(rejected, adjusted, float((largest + 1.0) / 2))
    return BHResult(rejected, adjusted, _between(float(largest), float(kept.min())))


def _between(lo: float, hi: float) -> float:
    """A level strictly between ``lo < hi``: their geometric mean (taken in logs, as the
    product of two tiny p-values underflows), else the midpoint, else the next float.

    >>> _between(5e-324, 0.5) > 5e-324
    True
    """
    if lo > 0.0:
        cut = float(np.exp(0.5 * (np.log(lo) + np.log(hi))))
        if lo < cut < hi:
            return cut
    cut = lo + (hi - lo) / 2
    return cut if lo < cut < hi else float(np.nextafter(lo, hi))
