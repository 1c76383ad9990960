"""Data-quality signals: a broken feed, kept apart from a population change.

Per feature (group ``data_quality``):

* ``missing_rate``: the current missing share; details give the reference share, the
  increase and a one-sided binomial p-value (reference share as the null), with its
  Benjamini-Hochberg adjustment across the window's features (``p_adjusted``, at the
  detectors' ``fdr``) and whether it is ``significant`` there: the policy's data-quality
  gate counts an increase only when it is.
* ``out_of_range`` (numeric): share of the current non-missing values outside the
  reference ``[min, max]``; under a stable population it is ``2 / (n_ref + 1)``.
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

Each threshold is ``baseline + max(effect, binomial margin)``: the effect size from the
config and the ``1 - alpha`` binomial quantile at the window's size, so small windows do
not alarm on noise. A feature's *fault* flag is set when any of its quality signals
exceeds its threshold or it has a spike; every result carries ``features_flagged`` (how
many features raised the same signal in this window) so a policy can tell a fault in one
feed (a sudden jump in one feature, the others stable) from a widespread outage, and drift
results of the faulty feature carry ``data_quality_flag`` so a policy does not read a
fault as a population change (DOMAIN.md: do not retrain on a broken pipeline).

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

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import binom_isf, binom_sf
from driftwatch.detectors.fdr import benjamini_hochberg
from driftwatch.detectors.identity_cache import IdentityCache, read_only
from driftwatch.detectors.prepared import PreparedReference
from driftwatch.windows.sketch import Sketch

__all__ = ["SPIKE_RATIO", "QualityFlags", "quality_signals"]

#: A spike is a fine bin whose current share is at least this many times the reference
#: share (and above it by ``DetectorConfig.spike_excess``): a point mass, not a shift.
SPIKE_RATIO = 5.0


@dataclass(frozen=True, slots=True)
class QualityFlags:
    """Per-feature fault flags (numeric ``[F]``, categorical ``[G]``)."""

    numeric: np.ndarray
    categorical: np.ndarray


def _margin(n: int | np.ndarray, p0: np.ndarray, alpha: float) -> np.ndarray:
    """Excess share over ``p0`` that a binomial(n, p0) exceeds with probability alpha."""
    n = np.asarray(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.maximum(binom_isf(alpha, n, p0) / n - p0, 0.0)
    return np.where(n > 0, m, np.nan)


#: Binomial margins by the values they are asked for: a window of the usual size with the
#: usual non-missing counts asks what the previous window asked (the reference's shares do
#: not move), and the exact quantile is the costliest call of the window.
_BINOMIAL = IdentityCache(capacity=32)


def _values(*arrays: np.ndarray) -> tuple[object, ...]:
    """A hashable key of arrays' exact values (dtype and shape with the bytes)."""
    return tuple(x for a in arrays for x in (a.dtype.str, a.shape, a.tobytes()))


def _kept(a: np.ndarray) -> np.ndarray:
    return read_only((a,))[0]


