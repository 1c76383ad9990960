"""The drift statistics (the score's PSI, the data-quality numbers, the labelled events'
AUC and KS) of several windows in one numpy pass.

A poll of a busy stream closes several windows at once (a sliding window of 4,000 events
that moves by 1,000 closes about ten per poll of 10,000). Each is measured against the same
reference, and on arrays this small (``features × bins``, a few hundred numbers) a numpy
call costs its overhead, not its arithmetic. :func:`window_stats` stacks the windows'
counts on a leading axis, runs :func:`~driftwatch.detectors.drift.block_stats` once per
block (the score's divergences and :func:`~driftwatch.detectors.quality.quality_rows`
once), and hands each window its own row. Every step is element-wise or reduces the last
axis of each row on its own (the same contiguous length as one window's), so each row has
the bits a call on that window alone gives; ``assess`` takes it through its ``stats``
argument.

>>> import numpy as np, pandas as pd
>>> from driftwatch.batch import Batch
>>> from driftwatch.detectors.assess import assess
>>> from driftwatch.detectors.prepared import prepare
>>> from driftwatch.windows.profile import ReferenceProfile
>>> rng = np.random.default_rng(0)
>>> prof = ReferenceProfile.build(pd.DataFrame({"x": rng.normal(size=4000)}), numeric=["x"])
>>> sketches = [Sketch.empty(prof.layout) for _ in range(3)]
>>> for i, sk in enumerate(sketches):
...     sk.add_batch(Batch.build("predictions", n=500, n_numeric=1,
...                              numeric=rng.normal(i / 4, 1, (500, 1))))
>>> cfg = DetectorConfig()
>>> stats = window_stats(prepare(prof), sketches, cfg)
>>> kw = {"model": "m", "window_id": 0, "start_time": 0.0, "end_time": 1.0, "config": cfg}
>>> all(assess(prof, sk, stats=st, **kw) == assess(prof, sk, **kw)
...     for sk, st in zip(sketches, stats))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from driftwatch.detectors.categorical import ChiSquare
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.distances import Distance
from driftwatch.detectors.divergence import Divergences, divergence_terms, top_bins
from driftwatch.detectors.drift import BlockStats, block_stats, listed
from driftwatch.detectors.performance import Discrimination, discrimination_rows
from driftwatch.detectors.prepared import PreparedReference
from driftwatch.detectors.quality import QualityRow, quality_rows
from driftwatch.windows.sketch import Sketch

__all__ = ["WindowStats", "categorical_stats", "numeric_stats", "score_stats", "window_stats"]


@dataclass(frozen=True, eq=False)
class WindowStats:
    """One window's statistics against a prepared reference, as ``assess`` would compute
    them: the numeric drift block (with the window's coarse counts) and the categorical
    one, the score's coarse counts, divergences, per-bin PSI terms and top bins (what
    ``score_psi`` reads), the data-quality numbers (what ``quality_signals`` reads) and the
    labelled events' discrimination (what ``performance_signals`` reads). A part is None
    where the settings or the reference ask for none.
    They describe this very ``sketch``, against ``prep``, with ``cfg``."""

    prep: PreparedReference
    sketch: Sketch
    cfg: DetectorConfig
    num_coarse: np.ndarray | None = None
    num: BlockStats | None = None
    cat: BlockStats | None = None
    score_coarse: np.ndarray | None = None
    score_div: Divergences | None = None
    score_terms: np.ndarray | None = None
    score_top: list[int] | None = None
    quality: QualityRow | None = None
    disc: Discrimination | None = None

    def fits(self, prep: PreparedReference, sketch: Sketch, cfg: DetectorConfig) -> bool:
        """Whether these are the statistics a pass on ``sketch`` alone would compute
        against ``prep`` with ``cfg``."""
        return self.prep is prep and self.sketch is sketch and (
            self.cfg is cfg or self.cfg == cfg)


def _opt(x: np.ndarray | None, k: int) -> np.ndarray | None:
    return None if x is None else x[k]


def _row(st: BlockStats, k: int) -> BlockStats:
    """Window ``k``'s statistics out of a stacked block (views, no copies)."""
    d, c = st.div, st.chi
    div = _div_row(d, k)
    chi = ChiSquare(c.stat[k], c.dof[k], c.p_value[k], c.cramers_v[k])
    ks = w = None
    if st.ks is not None:
        ks = Distance(st.ks.stat[k], st.ks.bound[k], _opt(st.ks.p_value, k),
                      _opt(st.ks.argmax, k))
    if st.wasserstein is not None:
        w = Distance(st.wasserstein.stat[k], st.wasserstein.bound[k])
    return BlockStats(div, chi, ks, w, _opt(st.w_norm, k), _opt(st.psi_terms, k),
                      _opt(st.psi_without_missing, k), _opt(st.top, k), _opt(st.shares, k),
                      _opt(st.ks_at, k))


