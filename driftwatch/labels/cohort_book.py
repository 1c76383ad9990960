"""Labelled statistics per prediction cohort: what each window's own predictions turned into.

A *cohort* is the set of held (approved) predictions of one pane of the monitor's windows
(its effective pane: a tumbling window, or one slide of a sliding window), keyed by the
pane's index: ``event index // pane size`` for count panes, ``floor(event time / pane
size)`` for time panes. Neither depends on where outcomes sit in the stream, so the
statistics of a cohort are the same whatever the interleaving of the prediction and
outcome topics.

Per cohort, on a fixed grid of score bins (``BINS`` bins of ``logit(P(bad))`` over
``[-10, 10]``, plus a missing column): predictions held and their summed P(bad); outcomes
joined by class with their summed P(bad); ``Σ p(1 - p)`` of predictions and of labelled
rows (the variance of a bad count under calibration); the log loss; predictions that left
without an outcome (``expired`` after the TTL, ``evicted`` for space). Every sum is kept in
fixed point (``2**-32``) as integers, so adding the same rows in any order or grouping
gives the same numbers, bit for bit. With numba the sums of a batch are one compiled pass
(:mod:`driftwatch.labels._cohortloops`; ``DRIFTWATCH_KERNEL=numpy`` forces the numpy
fallback, which gives the same integers).

``completeness = labelled / predicted``; ``resolved`` adds the expired and evicted rows
(what can no longer get an outcome); ``matured(now, ttl)`` is the share of the cohort's
predictions whose TTL has passed, taking their times as spread evenly between its first
and last. At most ``max_cohorts`` cohorts are kept: the oldest (lowest index) are dropped
first, and outcomes for a dropped cohort are counted in ``late_for_dropped``.

>>> import numpy as np
>>> b = CohortBook(max_cohorts=2)
>>> b.add_predictions(np.array([0, 0, 1]), np.array([0.1, 0.3, 0.2]), np.array([5.0, 6.0, 9.0]))
>>> b.add_labelled(np.array([0]), np.array([0.1]), np.array([1.0]))
>>> c = b.get(0)
>>> c.predicted, c.labelled, c.n_bad, round(c.completeness, 2), round(c.expected_bad_rate, 2)
(2, 1, 1, 0.5, 0.2)
>>> b.add_predictions(np.array([2]), np.array([0.5]), np.array([20.0]))
>>> sorted(b.keys()), b.dropped
([1, 2], 1)
>>> CohortBook.from_dict(b.to_dict()).to_dict() == b.to_dict()
True

For a binary checkpoint (``to_dict(capture)``, see :mod:`driftwatch.statetree`) the
cohorts are columns: one raw array per sum, a row per cohort, instead of base64 per
cohort in the JSON header; :meth:`CohortBook.from_dict` reads both forms.

>>> from driftwatch.statetree import Capture
>>> cols = b.to_dict(Capture())["cohorts"]
>>> cols["key"].tolist(), cols["lab_n"].shape
([1, 2], (2, 2, 201))
>>> CohortBook.from_dict(b.to_dict(Capture())).to_dict() == b.to_dict()
True
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.errors import StateError
from driftwatch.labels.cohort_rows import FIELDS, CohortRows
from driftwatch.labels.cohort_sums import (
    BINS,
    SCALE,
    _add_bin_sums,
    _bin_sums,
    _kept,
    _time_spans,
    compiled,
    score_bins,
    warm_up,
)
from driftwatch.labels.grouping import group_ids
from driftwatch.statetree import Capture

__all__ = ["BINS", "SCALE", "Cohort", "CohortBook", "cohort_columns", "cohorts_from_state",
           "compiled", "score_bins", "warm_up"]

@dataclass
class Cohort:
    """One cohort's sums (see the module docstring); arrays are ``[BINS + 1]`` wide."""

    key: int
    pred_n: np.ndarray = field(default_factory=lambda: np.zeros(BINS + 1, np.int64))
    pred_pd: np.ndarray = field(default_factory=lambda: np.zeros(BINS + 1, np.int64))
    lab_n: np.ndarray = field(default_factory=lambda: np.zeros((2, BINS + 1), np.int64))
    lab_pd: np.ndarray = field(default_factory=lambda: np.zeros((2, BINS + 1), np.int64))
    pred_pq: int = 0
    lab_pq: int = 0
    lab_ll: int = 0
    expired: int = 0
    evicted: int = 0
    t_min: float = math.inf
    t_max: float = -math.inf
    #: The window that closed with this cohort's pane (-1 until then), and its span.
    window_id: int = -1
    start_time: float = math.nan
    end_time: float = math.nan
    #: Whether its cohort signals were judged (once, when mature enough).
    judged: bool = False

    # -- counts --------------------------------------------------------------------------
    @property
    def predicted(self) -> int:
        return int(self.pred_n.sum())

    @property
    def labelled(self) -> int:
        return int(self.lab_n.sum())

    @property
    def n_bad(self) -> int:
        return int(self.lab_n[1].sum())

    @property
    def rows(self) -> int:
        """Every row counted: predictions, outcomes and losses."""
        return self.predicted + self.labelled + self.expired + self.evicted

    @property
    def completeness(self) -> float:
        return self.labelled / self.predicted if self.predicted else math.nan

    @property
    def resolved(self) -> float:
        """Share of predictions with a known fate: labelled, expired or evicted."""
        n = self.predicted
        return (self.labelled + self.expired + self.evicted) / n if n else math.nan

    def matured(self, now: float, ttl: float) -> float:
        """Share of the cohort's predictions older than ``ttl`` at event time ``now``."""
        if not self.predicted or not math.isfinite(self.t_min):
            return math.nan
        cut = now - ttl
        if cut >= self.t_max:
            return 1.0
        if cut < self.t_min:
            return 0.0
        return (cut - self.t_min) / (self.t_max - self.t_min)

    # -- rates -----------------------------------------------------------------------------
    @property
    def realised_bad_rate(self) -> float:
        return self.n_bad / self.labelled if self.labelled else math.nan

    @property
    def expected_bad_rate(self) -> float:
        """Mean P(bad) of the cohort's predictions (label-free)."""
        n = int(self.pred_n[:-1].sum())
        return float(self.pred_pd[:-1].sum()) / SCALE / n if n else math.nan

    @property
    def expected_bad_rate_labelled(self) -> float:
        """Mean P(bad) of the rows labelled so far (what the realised rate is tested on)."""
        n = int(self.lab_n[:, :-1].sum())
        return float(self.lab_pd[:, :-1].sum()) / SCALE / n if n else math.nan

    @property
    def log_loss(self) -> float:
        n = int(self.lab_n[:, :-1].sum())
        return float(self.lab_ll) / SCALE / n if n else math.nan

    def merge(self, other: Cohort) -> None:
        for name in ("pred_n", "pred_pd", "lab_n", "lab_pd"):
            getattr(self, name).__iadd__(getattr(other, name))
        for name in ("pred_pq", "lab_pq", "lab_ll", "expired", "evicted"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.t_min, self.t_max = min(self.t_min, other.t_min), max(self.t_max, other.t_max)

    def subtract(self, other: Cohort) -> None:
        """Take away ``other``'s sums (rows this cohort's already include); the time span
        stays this one's."""
        for name in ("pred_n", "pred_pd", "lab_n", "lab_pd"):
            getattr(self, name).__isub__(getattr(other, name))
        for name in ("pred_pq", "lab_pq", "lab_ll", "expired", "evicted"):
            setattr(self, name, getattr(self, name) - getattr(other, name))

    def summary(self, now: float | None = None, ttl: float | None = None) -> dict[str, Any]:
        """The cohort's counts and rates (JSON-safe: NaN as None)."""

        def num(x: float) -> float | None:
            return x if math.isfinite(x) else None

        out: dict[str, Any] = {
            "cohort": self.key, "window_id": self.window_id,
            "start_time": num(self.start_time), "end_time": num(self.end_time),
            "predicted": self.predicted, "labelled": self.labelled, "n_bad": self.n_bad,
            "expired": self.expired, "evicted": self.evicted,
            "completeness": num(self.completeness), "resolved": num(self.resolved),
            "realised_bad_rate": num(self.realised_bad_rate),
            "expected_bad_rate": num(self.expected_bad_rate),
            "expected_bad_rate_labelled": num(self.expected_bad_rate_labelled),
            "log_loss": num(self.log_loss), "judged": self.judged,
        }
        if now is not None and ttl is not None:
            out["matured"] = num(self.matured(now, ttl))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (arrays as base64 of little-endian int64)."""
        return {
            "key": self.key, "judged": self.judged,
            **{n: _b64(getattr(self, n)) for n in _ARRAYS},
            **{n: int(getattr(self, n)) for n in _INTS},
            **{n: (getattr(self, n) if math.isfinite(getattr(self, n)) else None)
               for n in _FLOATS},
        }

    @classmethod
    def from_dict(cls, r: dict[str, Any]) -> Cohort:
        """Back from :meth:`to_dict`; raises :class:`StateError` on a corrupt one."""
        try:
            c = cls(int(r["key"]), judged=bool(r["judged"]))
            for n in _ARRAYS:
                a = np.frombuffer(base64.b64decode(r[n]), dtype="<i8").astype(np.int64)
                setattr(c, n, a.reshape(getattr(c, n).shape))
            for n in _INTS:
                setattr(c, n, int(r[n]))
            for n in _FLOATS:
                setattr(c, n, _UNSET[n] if r[n] is None else float(r[n]))
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"corrupt cohort book state: {exc}") from exc
        return c


_ARRAYS = FIELDS  # the sums a book keeps as rows of its arrays
_INTS = ("pred_pq", "lab_pq", "lab_ll", "expired", "evicted", "window_id")
_FLOATS = ("t_min", "t_max", "start_time", "end_time")
_SHAPES = {"pred_n": (BINS + 1,), "pred_pd": (BINS + 1,), "lab_n": (2, BINS + 1),
           "lab_pd": (2, BINS + 1)}
_UNSET = {"t_min": math.inf, "t_max": -math.inf, "start_time": math.nan, "end_time": math.nan}


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<i8").tobytes()).decode("ascii")


def cohort_columns(cohorts: list[Cohort]) -> dict[str, Any]:
    """The cohorts as columns, a row each (new arrays: a writer thread may encode them
    while the cohorts go on changing): ``key``, ``judged``, the bin sums stacked
    (``[n, BINS + 1]``, ``[n, 2, BINS + 1]``), the times as float64 (infinities and NaN
    kept) and the integer sums as lists (exact, however large)."""
    out: dict[str, Any] = {
        "key": np.array([c.key for c in cohorts], dtype=np.int64),
        "judged": np.array([c.judged for c in cohorts], dtype=bool),
    }
    for n in _ARRAYS:
        shape = (len(cohorts), *_SHAPES[n])
        out[n] = np.array([getattr(c, n) for c in cohorts], dtype=np.int64).reshape(shape)
    out.update({n: np.array([getattr(c, n) for c in cohorts], dtype=np.float64)
                for n in _FLOATS})
    out["ints"] = {n: [int(getattr(c, n)) for c in cohorts] for n in _INTS}
    return out


def _from_columns(d: Mapping[str, Any]) -> list[Cohort]:
    """Back from :func:`cohort_columns`; each cohort's sums are rows of one copy of each
    column (so they change in place without touching the stored arrays)."""
    keys = np.asarray(d["key"], dtype=np.int64)
    n = keys.size
    judged = np.asarray(d["judged"], dtype=bool)
    sums = {a: np.array(d[a], dtype=np.int64) for a in _ARRAYS}
    floats = {f: np.asarray(d[f], dtype=np.float64).tolist() for f in _FLOATS}
    ints = {i: [int(v) for v in d["ints"][i]] for i in _INTS}
    want = {a: (n, *_SHAPES[a]) for a in _ARRAYS}
    if judged.shape != (n,) or any(sums[a].shape != want[a] for a in _ARRAYS) \
            or any(len(v) != n for v in (*floats.values(), *ints.values())):
        raise ValueError("cohort columns of different lengths")
    return [Cohort(int(keys[r]), judged=bool(judged[r]), **{a: sums[a][r] for a in _ARRAYS},
                   **{f: floats[f][r] for f in _FLOATS}, **{i: ints[i][r] for i in _INTS})
            for r in range(n)]


def cohorts_from_state(x: Any) -> list[Cohort]:
    """Cohorts from either form: a list of :meth:`Cohort.to_dict` or
    :func:`cohort_columns`; :class:`StateError` on a corrupt one."""
    if isinstance(x, Mapping):
        try:
            return _from_columns(x)
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"corrupt cohort book state: {exc}") from exc
    try:
        rows = list(x)
    except TypeError as exc:
        raise StateError(f"corrupt cohort book state: {exc}") from exc
    return [Cohort.from_dict(r) for r in rows]


class CohortBook:
    """Cohorts by key, at most ``max_cohorts`` (the oldest dropped first).

    Its cohorts' bin sums are rows of book-wide arrays
    (:class:`~driftwatch.labels.cohort_rows.CohortRows`), which a cohort holds as views:
    a batch's rows go straight into their cohorts' rows in one pass. A cohort handed out
    stays the book's (it sees what the book adds to it, as always); one the book drops
    keeps copies of its sums."""

    def __init__(self, max_cohorts: int = 400) -> None:
        if max_cohorts < 1:
            raise ValueError("max_cohorts must be at least 1")
        self.max_cohorts = int(max_cohorts)
        self._c: dict[int, Cohort] = {}
        self._sums = CohortRows(BINS + 1)
        self._row: dict[int, int] = {}  # cohort key -> its row of ``_sums``
        self.dropped = 0  # cohorts dropped for space
        self.late_for_dropped = 0  # outcomes (or losses) for a cohort no longer kept
        self._floor = -(2**62)  # keys below it were dropped: do not bring them back

    def __len__(self) -> int:
        return len(self._c)

    def keys(self) -> list[int]:
        return sorted(self._c)

    def get(self, key: int) -> Cohort | None:
        return self._c.get(int(key))

    def cohorts(self) -> list[Cohort]:
        return [self._c[k] for k in sorted(self._c)]

    def total(self, keys: Iterable[int]) -> Cohort:
        """The sum of the cohorts kept among ``keys`` (key -1)."""
        out = Cohort(-1)
        for k in keys:
            c = self._c.get(int(k))
            if c is not None:
                out.merge(c)
        return out

    # -- rows of the book's arrays ---------------------------------------------------------
    def _hold(self, c: Cohort) -> Cohort:
        """Keep ``c`` (a new key), its sums moved into a row of the book's arrays."""
        row, grown = self._sums.take()
        if grown:  # the arrays moved: every cohort's views go to its row of the new ones
            for k, held in self._c.items():
                for name, a in self._sums.view(self._row[k]).items():
                    setattr(held, name, a)
        for name, a in self._sums.view(row).items():
            a[...] = getattr(c, name)
            setattr(c, name, a)
        self._c[c.key] = c
        self._row[c.key] = row
        return c

    def _drop(self, key: int) -> None:
        """Let a cohort go; it keeps copies of its sums (whoever still holds it), and its
        row goes back to the book's arrays for another."""
        c = self._c.pop(key)
        for name in _ARRAYS:
            setattr(c, name, getattr(c, name).copy())
        self._sums.release(self._row.pop(key))

    def _grouping(self, cohort: np.ndarray) -> tuple[list[Cohort], np.ndarray | None,
                                                     np.ndarray]:
        """The cohorts these rows add to (created where new), their rows of the book's
        arrays (None where they are not the book's own: a
        :class:`~driftwatch.labels.landing.LandingBook`'s staged rows) and each row's
        index among them (-1: a row without a cohort, or of a dropped one)."""
        cohort = np.asarray(cohort, dtype=np.int64)
        ok = cohort >= 0
        keep = ok & (cohort >= self._floor)
        if keep.all():  # every row kept (the common case): no gathers
            keys, inverse, _ = group_ids(cohort)
            gid = inverse.astype(np.int64, copy=False)
        else:
            self.late_for_dropped += int((ok & ~keep).sum())
            keys, inverse, _ = group_ids(cohort[keep])
            gid = np.full(cohort.size, -1, dtype=np.int64)
            gid[keep] = inverse
        groups, rows = [], []
        for k in keys.tolist():
            c = self._c.get(k)
            if c is None:
                c = self._hold(Cohort(k))
            groups.append(c)
            rows.append(self._row[k])
        return groups, np.array(rows, dtype=np.int64), gid

    def _added(self) -> None:
        """After a batch: drop the oldest cohorts beyond ``max_cohorts``; one the batch
        reached keeps what it added (its row is given back only then)."""
        self._trim()

    def _trim(self) -> None:
        over = len(self._c) - self.max_cohorts
        if over > 0:
            for k in sorted(self._c)[:over]:
                self._drop(k)
                self.dropped += 1
                self._floor = max(self._floor, k + 1)

    def _add_bins(self, kind: str, groups: list[Cohort], rows: np.ndarray | None,
                  g: np.ndarray, s: np.ndarray, bad: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Add the rows' bin sums to their cohorts' ``{kind}_n`` and ``{kind}_pd``
        (``kind``: ``pred`` or ``lab``, with ``bad`` and the log loss): into the book's
        arrays where the cohorts are rows of them, else cohort by cohort. Returns the
        ``Σ p(1 - p)`` and log loss per group."""
        if rows is not None:
            return _add_bin_sums(rows, g, s, getattr(self._sums, f"{kind}_n"),
                                 getattr(self._sums, f"{kind}_pd"), bad, loss=bad is not None)
        n, pd_, pq, ll = _bin_sums(g, s, len(groups), bad, loss=bad is not None)
        for k, c in enumerate(groups):
            getattr(c, f"{kind}_n").__iadd__(n[k].reshape(_SHAPES[f"{kind}_n"]))
            getattr(c, f"{kind}_pd").__iadd__(pd_[k].reshape(_SHAPES[f"{kind}_pd"]))
        return pq, ll

    # -- updates ---------------------------------------------------------------------------
    def add_predictions(self, cohort: np.ndarray, score: np.ndarray, time: np.ndarray) -> None:
        """Held predictions: their cohort, P(bad) and event time."""
        groups, rows, gid = self._grouping(cohort)
        if not groups:
            self._added()
            return
        s, t, g = _kept(gid, np.asarray(score, dtype=np.float64),
                        np.asarray(time, dtype=np.float64))
        pq, _ = self._add_bins("pred", groups, rows, g, s)
        t_min, t_max = _time_spans(g, t, len(groups))
        for c, p, lo, hi in zip(groups, pq.tolist(), t_min.tolist(), t_max.tolist(),
                                strict=True):
            c.pred_pq += p
            c.t_min, c.t_max = min(c.t_min, lo), max(c.t_max, hi)
        self._added()

    def add_labelled(self, cohort: np.ndarray, score: np.ndarray, label: np.ndarray, *,
                     time: np.ndarray | None = None) -> None:
        """Joined outcomes (label 1 = bad) of predictions of these cohorts; ``time`` (the
        outcomes' event time) is for a book that stages rows by pane
        (:class:`~driftwatch.labels.landing.LandingBook`)."""
        score = np.asarray(score, dtype=np.float64)
        bad = np.asarray(label, dtype=np.float64) > 0.5
        groups, rows, gid = self._grouping(cohort)
        if not groups:
            self._added()
            return
        # every row's terms at once, summed per (cohort, class, bin): integer sums, so the
        # same numbers as cohort by cohort; the per-cohort integers stay Python's (exact)
        s, y, g = _kept(gid, score, bad)
        pq, ll = self._add_bins("lab", groups, rows, g, s, y)
        for c, p, v in zip(groups, pq.tolist(), ll.tolist(), strict=True):
            c.lab_pq += p
            c.lab_ll += v
        self._added()

    def add_lost(self, kind: str, cohort: np.ndarray, *,
                 time: np.ndarray | None = None) -> None:
        """Predictions that left without an outcome: ``expired`` or ``evicted``;
        ``time`` (the predictions' event time) as for :meth:`add_labelled`."""
        if kind not in ("expired", "evicted"):
            raise ValueError(f"kind must be 'expired' or 'evicted', not {kind!r}")
        groups, _, gid = self._grouping(cohort)
        lost = np.bincount(gid[gid >= 0], minlength=len(groups))
        for k, c in enumerate(groups):
            setattr(c, kind, getattr(c, kind) + int(lost[k]))
        self._added()

    def absorb(self, delta: Cohort) -> None:
        """Add a cohort's sums counted elsewhere (another book, another partition)."""
        if delta.key < self._floor:
            self.late_for_dropped += delta.rows
            return
        c = self._c.get(delta.key)
        if c is None:
            c = self._hold(Cohort(delta.key))
        c.merge(delta)
        self._trim()

    def set_window(self, key: int, window_id: int, start: float, end: float) -> None:
        """Name the window that closed with this cohort's pane."""
        c = self._c.get(int(key))
        if c is not None and c.window_id < 0:
            c.window_id, c.start_time, c.end_time = int(window_id), float(start), float(end)

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """JSON-safe; with a ``capture`` (a binary checkpoint) the cohorts as columns
        (:func:`cohort_columns`)."""
        cohorts = self.cohorts()
        return {
            "version": 1, "bins": BINS, "max_cohorts": self.max_cohorts,
            "dropped": self.dropped, "late_for_dropped": self.late_for_dropped,
            "floor": self._floor,
            "cohorts": cohort_columns(cohorts) if capture is not None
            else [c.to_dict() for c in cohorts],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CohortBook:
        if d.get("version") != 1 or d.get("bins") != BINS:
            raise StateError(f"unsupported cohort book state (version {d.get('version')!r}, "
                             f"bins {d.get('bins')!r})")
        b = cls(int(d["max_cohorts"]))
        b.dropped, b.late_for_dropped = int(d["dropped"]), int(d["late_for_dropped"])
        b._floor = int(d["floor"])
        if "cohorts" not in d:
            raise StateError("corrupt cohort book state: no cohorts")
        for c in cohorts_from_state(d["cohorts"]):
            if c.key in b._c:  # a key twice: the last one holds, as it always has
                b._drop(c.key)
            b._hold(c)
        return b
