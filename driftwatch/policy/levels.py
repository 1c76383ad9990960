"""From a policy's ``detectors:`` settings to the detectors' configuration, the reference
profile's bins and the calibrated levels: one place, used by the pipeline (replay and the
daemon alike) and by ``policy explain --reference``.

>>> import numpy as np, pandas as pd
>>> from driftwatch.policy.schema import Policy
>>> from driftwatch.windows.profile import ReferenceProfile
>>> p = Policy.model_validate({
...     "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
...     "model": {"name": "m", "reference": "r.parquet"}, "window": {"pane": 1000},
...     "signals": [{"detector": "ks",
...                  "thresholds": {"mild": {"calibrated": {"false_alarm_rate": 0.01}}}}],
...     "detectors": {"fdr": 0.05, "calibration": {"draws": 400}}})
>>> detector_config(p).fdr, calibration_rates(p, detector_config(p))
(0.05, (0.01,))
>>> rng = np.random.default_rng(0)
>>> prof = ReferenceProfile.build(pd.DataFrame({"x": rng.normal(size=5000)}), numeric=["x"])
>>> table = calibrated_table(p, prof, 1000)
>>> level = table["ks"]["x"][0.01]
>>> bool(0.03 < level < 0.08), table == calibrated_table(p, prof, 1000)  # seeded by the profile
(True, True)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from driftwatch.detectors.calibrate import Calibrator, LevelCache, NullThresholds
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.registry import SIGNALS
from driftwatch.errors import ConfigError
from driftwatch.policy.schema import Policy
from driftwatch.scorescale import ScoreScale
from driftwatch.sentinels import MissingValues
from driftwatch.windows.conventions import build_profile
from driftwatch.windows.profile import ReferenceProfile

__all__ = [
    "CalibratorCache",
    "LevelTable",
    "build_calibrator",
    "calibrated_table",
    "calibration_rates",
    "detector_config",
    "load_reference",
    "reference_settings",
    "segment_tables",
]

_DEFAULT = DetectorConfig()
_BIN_SETTINGS = ("bins", "fine_bins", "top_k")

#: ``{detector: {feature or None: {rate: level}}}``
LevelTable = dict[str, dict[str | None, dict[float, float]]]


def detector_config(policy: Policy | None) -> DetectorConfig:
    """The policy's ``detectors:`` settings as a :class:`DetectorConfig` (cached on it)."""
    if policy is None:
        return _DEFAULT
    cached = policy.cache.get("detector_config")
    if cached is None:
        d = policy.detectors
        # the policy's approval cut-off: when no decision field is mapped, approval_rate
        # counts the scores at or below it as approved (reference and window alike)
        cached = DetectorConfig(eps=d.eps, alpha=d.alpha, fdr=d.fdr, min_labelled=d.min_labelled,
                                approval_cutoff=policy.model.approval_cutoff)
        policy.cache["detector_config"] = cached
    return cached  # type: ignore[no-any-return]


def calibration_rates(policy: Policy | None, config: DetectorConfig) -> tuple[float, ...]:
    """False-alarm rates to calibrate for: every rate the policy names, and the detectors'
    own ``alpha``; empty when the policy asks for no calibrated level."""
    if policy is None:
        return ()
    # asked once a window (the monitor's calibrator lookup): cached on the policy by alpha
    by_alpha = policy.cache.setdefault("calibration_rates", {})
    hit = by_alpha.get(config.alpha)
    if hit is None:
        rates = {r for rs in policy.calibrated_rates().values() for r in rs}
        hit = by_alpha[config.alpha] = (
            tuple(sorted(rates | {config.alpha}, reverse=True)) if rates else ())
    return hit  # type: ignore[no-any-return]


def build_calibrator(
    profile: ReferenceProfile,
    policy: Policy,
    *,
    config: DetectorConfig | None = None,
    sizes: tuple[int, ...] = (),
    model_level: bool = True,
    store: LevelCache | None = None,
) -> Calibrator | None:
    """A :class:`Calibrator` for the policy's rates, seeded from the profile's fingerprint:
    the same reference gives the same levels in a replay and in the daemon, whatever the
    wall clock (``store``: where levels resampled before are read back, see
    :mod:`~driftwatch.policy.level_store`). None when the policy asks for no calibrated
    level."""
    cfg = config or detector_config(policy)
    rates = calibration_rates(policy, cfg)
    if not rates:
        return None
    cal = policy.detectors.calibration
    rng = np.random.default_rng(int(profile.fingerprint, 16))
    return Calibrator(profile, rng, rates=rates, n_draws=cal.draws, eps=cfg.eps,
                      reference_noise=cal.reference_noise, sizes=sizes,
                      approval_cutoff=cfg.approval_cutoff, model_level=model_level,
                      store=store)


