"""Thresholds that hold at any window size: each statistic's null distribution, resampled.

Rules of thumb (PSI > 0.1) are not tests: on 500 events noise alone crosses them, and on
1M events they miss a shift a tenth of that size. The :class:`Calibrator` estimates, for
the actual window size ``n``, the distribution of every calibratable statistic (see
:data:`~driftwatch.detectors.registry.CALIBRATED`) when nothing changed, and returns its
``1 - rate`` quantile per feature for each false-alarm rate asked for.

**How.** The reference's fine-bin shares ``p`` (missing column included) stand in for the
population. Each null draw is a window ``C* ~ Multinomial(n, p)``. With
``reference_noise=True`` (the default) it is a *pair*: a reference
``R* ~ Multinomial(n_ref, p)`` is drawn too, so the null includes the reference's own
sampling noise (the reference is a sample of the population, and with ``n`` far above
``n_ref`` that noise dominates: PSI's null scales like ``1/n + 1/n_ref``); with
``reference_noise=False`` the statistic is taken against the reference itself (the
reference *is* the population: windows resampled from it). Coarse counts are sums of fine
counts, exactly as for a live window, and every histogram statistic is computed by the
same code (:func:`~driftwatch.detectors.drift.block_stats`), all features and draws at
once. The score's PSI and variance ratio are resampled on the fine score histogram, and
the approval share as a binomial on the reference's share (exact for a count of
approvals).

**Cache.** Sizes named in ``sizes`` (a count window's length) are resampled exactly;
other sizes are rounded *down* to a grid of ``steps_per_octave`` points per doubling
(default 8, at most 9% below ``n``) and carried to ``n`` by the statistics' asymptotic
rate ``v(n) = 1/n (+ 1/n_ref with reference noise)``: ``v(n)/v(g)`` for PSI and the KLs,
its square root for the distances, the approval change and the log variance ratio, and the
matching factors for chi-square and Cramér's V. Each size has its own random stream,
derived from the seed drawn at construction, so results do not depend on call order.
Levels resampled once are kept per size; with a ``store`` (a :class:`LevelCache`, e.g.
on disk) they are also looked up there by :meth:`Calibrator.key`, a digest of everything
they depend on (the reference, the seed and settings, the size, the numpy version and the
source of the modules that compute them), so another run on the same reference does not
resample them again and reads the very same numbers.

>>> import numpy as np, pandas as pd
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(1)
>>> df = pd.DataFrame({"x": rng.normal(size=20_000), "score": rng.uniform(size=20_000)})
>>> cal = Calibrator(ReferenceProfile.build(df, numeric=["x"]), np.random.default_rng(7),
...                  rates=(0.01,), n_draws=400)
>>> Calibrator.grid_size(1000), Calibrator.grid_size(1_000_000)
(939, 961548)
>>> small, large = cal.thresholds(1000), cal.thresholds(1_000_000)
>>> bool(small.numeric["psi"][0] > 10 * large.numeric["psi"][0] > 0)
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from driftwatch.detectors.divergence import DEFAULT_EPS, divergences
from driftwatch.detectors.drift import DRIFT_STATS, block_stats
from driftwatch.detectors.fdr import BHResult, benjamini_hochberg
from driftwatch.detectors.prepared import PreparedReference, prepare
from driftwatch.detectors.registry import CALIBRATED_LEVELS, THRESHOLD_CALIBRATED
from driftwatch.errors import ConfigError
from driftwatch.windows.profile import ReferenceProfile

__all__ = [
    "MODEL_DRAWS",
    "BHResult",
    "Calibrator",
    "LevelCache",
    "NullThresholds",
    "benjamini_hochberg",
    "model_levels",
]

_CHUNK_ELEMENTS = 400_000  # draws x features x bins per step: bounds peak memory
#: Model-level statistics (one series each) are cheap to resample: at least this many
#: draws, so their levels are as precise as the per-feature ones averaged over features.
MODEL_DRAWS = 10_000

#: Statistics whose null scales like ``v(n)`` (the distances like its square root).
_QUADRATIC = frozenset({"psi", "kl_cur_ref", "kl_ref_cur", "score_psi"})
#: Histogram statistics resampled per feature block (``chi2`` is the statistic itself).
_BLOCK_STATS = (*DRIFT_STATS, "chi2")


@dataclass(frozen=True, slots=True)
class NullThresholds:
    """``1 - alpha`` null quantiles at window size ``n``: per statistic,
    ``numeric[stat][F]`` and ``categorical[stat][G]``; model-level ``score_psi``,
    ``variance_ratio`` and ``approval_rate`` (of ``|abs_change|``); ``grid`` is the size
    that was resampled."""

    n: int
    grid: int
    alpha: float
    numeric: Mapping[str, np.ndarray]
    categorical: Mapping[str, np.ndarray]
    score_psi: float
    variance_ratio: float = math.nan
    approval_rate: float = math.nan

    def model(self, name: str) -> float | None:
        """A model-level level by signal name (None when not calibrated)."""
        v = getattr(self, name, None) if name in _MODEL else None
        return float(v) if v is not None and math.isfinite(v) else None


_MODEL = ("score_psi", "variance_ratio", "approval_rate")


class LevelCache(Protocol):
    """Where resampled levels are kept between runs (:meth:`Calibrator.key` names them)."""

    def load(self, key: str) -> dict[float, NullThresholds] | None:
        """The levels saved under ``key`` (None when absent or unreadable)."""

    def save(self, key: str, levels: Mapping[float, NullThresholds]) -> None:
        """Keep ``levels`` under ``key``."""


#: Bump when resampled levels would change for the same inputs in a way the source
#: digest below cannot see (it covers this package's statistics modules).
_KEY_FORMAT = 1
#: Modules whose code the levels depend on: a change to any of them is a new key.
_KEY_MODULES = ("calibrate", "drift", "distances", "divergence", "categorical", "bins",
                "prepared")


@functools.cache
def _code_digest() -> str:
    from importlib import metadata

    try:
        version = metadata.version("driftwatch")
    except metadata.PackageNotFoundError:
        version = "?"
    h = hashlib.sha256(version.encode())
    here = Path(__file__).resolve().parent
    for name in _KEY_MODULES:
        h.update(name.encode())
        try:
            h.update((here / f"{name}.py").read_bytes())
        except OSError:  # installed without sources: the version stands for them
            h.update(b"-")
    return h.hexdigest()


def model_levels(
    details: dict[str, object],
    name: str,
    null: NullThresholds | None,
    levels: Mapping[str, NullThresholds],
) -> float | None:
    """Write a model-level signal's calibrated levels into ``details``; return the one at
    the detector's own ``alpha`` (None when not calibrated)."""
    own = null.model(name) if null is not None else None
    if own is not None:
        details[THRESHOLD_CALIBRATED] = own
    table = {k: v for k, t in levels.items() if (v := t.model(name)) is not None}
    if table:
        details[CALIBRATED_LEVELS] = table
    return own


