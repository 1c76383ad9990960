"""Join delayed outcomes to the predictions that wait for them, by event key.

A :class:`LabelJoiner` holds each prediction (score, decision, exposure, event time) under
its ``uint64`` event key until its outcome arrives, then hands the pair on as
:class:`Joined` rows for the label-based metrics. Everything is columnar (a
:class:`~driftwatch.labels.store.KeyStore`); nothing is dropped silently:

* ``duplicate_predictions`` / ``duplicate_outcomes``: a key seen again (in the same batch,
  still held, or joined recently: Kafka delivers at least once). The first copy wins.
* ``expired``: predictions whose event time is older than ``ttl_seconds`` at
  :meth:`~LabelJoiner.expire` (TTL in event time, so replays behave like live runs).
* ``evicted``: the oldest predictions (by event time) dropped when more than
  ``max_pending`` wait.
* Outcomes with no prediction held are kept as *orphans* for ``orphan_ttl_seconds`` (at most
  ``max_orphans``), because the prediction stream may lag the outcome stream; a prediction
  that arrives later joins at once (``late_predictions``: in a replay that reads an
  outcomes file without times ahead of the predictions, every join). ``orphan_outcomes`` counts the
  orphans finally given up (expired or evicted).
* An outcome without an event time (NaN: a stream read with ``event_time: {source:
  arrival}`` before any prediction set the watermark) joins with its prediction's time;
  as an orphan it never expires by time (only by ``max_orphans``).
* Declined applications never get an outcome (DOMAIN.md), so they are not held unless
  ``hold_declined``; they are counted in ``declined_skipped``.
* ``invalid_predictions`` (no event time) and ``invalid_outcomes`` (no label).
* ``predictions`` / ``outcomes``: every record received, so the counts above add up:
  a prediction is held, joined, or counted as one of them.

Per-cohort completeness and label-delay statistics come from
:mod:`~driftwatch.labels.cohorts`. :meth:`~LabelJoiner.to_dict` is JSON-safe (arrays as
base64) so the joiner survives restarts through checkpoints.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> j = LabelJoiner(ttl_seconds=90 * 86400, max_pending=1000)
>>> preds = Batch.build("predictions", n=3, ids=["a", "b", "c"], score=[0.1, 0.5, 0.9],
...                     event_time=[0.0, 10.0, 20.0], decision=[1, 1, 0])
>>> len(j.add_predictions(preds)), j.backlog, j.declined_skipped
(0, 2, 1)
>>> outs = Batch.build("outcomes", n=2, ids=["b", "z"], label=[1.0, 0.0],
...                    event_time=[86410.0, 86420.0])
>>> got = j.add_outcomes(outs)
>>> got.score.tolist(), got.label.tolist(), got.delay.tolist(), j.orphans_held
([0.5], [1.0], [86400.0], 1)
>>> LabelJoiner.from_dict(j.to_dict()).to_dict() == j.to_dict()
True
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from driftwatch.batch import DECISION_DECLINE, Batch
from driftwatch.errors import StateError
from driftwatch.labels.cohort_book import CohortBook
from driftwatch.labels.cohorts import CohortStats, CohortTracker, DelayHistogram
from driftwatch.labels.hashindex import first_occurrences
from driftwatch.labels.keyfilter import KeyFilter
from driftwatch.labels.store import KeyStore
from driftwatch.statetree import Capture

__all__ = ["COUNTERS", "Joined", "LabelJoiner"]

COUNTERS = (
    "predictions",
    "outcomes",
    "joined",
    "duplicate_predictions",
    "duplicate_outcomes",
    "orphan_outcomes",
    "late_predictions",
    "expired",
    "evicted",
    "declined_skipped",
    "invalid_predictions",
    "invalid_outcomes",
)

_PRED = {"score": np.float64, "decision": np.int8, "exposure": np.float64, "time": np.float64,
         "cohort": np.int64}
_ORPHAN = {"label": np.float64, "time": np.float64}


@dataclass(frozen=True, slots=True)
class Joined:
    """Predictions joined with their outcomes (one row each; label 1 = bad)."""

    keys: np.ndarray
    score: np.ndarray
    label: np.ndarray
    exposure: np.ndarray
    decision: np.ndarray
    pred_time: np.ndarray
    outcome_time: np.ndarray
    delay: np.ndarray
    #: The prediction's cohort (its window pane; -1 when none was given).
    cohort: np.ndarray

    def __len__(self) -> int:
        return int(self.keys.size)

    @classmethod
    def empty(cls) -> Joined:
        z = np.zeros(0)
        return cls(np.zeros(0, np.uint64), z, z, z, np.zeros(0, np.int8), z, z, z,
                   np.zeros(0, np.int64))

    @classmethod
    def concat(cls, parts: list[Joined]) -> Joined:
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))


class LabelJoiner:
    """Holds predictions by event key until their outcome arrives (module docstring)."""

    def __init__(
        self,
        ttl_seconds: float,
        max_pending: int,
        *,
        orphan_ttl_seconds: float = 7 * 86400.0,
        max_orphans: int | None = None,
        remember_joined: int | None = None,
        hold_declined: bool = False,
        cohort_seconds: float = 86400.0,
        max_cohorts: int = 400,
        max_window_cohorts: int = 400,
    ) -> None:
        if ttl_seconds <= 0 or max_pending < 1 or orphan_ttl_seconds < 0:
            raise ValueError("ttl_seconds and max_pending must be positive")
        self.ttl = float(ttl_seconds)
        self.max_pending = int(max_pending)
        self.orphan_ttl = float(orphan_ttl_seconds)
        self.max_orphans = int(
            max_orphans if max_orphans is not None else max(max_pending // 10, 1)
        )
        self.remember_joined = int(remember_joined if remember_joined is not None else max_pending)
        self.hold_declined = hold_declined
        self._pending = KeyStore(_PRED)
        self._orphans = KeyStore(_ORPHAN)
        self._joined = KeyStore({"time": np.float64})  # recently joined keys: duplicates
        # every key pending or recently joined answers "maybe" (and a few others)
        self._maybe_held = KeyFilter()
        self.cohorts = CohortTracker(cohort_seconds, max_cohorts)
        self.delays = DelayHistogram()
        #: Labelled statistics per prediction window (cohort ids given with predictions).
        self.book = CohortBook(max_window_cohorts)
        self.counters = dict.fromkeys(COUNTERS, 0)

    def __getattr__(self, name: str) -> int:
        counters = self.__dict__.get("counters")
        if counters is not None and name in counters:
            return counters[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return (f"LabelJoiner(ttl_seconds={self.ttl}, max_pending={self.max_pending}, "
                f"backlog={self.backlog}, orphans={self.orphans_held})")

    @property
    def backlog(self) -> int:
        """Predictions waiting for an outcome."""
        return len(self._pending)

    @property
    def orphans_held(self) -> int:
        return len(self._orphans)

    # -- streams ---------------------------------------------------------------------------
    @staticmethod
    def _first(keys: np.ndarray) -> tuple[np.ndarray, int]:
        """Index of the first occurrence of each key, in arrival order; duplicates count."""
        first = first_occurrences(keys)
        return first, int(keys.size - first.size)

    def _held(self, keys: np.ndarray) -> np.ndarray:
        """Whether each key waits or was joined recently: a prediction seen before. Most
        are new, and the filter says so without probing either store's index."""
        seen = self._maybe_held.maybe(keys)
        if seen.any():
            ask = np.flatnonzero(seen)
            k = keys[ask]
            seen[ask] = self._pending.contains(k) | self._joined.contains(k)
        return seen

    def _note_held(self, keys: np.ndarray) -> None:
        """Predictions about to be held (pending, or joined at once with an orphan): in the
        filter from now on; a full filter is built anew from the keys still held."""
        if not self._maybe_held.has_room(keys.size):
            self._maybe_held = KeyFilter.of(self._held_keys(), room=keys.size)
        self._maybe_held.add(keys)

    def _held_keys(self) -> np.ndarray:
        return np.concatenate((self._pending.live_keys(), self._joined.live_keys()))

    def _join(self, keys: np.ndarray, pred: dict[str, np.ndarray], label: np.ndarray,
              out_time: np.ndarray) -> Joined:
        # an outcome without a time of its own arrives when its prediction does, at the latest
        out_time = np.where(np.isnan(out_time), pred["time"], out_time)
        delay = out_time - pred["time"]
        self.counters["joined"] += int(keys.size)
        self.delays.add(delay)
        self.cohorts.add("labelled", pred["time"], bad=label > 0.5)
        cohort = pred.get("cohort", np.full(keys.size, -1, np.int64))
        self.book.add_labelled(cohort, pred["score"], label, time=out_time)
        self._joined.insert(keys, {"time": out_time})
        over = len(self._joined) - self.remember_joined
        if over > 0:
            self._joined.evict_oldest(over, "time")
        return Joined(keys, pred["score"], label, pred["exposure"], pred["decision"],
                      pred["time"], out_time, delay, cohort)

    def add_predictions(self, batch: Batch, cohort: np.ndarray | None = None,
                        now: np.ndarray | None = None) -> Joined:
        """Hold a batch of predictions; returns joins with outcomes that arrived first.

        ``cohort``: per row, the prediction's cohort in :attr:`book` (its window pane);
        without it the rows belong to none. ``now``: per row, the stream's watermark where
        it arrives; an outcome waiting since before ``orphan_ttl`` there had expired (as
        :meth:`add_outcomes` takes ``now`` for predictions). An outcome waiting with a time
        more than ``ttl`` after the prediction's came too late for it: it is given up
        (``orphan_outcomes``), and the prediction waits as any other."""
        c = self.counters
        c["predictions"] += len(batch)
        t = np.asarray(batch.event_time, dtype=np.float64)
        ok = np.isfinite(t)
        c["invalid_predictions"] += int((~ok).sum())
        dec = np.asarray(batch.decision, dtype=np.int8)
        if not self.hold_declined:
            skip = ok & (dec == DECISION_DECLINE)
            c["declined_skipped"] += int(skip.sum())
            ok &= ~skip
        idx = _Rows.where(ok)
        keys = idx.take(batch.keys)
        first, dup = self._first(keys)
        if dup:
            idx, keys = idx.sub(first), keys[first]
        seen = self._held(keys)
        n_seen = int(seen.sum())
        c["duplicate_predictions"] += dup + n_seen
        if n_seen:
            idx, keys = idx.sub(~seen), keys[~seen]
        self._note_held(keys)
        cols = {"score": idx.take(batch.score), "decision": idx.take(dec),
                "exposure": idx.take(batch.exposure), "time": idx.take(t),
                "cohort": (np.full(idx.size, -1, np.int64) if cohort is None
                           else idx.take(np.asarray(cohort, dtype=np.int64)))}
        self.cohorts.add("predicted", cols["time"])
        self.book.add_predictions(cols["cohort"], cols["score"], cols["time"])
        found, orph = self._orphans.pop(keys)
        if found.any():
            at = np.flatnonzero(found)
            # an outcome that came more than the wait after this prediction's time came
            # too late for it (as :meth:`add_outcomes` finds it), read ahead or not
            stale = orph["time"] > cols["time"][at] + self.ttl
            if now is not None:
                stale |= orph["time"] < idx.take(np.asarray(now, dtype=np.float64))[at] \
                    - self.orphan_ttl
            if stale.any():
                c["orphan_outcomes"] += int(stale.sum())
                found[at[stale]] = False
                orph = {k: v[~stale] for k, v in orph.items()}
        joined = Joined.empty()
        if found.any():
            c["late_predictions"] += int(found.sum())
            pred = {k: v[found] for k, v in cols.items()}
            joined = self._join(keys[found], pred, orph["label"], orph["time"])
            keys, cols = keys[~found], {k: v[~found] for k, v in cols.items()}
        self._pending.insert(keys, cols)
        over = len(self._pending) - self.max_pending
        if over > 0:
            gone = self._pending.evict_oldest(over, "time")
            c["evicted"] += int(gone["key"].size)
            self.cohorts.add("evicted", gone["time"])
            self.book.add_lost("evicted", gone["cohort"], time=gone["time"])
        return joined

    def add_outcomes(self, batch: Batch, now: np.ndarray | None = None) -> Joined:
        """Join a batch of outcomes to held predictions; unmatched ones wait as orphans.

        ``now``: per outcome, the stream's watermark where it arrives. A prediction the
        watermark had passed by ``ttl`` there expired before it (:meth:`expire` runs at
        the end of a poll, which may hold both): it is counted expired, and the outcome
        waits as an orphan, wherever the poll ended. So does one whose outcome's own
        event time is more than ``ttl`` after it, whatever the watermark says (count
        panes, which outcomes do not move; the outcomes after a stream's last prediction;
        a poll without a merged order)."""
        c = self.counters
        c["outcomes"] += len(batch)
        label = np.asarray(batch.label, dtype=np.float64)
        ok = np.isfinite(label)
        c["invalid_outcomes"] += int((~ok).sum())
        idx = _Rows.where(ok)
        keys = idx.take(batch.keys)
        first, dup = self._first(keys)
        if dup:
            idx, keys = idx.sub(first), keys[first]
        label, t = idx.take(label), idx.take(np.asarray(batch.event_time, dtype=np.float64))
        found, pred = self._pending.pop(keys)
        if found.any():
            at = np.flatnonzero(found)
            # the wait ran out by the watermark where the outcome arrives, or by the
            # outcome's own time (NaN: a time the outcome does not have, never stale)
            limit = t[at] if now is None else np.fmax(
                idx.take(np.asarray(now, dtype=np.float64))[at], t[at])
            stale = pred["time"] < limit - self.ttl
            if stale.any():
                self._expired({k: v[stale] for k, v in pred.items()})
                found[at[stale]] = False
                pred = {k: v[~stale] for k, v in pred.items()}
        joined = Joined.empty()
        rest = np.nonzero(~found)[0]
        if found.size and not rest.size:  # every outcome found its prediction: no gathers
            joined = self._join(keys, pred, label, t)
        elif rest.size < found.size:
            joined = self._join(keys[found], pred, label[found], t[found])
        seen = self._joined.contains(keys[rest]) | self._orphans.contains(keys[rest])
        c["duplicate_outcomes"] += dup + int(seen.sum())
        new = rest[~seen]
        self._orphans.insert(keys[new], {"label": label[new], "time": t[new]})
        over = len(self._orphans) - self.max_orphans
        if over > 0:
            c["orphan_outcomes"] += int(self._orphans.evict_oldest(over, "time")["key"].size)
        return joined

    def expire(self, now: float) -> int:
        """Drop predictions older than the TTL (event time ``now``); returns how many."""
        gone = self._pending.pop_where_below("time", now - self.ttl)
        n = int(gone["time"].size)
        if n:  # checked every poll, mostly with nothing gone: no bookkeeping of nothing
            self._expired(gone)
        orph = self._orphans.pop_where_below("time", now - self.orphan_ttl)
        self.counters["orphan_outcomes"] += int(orph["key"].size)
        self._joined.pop_where_below("time", now - self.ttl)
        return n

    def _expired(self, gone: dict[str, np.ndarray]) -> None:
        """Count predictions taken out of the pending store unlabelled after the wait."""
        self.counters["expired"] += int(gone["time"].size)
        self.cohorts.add("expired", gone["time"])
        self.book.add_lost("expired", gone["cohort"], time=gone["time"])

    # -- reports ---------------------------------------------------------------------------
    def delay_stats(self) -> dict[str, float]:
        """Label delay (seconds): count, mean, p50, p90, p99, max, negative."""
        return self.delays.summary()

    def cohort_stats(self) -> list[CohortStats]:
        """Per prediction-time cohort: predicted, labelled, pending, completeness, ..."""
        return self.cohorts.stats()

    def stats(self) -> dict[str, Any]:
        """Counters and gauges, for metrics and reports."""
        return {**self.counters, "backlog": self.backlog, "orphans_held": self.orphans_held}

    # -- persistence -----------------------------------------------------------------------
    def to_dict(self, capture: Capture | None = None) -> dict[str, Any]:
        """JSON-safe, or for a binary checkpoint with a ``capture`` (see
        :meth:`KeyStore.to_dict`)."""
        return {
            "version": 1,
            "config": {"ttl_seconds": self.ttl, "max_pending": self.max_pending,
                       "orphan_ttl_seconds": self.orphan_ttl, "max_orphans": self.max_orphans,
                       "remember_joined": self.remember_joined,
                       "hold_declined": self.hold_declined},
            "counters": dict(self.counters),
            "pending": self._pending.to_dict(capture),
            "orphans": self._orphans.to_dict(capture),
            "joined": self._joined.to_dict(capture),
            "cohorts": self.cohorts.to_dict(),
            "delays": self.delays.to_dict(),
            "book": self.book.to_dict(capture),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LabelJoiner:
        if d.get("version") != 1:
            raise StateError(f"unsupported label joiner state version {d.get('version')!r}")
        try:
            cfg = d["config"]
            j = cls(cfg["ttl_seconds"], cfg["max_pending"],
                    orphan_ttl_seconds=cfg["orphan_ttl_seconds"], max_orphans=cfg["max_orphans"],
                    remember_joined=cfg["remember_joined"], hold_declined=cfg["hold_declined"])
            j.counters.update({k: int(v) for k, v in d["counters"].items() if k in COUNTERS})
            j._pending = _with_cohort(KeyStore.from_dict(d["pending"]))
            j._orphans = KeyStore.from_dict(d["orphans"])
            j._joined = KeyStore.from_dict(d["joined"])
            j._maybe_held = KeyFilter.of(j._held_keys())
            j.cohorts = CohortTracker.from_dict(d["cohorts"])
            j.delays = DelayHistogram.from_dict(d["delays"])
            if "book" in d:
                j.book = CohortBook.from_dict(d["book"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"corrupt label joiner state: {exc}") from exc
        return j


class _Rows:
    """Rows of a batch picked by a mask, or all of them: taking all of them from a column
    is the column itself, not a copy (the common batch, where every row is valid)."""

    def __init__(self, index: np.ndarray | None, size: int) -> None:
        self.index, self.size = index, size

    @classmethod
    def where(cls, mask: np.ndarray) -> _Rows:
        return cls(None, mask.size) if mask.all() else cls(np.nonzero(mask)[0], int(mask.sum()))

    def take(self, column: np.ndarray) -> np.ndarray:
        return column if self.index is None else column[self.index]

    def sub(self, pick: np.ndarray) -> _Rows:
        """These rows' ``pick`` (a mask or indices over them)."""
        index = np.arange(self.size) if self.index is None else self.index
        out = index[pick]
        return _Rows(out, out.size)


def _with_cohort(pending: KeyStore) -> KeyStore:
    """A pending store written before predictions carried their cohort: none (-1)."""
    if "cohort" in pending.dtypes:
        return pending
    rows = pending.pop_where_below("time", np.inf)
    order = np.argsort(rows["time"], kind="stable")
    out = KeyStore(_PRED)
    out.insert(rows["key"][order], {**{k: rows[k][order] for k in _PRED if k != "cohort"},
                                    "cohort": np.full(order.size, -1, np.int64)})
    return out
