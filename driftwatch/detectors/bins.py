"""Bin geometry of a :class:`~driftwatch.windows.layout.NumericLayout`, precomputed once.

Fine bins of column ``j`` are ``[(-inf, E0], (E0, E1], ..., (E[m-1], E[m]], (E[m], inf)]``
followed by padding (to the widest column) and the missing column. Coarse (decile) bins are
contiguous runs of fine bins, so coarse counts are differences of a cumulative sum taken at
fixed indices: one vectorised gather for any leading shape (``[F, W]`` for a window,
``[B, F, W]`` for resampled null windows) instead of a Python loop per column.

>>> import numpy as np
>>> from driftwatch.windows.layout import NumericLayout
>>> lay = NumericLayout.fit(("x",), np.arange(1000.0)[:, None], coarse_bins=10, fine_bins=20)
>>> geo = BinGeometry.of(lay)
>>> fine, _, _ = lay.count(np.array([[-5.0], [0.0], [450.0], [np.nan], [2000.0]]))
>>> geo.coarse(fine).tolist() == lay.coarse(fine).tolist()
True
>>> geo.coarse_labels[0][0], geo.coarse_labels[0][-1]
('(-inf, 99.9]', 'missing')
>>> len(geo.coarse_labels[0]) == geo.coarse_end.shape[1]  # one label per coarse column
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from driftwatch.windows.layout import NumericLayout

__all__ = ["BinGeometry", "hist_moments"]


@dataclass(frozen=True, eq=False)
class BinGeometry:
    """Arrays derived from a numeric layout's edges (``C`` columns).

    ``coarse_end[C, Wc]``: exclusive fine-bin index where each coarse bin ends (padding
    columns repeat the last end, so they sum to zero); ``coarse_lo/hi[C, Wc-1]``: coarse
    bin bounds (``-inf``/``inf`` at the ends, NaN on padding); ``coarse_labels``: the
    layout's label of every coarse column (:meth:`NumericLayout.coarse_labels`, padding
    included, missing last); ``fine_hi[C, Wf-1]`` upper
    edge of each finite-range fine bin; ``widths[C, Wf-1]``: width of each fine bin after
    clipping to the reference range ``[min, max]`` (the first and overflow bins have
    width 0); ``mid[C, Wf-1]``: a representative value per fine bin, its midpoint, except
    that the first bin sits at ``min`` and the two outermost finite bins use the point a
    quarter of the way out from their inner edge (values thin out towards the extremes;
    with midpoints the kurtosis of a lognormal comes out twice too large, with this rule
    within a few percent, and within 40% for a t5).
    """

    coarse_end: np.ndarray
    coarse_lo: np.ndarray
    coarse_hi: np.ndarray
    coarse_labels: tuple[tuple[str, ...], ...]
    fine_hi: np.ndarray
    widths: np.ndarray
    mid: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, layout: NumericLayout) -> BinGeometry:
        c = len(layout.names)
        wf, wc = layout.fine_width, layout.coarse_width
        end = np.zeros((c, wc), dtype=np.intp)
        fine_hi = np.full((c, wf - 1), np.nan)
        widths = np.zeros((c, wf - 1))
        mid = np.zeros((c, wf - 1))
        lo = np.zeros(c)
        hi = np.zeros(c)
        for j, (fe, ce) in enumerate(zip(layout.fine_edges, layout.coarse_edges, strict=True)):
            m = len(fe)
            # coarse bin of each fine bin, as NumericLayout.coarse assigns it
            f2c = np.append(np.searchsorted(ce, fe, side="left"), len(ce))
            nc = len(ce) + 1
            ends = np.searchsorted(f2c, np.arange(nc), side="right")
            end[j, :nc] = ends
            end[j, nc:-1] = ends[-1]
            end[j, -1] = wf - 1  # the missing column is summed separately
            fine_hi[j, :m] = fe
            fine_hi[j, m] = np.inf
            widths[j, 1:m] = np.diff(fe)
            mid[j, 0] = fe[0]
            mid[j, 1:m] = (fe[1:] + fe[:-1]) / 2
            mid[j, m] = fe[-1]
            if m >= 4:
                mid[j, 1] = fe[1] - (fe[1] - fe[0]) / 4
                mid[j, m - 1] = fe[m - 2] + (fe[m - 1] - fe[m - 2]) / 4
            lo[j], hi[j] = fe[0], fe[-1]
        clo, chi = layout.coarse_bounds()
        return cls(end, clo, chi, layout.coarse_labels(), fine_hi, widths, mid, lo, hi)

    def coarse(self, fine: np.ndarray) -> np.ndarray:
        """Coarse counts ``[..., C, Wc]`` (last column missing) from fine ``[..., C, Wf]``."""
        fine = np.asarray(fine)
        cs = fine[..., :-1].cumsum(axis=-1)
        cs = np.concatenate([np.zeros_like(cs[..., :1]), cs], axis=-1)
        ends = self.coarse_end[:, :-1]
        if cs.ndim == 2:  # one window: plain fancy indexing (the same counts)
            at = cs[np.arange(len(ends))[:, None], ends]
        else:
            idx = np.broadcast_to(ends, (*fine.shape[:-1], ends.shape[1]))
            at = np.take_along_axis(cs, idx, axis=-1)
        out = np.empty((*fine.shape[:-1], self.coarse_end.shape[1]), dtype=fine.dtype)
        out[..., 0] = at[..., 0]
        out[..., 1:-1] = np.diff(at, axis=-1)
        out[..., -1] = fine[..., -1]
        return out


def hist_moments(fine: np.ndarray, mid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, variance and kurtosis (``m4 / m2**2``) of binned values at bin midpoints.

    ``fine[..., C, Wf]`` with the missing column last (ignored). Midpoint moments carry a
    within-bin rounding error (Sheppard): on 200 quantile bins it is well under 1% of the
    variance for smooth distributions. NaN where a column has fewer than two values.
    """
    w = np.asarray(fine[..., :-1], dtype=np.float64)
    n = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w * mid).sum(axis=-1) / n
        d = mid - mean[..., None]
        m2 = (w * d * d).sum(axis=-1) / n
        m4 = (w * d**4).sum(axis=-1) / n
        var = np.where(n > 1, m2 * n / np.maximum(n - 1, 1), np.nan)
        kurt = np.where(m2 > 0, m4 / (m2 * m2), np.nan)
    return mean, var, kurt
