"""Divergences between binned distributions: PSI, both KLs, Jensen–Shannon, Hellinger.

Every function takes counts ``[..., F, W]`` (features × bins; any leading shape, e.g. a
batch of resampled windows) and a validity mask ``[F, W]`` that excludes padding columns,
and returns one value per feature. No Python loop over features or bins.

**Epsilon convention (floor and renormalise).** PSI and the KLs need ``ln(a/e)``, so
empty bins get a floor: each valid bin's share is ``max(count / n, eps)`` and the shares
are then renormalised to sum to one over the feature's valid bins. ``eps`` defaults to
:data:`DEFAULT_EPS` = ``1e-4`` (the 0.0001 used in the credit-scoring literature). When no
valid bin is below ``eps`` the renormalisation factor is exactly 1 and PSI equals the
textbook (SAS/Excel) value; a bin that is empty on one side adds at most
``|a - e| * ln(a / 1e-4)`` instead of the ``ln(a / 2.2e-308)`` that ``float_info.min``
gives. PSI is computed on these smoothed shares and equals ``kl_cur_ref + kl_ref_cur``
on them (to rounding). Jensen–Shannon and Hellinger are finite with empty bins and use
the raw shares, no epsilon.

>>> import numpy as np
>>> ref = np.array([[50, 30, 20, 0]])
>>> cur = np.array([[30, 30, 30, 10]])
>>> d = divergences(ref, cur, np.ones((1, 4), bool))
>>> round(float(d.psi[0]), 4), bool(abs(d.psi[0] - d.kl_cur_ref[0] - d.kl_ref_cur[0]) < 1e-12)
(0.8328, True)
>>> round(float(d.js[0]), 4), round(float(d.hellinger[0]), 4)
(0.2748, 0.2603)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from driftwatch.detectors.identity_cache import IdentityCache, read_only

__all__ = [
    "DEFAULT_EPS",
    "Divergences",
    "divergence_terms",
    "divergences",
    "psi",
    "psi_contributions",
    "shares",
    "smoothed_shares",
    "top_bins",
]

#: Floor for a bin's share before taking logs (see the module docstring).
DEFAULT_EPS = 1e-4


def shares(counts: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw shares (zero on padding) and totals ``n[..., F]``; NaN shares where ``n == 0``."""
    c = np.where(valid, counts, 0).astype(np.float64)
    n = c.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = c / n[..., None]
    return p, n


