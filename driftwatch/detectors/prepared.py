"""Reference-side arrays, computed once per :class:`ReferenceProfile` and cached on it.

Every window is measured against the same reference, so bin geometry, masks, reference
counts, coarse sums and reference metric values are derived once. The cache is keyed on
the profile *object* (weakly: dropping the profile drops its entry); profiles are treated
as immutable once built.

>>> import numpy as np, pandas as pd
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=500), "c": rng.choice(["a", "b"], 500),
...                    "score": rng.uniform(size=500)})
>>> prof = ReferenceProfile.build(df, numeric=["x"], categorical=["c"])
>>> prep = prepare(prof)
>>> prepare(prof) is prep, prep.num_coarse.shape, prep.cat_labels[0]
(True, (1, 11), ('a', 'b', 'other', 'unseen', 'missing'))
>>> len(prep.cat_labels[0]) == prep.cat.shape[1]  # one label per count column
True
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field

import numpy as np

from driftwatch.detectors.bins import BinGeometry, hist_moments
from driftwatch.detectors.performance import Discrimination, discrimination
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

__all__ = ["PreparedReference", "approval_share", "binary_entropy", "prepare"]

_CACHE: weakref.WeakKeyDictionary[ReferenceProfile, PreparedReference] = (
    weakref.WeakKeyDictionary()
)


def binary_entropy(p: np.ndarray) -> np.ndarray:
    """Entropy in nats of a Bernoulli(p), with ``p`` clipped as the sketch clips it."""
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return -(q * np.log(q) + (1 - q) * np.log1p(-q))


def approval_share(
    sketch: Sketch, geo: BinGeometry, cutoff: float | None, *, decisions: bool = True
) -> tuple[float, int, str]:
    """Approval share, its denominator and its source (``decision`` or ``cutoff``).

    With decisions mapped (and ``decisions``): approved / (approved + declined).
    Otherwise, with a score cut-off: the share of scores at or below it, read from the
    fine score histogram (exact when the cut-off is a fine edge, linear inside a bin
    otherwise).
    """
    dec, app = int(sketch.decisions[0]), int(sketch.decisions[1])
    if decisions and dec + app > 0:
        return app / (dec + app), dec + app, "decision"
    if cutoff is None:
        return math.nan, 0, "none"
    fine = sketch.score_fine[0, :-1].astype(np.float64)
    n = fine.sum()
    if n == 0:
        return math.nan, 0, "cutoff"
    hi = geo.fine_hi[0]
    lo = np.concatenate(([-np.inf], hi[:-1]))
    width = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(cutoff >= hi, 1.0, np.where(cutoff <= lo, 0.0, (cutoff - lo) / width))
    frac = np.nan_to_num(frac, nan=0.0)
    return float((fine * frac).sum() / n), int(n), "cutoff"


@dataclass(frozen=True, eq=False)
class PreparedReference:
    """Derived reference arrays (see the module docstring); one per profile."""

    n: int
    num_names: tuple[str, ...]
    num_geo: BinGeometry
    num_coarse_valid: np.ndarray
    num_fine: np.ndarray
    num_coarse: np.ndarray
    num_sd: np.ndarray
    cat_names: tuple[str, ...]
    cat_valid: np.ndarray
    cat: np.ndarray
    cat_labels: tuple[tuple[str, ...], ...]
    score_geo: BinGeometry
    score_coarse_valid: np.ndarray
    score_fine: np.ndarray
    score_coarse: np.ndarray
    #: the score's raw shares on its coarse bins (the reference side of score_psi's
    #: ``top_bins``), as Python floats
    score_coarse_shares: list[float]
    score_mean: float
    score_var: float
    score_kurtosis: float
    n_score: int
    entropy_mean: float
    entropy_var: float
    disc: Discrimination
    lab_n: np.ndarray
    lab_pd_sum: float
    metrics: dict[str, float]
    sketch: Sketch
    #: labelled reference rows (``lab_n.sum()``)
    n_labelled: int
    #: :meth:`approval` by cut-off (the reference's share is the same every window)
    _approvals: dict[float | None, tuple[float, int, str]] = field(
        default_factory=dict, init=False, repr=False)

    def approval(self, cutoff: float | None) -> tuple[float, int, str]:
        """The reference's :func:`approval_share` at ``cutoff`` (computed once)."""
        got = self._approvals.get(cutoff)
        if got is None:
            got = self._approvals[cutoff] = approval_share(self.sketch, self.score_geo,
                                                           cutoff)
        return got

    @property
    def bad_rate(self) -> float:
        n = self.n_labelled
        return float(self.lab_n[1]) / n if n else math.nan

    @property
    def calibration_ratio(self) -> float:
        return float(self.lab_n[1]) / self.lab_pd_sum if self.lab_pd_sum > 0 else math.nan

    @property
    def el_rate(self) -> float:
        s = self.sketch
        return s.el_pred / s.exposure_sum if s.exposure_sum > 0 else math.nan


def _build(profile: ReferenceProfile) -> PreparedReference:
    lay, sk = profile.layout, profile.sketch
    num_geo = BinGeometry.of(lay.numeric)
    score_geo = BinGeometry.of(lay.score)
    cl = lay.categorical
    _, num_var, _ = hist_moments(sk.num_fine, num_geo.mid)
    _, _, s_kurt = hist_moments(sk.score_fine, score_geo.mid)
    # entropy of each fine score bin at its midpoint: the reference spread of entropy
    h = binary_entropy(score_geo.mid[0])
    w = sk.score_fine[0, :-1].astype(np.float64)
    nw = w.sum()
    h_mean = float((w * h).sum() / nw) if nw else math.nan
    h_var = float((w * (h - h_mean) ** 2).sum() / nw) if nw else math.nan
    metrics = {k: v[0] / v[1] for k, v in sk.metrics.items() if v[1] > 0}
    score_coarse = score_geo.coarse(sk.score_fine)
    return PreparedReference(
        n=sk.n,
        num_names=lay.numeric.names,
        num_geo=num_geo,
        num_coarse_valid=lay.numeric.coarse_valid(),
        num_fine=sk.num_fine,
        num_coarse=num_geo.coarse(sk.num_fine),
        num_sd=np.sqrt(num_var),
        cat_names=cl.names,
        cat_valid=cl.valid(),
        cat=sk.cat,
        cat_labels=cl.column_labels(),
        score_geo=score_geo,
        score_coarse_valid=lay.score.coarse_valid(),
        score_fine=sk.score_fine,
        score_coarse=score_coarse,
        score_coarse_shares=(score_coarse[0] / max(score_coarse[0].sum(), 1)).tolist(),
        score_mean=sk.score_mean,
        score_var=sk.score_var,
        score_kurtosis=float(s_kurt[0]),
        n_score=sk.n_score,
        entropy_mean=sk.entropy_sum / sk.n_score if sk.n_score else math.nan,
        entropy_var=h_var,
        disc=discrimination(sk.lab_score[0], sk.lab_score[1]),
        lab_n=sk.lab_n.copy(),
        n_labelled=int(sk.lab_n.sum()),
        lab_pd_sum=sk.lab_pd_sum,
        metrics=metrics,
        sketch=sk,
    )


def prepare(profile: ReferenceProfile) -> PreparedReference:
    """The cached :class:`PreparedReference` of ``profile`` (built on first use)."""
    prep = _CACHE.get(profile)
    if prep is None:
        prep = _build(profile)
        _CACHE[profile] = prep
    return prep