def _split(a: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    """``a`` cut into consecutive views of ``sizes`` (``np.split``'s pieces, by slicing:
    np.split costs several microseconds a call on arrays this small)."""
    out, at = [], 0
    for size in sizes:
        out.append(a[at : at + size])
        at += size
    return out


def _missing_rows(
    cur_missing: np.ndarray, ref_missing: np.ndarray, n_ref: int, n_cur: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference share, the binomial null share and the current share of missing values."""
    ref_p = ref_missing / max(n_ref, 1)
    p0 = np.maximum(ref_p, 0.5 / max(n_ref, 1))  # a share never seen is still possible
    return ref_p, p0, cur_missing / max(n_cur, 1)


def _missing(
    names: tuple[str, ...], cur_missing: np.ndarray, ref: tuple[np.ndarray, np.ndarray, np.ndarray],
    margin: np.ndarray, pv: np.ndarray, bh: tuple[np.ndarray, np.ndarray], n_ref: int,
    n_cur: int, cfg: DetectorConfig,
) -> tuple[list[SignalResult], np.ndarray]:
    ref_p, _, cur_p = ref
    thr = ref_p + np.fmax(cfg.threshold("missing_rate"), margin)
    flag = cur_p > thr
    n_flag = int(flag.sum())
    cur_l, ref_l, thr_l = cur_p.tolist(), ref_p.tolist(), thr.tolist()
    inc_l, pv_l, k_l = (cur_p - ref_p).tolist(), pv.tolist(), cur_missing.tolist()
    adj_l, sig_l = bh[0].tolist(), bh[1].tolist()
    out = [
        SignalResult(
            "missing_rate", "data_quality", cur_l[j], f, thr_l[j], n_ref, n_cur, pv_l[j],
            {"reference": ref_l[j], "increase": inc_l[j], "count": int(k_l[j]),
             "p_adjusted": adj_l[j], "significant": sig_l[j], "fdr": cfg.fdr,
             "features_flagged": n_flag},
        )
        for j, f in enumerate(names)
    ]
    return out, flag


def quality_signals(
    prep: PreparedReference,
    cur: Sketch,
    cfg: DetectorConfig,
    *,
    bad_records: Mapping[str, int] | None = None,
    absent_fields: Mapping[str, tuple[int, int, str]] | None = None,
) -> tuple[list[SignalResult], QualityFlags]:
    """All data-quality results for one window, and the per-feature fault flags.

    ``absent_fields``: feature -> (records without its path, records looked at, path).
    Every binomial margin of the window (missing, out-of-range and new-category shares of
    every feature) is one vectorised quantile call, and the missing p-values one tail call.
    """
    n_ref, n_cur = prep.n, cur.n
    out: list[SignalResult] = []
    f_flag = np.zeros(len(prep.num_names), dtype=bool)
    g_flag = np.zeros(len(prep.cat_names), dtype=bool)
    lay = cur.layout.categorical
    # the binomial questions of this window, asked all at once: (n, p0) for each margin,
    # (k, p0) at n_cur for each missing p-value
    m_n: list[np.ndarray] = []
    m_p: list[np.ndarray] = []
    miss: dict[str, tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    if prep.num_names:
        k = cur.num_fine[:, -1]
        miss["num"] = (k, _missing_rows(k, prep.num_fine[:, -1], n_ref, n_cur))
        present = cur.num_fine[:, :-1].sum(axis=1)
        # a share of the non-missing values: the margin is taken at that size
        m_n += [np.full(len(k), n_cur), present]
        m_p += [miss["num"][1][1], np.full(len(present), 2.0 / (n_ref + 1))]
    if prep.cat_names:
        k = cur.cat[:, lay.missing_col]
        miss["cat"] = (k, _missing_rows(k, prep.cat[:, lay.missing_col], n_ref, n_cur))
        m_n += [np.full(len(k), n_cur), np.full(len(k), n_cur)]
        m_p += [miss["cat"][1][1], np.full(len(k), 1.0 / (n_ref + 1))]
    margins: list[np.ndarray] = []
    pvals: list[np.ndarray] = []
    if miss:
        n_all, p_all = np.concatenate(m_n), np.concatenate(m_p)
        margins = _split(_BINOMIAL.get((), ("margin", *_values(n_all, p_all), cfg.alpha),
                                       lambda: _kept(_margin(n_all, p_all, cfg.alpha))),
                         [len(a) for a in m_n])
        ks = [k for k, _ in miss.values()]
        p0s = np.concatenate([r[1] for _, r in miss.values()])
        # not kept: the missing counts move from window to window on a real feed
        pv = binom_sf(np.concatenate(ks) - 1, n_cur, p0s) if n_cur > 0 \
            else np.full(p0s.shape, np.nan)
        pvals = _split(pv, [len(k) for k in ks])
        # every feature's missing-rate test is one Benjamini-Hochberg family: on a wide
        # table many features drift up by chance in any window
        bh = benjamini_hochberg(pv, cfg.fdr)
        adjusted = _split(bh.adjusted, [len(k) for k in ks])
        significant = _split(bh.rejected, [len(k) for k in ks])
    if prep.num_names:
        k, ref = miss["num"]
        res, flag = _missing(prep.num_names, k, ref, margins[0], pvals[0],
                             (adjusted[0], significant[0]), n_ref, n_cur, cfg)
        if cfg.wants("missing_rate"):
            out += res
        f_flag |= flag
        outside = cur.num_under + cur.num_over
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(present > 0, outside / present, np.nan)
            ref_f = prep.num_fine[:, :-1]
            ref_sh = ref_f / np.maximum(ref_f.sum(1, keepdims=True), 1)
            cur_sh = cur.num_fine[:, :-1] / np.maximum(present[:, None], 1)
        thr = np.fmax(cfg.threshold("out_of_range"), margins[1])
        excess = cur_sh - ref_sh
        spike_at = excess.argmax(axis=1)
        rows = np.arange(len(share))
        sp_ex = excess[rows, spike_at]
        spike = (sp_ex > cfg.spike_excess) & (
            cur_sh[rows, spike_at] >= SPIKE_RATIO * ref_sh[rows, spike_at]
        )
        above = share > thr
        n_flag = int(above.sum())
        f_flag |= above | spike
        geo = prep.num_geo
        if cfg.wants("out_of_range"):
            hi_k = geo.fine_hi[rows, spike_at].tolist()
            lo_k = np.where(spike_at > 0, geo.fine_hi[rows, spike_at - 1], -np.inf).tolist()
            under, over = cur.num_under.tolist(), cur.num_over.tolist()
            ref_lo, ref_hi = geo.lo.tolist(), geo.hi.tolist()
            share_l, thr_l = share.tolist(), thr.tolist()
            spike_l, sp_ex_l = spike.tolist(), sp_ex.tolist()
            for j, f in enumerate(prep.num_names):
                out.append(SignalResult(
                    "out_of_range", "data_quality", share_l[j], f, thr_l[j],
                    n_ref, n_cur, None,
                    {"under": int(under[j]), "over": int(over[j]),
                     "ref_min": ref_lo[j], "ref_max": ref_hi[j],
                     "spike": spike_l[j], "spike_excess": sp_ex_l[j],
                     "spike_bin": f"({lo_k[j]:.6g}, {hi_k[j]:.6g}]",
                     "features_flagged": n_flag},
                ))
    if prep.cat_names:
        at = 2 if prep.num_names else 0
        k, ref = miss["cat"]
        res, flag = _missing(prep.cat_names, k, ref, margins[at], pvals[-1],
                             (adjusted[-1], significant[-1]), n_ref, n_cur, cfg)
        if cfg.wants("missing_rate"):
            out += res
        g_flag |= flag
        unseen = cur.cat[:, lay.unseen_col]
        share = unseen / max(n_cur, 1)
        thr = np.fmax(cfg.threshold("new_category_rate"), margins[at + 1])
        flag = share > thr
        g_flag |= flag
        n_flag = int(flag.sum())
        if cfg.wants("new_category_rate"):
            share_l, thr_l, unseen_l = share.tolist(), thr.tolist(), unseen.tolist()
            other = cur.cat[:, lay.other_col].tolist()
            missing = cur.cat[:, lay.missing_col].tolist()
            ref_other = (prep.cat[:, lay.other_col] / max(n_ref, 1)).tolist()
            for j, f in enumerate(prep.cat_names):
                out.append(SignalResult(
                    "new_category_rate", "data_quality", share_l[j], f, thr_l[j],
                    n_ref, n_cur, None,
                    {"unseen": int(unseen_l[j]), "other": int(other[j]),
                     "missing": int(missing[j]), "ref_other_share": ref_other[j],
                     "features_flagged": n_flag},
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
        out.append(SignalResult(
            "bad_record_rate", "data_quality", bad / total if total else 0.0, None,
            cfg.threshold("bad_record_rate"), n_ref, n_cur, None,
            {"count": bad, "records": total, "by_reason": dict(sorted(bad_records.items()))},
        ))
    return out, QualityFlags(f_flag, g_flag)