def _div_row(d: Divergences, k: int) -> Divergences:
    return Divergences(d.psi[k], d.kl_cur_ref[k], d.kl_ref_cur[k], d.js[k], d.hellinger[k])


def numeric_stats(prep: PreparedReference, fine: np.ndarray, cfg: DetectorConfig
                  ) -> tuple[np.ndarray, BlockStats]:
    """The numeric block's coarse counts and drift statistics (:func:`listed`) for fine
    counts of any leading shape (one window's ``[F, W]``, or windows stacked before it)."""
    geo = prep.num_geo
    cc = geo.coarse(fine)
    st = block_stats(prep.num_coarse, cc, prep.num_coarse_valid, cfg.eps,
                     ref_fine=prep.num_fine, cur_fine=fine, widths=geo.widths,
                     sd=prep.num_sd, without_missing=cfg.wants("psi", "drift"))
    return cc, listed(st, cc, prep.num_coarse_valid, cfg, geo.fine_hi)


def categorical_stats(prep: PreparedReference, counts: np.ndarray,
                      cfg: DetectorConfig) -> BlockStats:
    """The categorical block's drift statistics (:func:`listed`) for counts of any
    leading shape."""
    st = block_stats(prep.cat, counts, prep.cat_valid, cfg.eps,
                     without_missing=cfg.wants("psi", "drift"))
    return listed(st, counts, prep.cat_valid, cfg)


def score_stats(prep: PreparedReference, fine: np.ndarray, cfg: DetectorConfig
                ) -> tuple[np.ndarray, Divergences, np.ndarray, np.ndarray]:
    """The score's coarse counts, divergences, per-bin PSI terms and top bins (the
    indexes, ``[..., 1, top]``) for fine counts of any leading shape."""
    valid = prep.score_coarse_valid
    cc = prep.score_geo.coarse(fine)
    d, terms = divergence_terms(prep.score_coarse, cc, valid, cfg.eps)
    return cc, d, terms, top_bins(np.where(valid, terms, -np.inf), cfg.top_bins)


def window_stats(prep: PreparedReference, sketches: Sequence[Sketch],
                 cfg: DetectorConfig) -> list[WindowStats]:
    """The statistics of every sketch (all on ``prep``'s layout) in one pass per block,
    one :class:`WindowStats` per sketch in order."""
    k_all = range(len(sketches))
    rows: list[dict[str, object]] = [{} for _ in k_all]
    if not sketches:
        return []
    num_fine = np.stack([s.num_fine for s in sketches]) if prep.num_names else None
    cat = np.stack([s.cat for s in sketches]) if prep.cat_names else None
    for k, q in enumerate(quality_rows(prep, sketches, cfg, num_fine=num_fine, cat=cat)):
        rows[k]["quality"] = q
    if cfg.wants_group("drift"):
        if num_fine is not None:
            cc, st = numeric_stats(prep, num_fine, cfg)
            for k in k_all:
                rows[k].update(num_coarse=cc[k], num=_row(st, k))
        if cat is not None:
            st = categorical_stats(prep, cat, cfg)
            for k in k_all:
                rows[k]["cat"] = _row(st, k)
    if cfg.wants_group("performance"):
        lab = np.stack([s.lab_score for s in sketches])
        for k, disc in enumerate(discrimination_rows(lab[:, 0], lab[:, 1])):
            rows[k]["disc"] = disc
    if cfg.wants("score_psi") and prep.n_score > 0:
        cc, d, terms, top = score_stats(prep, np.stack([s.score_fine for s in sketches]),
                                        cfg)
        tops = top[:, 0].tolist()
        for k in k_all:
            rows[k].update(score_coarse=cc[k], score_div=_div_row(d, k),
                           score_terms=terms[k], score_top=tops[k])
    return [WindowStats(prep, s, cfg, **row) for s, row in  # type: ignore[arg-type]
            zip(sketches, rows, strict=True)]