def calibration_key(profile: ReferenceProfile, policy: Policy, config: DetectorConfig,
                    sizes: tuple[int, ...], model_level: bool = True) -> tuple[Any, ...] | None:
    """What a calibrator's levels depend on: the reference, the rates and resampling
    settings, the window sizes. Two policies that agree on these share levels whatever
    else they change (tiers, actions, persistence). None: no calibrated level asked."""
    rates = calibration_rates(policy, config)
    if not rates:
        return None
    cal = policy.detectors.calibration
    return (id(profile), rates, cal.draws, cal.reference_noise, config.eps,
            config.approval_cutoff, tuple(sorted(sizes)), model_level)


class CalibratorCache:
    """Calibrators by :func:`calibration_key`, the most recent ``capacity`` kept.

    A hot-reloaded policy is a new object; keyed on it, every reload resampled every
    level again (seconds of a held interpreter per reload). Keyed on what the levels
    depend on, a reload that leaves the rates alone reuses the levels already drawn, and
    a window size seen before is not resampled twice. Entries hold their profile, so an
    ``id`` in a key cannot be reused while the entry lives. ``store`` (settable) keeps
    resampled levels between runs too (:class:`~driftwatch.policy.level_store.LevelStore`):
    the calibrators built from then on read and write it.
    """

    def __init__(self, capacity: int = 16, store: LevelCache | None = None) -> None:
        self.capacity = int(capacity)
        self.store = store
        self._items: OrderedDict[tuple[Any, ...],
                                 tuple[ReferenceProfile, Calibrator]] = OrderedDict()
        #: Calibrators built (a reload that reuses one does not add to it).
        self.built = 0

    def get(self, profile: ReferenceProfile, policy: Policy, *,
            config: DetectorConfig | None = None, sizes: tuple[int, ...] = (),
            model_level: bool = True) -> Calibrator | None:
        """The calibrator for ``profile`` under ``policy`` (built on first use)."""
        cfg = config or detector_config(policy)
        key = calibration_key(profile, policy, cfg, sizes, model_level)
        if key is None:
            return None
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit[1]
        cal = build_calibrator(profile, policy, config=cfg, sizes=sizes,
                               model_level=model_level, store=self.store)
        assert cal is not None  # a key means there are rates
        self.built += 1
        self._items[key] = (profile, cal)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
        return cal


def reference_settings(policy: Policy | None) -> dict[str, Any]:
    """What of ``policy`` the profile :func:`load_reference` reads depends on: the
    ``reference:`` block (columns, ``score_is``, label and decision coding, ``ignore``,
    ``csv: {names:}``), the bin settings and the segment values kept. Equal settings read
    the same file into the same profile; a hot reload that changes them must read it again.

    >>> from driftwatch.policy.loader import load_policy_text
    >>> from driftwatch.policy.watcher import MINIMAL
    >>> a = load_policy_text(MINIMAL, file="p.yaml")
    >>> b = load_policy_text(MINIMAL + "reference: {score_is: p_good}", file="p.yaml")
    >>> c = load_policy_text(MINIMAL.replace("pane: 500", "pane: 800"), file="p.yaml")
    >>> settings = reference_settings
    >>> settings(a) == settings(b), settings(a) == settings(c)  # score_is matters, the pane not
    (False, True)
    """
    if policy is None:
        return {}
    d = policy.detectors
    return {"reference": policy.reference.model_dump(mode="json"),
            "bins": {k: getattr(d, k) for k in _BIN_SETTINGS},
            "bins_set": sorted(d.model_fields_set & set(_BIN_SETTINGS)),
            "segment_top_k": policy.segments.top_k if policy.reference.segment else None}