def smoothed_shares(counts: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Shares floored at ``eps`` and renormalised over valid bins; exactly 0 on padding.

    >>> smoothed_shares(np.array([[3, 1, 0]]), np.array([[True, True, True]]), 0.01).round(4)
    array([[0.7426, 0.2475, 0.0099]])
    """
    return _smoothed(shares(counts, valid)[0], valid, eps)


@dataclass(frozen=True, slots=True)
class Divergences:
    """Per-feature divergences ``[..., F]`` (NaN for a feature with no events)."""

    psi: np.ndarray
    kl_cur_ref: np.ndarray
    kl_ref_cur: np.ndarray
    js: np.ndarray
    hellinger: np.ndarray


def _smoothed(p_raw: np.ndarray, valid: np.ndarray, eps: float) -> np.ndarray:
    p = np.where(valid, np.maximum(p_raw, eps), 0.0)
    with np.errstate(invalid="ignore"):  # a row with no valid bin: NaN, as its raw shares
        p /= p.sum(axis=-1, keepdims=True)
    return p


def _terms(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Raw shares, smoothed shares and ``ln(a / e)`` (0 on padding), and the bad rows."""
    e_raw, n_ref, e, log_e = _reference_side(ref, valid, eps)
    a_raw, n_cur = shares(cur, valid)
    a = _smoothed(a_raw, valid, eps)
    log_ratio = np.log(np.where(valid, a, 1.0)) - log_e
    return e_raw, a_raw, e, a, log_ratio, (n_ref == 0) | (n_cur == 0)


#: The reference's side of :func:`_terms` by the identity of its counts and mask: every
#: window is measured against the same reference arrays.
_REFERENCE = IdentityCache(capacity=8)


def _reference_side(ref: np.ndarray, valid: np.ndarray, eps: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Raw shares, totals, smoothed shares and ``ln(e)`` (0 on padding) of ``ref``; kept
    (read-only) for a one-window reference ``[F, W]``, computed for resampled ones."""

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        e_raw, n_ref = shares(ref, valid)
        e = _smoothed(e_raw, valid, eps)
        return e_raw, n_ref, e, np.log(np.where(valid, e, 1.0))

    if ref.ndim != 2:
        return build()
    return _REFERENCE.get((ref, valid), ("divergence", eps), lambda: read_only(build()))


def _nan_where(bad: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.where(bad, np.nan, x) if bad.any() else x


def divergence_terms(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
) -> tuple[Divergences, np.ndarray]:
    """:func:`divergences` and the per-bin PSI terms of :func:`psi_contributions`, from
    one pass over the shares (the same numbers as the two calls)."""
    e_raw, a_raw, e, a, log_ratio, bad = _terms(ref, cur, valid, eps)
    kl_ce = (a * log_ratio).sum(axis=-1)
    kl_ec = (e * -log_ratio).sum(axis=-1)
    contrib = (a - e) * log_ratio
    psi = contrib.sum(axis=-1)
    m = (a_raw + e_raw) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t_a = a_raw * np.log(a_raw / m)  # p ln(p / m), 0 ln 0 = 0 below
        t_e = e_raw * np.log(e_raw / m)
    jsd = (np.where(a_raw > 0, t_a, 0.0) + np.where(e_raw > 0, t_e, 0.0)).sum(axis=-1) \
        / (2 * np.log(2))
    js = np.sqrt(np.minimum(np.maximum(jsd, 0.0), 1.0))
    bc = np.sqrt(a_raw * e_raw).sum(axis=-1)
    hel = np.sqrt(np.minimum(np.maximum(1.0 - bc, 0.0), 1.0))
    div = Divergences(*(_nan_where(bad, x) for x in (psi, kl_ce, kl_ec, js, hel)))
    return div, contrib


def divergences(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
) -> Divergences:
    """PSI, ``KL(cur‖ref)``, ``KL(ref‖cur)`` (nats, smoothed shares), JS distance (base 2)
    and Hellinger distance (raw shares) for counts ``[..., F, W]``."""
    return divergence_terms(ref, cur, valid, eps)[0]


def psi(ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
        ) -> np.ndarray:
    """PSI alone (``divergences(...).psi``, without the other four).

    >>> round(float(psi(np.array([[50, 30, 20, 0]]), np.array([[30, 30, 30, 10]]),
    ...                 np.ones((1, 4), bool))[0]), 4)
    0.8328
    """
    _, _, e, a, log_ratio, bad = _terms(ref, cur, valid, eps)
    return _nan_where(bad, ((a - e) * log_ratio).sum(axis=-1))


def psi_contributions(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, eps: float = DEFAULT_EPS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin PSI terms ``(a - e) ln(a / e)`` with the smoothed shares ``e`` and ``a``."""
    _, _, e, a, log_ratio, _ = _terms(ref, cur, valid, eps)
    return (a - e) * log_ratio, e, a


def top_bins(contrib: np.ndarray, k: int) -> np.ndarray:
    """Indices ``[F, k]`` of the ``k`` largest contributions per row, largest first."""
    k = min(k, contrib.shape[-1])
    part = (-contrib).argpartition(k - 1, axis=-1)[..., :k]
    if contrib.ndim == 2:  # one window: plain fancy indexing (the same picks)
        rows = np.arange(len(contrib))[:, None]
        order = (-contrib[rows, part]).argsort(axis=-1, kind="stable")
        return part[rows, order]
    order = (-np.take_along_axis(contrib, part, axis=-1)).argsort(axis=-1, kind="stable")
    return np.take_along_axis(part, order, axis=-1)
