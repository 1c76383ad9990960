"""Exact binomial tail and beta quantiles as bare ``scipy.special`` ufunc calls.

``scipy.stats`` distributions check and broadcast their arguments on every call, which
costs far more than the arithmetic at the sizes a window has (one value per feature).
These give the same numbers (tested against ``scipy.stats``) on whole arrays at once:

* :func:`binom_sf` — ``P(X > k)`` for ``X ~ Binomial(n, p)``: the regularised incomplete
  beta ``I_p(k + 1, n - k)``;
* :func:`binom_isf` — the smallest integer ``k`` with ``P(X > k) <= q``: unit steps on
  that tail from a Cornish-Fisher start (bisection if that start is poor);
* :func:`beta_ppf` — the beta quantile, ``betaincinv``;
* :func:`clopper_pearson` — the exact two-sided interval of a binomial share, both ends
  in one ``betaincinv`` call.

A model-level signal asks about one count: :func:`binom_sf_one`, :func:`binom_isf_one` and
:func:`clopper_pearson_one` give the same numbers for plain Python numbers, without the
array steps (each costs microseconds on a 0-d array, more than the ``scipy.special`` call).

>>> import numpy as np
>>> from scipy import stats
>>> n, p = np.array([1000, 50]), np.array([0.02, 0.5])
>>> binom_isf(0.01, n, p).tolist() == stats.binom.isf(0.01, n, p).tolist()
True
>>> bool(binom_sf(30, 1000, 0.02) == stats.binom.sf(30, 1000, 0.02))
True
>>> bool(beta_ppf(0.005, 3, 98) == stats.beta.ppf(0.005, 3, 98))
True
>>> lo, hi = clopper_pearson(np.array([0, 3, 10]), np.array([10, 10, 10]), 0.01)
>>> lo.round(4).tolist(), hi.round(4).tolist()
([0.0, 0.037, 0.5887], [0.4113, 0.7351, 1.0])
>>> bool(lo[1] == stats.beta.ppf(0.005, 3, 8)), bool(hi[1] == stats.beta.ppf(0.995, 4, 7))
(True, True)
>>> clopper_pearson_one(3, 10, 0.01) == (float(lo[1]), float(hi[1]))
True
>>> binom_sf_one(30, 1000, 0.02) == float(binom_sf(30, 1000, 0.02))
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = [
    "beta_ppf",
    "binom_isf",
    "binom_isf_one",
    "binom_sf",
    "binom_sf_one",
    "clopper_pearson",
    "clopper_pearson_one",
]


def binom_sf(k: np.ndarray | float, n: np.ndarray | float, p: np.ndarray | float) -> np.ndarray:
    """``P(X > k)``, ``X ~ Binomial(n, p)``; ``k`` is rounded down like ``scipy.stats``,
    and NaN where scipy gives NaN: ``n`` not a whole number, ``p`` outside ``[0, 1]``,
    ``k`` NaN, or ``k`` inside the support of an infinite ``n``.

    >>> binom_sf([3, 3, -1], [10, np.inf, np.inf], 0.3).round(4).tolist()
    [0.3504, nan, 1.0]
    """
    # no np.broadcast_arrays: every step below broadcasts, to the same shape
    k = np.floor(np.asarray(k, dtype=np.float64))
    n, p = np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64)
    inside = (k >= 0) & (k < n)
    with np.errstate(invalid="ignore", divide="ignore"):
        mid = special.betainc(np.where(inside, k + 1, 1.0), np.where(inside, n - k, 1.0), p)
    # the tail of an infinite count inside its support is NaN in scipy (betainc reads 1)
    mid = np.where(np.isfinite(n) & ~np.isnan(k), mid, np.nan)
    out = np.where(k < 0, 1.0, np.where(k >= n, 0.0, mid))
    return np.where((n >= 0) & (n == np.floor(n)) & (p >= 0) & (p <= 1), out, np.nan)


def binom_sf_one(k: float, n: float, p: float) -> float:
    """:func:`binom_sf` of one ``(k, n, p)``, as a float (the same number, step by step)."""
    k, n, p = float(k), float(n), float(p)
    if math.isfinite(k):
        k = float(math.floor(k))
    if not (n >= 0 and (math.isinf(n) or n == math.floor(n)) and 0 <= p <= 1):
        return math.nan
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    if math.isnan(k) or math.isinf(n):  # as scipy (and the array form) give
        return math.nan
    return float(special.betainc(k + 1, n - k, p))


def _sf(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``binom_sf`` for valid, same-shape float arrays and integral ``k``."""
    inside = (k >= 0) & (k < n)
    mid = special.betainc(np.where(inside, k + 1, 1.0), np.where(inside, n - k, 1.0), p)
    return np.where(inside, mid, (k < 0).astype(np.float64))


