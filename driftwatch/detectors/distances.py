"""Kolmogorov–Smirnov and Wasserstein-1 distances from fine histograms, with error bounds.

Both work on the fine reference-quantile bins (missing values excluded: the missing share
has its own signals), for counts ``[..., F, Wf]`` of any leading shape.

**KS.** The empirical CDFs are known exactly at every fine edge ``E_k`` (bins are
right-closed), so ``ks = max_k |F_ref(E_k) - F_cur(E_k)|`` is a lower bound of the exact
two-sample statistic on the raw values (``scipy.stats.ks_2samp``), and

    ks  <=  ks_exact  <=  ks + max_k min(r_k, c_k)

with ``r_k, c_k`` the reference and current shares of fine bin ``k``: inside a bin the
gap can grow by at most the smaller of the two masses. With 200 reference-quantile bins
``r_k ~ 0.005``, so the bound is at most about half a percent. The p-value is the
asymptotic Kolmogorov distribution at ``sqrt(n_r n_c / (n_r + n_c)) * ks``.

**Wasserstein.** ``W1 = ∫ |F_ref - F_cur| dx``. Inside fine bin ``k`` (width ``w_k``)
the CDFs are interpolated linearly (values spread uniformly within a bin) and the
integral of ``|D|`` of that line is taken exactly. Whatever the true within-bin spread,
``D(x)`` stays in ``[D_{k-1} - c_k, D_{k-1} + r_k]``, so the exact value lies within

    |W1_exact - W1|  <=  bound = Σ_k w_k · max(hi_k - est_k, est_k - lo_k)  <=  Σ_k w_k (r_k + c_k)

(``lo_k``/``hi_k`` the smallest/largest ``|D|`` on that interval), returned per feature.
*Tails:* the sketch keeps no current minimum or maximum, so current values outside the
reference range ``[min, max]`` are taken as sitting on its boundary (the first and
overflow bins have width 0): the result is W1 against the current values clipped to the
reference range, a lower bound of the unclipped distance; the ``out_of_range`` signal
reports the share beyond the range.

>>> import numpy as np
>>> from driftwatch.windows.layout import NumericLayout
>>> from driftwatch.detectors.bins import BinGeometry
>>> rng = np.random.default_rng(0)
>>> x, y = rng.normal(0, 1, 5000), rng.normal(0.3, 1, 5000)
>>> lay = NumericLayout.fit(("x",), x[:, None])
>>> geo = BinGeometry.of(lay)
>>> fr, fc = lay.count(x[:, None])[0], lay.count(y[:, None])[0]
>>> ks = ks_fine(fr, fc)
>>> from scipy.stats import ks_2samp, wasserstein_distance
>>> exact = ks_2samp(x, y).statistic
>>> bool(ks.stat[0] <= exact <= ks.stat[0] + ks.bound[0])
True
>>> w = wasserstein_fine(fr, fc, geo.widths)
>>> bool(abs(wasserstein_distance(x, np.clip(y, x.min(), x.max())) - w.stat[0]) <= w.bound[0])
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from driftwatch.detectors.identity_cache import IdentityCache, read_only

__all__ = ["Distance", "ks_and_wasserstein", "ks_fine", "wasserstein_fine"]


@dataclass(frozen=True, slots=True)
class Distance:
    """Per-feature statistic, its error bound, p-value (KS only) and the fine bin where the
    CDF gap is largest (KS) — arrays ``[..., F]``."""

    stat: np.ndarray
    bound: np.ndarray
    p_value: np.ndarray | None = None
    argmax: np.ndarray | None = None


def _shares(fine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(fine[..., :-1], dtype=np.float64)
    n = x.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / n[..., None], n


def _ks(r: np.ndarray, nr: np.ndarray, c: np.ndarray, nc: np.ndarray, d_hi: np.ndarray,
        p_values: bool) -> Distance:
    d = np.abs(d_hi)
    arg = d.argmax(axis=-1)
    stat = d.max(axis=-1)  # the value at ``arg`` (NaN where a row has one)
    bound = np.minimum(r, c).max(axis=-1)
    p = None
    if p_values:
        with np.errstate(invalid="ignore", divide="ignore"):
            ne = nr * nc / (nr + nc)
        p = special.kolmogorov(np.sqrt(ne) * stat)
    return Distance(stat, bound, p, arg)


def _wasserstein(r: np.ndarray, c: np.ndarray, d_hi: np.ndarray, widths: np.ndarray
                 ) -> Distance:
    d_lo = d_hi - r + c  # D at its lower edge
    a, b = np.abs(d_lo), np.abs(d_hi)
    ab = a + b
    same = d_lo * d_hi >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = np.where(ab > 0, (a * a + b * b) / (2 * ab), 0.0)
    est = np.where(same, ab / 2, cross)  # mean |D| over the bin, linear D
    end1, end2 = d_lo - c, d_lo + r  # D stays in [end1, end2] inside the bin
    a1, a2 = np.abs(end1), np.abs(end2)
    hi = np.maximum(a1, a2)
    lo = np.where((end1 <= 0) & (end2 >= 0), 0.0, np.minimum(a1, a2))
    stat = (widths * est).sum(axis=-1)
    bound = (widths * np.maximum(hi - est, est - lo)).sum(axis=-1)
    return Distance(stat, bound)


def _gaps(ref: np.ndarray, cur: np.ndarray) -> tuple[np.ndarray, ...]:
    r, nr, r_cdf = _reference_side(ref)
    c, nc = _shares(cur)
    # D at each bin's upper edge
    return r, nr, c, nc, r_cdf - c.cumsum(axis=-1)


#: The reference's shares, totals and CDF by the identity of its fine counts.
_REFERENCE = IdentityCache(capacity=8)


def _reference_side(ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shares, totals and cumulative shares of ``ref``: kept (read-only) for a one-window
    reference ``[F, Wf]``, computed for resampled ones."""

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r, nr = _shares(ref)
        return r, nr, r.cumsum(axis=-1)

    if np.ndim(ref) != 2:
        return build()
    return _REFERENCE.get((ref,), "fine", lambda: read_only(build()))


def ks_fine(ref: np.ndarray, cur: np.ndarray, *, p_values: bool = True) -> Distance:
    """Two-sample KS statistic at the fine edges, its bound and asymptotic p-value."""
    r, nr, c, nc, d_hi = _gaps(ref, cur)
    return _ks(r, nr, c, nc, d_hi, p_values)


def wasserstein_fine(ref: np.ndarray, cur: np.ndarray, widths: np.ndarray) -> Distance:
    """W1 from fine histograms with linear interpolation inside bins, and its bound.

    ``widths[F, Wf-1]`` are the fine bin widths clipped to the reference range
    (:attr:`~driftwatch.detectors.bins.BinGeometry.widths`).
    """
    r, _, c, _, d_hi = _gaps(ref, cur)
    return _wasserstein(r, c, d_hi, widths)


def ks_and_wasserstein(ref: np.ndarray, cur: np.ndarray, widths: np.ndarray, *,
                       p_values: bool = True) -> tuple[Distance, Distance]:
    """:func:`ks_fine` and :func:`wasserstein_fine` from one pass over the shares and
    their CDF gaps (the same numbers as the two calls)."""
    r, nr, c, nc, d_hi = _gaps(ref, cur)
    return _ks(r, nr, c, nc, d_hi, p_values), _wasserstein(r, c, d_hi, widths)
