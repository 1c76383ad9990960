"""Mergeable, serialisable window sketches: memory is features x bins, never events.

A :class:`Sketch` summarises any set of prediction events (a pane, a window, the whole
reference) on the bins of a :class:`SketchLayout`. Sketches add: the sketch of two
halves is the sketch of the whole, so panes, partitions and instances merge.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> lay = SketchLayout.fit(numeric_names=("x",), numeric=np.arange(100.0)[:, None],
...                        score=np.linspace(0, 1, 100))
>>> b = Batch.build("predictions", n=4, n_numeric=1, numeric=[[1.0], [50.0], [np.nan], [7.0]],
...                 score=[0.1, 0.2, 0.3, 0.4], event_time=[10.0, 11.0, 12.0, 13.0])
>>> s = Sketch.empty(lay); s.add_batch(b)
>>> s.n, int(s.num_fine[0, -1]), (s.t_min, s.t_max)
(4, 1, (10.0, 13.0))
>>> both = Sketch.empty(lay); both.merge(s); both.merge(s); both.n
8
>>> Sketch.from_dict(lay, s.to_dict()) == s
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.batch import DECISION_APPROVE, DECISION_DECLINE, Batch
from driftwatch.windows import kernel
from driftwatch.windows.layout import CategoricalLayout, NumericLayout

__all__ = ["Sketch", "SketchLayout", "add_labelled_at"]

_EPS_P = 1e-12


@dataclass(frozen=True, eq=False)
class SketchLayout:
    """All the bins of one monitored model: features, categorical levels and the score."""

    numeric: NumericLayout
    categorical: CategoricalLayout
    score: NumericLayout
    score_center: float = 0.0  # reference mean score: moments are kept centred for accuracy

    @classmethod
    def fit(
        cls,
        *,
        numeric_names: tuple[str, ...] = (),
        numeric: np.ndarray | None = None,
        categorical_names: tuple[str, ...] = (),
        levels: tuple[tuple[str, ...], ...] = (),
        score: np.ndarray | None = None,
        coarse_bins: int = 10,
        fine_bins: int = 200,
    ) -> SketchLayout:
        num = (
            np.empty((0, len(numeric_names)))
            if numeric is None
            else np.asarray(numeric, dtype=np.float64)
        )
        sc = np.empty(0) if score is None else np.asarray(score, dtype=np.float64)
        finite = sc[np.isfinite(sc)]
        if finite.size == 0:
            # no reference score (a training table without the model's score, as public
            # tables come): its quantiles are no edges, so cut a probability's own range
            # evenly, or every live score falls in one bin and AUC and KS on live labels
            # read as no discrimination at all
            sc = np.linspace(0.0, 1.0, fine_bins + 1)
        return cls(
            numeric=NumericLayout.fit(
                numeric_names, num, coarse_bins=coarse_bins, fine_bins=fine_bins
            ),
            categorical=CategoricalLayout(tuple(categorical_names), tuple(levels)),
            score=NumericLayout.fit(
                ("score",), sc[:, None], coarse_bins=coarse_bins, fine_bins=fine_bins
            ),
            score_center=float(finite.mean()) if finite.size else 0.0,
        )

    @functools.cached_property
    def fused_tables(self) -> tuple[kernel.BinTables, kernel.CategoricalTable]:
        """Numeric features then the score as one block of kernel tables, and the
        categorical lookup: what one fused counting pass over a batch reads."""
        num, sc = self.numeric, self.score
        width = max(num.fine_width, sc.fine_width)
        miss = [num.fine_width - 1] * len(num.names) + [sc.fine_width - 1]
        tables = kernel.BinTables.build((*num.fine_edges, *sc.fine_edges), width, miss)
        cat = kernel.CategoricalTable.build([len(lv) for lv in self.categorical.levels])
        return tables, cat

    def count(
        self, numeric: np.ndarray, codes: np.ndarray, score: np.ndarray,
        beside: Callable[[], object] | None = None,
    ) -> tuple[np.ndarray, ...]:
        """Numeric fine, under, over counts, categorical counts, and the score's fine,
        under, over counts of one batch: one compiled pass when the kernel is in use.
        ``beside`` runs once before this returns, on a thread the pass leaves room on
        (:func:`~driftwatch.windows.kernel.count_fused`)."""
        if kernel.kernel_name() == "numpy" or len(score) == 0:
            nf, nu, no = self.numeric.count(numeric)
            cat = self.categorical.count(codes)
            sf, su, so = self.score.count(score[:, None])
            if beside is not None:
                beside()
            return nf, nu, no, cat, sf, su, so
        tables, lut = self.fused_tables
        f, g = len(self.numeric.names), len(self.categorical.names)
        fine, under, over, cat = kernel.count_fused(
            tables, np.asarray(numeric, dtype=np.float64).reshape(len(score), f), score,
            lut, np.asarray(codes).reshape(len(score), g), beside=beside,
        )
        nw, sw = self.numeric.fine_width, self.score.fine_width
        return (fine[:f, :nw], under[:f], over[:f], cat[:, : self.categorical.width],
                fine[f:, :sw], under[f:], over[f:])

    def to_dict(self) -> dict[str, Any]:
        return {
            "numeric": self.numeric.to_dict(),
            "categorical": self.categorical.to_dict(),
            "score": self.score.to_dict(),
            "score_center": self.score_center,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SketchLayout:
        return cls(
            numeric=NumericLayout.from_dict(d["numeric"]),
            categorical=CategoricalLayout.from_dict(d["categorical"]),
            score=NumericLayout.from_dict(d["score"]),
            score_center=float(d["score_center"]),
        )


_INT_ARRAYS = (
    "num_fine",
    "num_under",
    "num_over",
    "cat",
    "score_fine",
    "score_under",
    "score_over",
    "decisions",
    "lab_n",
    "lab_score",
)
_FLOAT_FIELDS = (
    "score_sum",
    "score_sumsq",
    "entropy_sum",
    "lab_pd_sum",
    "lab_exposure",
    "lab_el_pred",
    "lab_el_obs",
    "exposure_sum",
    "el_pred",
)
_INT_FIELDS = ("n", "n_bad", "n_late", "n_score", "lab_exposure_n", "exposure_n",
               "n_outcome_records")
#: Fields a checkpoint written before them lacks: read as 0
_NEWER_INT_FIELDS = frozenset({"n_outcome_records"})


@dataclass(eq=False)
class Sketch:
    """Counts and moments of a set of prediction events (plus labelled outcomes joined to them).

    Numeric features: ``num_fine[F, W]`` fine counts, last column missing;
    ``num_under``/``num_over`` values outside the reference range. Categorical:
    ``cat[G, K+3]`` (levels, other, unseen, missing). Score: ``score_fine[1, Ws]``, centred
    sums for variance, the summed binary entropy, decisions ``[decline, approve, unknown]``.
    Labelled (joined) events: counts by label ``lab_n[2]`` (good, bad), per-class score
    histograms ``lab_score[2, Ws]``, sum of predicted PD (calibration) and exposure sums.
    """

    layout: SketchLayout = field(repr=False)
    n: int = 0
    n_bad: int = 0
    n_late: int = 0
    #: outcome records read while this pane filled (beside its ``n`` predictions and
    #: ``n_bad`` rejected records): what ``bad_record_rate`` measures its share against
    n_outcome_records: int = 0
    n_score: int = 0
    t_min: float = math.inf
    t_max: float = -math.inf
    num_fine: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    num_under: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    num_over: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cat: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    score_fine: np.ndarray = field(default_factory=lambda: np.zeros((1, 0), np.int64))
    score_under: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    score_over: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    score_sum: float = 0.0
    score_sumsq: float = 0.0
    entropy_sum: float = 0.0
    decisions: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))
    exposure_sum: float = 0.0
    exposure_n: int = 0
    el_pred: float = 0.0
    lab_n: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int64))
    lab_score: np.ndarray = field(default_factory=lambda: np.zeros((2, 0), np.int64))
    lab_pd_sum: float = 0.0
    lab_exposure: float = 0.0
    lab_exposure_n: int = 0
    lab_el_pred: float = 0.0
    lab_el_obs: float = 0.0
    metrics: dict[str, list[float]] = field(default_factory=dict)  # name -> [sum, count]

    @classmethod
    def empty(cls, layout: SketchLayout) -> Sketch:
        f, g = len(layout.numeric.names), len(layout.categorical.names)
        ws = layout.score.fine_width
        return cls(
            layout=layout,
            num_fine=np.zeros((f, layout.numeric.fine_width), np.int64),
            num_under=np.zeros(f, np.int64),
            num_over=np.zeros(f, np.int64),
            cat=np.zeros((g, layout.categorical.width), np.int64),
            score_fine=np.zeros((1, ws), np.int64),
            score_under=np.zeros(1, np.int64),
            score_over=np.zeros(1, np.int64),
            lab_score=np.zeros((2, ws), np.int64),
        )

    # -- updates -----------------------------------------------------------------------
    def add_batch(self, batch: Batch) -> None:
        """Add a batch of prediction events (all rows)."""
        n = len(batch)
        if n == 0:
            return
        # the sums are taken beside the counting pass, on a core it leaves room on: the
        # same numpy calls on the same arrays as in turn, so the same bits
        fine, under, over, cat, sfine, sunder, sover = self.layout.count(
            batch.numeric, batch.categorical, batch.score,
            beside=functools.partial(self._add_sums, batch),
        )
        self.n += n
        self.num_fine += fine
        self.num_under += under
        self.num_over += over
        self.cat += cat
        self.score_fine += sfine
        self.score_under += sunder
        self.score_over += sover

    def _add_sums(self, batch: Batch) -> None:
        """Everything of a batch but its bin counts: time span, score moments, decisions,
        exposure and business metrics (fields the counts never touch)."""
        t = batch.event_time
        if np.isfinite(t).any():
            self.t_min = min(self.t_min, float(np.nanmin(t)))
            self.t_max = max(self.t_max, float(np.nanmax(t)))
        self._add_moments(batch.score)
        n = len(batch)
        d = batch.decision
        app = int(np.count_nonzero(d == DECISION_APPROVE))
        dec = int(np.count_nonzero(d == DECISION_DECLINE))
        self.decisions += np.array([dec, app, n - app - dec], dtype=np.int64)
        ex = batch.exposure
        has = np.isfinite(ex)
        if has.any():
            self.exposure_n += int(has.sum())
            self.exposure_sum += float(ex[has].sum())
            ok = has & np.isfinite(batch.score)
            self.el_pred += float((ex[ok] * batch.score[ok]).sum())
        for name, col in batch.metrics.items():
            col = np.asarray(col, dtype=np.float64)
            fin = np.isfinite(col)
            acc = self.metrics.setdefault(name, [0.0, 0.0])
            acc[0] += float(col[fin].sum())
            acc[1] += float(fin.sum())

    def _add_moments(self, score: np.ndarray) -> None:
        # the same operations as -(p log p + (1 - p) log1p(-p)) summed, in fewer buffers
        fin = np.isfinite(score)
        s = score if fin.all() else score[fin]
        if s.size:
            c = s - self.layout.score_center
            self.n_score += int(s.size)
            self.score_sum += float(c.sum())
            np.multiply(c, c, out=c)
            self.score_sumsq += float(c.sum())
            p = np.clip(s, _EPS_P, 1 - _EPS_P)
            h = np.log(p)
            h *= p
            q = np.log1p(-p)
            np.subtract(1.0, p, out=p)
            q *= p
            h += q
            self.entropy_sum += -float(h.sum())

    def add_labelled(
        self, score: np.ndarray, label: np.ndarray, exposure: np.ndarray | None = None
    ) -> None:
        """Add predictions joined with their outcomes (label 1 = bad, 0 = good)."""
        add_labelled_at([self], np.zeros(np.shape(score), np.intp), score, label, exposure)

    def _add_labelled_sums(
        self, score: np.ndarray, label: np.ndarray, ex: np.ndarray | None
    ) -> None:
        """The float sums of joined rows whose label is known, in their order."""
        fin = np.isfinite(score)
        self.lab_pd_sum += float(score[fin].sum())
        if ex is not None:
            has = np.isfinite(ex) & fin
            self.lab_exposure_n += int(has.sum())
            self.lab_exposure += float(ex[has].sum())
            self.lab_el_pred += float((ex[has] * score[has]).sum())
            self.lab_el_obs += float((ex[has] * label[has]).sum())

    def merge(self, other: Sketch) -> None:
        """Add another sketch on the same layout into this one."""
        for name in _INT_ARRAYS:
            getattr(self, name).__iadd__(getattr(other, name))
        for name in _FLOAT_FIELDS + _INT_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.t_min = min(self.t_min, other.t_min)
        self.t_max = max(self.t_max, other.t_max)
        for k, (s, c) in other.metrics.items():
            acc = self.metrics.setdefault(k, [0.0, 0.0])
            acc[0] += s
            acc[1] += c

    @classmethod
    def sum(cls, layout: SketchLayout, sketches: Iterable[Sketch]) -> Sketch:
        out = cls.empty(layout)
        for s in sketches:
            out.merge(s)
        return out

    def copy(self) -> Sketch:
        return Sketch.from_dict(self.layout, self.to_dict())

    # -- derived -----------------------------------------------------------------------
    @property
    def score_mean(self) -> float:
        if not self.n_score:
            return math.nan
        return self.layout.score_center + self.score_sum / self.n_score

    @property
    def score_var(self) -> float:
        """Sample variance of the score (ddof=1)."""
        if self.n_score < 2:
            return math.nan
        m = self.score_sum / self.n_score
        return max(self.score_sumsq - self.n_score * m * m, 0.0) / (self.n_score - 1)

    @property
    def nbytes(self) -> int:
        """Memory held by the sketch's arrays: a function of the layout, not of events."""
        return sum(getattr(self, k).nbytes for k in _INT_ARRAYS)

    def num_coarse(self) -> np.ndarray:
        """Decile + missing counts per numeric feature: ``int64[F, coarse_width]``."""
        return self.layout.numeric.coarse(self.num_fine)

    def score_coarse(self) -> np.ndarray:
        return self.layout.score.coarse(self.score_fine)

    # -- serialisation -----------------------------------------------------------------
    def to_dict(self, *, arrays: bool = False) -> dict[str, Any]:
        """JSON-safe, or with the count arrays as (copied) numpy arrays when ``arrays``
        (for a binary checkpoint)."""
        d: dict[str, Any] = {k: getattr(self, k).copy() if arrays else getattr(self, k).tolist()
                             for k in _INT_ARRAYS}
        d.update({k: float(getattr(self, k)) for k in _FLOAT_FIELDS})
        d.update({k: int(getattr(self, k)) for k in _INT_FIELDS})
        d["t_min"] = None if math.isinf(self.t_min) else self.t_min
        d["t_max"] = None if math.isinf(self.t_max) else self.t_max
        d["metrics"] = {k: list(v) for k, v in sorted(self.metrics.items())}
        return d

    @classmethod
    def from_dict(cls, layout: SketchLayout, d: dict[str, Any]) -> Sketch:
        s = cls.empty(layout)
        for k in _INT_ARRAYS:
            arr = np.asarray(d[k], dtype=np.int64)
            if arr.size == 0:
                arr = arr.reshape(getattr(s, k).shape)
            setattr(s, k, arr)
        for k in _FLOAT_FIELDS:
            setattr(s, k, float(d[k]))
        for k in _INT_FIELDS:
            setattr(s, k, int(d.get(k, 0) if k in _NEWER_INT_FIELDS else d[k]))
        s.t_min = math.inf if d.get("t_min") is None else float(d["t_min"])
        s.t_max = -math.inf if d.get("t_max") is None else float(d["t_max"])
        s.metrics = {k: list(v) for k, v in d.get("metrics", {}).items()}
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sketch):
            return NotImplemented
        return self.to_dict() == other.to_dict()


