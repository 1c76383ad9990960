"""The cohort book's per-bin sums in one compiled pass (imported only when numba is; see
:mod:`driftwatch.labels.cohort_book` for the sums and their numpy fallback).

The logarithms stay in numpy (the caller passes each scored row's logit and log loss), so
a row's bin and loss are the very numbers the fallback computes; the pass does the rest
that the fallback spreads over a dozen numpy calls: the bin from the logit, the counts
per (group, class, bin), and the fixed-point sums of P(bad), ``p(1 - p)`` and the loss.
Every step is one IEEE operation in the fallback's order (no fast-math), so the integer
sums are the same, bit for bit.
"""

from __future__ import annotations

import numpy as np

from driftwatch.numba_setup import compiled

__all__ = ["LIMIT", "bin_sums"]

#: Scores at or beyond this size are left to the fallback: their fixed-point values leave
#: int64, where numpy's float-to-integer cast and a compiled one need not agree.
LIMIT = 2.0**15

# no reference counts: one call per batch, nothing allocated inside
_jit = compiled(refcounts=False)


@_jit
def bin_sums(g, s, bad, lg, loss, bins, lo, span, scale, n, pd, pq, ll):  # type: ignore[no-untyped-def]
    """Add each row to its cell ``(g * classes + bad) * (bins + 1) + bin`` of ``n`` (count)
    and ``pd`` (fixed-point P(bad)), and to ``pq[g]`` and ``ll[g]``.

    ``bad`` is empty for one class. ``lg`` and ``loss`` hold one value per row with a
    finite score, in row order (``loss`` empty: no log loss). Returns False, having
    written nothing, when a score reaches :data:`LIMIT` (the caller then takes the
    fallback): the sums may go straight into a book's own arrays."""
    for i in range(s.size):
        if np.isfinite(s[i]) and not abs(s[i]) < LIMIT:
            return False
    classes = 1 if bad.size == 0 else 2
    width = bins + 1
    k = 0
    for i in range(s.size):
        x = s[i]
        if not np.isfinite(x):
            y = 0 if classes == 1 else np.int64(bad[i])
            n[(g[i] * classes + y) * width + bins] += 1
            continue
        # score_bins: floor((logit - lo) / span * bins), NaN and -inf to 0, +inf to the
        # last bin, then clipped
        idx = np.floor((lg[k] - lo) / span * bins)
        if np.isnan(idx):
            b = 0
        elif idx >= bins - 1:
            b = bins - 1
        elif idx <= 0.0:
            b = 0
        else:
            b = np.int64(idx)
        y = 0 if classes == 1 else np.int64(bad[i])
        cell = (g[i] * classes + y) * width + b
        n[cell] += 1
        pd[cell] += np.int64(np.rint(x * scale))
        pq[g[i]] += np.int64(np.rint(x * (1.0 - x) * scale))
        if loss.size:
            ll[g[i]] += np.int64(np.rint(loss[k] * scale))
        k += 1
    return True
