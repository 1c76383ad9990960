"""The one entry point the pipeline calls: every signal for one closed window.

``assess`` is a pure function of the reference profile and the window's sketch (plus
optional bad-record counts): no I/O, no clock, no randomness (a
:class:`~driftwatch.detectors.calibrate.Calibrator` brings its own seeded draws, cached).
Reference-side arrays are prepared once per profile
(:func:`~driftwatch.detectors.prepared.prepare`); a window then costs a few vectorised
numpy passes over ``features × bins``, independent of the number of events.

>>> import numpy as np, pandas as pd
>>> from driftwatch.windows.profile import ReferenceProfile
>>> from driftwatch.windows.sketch import Sketch
>>> from driftwatch.batch import Batch
>>> rng = np.random.default_rng(0)
>>> ref = pd.DataFrame({"x": rng.normal(size=5000), "y": rng.normal(size=5000),
...                     "score": rng.uniform(size=5000)})
>>> prof = ReferenceProfile.build(ref, numeric=["x", "y"])
>>> cur = Sketch.empty(prof.layout)
>>> cur.add_batch(Batch.build("predictions", n=5000, n_numeric=2,
...     numeric=np.c_[rng.normal(0.5, 1, 5000), rng.normal(size=5000)],
...     score=rng.uniform(size=5000)))
>>> a = assess(prof, cur, model="m", window_id=1, start_time=0.0, end_time=60.0)
>>> sorted({s.feature for s in a.select(group="drift") if s.exceeds} - {None})
['x']
>>> round(next(a.select(signal="psi", feature="x")).value, 2)
0.24
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.detectors.business import business_signals
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.confidence import confidence_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.drift import aggregate_signals, block_stats, drift_signals
from driftwatch.detectors.fdr import benjamini_hochberg
from driftwatch.detectors.performance import performance_signals
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.quality import quality_signals
from driftwatch.detectors.registry import rate_key
from driftwatch.errors import DriftwatchError
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["assess"]

_DEFAULT = DetectorConfig()


def _same_layout(a: SketchLayout, b: SketchLayout) -> bool:
    return a is b or a.to_dict() == b.to_dict()


def _report_mask(names: tuple[str, ...], cfg: DetectorConfig) -> np.ndarray:
    if cfg.features is None:
        return np.ones(len(names), dtype=bool)
    wanted = set(cfg.features)
    return np.array([n in wanted for n in names], dtype=bool)


def assess(
    reference: ReferenceProfile,
    current: Sketch,
    *,
    model: str,
    window_id: int,
    start_time: float,
    end_time: float,
    config: DetectorConfig | None = None,
    calibrator: Calibrator | None = None,
    bad_records: Mapping[str, int] | None = None,
    absent_fields: Mapping[str, tuple[int, int, str]] | None = None,
) -> Assessment:
    """Every selected signal for ``current`` measured against ``reference``.

    Parameters
    ----------
    reference
        The profile of what the live model was trained on; its derived arrays are cached.
    current
        The closed window's sketch, on the reference's layout.
    model, window_id, start_time, end_time
        Copied into the :class:`~driftwatch.detectors.base.Assessment`.
    config
        Which detectors and features, epsilon, false-alarm rate, effect sizes
        (:class:`~driftwatch.detectors.config.DetectorConfig`; defaults when None).
    calibrator
        Adds null-quantile levels at this window's size (a
        :class:`~driftwatch.detectors.calibrate.Calibrator` on the same bins): at the
        config's ``alpha`` they raise each calibratable detector's ``threshold``, and at
        every rate the calibrator holds they are written to ``details`` under
        :data:`~driftwatch.detectors.registry.CALIBRATED_LEVELS` (what a policy's
        calibrated thresholds read). Without it thresholds are the effect sizes (and the
        analytic margins of the moment and rate statistics).
    bad_records
        Records rejected before the sketch, by reason; feeds ``bad_record_rate``.
    absent_fields
        Per feature: records of the run's first sample without its mapped path, records
        sampled, and the path (:mod:`driftwatch.connectors.probe`); feeds ``field_absent``.

    Returns
    -------
    Assessment
        Per-feature drift and data-quality results, ``<stat>_aggregate`` summaries, and
        the model-level confidence, business and performance results.

    Raises
    ------
    DriftwatchError
        When the sketch or the calibrator is on other bins than the reference.
    """
    cfg = config or _DEFAULT
    if not _same_layout(current.layout, reference.layout):
        raise DriftwatchError("current sketch is not on the reference profile's layout")
    if calibrator is not None and not _same_layout(calibrator.layout, reference.layout):
        raise DriftwatchError("calibrator was built for a reference on other bins")
    prep = prepare(reference)
    n_ref, n_cur = prep.n, current.n
    signals: list[SignalResult] = []
    levels = calibrator.levels(n_cur) if calibrator is not None and n_cur > 0 else {}
    # the detectors' own thresholds use their alpha (else the calibrator's largest rate)
    null = levels.get(cfg.alpha)
    if null is None and calibrator is not None and levels:
        null = levels[calibrator.alpha]
    by_rate = {rate_key(a): t for a, t in levels.items()}

    quality, flags = quality_signals(prep, current, cfg, bad_records=bad_records,
                                     absent_fields=absent_fields)
    if cfg.wants_group("data_quality"):
        keep = None if cfg.features is None else set(cfg.features)
        signals += [q for q in quality if keep is None or q.feature is None or q.feature in keep]

    if cfg.wants_group("drift") and n_cur > 0:
        blocks = []
        if prep.num_names:
            geo = prep.num_geo
            cc = geo.coarse(current.num_fine)
            st = block_stats(prep.num_coarse, cc, prep.num_coarse_valid, cfg.eps,
                             ref_fine=prep.num_fine, cur_fine=current.num_fine,
                             widths=geo.widths, sd=prep.num_sd)
            blocks.append((prep.num_names, st, prep.num_coarse, cc, prep.num_coarse_valid,
                           geo.coarse_labels, flags.numeric, None if null is None else null.numeric,
                           geo.fine_hi, (geo.coarse_lo, geo.coarse_hi)))
        if prep.cat_names:
            st = block_stats(prep.cat, current.cat, prep.cat_valid, cfg.eps)
            blocks.append((prep.cat_names, st, prep.cat, current.cat, prep.cat_valid,
                           prep.cat_labels, flags.categorical,
                           None if null is None else null.categorical, None, None))
        reports = [_report_mask(b[0], cfg) for b in blocks]
        # BH over the features reported in this window, per test family
        chi_p = np.concatenate(
            [np.where(r, b[1].chi.p_value, np.nan) for b, r in zip(blocks, reports, strict=True)]
            or [np.zeros(0)]
        )
        chi_bh = benjamini_hochberg(chi_p, cfg.fdr)
        ks_bh = None
        if prep.num_names and blocks[0][1].ks is not None:
            ks_p = np.where(reports[0], blocks[0][1].ks.p_value, np.nan)  # type: ignore[union-attr]
            ks_bh = benjamini_hochberg(ks_p, cfg.fdr)
        drift: list[SignalResult] = []
        offset = 0
        for i, (b, rep) in enumerate(zip(blocks, reports, strict=True)):
            names, st, rc, cc, valid, labels, qflag, cal, fine_hi, bounds = b
            f = len(names)
            is_num = i == 0 and bool(prep.num_names)
            drift += drift_signals(
                names, st, ref_coarse=rc, cur_coarse=cc, valid=valid, labels=labels,
                n_ref=n_ref, n_cur=n_cur, cfg=cfg, calibrated=cal, report=rep,
                quality_flag=qflag, chi_adjusted=chi_bh.adjusted[offset : offset + f],
                chi_p_cut=chi_bh.p_cut,
                ks_adjusted=ks_bh.adjusted if is_num and ks_bh is not None else None,
                ks_p_cut=ks_bh.p_cut if is_num and ks_bh is not None else None,
                fine_hi=fine_hi,
                bounds=bounds,
                levels={k: (t.numeric if is_num else t.categorical) for k, t in by_rate.items()},
            )
            offset += f
        signals += drift
        signals += aggregate_signals(drift, cfg, n_ref, n_cur)

    if cfg.wants_group("confidence"):
        signals += confidence_signals(prep, current, cfg, null=null, levels=by_rate)
    if cfg.wants_group("business"):
        signals += business_signals(prep, current, cfg, null=null, levels=by_rate)
    if cfg.wants_group("performance"):
        signals += performance_signals(prep.disc, prep.calibration_ratio, current, cfg,
                                       n_ref=int(prep.lab_n.sum()))
    return Assessment(
        model=model,
        window_id=window_id,
        start_time=start_time,
        end_time=end_time,
        n_events=n_cur,
        signals=tuple(signals),
        n_labelled=int(current.lab_n.sum()),
    )