def _hist_var(counts: np.ndarray, mid: np.ndarray) -> np.ndarray:
    """Variance at the bins' representative points of counts ``[..., 1, W]`` (missing
    column last, ignored), by two dot products (the same value as
    :func:`~driftwatch.detectors.bins.hist_moments`, without its kurtosis)."""
    w = np.asarray(counts[..., 0, :-1], dtype=np.float64)
    x = mid[0]
    n = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (w @ x) / n
        m2 = (w @ (x * x)) / n - m * m
        return (np.where(n > 1, np.maximum(m2, 0.0) * n / np.maximum(n - 1, 1), np.nan))[
            ..., None]


def _noise(n: float, n_ref: int, reference_noise: bool) -> float:
    return 1 / n + (1 / max(n_ref, 1) if reference_noise else 0.0)


def _rescale(t: NullThresholds, n: int, n_ref: int, reference_noise: bool) -> NullThresholds:
    """The quantiles carried from ``t.n`` to ``n`` by the asymptotic rate."""
    if n == t.n or t.n == 0:
        return t
    q = _noise(n, n_ref, reference_noise) / _noise(t.n, n_ref, reference_noise)
    big = (t.n + n_ref) / (n + n_ref)  # total-count ratio N(g) / N(n)
    # chi2 ~ (n n_ref / N) v(n) x chi2(dof): 1 with reference noise, n_ref / N without
    chi = (n * n_ref / (n + n_ref) * _noise(n, n_ref, reference_noise)) / (
        t.n * n_ref / (t.n + n_ref) * _noise(t.n, n_ref, reference_noise))
    factors = {"chi2": chi, "cramers_v": math.sqrt(chi * big)}

    def scale(d: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {
            k: v * (q if k in _QUADRATIC else factors.get(k, math.sqrt(q)))
            for k, v in d.items()
        }

    vr = t.variance_ratio
    vr = math.exp(math.log(vr) * math.sqrt(q)) if vr > 0 and math.isfinite(vr) else vr
    return NullThresholds(n, t.grid, t.alpha, scale(t.numeric), scale(t.categorical),
                          t.score_psi * q, vr, t.approval_rate * math.sqrt(q))


class Calibrator:
    """Null-distribution thresholds for one reference profile (see the module docstring).

    ``rng`` seeds every resampling; ``rates`` are the false-alarm rates (per statistic and
    feature) to return levels for; ``n_draws`` null windows per size for the per-feature
    statistics (the quantile's own error at a rate of 0.01 with 1000 draws is about
    ±0.003 in false-alarm rate), and at least :data:`MODEL_DRAWS` for the model-level ones;
    ``sizes`` window sizes resampled exactly (others go through the grid);
    ``model_level=False`` resamples the per-feature statistics only (a segment's
    calibrator: the model-level signals are measured on the whole window); ``store``
    keeps resampled levels between runs (see the module docstring).
    """

    def __init__(
        self,
        reference: ReferenceProfile,
        rng: np.random.Generator,
        *,
        rates: Sequence[float] = (0.01,),
        n_draws: int = 1000,
        eps: float = DEFAULT_EPS,
        steps_per_octave: int = 8,
        reference_noise: bool = True,
        sizes: Sequence[int] = (),
        approval_cutoff: float | None = None,
        model_level: bool = True,
        store: LevelCache | None = None,
    ) -> None:
        rates = tuple(sorted({float(r) for r in rates}, reverse=True))
        if not rates or not all(0 < r < 1 for r in rates):
            raise ConfigError("false-alarm rates must be in (0, 1)", found=repr(rates))
        if n_draws * min(rates) < 2:
            raise ConfigError("too few null draws for the smallest false-alarm rate",
                              found=f"{n_draws} draws for rate {min(rates):g}",
                              hint=f"use at least {math.ceil(2 / min(rates))} draws")
        self.rates = rates
        self.n_draws = n_draws
        self.eps = eps
        self.steps = steps_per_octave
        self.reference_noise = reference_noise
        self.sizes = frozenset(int(n) for n in sizes if n > 0)
        self.approval_cutoff = approval_cutoff
        self.model_level = model_level
        self.reference = reference
        self._prep: PreparedReference = prepare(reference)
        self.layout = reference.layout
        self._seed = int(rng.integers(0, 2**63 - 1))
        self._cache: dict[int, dict[float, NullThresholds]] = {}
        self.store = store

    @property
    def alpha(self) -> float:
        """The largest rate (the first tier's, usually)."""
        return self.rates[0]

    def __repr__(self) -> str:
        return (
            f"Calibrator(rates={self.rates}, n_draws={self.n_draws}, "
            f"reference_noise={self.reference_noise}, sizes_cached={sorted(self._cache)})"
        )

    @staticmethod
    def grid_size(n: int, steps_per_octave: int = 8) -> int:
        """The largest grid size ``floor(2 ** (k / steps)) <= n``."""
        if n < 1:
            return 0
        k = math.floor(steps_per_octave * math.log2(n) + 1e-9)
        g = math.floor(2 ** (k / steps_per_octave))
        while g > n:
            k -= 1
            g = math.floor(2 ** (k / steps_per_octave))
        return max(g, 1)

    def size_for(self, n: int) -> int:
        """The size actually resampled for a window of ``n`` events: ``n`` itself when it is
        one of ``sizes``; the smallest of ``sizes`` for a window below all of them (a count
        window's first, partial windows, carried down by the asymptotic rate: one
        resampling per reference); else the grid size under ``n``."""
        if n in self.sizes:
            return n
        if self.sizes and n < min(self.sizes):
            return min(self.sizes)
        return self.grid_size(n, self.steps)

    def levels(self, n: int) -> dict[float, NullThresholds]:
        """Thresholds at every rate for a window of ``n`` events (resampled once per size)."""
        g = self.size_for(n)
        hit = self._cache.get(g)
        if hit is None:
            key = self.key(g) if self.store is not None else ""
            hit = self.store.load(key) if self.store is not None else None
            if hit is None or tuple(hit) != self.rates:
                hit = self._compute(g)
                if self.store is not None:
                    self.store.save(key, hit)
            self._cache[g] = hit
        return {a: _rescale(t, n, self._prep.n, self.reference_noise) for a, t in hit.items()}

    def key(self, g: int) -> str:
        """A digest of everything the levels resampled at size ``g`` depend on."""
        fields = {
            "format": _KEY_FORMAT, "code": _code_digest(), "numpy": np.__version__,
            "python": list(sys.version_info[:2]), "reference": self.reference.fingerprint,
            "seed": self._seed, "rates": list(self.rates), "draws": self.n_draws,
            "model_draws": self.model_draws, "eps": self.eps,
            "reference_noise": self.reference_noise, "approval_cutoff": self.approval_cutoff,
            "model_level": self.model_level, "size": int(g),
        }
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]

    def thresholds(self, n: int, rate: float | None = None) -> NullThresholds:
        """Thresholds for a window of ``n`` events at ``rate`` (default: :attr:`alpha`)."""
        rate = self.alpha if rate is None else float(rate)
        lv = self.levels(n)
        if rate not in lv:
            raise ConfigError(f"no calibration for false-alarm rate {rate:g}",
                              found=", ".join(f"{r:g}" for r in self.rates))
        return lv[rate]

    def threshold(self, statistic: str, n: int, rate: float | None = None) -> np.ndarray:
        """One statistic's thresholds for numeric then categorical features."""
        t = self.thresholds(n, rate)
        parts = [d[statistic] for d in (t.numeric, t.categorical) if statistic in d]
        return np.concatenate(parts) if parts else np.zeros(0)

    # -- resampling ----------------------------------------------------------------------
    def null_samples(self, n: int) -> dict[str, dict[str, np.ndarray]]:
        """Raw null draws ``[n_draws, F]`` per block and statistic, at exactly ``n``."""
        prep = self._prep
        rng = np.random.default_rng([self._seed, n])
        out: dict[str, dict[str, np.ndarray]] = {}
        geo = prep.num_geo

        def stats(res) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
            d = {k: res.get(k) for k in DRIFT_STATS}
            d["chi2"] = res.chi.stat
            return {k: v for k, v in d.items() if v is not None}

        if prep.num_names:
            out["numeric"] = self._draw(
                rng, prep.num_fine, n,
                lambda r, c: stats(block_stats(
                    geo.coarse(r), geo.coarse(c), prep.num_coarse_valid, self.eps,
                    ref_fine=r, cur_fine=c, widths=geo.widths, sd=prep.num_sd, p_values=False,
                )),
            )
        if prep.cat_names:
            out["categorical"] = self._draw(
                rng, prep.cat, n,
                lambda r, c: stats(block_stats(r, c, prep.cat_valid, self.eps, p_values=False)),
            )
        if prep.n_score and self.model_level:
            sg = prep.score_geo

            def score(r: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
                psi = divergences(sg.coarse(r), sg.coarse(c), prep.score_coarse_valid,
                                  self.eps).psi
                with np.errstate(invalid="ignore", divide="ignore"):
                    return {"score_psi": psi,
                            "variance_ratio": _hist_var(c, sg.mid) / _hist_var(r, sg.mid)}

            out["score"] = self._draw(rng, prep.score_fine, n, score, self.model_draws)
        a_ref, n_app, _ = prep.approval(self.approval_cutoff)
        if math.isfinite(a_ref) and n_app > 0 and self.model_level:
            m = self.model_draws
            cur = rng.binomial(n, a_ref, size=m) / n
            ref = (rng.binomial(n_app, a_ref, size=m) / n_app
                   if self.reference_noise else np.full(m, a_ref))
            out["approval"] = {"approval_rate": np.abs(cur - ref)[:, None]}
        return out

    @property
    def model_draws(self) -> int:
        """Draws for the model-level statistics (score PSI, variance ratio, approval)."""
        return max(self.n_draws, MODEL_DRAWS)

    def _draw(self, rng: np.random.Generator, counts: np.ndarray, n: int,
              fn: Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]],
              draws: int | None = None) -> dict[str, np.ndarray]:
        p = counts / np.maximum(counts.sum(axis=-1, keepdims=True), 1)
        f, w = counts.shape
        n_ref = int(counts[0].sum())
        step = max(1, _CHUNK_ELEMENTS // max(f * w, 1))
        total = self.n_draws if draws is None else draws
        acc: dict[str, list[np.ndarray]] = {}
        for start in range(0, total, step):
            b = min(step, total - start)
            c = rng.multinomial(n, p, size=(b, f))
            if self.reference_noise:
                r = rng.multinomial(n_ref, p, size=(b, f))
            else:
                r = np.broadcast_to(counts, c.shape)
            for k, v in fn(r, c).items():
                acc.setdefault(k, []).append(v)
        return {k: np.concatenate(v, axis=0) for k, v in acc.items()}

    def _compute(self, g: int) -> dict[float, NullThresholds]:
        if g == 0:
            return {a: NullThresholds(0, 0, a, {}, {}, math.nan) for a in self.rates}
        samples = self.null_samples(g)

        def quant(block: str, q: float) -> dict[str, np.ndarray]:
            out = {}
            for k, v in samples.get(block, {}).items():
                with np.errstate(invalid="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN feature columns
                    out[k] = np.nanquantile(v, q, axis=0)
            return out

        res = {}
        for a in self.rates:
            score = quant("score", 1 - a)
            app = quant("approval", 1 - a).get("approval_rate")
            res[a] = NullThresholds(
                g, g, a, quant("numeric", 1 - a), quant("categorical", 1 - a),
                float(score["score_psi"][0]) if "score_psi" in score else math.nan,
                float(score["variance_ratio"][0]) if "variance_ratio" in score else math.nan,
                float(app[0]) if app is not None else math.nan,
            )
        return res