#: Quantiles already computed, by ``(q, n, p)``: a window's sizes and its reference's
#: shares repeat from window to window. Cleared when it reaches ``_MEMO_SIZE``.
_memo: dict[tuple[float, float, float], float] = {}
_MEMO_SIZE = 1 << 16


def binom_isf(q: float, n: np.ndarray | float, p: np.ndarray | float) -> np.ndarray:
    """Smallest integer ``k`` with ``P(X > k) <= q`` (``scipy.stats.binom.isf``); NaN where
    ``n`` is not a finite whole number, ``p`` is outside ``[0, 1]`` or ``q`` outside
    ``[0, 1]``, as scipy gives.

    >>> binom_isf(0.05, [10, np.inf], 0.3).tolist()
    [5.0, nan]
    """
    n, p = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64))
    shape = n.shape
    q = float(q)
    keys = [(q, a, b) for a, b in zip(n.ravel().tolist(), p.ravel().tolist(), strict=True)]
    miss = [i for i, key in enumerate(keys) if key not in _memo]
    if miss:
        if len(_memo) + len(miss) > _MEMO_SIZE:
            _memo.clear()
        got = _isf(q, n.ravel()[miss], p.ravel()[miss]).tolist()
        _memo.update(zip((keys[i] for i in miss), got, strict=True))
    return np.array([_memo[key] for key in keys], dtype=np.float64).reshape(shape)


def binom_isf_one(q: float, n: float, p: float) -> float:
    """:func:`binom_isf` of one ``(n, p)``, as a float (from the same memo)."""
    key = (float(q), float(n), float(p))
    hit = _memo.get(key)
    if hit is None:
        if len(_memo) + 1 > _MEMO_SIZE:
            _memo.clear()
        hit = _memo[key] = _isf_one(*key)
    return hit


def _sf_one(k: float, n: float, p: float) -> float:
    """:func:`_sf` of one valid ``(k, n, p)``: the same ``betainc`` call, on floats."""
    if 0 <= k < n:
        return float(special.betainc(k + 1, n - k, p))
    return float(k < 0)


def _isf_one(q: float, n: float, p: float) -> float:
    """:func:`_isf` of one ``(n, p)``, step for step on floats (signed zeros included): a
    miss of a model-level signal (a window's labelled count, its mean predicted rate)
    then costs a few scalar ``betainc`` calls, not a dozen array steps of microseconds
    each. Anything whose start is not a finite number takes the array form."""
    if not (math.isfinite(n) and math.isfinite(q)):
        return float(_isf(q, np.array([n]), np.array([p]))[0])
    if not (n >= 0 and 0 <= p <= 1 and n == math.floor(n) and 0 <= q <= 1):
        return math.nan
    mu, sd = n * p, math.sqrt(n * p * (1 - p))
    z = float(special.ndtri(1 - q)) if 0 < q < 1 else 0.0
    skew = (1 - 2 * p) / sd if sd > 0 else 0.0
    start = mu + sd * (z + (z * z - 1) * skew / 6) - 0.5
    if not math.isfinite(start):
        return float(_isf(q, np.array([n]), np.array([p]))[0])
    # np.round (half to even, keeping the sign of a zero), then np.clip's max-then-min
    k = math.copysign(float(round(start)), start)
    k = k if k > -1.0 else -1.0
    k = k if k < n else n
    for _ in range(6):
        up = _sf_one(k, n, p) > q
        down = not up and k > -1 and _sf_one(k - 1, n, p) <= q
        if not (up or down):
            return k
        k = k + up - down
    # a poor start: bisect as the array form does
    lo, hi = -1.0, n
    while hi - lo > 1:
        mid = float(math.floor((lo + hi) / 2))
        if _sf_one(mid, n, p) > q:
            lo = mid
        else:
            hi = mid
    return lo if _sf_one(lo, n, p) <= q else hi