def add_labelled_at(
    sketches: Sequence[Sketch],
    group: np.ndarray,
    score: np.ndarray,
    label: np.ndarray,
    exposure: np.ndarray | None = None,
) -> None:
    """Add joined outcomes to several sketches on one layout: row ``i`` to
    ``sketches[group[i]]``, as :meth:`Sketch.add_labelled` of that sketch's rows adds them.

    The score histograms of every sketch and label are counted in one call (a poll's
    outcomes join to a few rows in each of many panes); the float sums are taken per
    sketch over its rows in their order, as one call per sketch takes them.
    """
    score = np.asarray(score, dtype=np.float64)
    label = np.asarray(label, dtype=np.float64)
    group = np.asarray(group, dtype=np.intp)
    ex = None if exposure is None else np.asarray(exposure, dtype=np.float64)
    ok = np.isfinite(label)
    if not ok.all():
        score, label, group = score[ok], label[ok], group[ok]
        ex = None if ex is None else ex[ok]
    if score.size == 0:
        return
    # one run of rows per (sketch, label): row 2g counts the good rows of sketch g, 2g + 1
    # its bad ones
    run = 2 * group + (label > 0.5)
    sizes = np.bincount(run, minlength=2 * len(sketches))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    # integer counts: the order of the rows within a run does not matter
    fine = sketches[0].layout.score.count_runs(score[np.argsort(run)], starts)
    one = len(sketches) == 1
    for g, sk in enumerate(sketches):
        n = sizes[2 * g : 2 * g + 2]
        if not n.any():
            continue
        sk.lab_score += fine[2 * g : 2 * g + 2]
        sk.lab_n += n
        if one:
            sk._add_labelled_sums(score, label, ex)
        else:
            rows = group == g
            sk._add_labelled_sums(score[rows], label[rows], None if ex is None else ex[rows])