def load_reference(path: str | Path, policy: Policy | None, *,
                   kinds: Mapping[str, str] | None = None,
                   missing: MissingValues | None = None,
                   formats: Mapping[str, str] | None = None,
                   score_scale: ScoreScale | None = None) -> ReferenceProfile:
    """The reference profile at ``path``, read with the policy's ``reference:`` columns
    and binned as its ``detectors:`` says (``kinds``: feature types a connector declares;
    ``missing``: the values it reads as missing, read so in the table too; ``formats``:
    the features it reads as percent or money text, read so in the table too;
    ``score_scale``: the scale it writes the score in, a score column written so read so).

    A dataset is binned with the policy's ``bins``/``fine_bins``/``top_k``; a saved
    profile keeps its bins, and a policy that names other ones is refused (the windows
    and the levels would be on bins nobody asked for).
    """
    path = Path(path)
    d = policy.detectors if policy is not None else None
    if not path.name.endswith((".json", ".json.gz")):
        kw = {k: getattr(d, k) for k in _BIN_SETTINGS} if d is not None else {}
        if policy is not None and policy.reference.segment:
            kw["segment_top_k"] = policy.segments.top_k
        conv = policy.reference.conventions() if policy is not None else None
        return build_profile(path, conv, kinds=kinds, missing=missing,  # type: ignore[no-any-return]
                             formats=formats, score_scale=score_scale, **kw)
    profile = ReferenceProfile.from_file(path)
    want = missing.to_dict(profile.schema.names) if missing is not None else {}
    have = profile.meta.get("missing_values", {})
    if missing is not None and want != have:
        raise ConfigError("the saved reference profile reads other values as missing than "
                          f"the connector ({have or 'none'} vs {want or 'none'})",
                          file=str(path), hint="rebuild the profile from the dataset with "
                          "this connector, or declare the same missing_values")
    for k in sorted(d.model_fields_set & set(_BIN_SETTINGS)) if d is not None else ():
        have = profile.meta.get(k)
        if have is not None and have != getattr(d, k):
            raise ConfigError(f"the saved reference profile has {k}={have}, the policy asks "
                              f"for {getattr(d, k)}", file=str(path),
                              hint=f"rebuild the profile or remove detectors.{k}")
    if policy is not None and policy.reference.segment and profile.segments is None:
        raise ConfigError(f"the saved reference profile has no segments, the policy names "
                          f"segment column {policy.reference.segment!r}", file=str(path),
                          hint="rebuild the profile from the dataset or remove "
                               "reference.segment")
    if (policy is not None and profile.segments is not None
            and "top_k" in policy.segments.model_fields_set
            and profile.meta.get("segment_top_k") != policy.segments.top_k):
        raise ConfigError(f"the saved reference profile keeps "
                          f"{profile.meta.get('segment_top_k')} segment values, the policy "
                          f"asks for {policy.segments.top_k}", file=str(path),
                          hint="rebuild the profile or remove segments.top_k")
    return profile


def _levels_of(t: NullThresholds, detector: str,
               names: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str | None, float]:
    if SIGNALS[detector].level == "model":
        v = t.model(detector)
        return {} if v is None else {None: v}
    out: dict[str | None, float] = {}
    for block, feats in zip((t.numeric, t.categorical), names, strict=True):
        arr = block.get(detector)
        if arr is not None:
            out.update({f: float(x) for f, x in zip(feats, arr, strict=True)
                        if np.isfinite(x)})
    return out


def calibrated_table(policy: Policy, profile: ReferenceProfile, n: int, *,
                     model_level: bool = True, store: LevelCache | None = None) -> LevelTable:
    """Every calibrated level the policy asks for, at a window of ``n`` events
    (``model_level=False``: the per-feature detectors only, as for a segment)."""
    cal = build_calibrator(profile, policy, sizes=(n,), model_level=model_level,
                           store=store)
    if cal is None or n < 1:
        return {}
    levels = cal.levels(n)
    names = (profile.layout.numeric.names, profile.layout.categorical.names)
    out: LevelTable = {}
    for det, rates in policy.calibrated_rates().items():
        if not model_level and SIGNALS[det].level == "model":
            continue
        for rate in rates:
            for feat, v in _levels_of(levels[rate], det, names).items():
                out.setdefault(det, {}).setdefault(feat, {})[rate] = v
    return out


def segment_tables(policy: Policy, profile: ReferenceProfile, n: int
                   ) -> list[tuple[str, int, LevelTable]]:
    """Per segment with signals: its name, its events in a window of ``n`` at its
    reference share, and its own calibrated levels there (per-feature detectors)."""
    total = max(profile.sketch.n, 1)
    least = policy.segments.min_events
    out = []
    for ref in profile.segment_references():
        m = round(n * ref.sketch.n / total)
        if m < least or ref.sketch.n < least:
            continue
        table = calibrated_table(policy, ref, m, model_level=False)
        if table:
            out.append((str(ref.meta["segment"]), m, table))
    return out