def _isf(q: float, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    # an infinite n would bisect forever (its upper end never comes down)
    valid = ((n >= 0) & np.isfinite(n) & (p >= 0) & (p <= 1) & (n == np.floor(n))
             & (0 <= q <= 1))
    n0, p0 = np.where(valid, n, 0.0), np.where(valid, p, 0.0)
    mu, sd = n0 * p0, np.sqrt(n0 * p0 * (1 - p0))
    z = float(special.ndtri(1 - q)) if 0 < q < 1 else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = np.where(sd > 0, (1 - 2 * p0) / sd, 0.0)
    # Cornish-Fisher start, then unit steps to the exact answer (a few at most)
    k = np.clip(np.round(mu + sd * (z + (z * z - 1) * skew / 6) - 0.5), -1, n0)
    for _ in range(6):
        up = _sf(k, n0, p0) > q
        down = ~up & (k > -1)
        down[down] = _sf(k[down] - 1, n0[down], p0[down]) <= q
        if not (up.any() or down.any()):
            return np.where(valid, k, np.nan)
        k = k + up - down
    # a poor start: bisect between a point above q and one at or below it
    lo, hi = np.full_like(k, -1.0), n0.copy()
    while (gap := hi - lo > 1).any():
        mid = np.floor((lo + hi) / 2)
        above = _sf(mid, n0, p0) > q
        lo = np.where(gap & above, mid, lo)
        hi = np.where(gap & ~above, mid, hi)
    k = np.where(_sf(lo, n0, p0) <= q, lo, hi)
    return np.where(valid, k, np.nan)


def beta_ppf(q: np.ndarray | float, a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """Quantile ``q`` of ``Beta(a, b)`` (``scipy.stats.beta.ppf``)."""
    with np.errstate(invalid="ignore"):
        return special.betaincinv(a, b, q)


def clopper_pearson(k: np.ndarray | float, n: np.ndarray | float, alpha: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``1 - alpha`` interval of the share ``k / n``: ``Beta(alpha/2; k, n-k+1)``
    (0 when ``k == 0``) to ``Beta(1-alpha/2; k+1, n-k)`` (1 when ``k == n``)."""
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    kf, nf = k.ravel(), n.ravel()
    q = np.repeat([alpha / 2, 1 - alpha / 2], len(kf))
    both = beta_ppf(q, np.concatenate([kf, kf + 1]), np.concatenate([nf - kf + 1, nf - kf]))
    lo, hi = both[: len(kf)].reshape(k.shape), both[len(kf):].reshape(k.shape)
    return np.where(k > 0, lo, 0.0), np.where(k < n, hi, 1.0)


def clopper_pearson_one(k: float, n: float, alpha: float) -> tuple[float, float]:
    """:func:`clopper_pearson` of one ``(k, n)``, as two floats (an end that is 0 or 1 by
    definition is not computed)."""
    k, n = float(k), float(n)
    with np.errstate(invalid="ignore"):
        lo = float(special.betaincinv(k, n - k + 1, alpha / 2)) if k > 0 else 0.0
        hi = float(special.betaincinv(k + 1, n - k, 1 - alpha / 2)) if k < n else 1.0
    return lo, hi
