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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.detectors.business import business_signals
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.confidence import confidence_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.drift import aggregate_signals
from driftwatch.detectors.performance import performance_signals
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.quality import quality_signals
from driftwatch.detectors.registry import rate_key
from driftwatch.detectors.segments import DriftPart, family_drift
from driftwatch.detectors.stacked import WindowStats
from driftwatch.errors import DriftwatchError
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["SegmentWindow", "assess", "segment_windows"]

_DEFAULT = DetectorConfig()


def _same_layout(a: SketchLayout, b: SketchLayout) -> bool:
    return a is b or a.to_dict() == b.to_dict()


@dataclass(frozen=True)
class SegmentWindow:
    """One segment of a closed window: its name, the reference rows of that segment, the
    window's events of that segment, and a calibrator on that reference (or None)."""

    name: str
    reference: ReferenceProfile
    current: Sketch
    calibrator: Calibrator | None = None


def segment_windows(
    reference: ReferenceProfile,
    sketches: Sequence[Sketch] | None,
    *,
    min_events: int,
    calibrator: Callable[[ReferenceProfile], Calibrator | None] | None = None,
) -> list[SegmentWindow]:
    """The segments of a closed window (``sketches`` in the reference's segment order)
    that hold at least ``min_events`` events, in the window and in the reference;
    ``calibrator`` gives each segment's reference its calibrator."""
    refs = reference.segment_references()
    if not sketches or len(refs) < 2:
        return []  # one segment (every value in other) is the whole window again
    out = []
    for ref, cur in zip(refs, sketches, strict=True):
        if cur.n < min_events or ref.sketch.n < min_events:
            continue
        cal = calibrator(ref) if calibrator is not None else None
        out.append(SegmentWindow(str(ref.meta["segment"]), ref, cur, cal))
    return out


def _segment_parts(segments: Sequence[SegmentWindow], reference: ReferenceProfile,
                   cfg: DetectorConfig) -> list[DriftPart]:
    out = []
    for seg in segments:
        if not _same_layout(seg.current.layout, reference.layout) or not _same_layout(
                seg.reference.layout, reference.layout):
            raise DriftwatchError(f"segment {seg.name!r} is not on the reference's layout")
        n = seg.current.n
        if n == 0:
            continue
        levels = seg.calibrator.levels(n) if seg.calibrator is not None else {}
        null = levels.get(cfg.alpha)
        if null is None and seg.calibrator is not None and levels:
            null = levels[seg.calibrator.alpha]
        out.append(DriftPart(seg.name, prepare(seg.reference), seg.current, null,
                             {rate_key(a): t for a, t in levels.items()}))
    return out


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
    records_at_least: int = 0,
    absent_fields: Mapping[str, tuple[int, int, str]] | None = None,
    segments: Sequence[SegmentWindow] = (),
    stats: WindowStats | None = None,
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
    records_at_least
        ``bad_record_rate``'s share is of at least this many records (a window the end of
        a stream cut short is measured against a full window's records).
    absent_fields
        Per feature: records of the run's first sample without its mapped path, records
        sampled, and the path (:mod:`driftwatch.connectors.probe`); feeds ``field_absent``.
    segments
        The window's segments (:class:`SegmentWindow`): each adds per-feature drift results
        with ``segment`` set, measured against its own reference rows and levels; their
        p-value tests join the whole window's in one BH family
        (:mod:`driftwatch.detectors.segments`). Aggregates stay on the whole window.
    stats
        The whole window's drift statistics and score divergences when they were computed
        already, with other windows' in one pass
        (:func:`~driftwatch.detectors.stacked.window_stats`); used only when they were
        computed from ``current`` itself, against ``reference``, with these settings.

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

    own = stats if stats is not None and stats.fits(prep, current, cfg) else None
    quality, flags = quality_signals(prep, current, cfg, bad_records=bad_records,
                                     records_at_least=records_at_least,
                                     absent_fields=absent_fields,
                                     row=None if own is None else own.quality)
    if cfg.wants_group("data_quality"):
        keep = None if cfg.features is None else set(cfg.features)
        signals += [q for q in quality if keep is None or q.feature is None or q.feature in keep]

    if cfg.wants_group("drift") and n_cur > 0:
        whole = DriftPart(None, prep, current, null, by_rate, stats)
        drift = family_drift([whole, *_segment_parts(segments, reference, cfg)], cfg, flags)
        signals += drift
        signals += aggregate_signals([r for r in drift if r.segment is None], cfg, n_ref, n_cur)

    if cfg.wants_group("confidence"):
        signals += confidence_signals(prep, current, cfg, null=null, levels=by_rate,
                                      stats=stats)
    if cfg.wants_group("business"):
        signals += business_signals(prep, current, cfg, null=null, levels=by_rate)
    if cfg.wants_group("performance"):
        signals += performance_signals(prep.disc, prep.calibration_ratio, current, cfg,
                                       n_ref=prep.n_labelled,
                                       disc=None if own is None else own.disc)
    return Assessment(
        model=model,
        window_id=window_id,
        start_time=start_time,
        end_time=end_time,
        n_events=n_cur,
        signals=tuple(signals),
        n_labelled=int(current.lab_n.sum()),
    )
