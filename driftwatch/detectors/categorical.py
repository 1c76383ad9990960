"""Chi-square test of homogeneity (reference vs current) with Cramér's V, per feature.

For each feature the 2 × k table has the reference counts in one row and the current
counts in the other, over the feature's valid bins (levels, other, unseen, missing for a
categorical feature; deciles and missing for a numeric one). Columns empty in both rows
are dropped, so ``dof = (non-empty columns) - 1``; no continuity correction (the same as
``scipy.stats.chi2_contingency(table, correction=False)``).

Cramér's V for a 2 × k table is ``sqrt(chi2 / N)`` with ``N = n_ref + n_cur``. It is an
effect size, but with unequal samples it scales with ``n_cur / N``: compare V across
windows of similar size, and use the p-value (with Benjamini–Hochberg across features)
only together with it, since at production sizes any shift is "significant".

>>> import numpy as np
>>> r = chi_square(np.array([[50, 30, 20, 0]]), np.array([[30, 30, 30, 10]]),
...                np.ones((1, 4), bool))
>>> round(float(r.stat[0]), 3), int(r.dof[0]), round(float(r.cramers_v[0]), 3)
(17.0, 3, 0.292)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from driftwatch.detectors.identity_cache import IdentityCache, read_only

__all__ = ["ChiSquare", "chi2_threshold", "chi2_thresholds", "chi_square"]


@dataclass(frozen=True, slots=True)
class ChiSquare:
    """Per-feature statistic, degrees of freedom, p-value and Cramér's V (``[..., F]``)."""

    stat: np.ndarray
    dof: np.ndarray
    p_value: np.ndarray
    cramers_v: np.ndarray


def chi_square(
    ref: np.ndarray, cur: np.ndarray, valid: np.ndarray, *, p_values: bool = True
) -> ChiSquare:
    """Chi-square homogeneity test on counts ``[..., F, W]`` masked by ``valid[F, W]``
    (``p_value`` all NaN when ``p_values`` is False: the calibrator needs only V)."""
    r, nr = _reference_side(ref, valid)
    c = np.where(valid, cur, 0).astype(np.float64)
    nc = c.sum(axis=-1, keepdims=True)
    n = nr + nc
    col = r + c
    used = col > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        er = nr * col / n
        ec = nc * col / n
        terms = (r - er) ** 2 / er + (c - ec) ** 2 / ec
    stat = np.where(used, terms, 0.0).sum(axis=-1)
    dof = used.sum(axis=-1) - 1
    ok = (nr[..., 0] > 0) & (nc[..., 0] > 0) & (dof > 0)
    stat = np.where(ok, stat, np.nan)
    if p_values:
        p = np.where(ok, special.chdtrc(np.maximum(dof, 1), np.where(ok, stat, 0.0)), np.nan)
    else:
        p = np.full(stat.shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.sqrt(stat / n[..., 0])
    return ChiSquare(stat, dof, p, v)


#: The reference's masked counts and totals by the identity of its arrays (every window
#: is tested against the same reference).
_REFERENCE = IdentityCache(capacity=8)


def _reference_side(ref: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masked float counts and totals of ``ref``: kept (read-only) for a one-window
    reference ``[F, W]``, computed for resampled ones."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        r = np.where(valid, ref, 0).astype(np.float64)
        return r, r.sum(axis=-1, keepdims=True)

    if np.ndim(ref) != 2:
        return build()
    return _REFERENCE.get((ref, valid), "chi2", lambda: read_only(build()))


def chi2_threshold(p_cut: float, dof: np.ndarray) -> np.ndarray:
    """The statistic a feature with ``dof`` degrees of freedom must exceed for ``p < p_cut``.

    >>> round(float(chi2_threshold(0.05, np.array([1]))[0]), 3)
    3.841
    """
    return special.chdtri(np.maximum(dof, 1), p_cut)


#: :func:`chi2_threshold` lists by ``(p_cut, dof)``: a window's BH cut-off takes a few
#: values over a stream, and its features' degrees of freedom rarely change.
_THRESHOLDS: dict[tuple[float, tuple[int, ...]], list[float]] = {}
_THRESHOLDS_SIZE = 256


def chi2_thresholds(p_cut: float, dof: Sequence[int]) -> list[float]:
    """:func:`chi2_threshold` as a list (shared between calls: read it, do not change it).

    >>> chi2_thresholds(0.05, [1, 2]) == chi2_threshold(0.05, np.array([1, 2])).tolist()
    True
    """
    key = (float(p_cut), tuple(dof))
    hit = _THRESHOLDS.get(key)
    if hit is None:
        if len(_THRESHOLDS) >= _THRESHOLDS_SIZE:
            _THRESHOLDS.clear()
        hit = _THRESHOLDS[key] = chi2_threshold(p_cut, np.array(key[1], dtype=np.int64)).tolist()
    return hit
