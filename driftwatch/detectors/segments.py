"""Feature drift on the whole window and on each segment, as one family of tests.

A window with segments tests every feature once on the whole window and once per segment
(:mod:`driftwatch.windows.segments`). Each part is measured against its own reference: the
whole reference, or the reference rows of that segment; its calibrated levels are drawn at
its own reference size and window size (a segment's own
:class:`~driftwatch.detectors.calibrate.Calibrator`). The p-value tests (chi-square, KS)
of all parts form **one** Benjamini-Hochberg family: ``K + 1`` segments add ``(K + 1) F``
hypotheses, so the false-discovery level holds over everything the window tested, not per
part. Segment results carry ``segment``; the whole window's do not.

>>> import numpy as np, pandas as pd
>>> from driftwatch.batch import Batch
>>> from driftwatch.detectors.prepared import prepare
>>> from driftwatch.windows.profile import ReferenceProfile
>>> from driftwatch.windows.sketch import Sketch
>>> rng = np.random.default_rng(0)
>>> ref = pd.DataFrame({"x": rng.normal(size=8000), "ch": rng.choice(["web", "shop"], 8000)})
>>> prof = ReferenceProfile.build(ref, numeric=["x"], segment="ch", segment_top_k=2)
>>> x = rng.normal(size=4000); ch = rng.choice(["web", "shop"], 4000)
>>> x[ch == "shop"] += 0.6  # only one channel moves
>>> batch = Batch.build("predictions", n=4000, n_numeric=1, numeric=x[:, None], segment=ch)
>>> whole, parts = Sketch.empty(prof.layout), [Sketch.empty(prof.layout) for _ in range(3)]
>>> whole.add_batch(batch)
>>> for code, rows in prof.segments.coder.split(batch): parts[code].add_batch(rows)
>>> units = [DriftPart(None, prepare(prof), whole)] + [
...     DriftPart(name, prepare(r), sk) for name, r, sk in
...     zip(prof.segments.names, prof.segment_references(), parts) if sk.n]
>>> out = family_drift(units, DetectorConfig(), flags=None)
>>> [(s.segment, round(s.value, 2)) for s in out if s.signal == "psi"]
[(None, 0.09), ('web', 0.01), ('shop', 0.35)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.calibrate import NullThresholds
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.drift import drift_signals
from driftwatch.detectors.fdr import benjamini_hochberg
from driftwatch.detectors.prepared import PreparedReference
from driftwatch.detectors.quality import QualityFlags
from driftwatch.detectors.stacked import WindowStats, categorical_stats, numeric_stats
from driftwatch.windows.sketch import Sketch

__all__ = ["DriftPart", "family_drift"]


@dataclass(frozen=True)
class DriftPart:
    """One part of a window: the whole (``segment`` None) or one segment, with its
    prepared reference, its sketch, and its calibrated levels (at the detectors'
    ``alpha``, and by rate key) when there are any; ``stats`` its drift statistics when
    they were computed already (:func:`~driftwatch.detectors.stacked.window_stats`)."""

    segment: str | None
    prep: PreparedReference
    current: Sketch
    null: NullThresholds | None = None
    levels: Mapping[str, NullThresholds] = dataclasses.field(default_factory=dict)
    stats: WindowStats | None = None


@dataclass(frozen=True, eq=False)
class _Block:
    part: DriftPart
    numeric: bool
    names: tuple[str, ...]
    stats: object
    ref: np.ndarray
    cur: np.ndarray
    valid: np.ndarray
    labels: object
    flag: np.ndarray
    report: np.ndarray


def _report_mask(names: tuple[str, ...], cfg: DetectorConfig) -> np.ndarray:
    if cfg.features is None:
        return np.ones(len(names), dtype=bool)
    wanted = set(cfg.features)
    return np.array([n in wanted for n in names], dtype=bool)


def _blocks(part: DriftPart, cfg: DetectorConfig, flags: QualityFlags | None) -> list[_Block]:
    prep, cur = part.prep, part.current
    pre = part.stats if part.stats is not None and part.stats.fits(prep, cur, cfg) else None
    out = []
    if prep.num_names:
        geo = prep.num_geo
        if pre is not None and pre.num is not None and pre.num_coarse is not None:
            cc, st = pre.num_coarse, pre.num
        else:
            cc, st = numeric_stats(prep, cur.num_fine, cfg)
        flag = flags.numeric if flags is not None else np.zeros(len(prep.num_names), bool)
        out.append(_Block(part, True, prep.num_names, st, prep.num_coarse, cc,
                          prep.num_coarse_valid, geo.coarse_labels, flag,
                          _report_mask(prep.num_names, cfg)))
    if prep.cat_names:
        st = pre.cat if pre is not None and pre.cat is not None else \
            categorical_stats(prep, cur.cat, cfg)
        flag = flags.categorical if flags is not None else np.zeros(len(prep.cat_names), bool)
        out.append(_Block(part, False, prep.cat_names, st, prep.cat, cur.cat, prep.cat_valid,
                          prep.cat_labels, flag, _report_mask(prep.cat_names, cfg)))
    return out


def family_drift(parts: Sequence[DriftPart], cfg: DetectorConfig,
                 flags: QualityFlags | None) -> list[SignalResult]:
    """Per-feature drift results of every part, BH-corrected as one family.

    ``flags`` are the whole window's data-quality flags (a fault is judged on the whole
    feed, and every part of a feature carries it).
    """
    blocks = [b for p in parts for b in _blocks(p, cfg, flags)]
    chi_p = np.concatenate([np.where(b.report, b.stats.chi.p_value, np.nan)  # type: ignore[attr-defined]
                            for b in blocks] or [np.zeros(0)])
    chi_bh = benjamini_hochberg(chi_p, cfg.fdr)
    ks_blocks = [b for b in blocks if b.numeric and b.stats.ks is not None]  # type: ignore[attr-defined]
    ks_p = np.concatenate([np.where(b.report, b.stats.ks.p_value, np.nan)  # type: ignore[attr-defined]
                           for b in ks_blocks] or [np.zeros(0)])
    ks_bh = benjamini_hochberg(ks_p, cfg.fdr)
    out: list[SignalResult] = []
    chi_at = ks_at = 0
    for b in blocks:
        part, f = b.part, len(b.names)
        null = part.null
        cal = None if null is None else (null.numeric if b.numeric else null.categorical)
        has_ks = b.numeric and b.stats.ks is not None  # type: ignore[attr-defined]
        geo = part.prep.num_geo if b.numeric else None
        res = drift_signals(
            b.names, b.stats, ref_coarse=b.ref, cur_coarse=b.cur,  # type: ignore[arg-type]
            valid=b.valid, labels=b.labels, n_ref=part.prep.n,  # type: ignore[arg-type]
            n_cur=part.current.n, cfg=cfg, calibrated=cal, report=b.report,
            quality_flag=b.flag, chi_adjusted=chi_bh.adjusted[chi_at : chi_at + f],
            chi_p_cut=chi_bh.p_cut,
            ks_adjusted=ks_bh.adjusted[ks_at : ks_at + f] if has_ks else None,
            ks_p_cut=ks_bh.p_cut if has_ks else None,
            fine_hi=geo.fine_hi if geo is not None else None,
            bounds=(geo.coarse_lo, geo.coarse_hi) if geo is not None else None,
            levels={k: (t.numeric if b.numeric else t.categorical)
                    for k, t in part.levels.items()},
            segment=part.segment,
        )
        chi_at += f
        ks_at += f if has_ks else 0
        out += res
    return out
