"""How many of a window's values leave the reference's range when nothing changed: exact.

A reference holds ``m`` values of a feature and a window ``n`` more, all drawn alike (a
continuous feature, nothing changed). All ``n + m`` values are then exchangeable: every
order of them is as likely. The window's values outside the reference's ``[min, max]``
are those ranked before the reference's lowest or after its highest, so the count ``X``
of them has, for ``m >= 2``,

    P(X = k) = (k + 1) C(n + m - 2 - k, m - 2) / C(n + m, m)

(``i`` of them below and ``k - i`` above: ``C(n + m - 2 - k, m - 2)`` orders each, for the
``k + 1`` splits). That is the beta-binomial ``(n, 2, m - 1)``: the chance that one new
value leaves the range, ``2 / (m + 1)`` on average, is itself a draw, high where the
reference's extremes happen to sit close in. A binomial test at ``2 / (m + 1)`` ignores
that spread and alarms more often than its level on references drawn from few values (a
feature filled on 1% of the rows); this one does not. Its upper tail has a closed form
(hockey-stick sums), so :func:`outside_sf` costs a few ``gammaln`` calls on whole arrays:

    P(X >= k) = C(U + 1, m - 1) / C(n + m, m) * ((n + m)(m) - (m - 1)(U + 2)) / m,
    U = n + m - 2 - k

A feature whose values tie (counts, rounded amounts) leaves the range less often than
this, so the tests stay at or under their level there.

>>> float(outside_sf(0, 50, 100)), float(outside_sf(51, 50, 100))
(1.0, 0.0)
>>> from scipy import stats
>>> round(float(outside_sf(3, 50, 100)), 12) == round(float(stats.betabinom.sf(2, 50, 2, 99)), 12)
True
>>> int(outside_isf(0.01, 50, 100))  # P(X > 5) <= 1% < P(X > 4)
5
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["outside_isf", "outside_sf"]


def _ln_choose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)


def outside_sf(k: np.ndarray | float, n: np.ndarray | float, m: np.ndarray | float
               ) -> np.ndarray:
    """``P(X >= k)``: at least ``k`` of ``n`` new values outside the range of ``m``
    reference values, nothing changed (see the module docstring). With fewer than two
    reference values the range says nothing: 1 for every ``k <= n``. NaN where ``n`` or
    ``m`` is negative or NaN."""
    k = np.ceil(np.asarray(k, dtype=np.float64))
    n, m = np.asarray(n, dtype=np.float64), np.asarray(m, dtype=np.float64)
    kk = np.clip(k, 0.0, np.maximum(n, 0.0))
    mm = np.maximum(m, 2.0)
    u = n + mm - 2.0 - kk
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        head = np.exp(_ln_choose(u + 1.0, mm - 1.0) - _ln_choose(n + mm, mm))
        tail = head * ((n + mm) * mm - (mm - 1.0) * (u + 2.0)) / mm
    tail = np.clip(tail, 0.0, 1.0)
    out = np.where(k <= 0, 1.0, np.where(k > n, 0.0, np.where(m < 2, 1.0, tail)))
    return np.where((n >= 0) & (m >= 0), out, np.nan)


def _bracket(q: float, n: np.ndarray, m: np.ndarray) -> np.ndarray:
    """A whole ``k`` with ``P(X > k) <= q`` (where the closed form agrees; else ``n``,
    where ``P(X > n) = 0``), near the quantile: the bisection then takes a few steps
    where it took ``log2(n)``. Cantelli's bound ``P(X >= mu + t) <= s2 / (s2 + t^2)``
    with the beta-binomial ``(n, 2, m - 1)``'s mean ``mu = 2n / (m + 1)`` and variance
    ``s2 = 2n (m - 1)(n + m + 1) / ((m + 1)^2 (m + 2))`` gives it at
    ``t = s sqrt((1 - q) / q)``."""
    if not 0.0 < q < 1.0:
        return n.copy()
    mm = np.maximum(m, 2.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mu = 2.0 * n / (mm + 1.0)
        s2 = 2.0 * n * (mm - 1.0) * (n + mm + 1.0) / ((mm + 1.0) ** 2 * (mm + 2.0))
        k = np.ceil(mu + np.sqrt(s2 * ((1.0 - q) / q)))
    k = np.where((m >= 2) & np.isfinite(k), np.clip(k, 0.0, n), n)
    # the closed form's own word on it: where it does not agree, the whole range
    return np.where(outside_sf(k + 1.0, n, m) <= q, k, n)  # type: ignore[no-any-return]


def outside_isf(q: float, n: np.ndarray | float, m: np.ndarray | float) -> np.ndarray:
    """The smallest whole ``k`` with ``P(X > k) <= q`` (as ``scipy.stats``' ``isf``
    reads): a window with more than ``k`` values outside the range is significant at
    ``q``. ``n`` where no ``k`` below it is (fewer than two reference values); NaN where
    ``n`` or ``m`` is negative or NaN."""
    n, m = np.broadcast_arrays(np.asarray(n, dtype=np.float64),
                               np.asarray(m, dtype=np.float64))
    ok = (n >= 0) & (m >= 0)
    top = np.where(ok, n, 0.0)
    lo, hi = np.zeros_like(top), _bracket(q, top, m)  # P(X > hi) <= q
    # bisection on whole numbers: P(X > k) falls as k grows
    while True:
        go = lo < hi
        if not go.any():
            break
        mid = np.floor((lo + hi) / 2)
        below = outside_sf(mid + 1, top, m) <= q
        hi = np.where(go & below, mid, hi)
        lo = np.where(go & ~below, mid + 1, lo)
    return np.where(ok, hi, np.nan)
