"""Thresholds that hold at any window size: each statistic's null distribution, resampled.

Rules of thumb (PSI > 0.1) are not tests: on 500 events noise alone crosses them, and on
1M events a negligible shift does. The :class:`Calibrator` estimates, for the actual
window size ``n``, the distribution of every histogram statistic when nothing changed,
and returns its ``1 - alpha`` quantile per feature.

**How.** The reference's fine-bin shares ``p`` (missing column included) stand in for the
population. Each null draw is a *pair*: a reference ``R* ~ Multinomial(n_ref, p)`` and a
window ``C* ~ Multinomial(n, p)``, so the null includes the reference's own sampling noise
(with ``n`` far above ``n_ref`` it dominates: PSI's null scales like ``1/n + 1/n_ref``).
Coarse counts are sums of fine counts, exactly as for a live window, and every statistic
is computed by the same code (:func:`~driftwatch.detectors.drift.block_stats`), all
features and draws at once. The false-alarm rate is per statistic and per feature; it
holds on average over references drawn from the population (for one fixed reference and
``n >> n_ref`` the reference's own error is a fixed offset, which the effect-size floor
of :class:`~driftwatch.detectors.config.DetectorConfig` absorbs).

**Cache.** Sizes are rounded *down* to a grid of ``steps_per_octave`` points per doubling
(default 4, i.e. at most 16% below ``n``); each grid size is resampled once, with its own
stream derived from the seed drawn from the Generator given at construction (so results
do not depend on the order of calls). The grid quantiles are then carried to ``n`` by the
statistics' asymptotic rate, ``(1/n + 1/n_ref) / (1/g + 1/n_ref)`` for PSI and the KLs
(chi-square-like), its square root for the distances (JS, Hellinger, KS, Wasserstein), and
``sqrt((g + n_ref) / (n + n_ref))`` for Cramér's V (``sqrt(chi2 / N)``, ``N = n + n_ref``).

>>> import numpy as np, pandas as pd
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(1)
>>> df = pd.DataFrame({"x": rng.normal(size=20_000), "score": rng.uniform(size=20_000)})
>>> cal = Calibrator(ReferenceProfile.build(df, numeric=["x"]), np.random.default_rng(7),
...                  alpha=0.01, n_draws=400)
>>> Calibrator.grid_size(1000), Calibrator.grid_size(1_000_000)
(861, 881743)
>>> small, large = cal.thresholds(1000), cal.thresholds(1_000_000)
>>> bool(small.numeric["psi"][0] > 10 * large.numeric["psi"][0] > 0)
True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from driftwatch.detectors.divergence import DEFAULT_EPS, divergences
from driftwatch.detectors.drift import DRIFT_STATS, block_stats
from driftwatch.detectors.fdr import BHResult, benjamini_hochberg
from driftwatch.detectors.prepared import PreparedReference, prepare
from driftwatch.errors import ConfigError
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["BHResult", "Calibrator", "NullThresholds", "benjamini_hochberg"]

_CHUNK_ELEMENTS = 400_000  # draws x features x bins per step: bounds peak memory


#: Statistics whose null scales like ``1/n + 1/n_ref`` (the others like its square root).
_QUADRATIC = frozenset({"psi", "kl_cur_ref", "kl_ref_cur", "score_psi"})


@dataclass(frozen=True, slots=True)
class NullThresholds:
    """``1 - alpha`` null quantiles at window size ``n``: per statistic,
    ``numeric[stat][F]``, ``categorical[stat][G]``, and ``score_psi``; ``grid`` is the size
    that was resampled."""

    n: int
    grid: int
    alpha: float
    numeric: Mapping[str, np.ndarray]
    categorical: Mapping[str, np.ndarray]
    score_psi: float

    def rescaled(self, n: int, n_ref: int) -> NullThresholds:
        """The same quantiles carried from ``self.n`` to ``n`` by the asymptotic rate."""
        if n == self.n or self.n == 0:
            return self
        ratio = (1 / n + 1 / max(n_ref, 1)) / (1 / self.n + 1 / max(n_ref, 1))
        factors = {"cramers_v": ((self.n + n_ref) / (n + n_ref)) ** 0.5}

        def scale(d: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
            return {
                k: v * (ratio if k in _QUADRATIC else factors.get(k, ratio**0.5))
                for k, v in d.items()
            }

        return NullThresholds(n, self.grid, self.alpha, scale(self.numeric),
                              scale(self.categorical), self.score_psi * ratio)


class Calibrator:
    """Null-distribution thresholds for one reference profile (see the module docstring).

    ``rng`` seeds every resampling; ``alpha`` is the false-alarm rate per statistic and
    feature; ``n_draws`` null windows per size (the quantile's own error at ``alpha=0.01``
    with 1000 draws is about ±0.003 in false-alarm rate).
    """

    def __init__(
        self,
        reference: ReferenceProfile,
        rng: np.random.Generator,
        *,
        alpha: float = 0.01,
        n_draws: int = 1000,
        eps: float = DEFAULT_EPS,
        steps_per_octave: int = 4,
    ) -> None:
        if not 0 < alpha < 1:
            raise ConfigError("alpha must be in (0, 1)", found=repr(alpha))
        if n_draws * alpha < 2:
            raise ConfigError("n_draws too small for alpha", found=f"{n_draws} draws")
        self.alpha = alpha
        self.n_draws = n_draws
        self.eps = eps
        self.steps = steps_per_octave
        self._prep: PreparedReference = prepare(reference)
        self.layout = reference.layout
        self._seed = int(rng.integers(0, 2**63 - 1))
        self._cache: dict[int, NullThresholds] = {}

    def __repr__(self) -> str:
        return (
            f"Calibrator(alpha={self.alpha}, n_draws={self.n_draws}, "
            f"sizes_cached={sorted(self._cache)})"
        )

    @staticmethod
    def grid_size(n: int, steps_per_octave: int = 4) -> int:
        """The largest grid size ``floor(2 ** (k / steps)) <= n``."""
        if n < 1:
            return 0
        k = math.floor(steps_per_octave * math.log2(n) + 1e-9)
        g = math.floor(2 ** (k / steps_per_octave))
        while g > n:
            k -= 1
            g = math.floor(2 ** (k / steps_per_octave))
        return max(g, 1)

    def thresholds(self, n: int) -> NullThresholds:
        """Thresholds for a window of ``n`` events (resampled once per grid size)."""
        g = self.grid_size(n, self.steps)
        hit = self._cache.get(g)
        if hit is None:
            hit = self._compute(g)
            self._cache[g] = hit
        return hit.rescaled(n, self._prep.n)

    def threshold(self, statistic: str, n: int) -> np.ndarray:
        """One statistic's thresholds for numeric then categorical features."""
        t = self.thresholds(n)
        parts = [d[statistic] for d in (t.numeric, t.categorical) if statistic in d]
        return np.concatenate(parts) if parts else np.zeros(0)

    # -- resampling ----------------------------------------------------------------------
    def null_samples(self, n: int) -> dict[str, dict[str, np.ndarray]]:
        """Raw null draws ``[n_draws, F]`` per block and statistic, at exactly ``n``."""
        prep = self._prep
        rng = np.random.default_rng([self._seed, n])
        out: dict[str, dict[str, np.ndarray]] = {}
        geo = prep.num_geo
        if prep.num_names:
            out["numeric"] = self._draw(
                rng, prep.num_fine, n,
                lambda r, c: block_stats(
                    geo.coarse(r), geo.coarse(c), prep.num_coarse_valid, self.eps,
                    ref_fine=r, cur_fine=c, widths=geo.widths, sd=prep.num_sd, p_values=False,
                ),
            )
        if prep.cat_names:
            out["categorical"] = self._draw(
                rng, prep.cat, n,
                lambda r, c: block_stats(r, c, prep.cat_valid, self.eps, p_values=False),
            )
        if prep.n_score:
            sg = prep.score_geo
            out["score"] = self._draw(
                rng, prep.score_fine, n,
                lambda r, c: {
                    "score_psi": divergences(
                        sg.coarse(r), sg.coarse(c), prep.score_coarse_valid, self.eps
                    ).psi
                },
            )
        return out

    def _draw(self, rng: np.random.Generator, counts: np.ndarray, n: int, fn) -> dict:  # type: ignore[no-untyped-def]
        p = counts / np.maximum(counts.sum(axis=-1, keepdims=True), 1)
        f, w = counts.shape
        n_ref = int(counts[0].sum())
        step = max(1, _CHUNK_ELEMENTS // max(f * w, 1))
        acc: dict[str, list[np.ndarray]] = {}
        for start in range(0, self.n_draws, step):
            b = min(step, self.n_draws - start)
            r = rng.multinomial(n_ref, p, size=(b, f))
            c = rng.multinomial(n, p, size=(b, f))
            res = fn(r, c)
            items = (
                res.items()
                if isinstance(res, dict)
                else ((k, res.get(k)) for k in DRIFT_STATS)
            )
            for k, v in items:
                if v is not None:
                    acc.setdefault(k, []).append(v)
        return {k: np.concatenate(v, axis=0) for k, v in acc.items()}

    def _compute(self, g: int) -> NullThresholds:
        if g == 0:
            return NullThresholds(0, 0, self.alpha, {}, {}, math.nan)
        samples = self.null_samples(g)
        q = 1 - self.alpha

        def quant(block: str) -> dict[str, np.ndarray]:
            out = {}
            for k, v in samples.get(block, {}).items():
                with np.errstate(invalid="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN feature columns
                    out[k] = np.nanquantile(v, q, axis=0)
            return out

        score = quant("score").get("score_psi")
        return NullThresholds(
            g,
            g,
            self.alpha,
            quant("numeric"),
            quant("categorical"),
            float(score[0]) if score is not None else math.nan,
        )
