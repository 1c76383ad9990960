"""Data-quality signals: a broken feed, kept apart from a population change.

Per feature (group ``data_quality``):

* ``missing_rate``: the current missing share; details give the reference share, the
  increase and a one-sided binomial p-value (reference share as the null), with its
  Benjamini-Hochberg adjustment across the window's features (``p_adjusted``, at the
  detectors' ``fdr``) and whether it is ``significant`` there: the policy's data-quality
  gate counts an increase only when it is.
* ``out_of_range`` (numeric): share of the current non-missing values outside the
  reference ``[min, max]``; under a stable population it is ``2 / (m + 1)`` on average,
  ``m`` the reference's non-missing values of the feature (not its rows: a feature present
  on 1% of them has a range drawn from few values, which new values leave often). Details
  give the one-sided p-value of the count outside on its exact null
  (:mod:`~driftwatch.detectors.range_null`: the range is a draw too), its
  Benjamini-Hochberg adjustment across the window's numeric features and whether it is
  ``significant`` there: the data-quality gate counts the share only when it is.
  Details also report the largest *spike*: the fine bin whose current share exceeds the
  reference share by the most, the signature of a default value filling nulls.
* ``new_category_rate`` (categorical): share of levels the reference never saw, with the
  unseen, other and missing counts.
* ``bad_record_rate`` (model level): the share of the window's records (predictions,
  outcome records and rejected ones) rejected by decoding / validation, when the caller
  passes their counts. Outcome records count: a burst of outcomes with label values the
  connector does not name, read after the last prediction, is a share of the outcomes
  read, not 100% of nothing.
* ``field_absent`` (per feature, when the caller passes a probe of the first records):
  the share of those records that lack the feature's mapped path altogether (absent, not
  null): a mistyped path matches nothing, and the feature reads as missing everywhere.
  Its threshold is the effect size alone (default 0.5); it flags the feature.

Each threshold is ``baseline + max(effect, margin)``: the effect size from the config and
the ``1 - alpha`` quantile at the window's size (binomial; out-of-range counts: their
exact null), so small windows do not alarm on noise. A feature's *fault* flag is set when
any of its quality signals exceeds its threshold or it has a spike; every result carries
``features_flagged`` (how many features raised the same signal in this window) so a
policy can tell a fault in one feed (a sudden jump in one feature, the others stable)
from a widespread outage, and drift results of the faulty feature carry
``data_quality_flag`` so a policy does not read a fault as a population change
(DOMAIN.md: do not retrain on a broken pipeline).

The numbers are computed for windows closed together in one numpy pass
(:func:`quality_rows`, one :class:`QualityRow` per window: element-wise steps and
reductions over each window's own last axis, so a row has the bits of that window alone);
:func:`quality_signals` builds one window's results from its row.

>>> import numpy as np, pandas as pd
>>> from driftwatch.batch import Batch
>>> from driftwatch.detectors.prepared import prepare
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(0)
>>> prof = ReferenceProfile.build(pd.DataFrame({"a": rng.normal(size=2000),
...                                             "b": rng.normal(size=2000)}), numeric=["a", "b"])
>>> x = rng.normal(size=(1000, 2)); x[:400, 1] = np.nan   # the feed lost 40% of "b"
>>> cur = Sketch.empty(prof.layout)
>>> cur.add_batch(Batch.build("predictions", n=1000, n_numeric=2, numeric=x))
>>> res, flags = quality_signals(prepare(prof), cur, DetectorConfig())
>>> [(r.signal, r.feature, r.value) for r in res if r.exceeds], flags.numeric.tolist()
([('missing_rate', 'b', 0.4)], [False, True])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import binom_isf, binom_sf
from driftwatch.detectors.fdr import benjamini_hochberg
from driftwatch.detectors.identity_cache import IdentityCache, read_only
from driftwatch.detectors.prepared import PreparedReference
from driftwatch.detectors.range_null import outside_isf, outside_sf
from driftwatch.windows.sketch import Sketch

__all__ = ["SPIKE_RATIO", "QualityFlags", "QualityRow", "quality_rows", "quality_signals"]

#: A spike is a fine bin whose current share is at least this many times the reference
#: share (and above it by ``DetectorConfig.spike_excess``): a point mass, not a shift.
SPIKE_RATIO = 5.0


@dataclass(frozen=True, slots=True)
class QualityFlags:
    """Per-feature fault flags (numeric ``[F]``, categorical ``[G]``)."""

    numeric: np.ndarray
    categorical: np.ndarray


@dataclass(frozen=True, slots=True)
class QualityRow:
    """One window's data-quality numbers, one entry per feature (Python values).

    The missing-value lists hold the numeric features, then the categorical ones (one
    Benjamini-Hochberg family); the ``range_*`` lists the numeric features, the ``new_*``
    lists the categorical ones. ``*_flagged``: how many features raised that signal.
    """

    missing_share: list[float]
    missing_threshold: list[float]
    missing_increase: list[float]
    missing_count: list[int]
    p_value: list[float]
    p_adjusted: list[float]
    significant: list[bool]
    missing_flagged: tuple[int, int]
    range_share: list[float]
    range_threshold: list[float]
    range_p_value: list[float]
    range_p_adjusted: list[float]
    range_significant: list[bool]
    under: list[int]
    over: list[int]
    spike: list[bool]
    spike_excess: list[float]
    spike_at: list[int]
    range_flagged: int
    new_share: list[float]
    new_threshold: list[float]
    unseen: list[int]
    other: list[int]
    new_flagged: int
    numeric_flag: np.ndarray
    categorical_flag: np.ndarray


@dataclass(frozen=True, eq=False)
class _Reference:
    """What the quality tests read of one reference, the same for every window."""

    ref_missing: np.ndarray  # [F + G] reference missing shares, numeric then categorical
    ref_missing_l: list[float]
    #: the binomial null shares of every margin: missing (numeric, categorical), then
    #: new-category (categorical)
    margin_p: np.ndarray
    ref_shares: np.ndarray  # [F, W - 1] the numeric features' fine shares
    #: [F] the out-of-range share a stable population gives: 2 / (non-missing + 1)
    range_p: np.ndarray
    #: [F] the reference's values present per numeric feature (:mod:`.range_null`)
    range_m: np.ndarray
    ref_lo: list[float]
    ref_hi: list[float]
    ref_other: list[float]
    missing_col: int
    unseen_col: int
    other_col: int
    spike_bins: dict[tuple[int, int], str]  # filled as windows ask


_REFERENCES = IdentityCache(capacity=8)


def _reference(prep: PreparedReference) -> _Reference:
    return _REFERENCES.get((prep,), "quality", lambda: _build_reference(prep))


def _build_reference(prep: PreparedReference) -> _Reference:
    n_ref = max(prep.n, 1)
    lay = prep.sketch.layout.categorical
    miss = np.concatenate([prep.num_fine[:, -1], prep.cat[:, lay.missing_col]])
    ref_p = miss / n_ref
    p0 = np.maximum(ref_p, 0.5 / n_ref)  # a share never seen is still possible
    g = len(prep.cat_names)
    ref_f = prep.num_fine[:, :-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ref_sh = ref_f / np.maximum(ref_f.sum(1, keepdims=True), 1)
    # a new value falls outside the range of m values with probability 2 / (m + 1)
    range_m = ref_f.sum(1).astype(np.float64)
    range_p = np.minimum(2.0 / (range_m + 1.0), 1.0)
    return _Reference(
        ref_missing=read_only((ref_p,))[0], ref_missing_l=ref_p.tolist(),
        margin_p=read_only((np.concatenate(
            [p0, np.full(g, 1.0 / (prep.n + 1))]),))[0],
        range_p=read_only((range_p,))[0], range_m=read_only((range_m,))[0],
        ref_shares=read_only((ref_sh,))[0],
        ref_lo=prep.num_geo.lo.tolist(), ref_hi=prep.num_geo.hi.tolist(),
        ref_other=(prep.cat[:, lay.other_col] / n_ref).tolist(),
        missing_col=lay.missing_col, unseen_col=lay.unseen_col, other_col=lay.other_col,
        spike_bins={},
    )


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    """``arrays`` on a new leading axis (one array: a view, no copy)."""
    return arrays[0][None] if len(arrays) == 1 else np.stack(arrays)


def _margin(n: np.ndarray, p0: np.ndarray, alpha: float) -> np.ndarray:
    """Excess share over ``p0`` that a binomial(n, p0) exceeds with probability alpha."""
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.maximum(binom_isf(alpha, n, p0) / n - p0, 0.0)
    return np.where(n > 0, m, np.nan)


def quality_rows(
    prep: PreparedReference,
    sketches: Sequence[Sketch],
    cfg: DetectorConfig,
    *,
    num_fine: np.ndarray | None = None,
    cat: np.ndarray | None = None,
) -> list[QualityRow]:
    """The data-quality numbers of every sketch (all on ``prep``'s layout), one
    :class:`QualityRow` per sketch in order, each step one numpy call for all of them.

    ``num_fine``, ``cat``: the sketches' counts stacked already (``[K, F, W]``,
    ``[K, G, C]``). Every step is element-wise or reduces one window's own contiguous
    last axis, so a row has the bits that the sketch alone gives.
    """
    ref = _reference(prep)
    k_all = len(sketches)
    f, g = len(prep.num_names), len(prep.cat_names)
    n = np.array([s.n for s in sketches], dtype=np.int64)[:, None]  # [K, 1]
    n1 = np.maximum(n, 1)
    missing: list[np.ndarray] = []
    present = np.zeros((k_all, 0), dtype=np.int64)
    if f:
        fine = _stack([s.num_fine for s in sketches]) if num_fine is None else num_fine
        missing.append(fine[..., -1])
        present = fine[..., :-1].sum(axis=-1)
    if g:
        counts = _stack([s.cat for s in sketches]) if cat is None else cat
        missing.append(counts[..., ref.missing_col])
    k = np.concatenate(missing, axis=1) if missing else np.zeros((k_all, 0), np.int64)
    # every binomial margin of every window in one exact quantile call: missing shares
    # and new categories at the window's size (out-of-range ones: _out_of_range)
    sizes = np.broadcast_to(n, (k_all, f + 2 * g))
    margins = _margin(sizes, ref.margin_p, cfg.alpha)
    # the missing counts: one-sided binomial p-values, the reference share as the null
    p0 = ref.margin_p[: f + g]
    pv = np.where(n > 0, binom_sf(k - 1, n, p0), np.nan)
    cur_p = k / n1
    thr = ref.ref_missing + np.fmax(cfg.threshold("missing_rate"), margins[:, : f + g])
    flag = cur_p > thr
    n_flag = zip(flag[:, :f].sum(axis=1).tolist(), flag[:, f:].sum(axis=1).tolist(),
                 strict=True)
    # every feature's missing-rate test is one Benjamini-Hochberg family per window: on a
    # wide table many features drift up by chance in any window
    bh = [benjamini_hochberg(row, cfg.fdr) for row in pv]
    rows = {
        "missing_share": cur_p.tolist(), "missing_threshold": thr.tolist(),
        "missing_increase": (cur_p - ref.ref_missing).tolist(), "missing_count": k.tolist(),
        "p_value": pv.tolist(), "p_adjusted": [b.adjusted.tolist() for b in bh],
        "significant": [b.rejected.tolist() for b in bh],
        "missing_flagged": list(n_flag),
    }
    num_flag = flag[:, :f]
    if f:
        num_flag, part = _out_of_range(prep, ref, fine, present, num_flag, sketches, cfg)
        rows.update(part)
    else:
        rows.update(dict.fromkeys(("range_share", "range_threshold", "range_p_value",
                                   "range_p_adjusted", "range_significant", "under",
                                   "over", "spike", "spike_excess", "spike_at"),
                                  [[]] * k_all))
        rows["range_flagged"] = [0] * k_all
    cat_flag = flag[:, f:]
    if g:
        unseen = counts[..., ref.unseen_col]
        share = unseen / n1
        thr_new = np.fmax(cfg.threshold("new_category_rate"), margins[:, f + g:])
        new = share > thr_new
        cat_flag = cat_flag | new
        rows.update(new_share=share.tolist(), new_threshold=thr_new.tolist(),
                    unseen=unseen.tolist(), other=counts[..., ref.other_col].tolist(),
                    new_flagged=new.sum(axis=1).tolist())
    else:
        rows.update(dict.fromkeys(("new_share", "new_threshold", "unseen", "other"),
                                  [[]] * k_all))
        rows["new_flagged"] = [0] * k_all
    names = list(rows)
    cols = [rows[name] for name in names]
    return [QualityRow(**dict(zip(names, vals, strict=True)), numeric_flag=nf,
                       categorical_flag=cf)
            for *vals, nf, cf in zip(*cols, num_flag, cat_flag, strict=True)]


def _out_of_range(
    prep: PreparedReference, ref: _Reference, fine: np.ndarray, present: np.ndarray,
    flag: np.ndarray, sketches: Sequence[Sketch], cfg: DetectorConfig,
) -> tuple[np.ndarray, dict[str, list[object]]]:
    """The numeric features' out-of-range shares and spikes (``[K, F]``), and their
    fault flags added to ``flag``. The count outside is tested against its exact null
    (:mod:`.range_null`: the reference's own range is a draw), not a binomial one."""
    under = _stack([s.num_under for s in sketches])
    over = _stack([s.num_over for s in sketches])
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(present > 0, (under + over) / present, np.nan)
        cur_sh = fine[..., :-1] / np.maximum(present[..., None], 1)
    outside = under + over
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = np.maximum(outside_isf(cfg.alpha, present, ref.range_m) / present
                            - ref.range_p, 0.0)
    margin = np.where(present > 0, margin, np.nan)
    thr = ref.range_p + np.fmax(cfg.threshold("out_of_range"), margin)
    # the count outside against a stable feed's, one Benjamini-Hochberg family per window
    pv = np.where(present > 0, outside_sf(outside, present, ref.range_m), np.nan)
    bh = [benjamini_hochberg(row, cfg.fdr) for row in pv]
    excess = cur_sh - ref.ref_shares
    at = excess.argmax(axis=-1)
    # each window's and feature's own bin: [K, 1] and [F] index grids beside [K, F]
    win, feat = np.arange(len(sketches))[:, None], np.arange(len(prep.num_names))
    sp_ex = excess[win, feat, at]
    spike = (sp_ex > cfg.spike_excess) & (
        cur_sh[win, feat, at] >= SPIKE_RATIO * ref.ref_shares[feat, at])
    above = share > thr
    return flag | above | spike, {
        "range_share": share.tolist(), "range_threshold": thr.tolist(),
        "range_p_value": pv.tolist(), "range_p_adjusted": [b.adjusted.tolist() for b in bh],
        "range_significant": [b.rejected.tolist() for b in bh],
        "under": under.tolist(), "over": over.tolist(), "spike": spike.tolist(),
        "spike_excess": sp_ex.tolist(), "spike_at": at.tolist(),
        "range_flagged": above.sum(axis=1).tolist(),
    }


def _spike_bin(prep: PreparedReference, ref: _Reference, j: int, b: int) -> str:
    """The fine bin ``b`` of numeric feature ``j`` as ``(lo, hi]`` (kept per reference)."""
    label = ref.spike_bins.get((j, b))
    if label is None:
        hi = prep.num_geo.fine_hi[j]
        lo = float(hi[b - 1]) if b > 0 else -np.inf
        label = ref.spike_bins[(j, b)] = f"({lo:.6g}, {float(hi[b]):.6g}]"
    return label


def _missing(names: tuple[str, ...], at: int, row: QualityRow, ref: _Reference,
             n_flag: int, n_ref: int, n_cur: int, cfg: DetectorConfig) -> list[SignalResult]:
    """The ``missing_rate`` results of the features whose missing lists start at ``at``."""
    return [
        SignalResult(
            "missing_rate", "data_quality", row.missing_share[i], f,
            row.missing_threshold[i], n_ref, n_cur, row.p_value[i],
            {"reference": ref.ref_missing_l[i], "increase": row.missing_increase[i],
             "count": row.missing_count[i], "p_adjusted": row.p_adjusted[i],
             "significant": row.significant[i], "fdr": cfg.fdr,
             "features_flagged": n_flag},
        )
        for i, f in enumerate(names, at)
    ]


def quality_signals(
    prep: PreparedReference,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    bad_records: Mapping[str, int] | None = None,
    records_at_least: int = 0,
    absent_fields: Mapping[str, tuple[int, int, str]] | None = None,
    row: QualityRow | None = None,
) -> tuple[list[SignalResult], QualityFlags]:
    """All data-quality results for one window, and the per-feature fault flags.

    ``records_at_least``: ``bad_record_rate`` is a share of at least this many records
    (its details then name them as ``measured_against``).

    ``absent_fields``: feature -> (records without its path, records looked at, path).
    ``row``: this window's numbers when they were computed with other windows'
    (:func:`quality_rows` on ``cur`` against ``prep`` with ``cfg``); else computed here.
    """
    if row is None:
        row = quality_rows(prep, [cur], cfg)[0]
    ref = _reference(prep)
    n_ref, n_cur = prep.n, cur.n
    f_flag, g_flag = row.numeric_flag.copy(), row.categorical_flag.copy()
    out: list[SignalResult] = []
    wants_missing = cfg.wants("missing_rate")
    if prep.num_names:
        if wants_missing:
            out += _missing(prep.num_names, 0, row, ref, row.missing_flagged[0], n_ref,
                            n_cur, cfg)
        if cfg.wants("out_of_range"):
            for j, f in enumerate(prep.num_names):
                out.append(SignalResult(
                    "out_of_range", "data_quality", row.range_share[j], f,
                    row.range_threshold[j], n_ref, n_cur, row.range_p_value[j],
                    {"under": row.under[j], "over": row.over[j],
                     "p_adjusted": row.range_p_adjusted[j],
                     "significant": row.range_significant[j], "fdr": cfg.fdr,
                     "ref_min": ref.ref_lo[j], "ref_max": ref.ref_hi[j],
                     "spike": row.spike[j], "spike_excess": row.spike_excess[j],
                     "spike_bin": _spike_bin(prep, ref, j, row.spike_at[j]),
                     "features_flagged": row.range_flagged},
                ))
    if prep.cat_names:
        if wants_missing:
            out += _missing(prep.cat_names, len(prep.num_names), row, ref,
                            row.missing_flagged[1], n_ref, n_cur, cfg)
        if cfg.wants("new_category_rate"):
            miss = row.missing_count[len(prep.num_names):]
            for j, f in enumerate(prep.cat_names):
                out.append(SignalResult(
                    "new_category_rate", "data_quality", row.new_share[j], f,
                    row.new_threshold[j], n_ref, n_cur, None,
                    {"unseen": row.unseen[j], "other": row.other[j],
                     "missing": miss[j], "ref_other_share": ref.ref_other[j],
                     "features_flagged": row.new_flagged},
                ))
    if absent_fields:
        thr_a = cfg.threshold("field_absent")
        for names, flags in ((prep.num_names, f_flag), (prep.cat_names, g_flag)):
            for j, f in enumerate(names):
                if f not in absent_fields:
                    continue
                k, n, path = absent_fields[f]
                share = k / n if n else 0.0
                flags[j] |= share > thr_a
                if cfg.wants("field_absent"):
                    out.append(SignalResult(
                        "field_absent", "data_quality", share, f, thr_a, n_ref, n_cur, None,
                        {"absent": k, "records": n, "path": path,
                         "measured_on": "the first records of the run"},
                    ))
    if bad_records is not None and cfg.wants("bad_record_rate"):
        bad = int(sum(bad_records.values()))
        total = bad + n_cur + int(cur.n_outcome_records)
        of = max(total, int(records_at_least))
        details: dict[str, Any] = {"count": bad, "records": total,
                                   "by_reason": dict(sorted(bad_records.items()))}
        if of > total:
            details["measured_against"] = of
        out.append(SignalResult(
            "bad_record_rate", "data_quality", bad / of if of else 0.0, None,
            cfg.threshold("bad_record_rate"), n_ref, n_cur, None, details,
        ))
    return out, QualityFlags(f_flag, g_flag)
