"""Taking in a poll: predictions and outcomes into the label joiner and the pane window.

Prediction batches feed the label joiner, the held feature rows and the pane window;
outcome batches are joined to held predictions, and each joined label is charged to the
pane open where it sits in the merged (event-time) stream (:meth:`PollIntake._placement`),
so the windows do not depend on how the stream was cut into polls.
:class:`PollIntake` is mixed into :class:`~driftwatch.pipeline.monitor.ModelMonitor`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.labels.hashindex import HashIndex, first_occurrences
from driftwatch.labels.hashindex import compiled as hash_compiled
from driftwatch.labels.joiner import Joined
from driftwatch.labels.landing import LandingBook
from driftwatch.pipeline.badcounts import count_bad
from driftwatch.pipeline.cohorts import cohort_ids
from driftwatch.windows.panes import ClosedWindow

__all__ = ["OUTCOMES", "PollIntake", "numbered"]

OUTCOMES = "outcomes"


class _Placement(NamedTuple):
    """Where a poll's records sit among its predictions: for each outcome, the
    predictions before it (``before_out``) and the watermark there (``wm_out``); the
    watermark before each prediction (``wm_pred``); for each bad record, the predictions
    before it and the watermark there (``bad``), or None when the source gives no merged
    order. ``ordered``: whether the source gave that order (a file replay); without it
    (Kafka) outcomes are placed after the poll's predictions."""

    before_out: np.ndarray
    wm_pred: np.ndarray
    wm_out: np.ndarray
    bad: tuple[np.ndarray, np.ndarray] | None
    ordered: bool = True


class PollIntake:
    """The intake side of :class:`~driftwatch.pipeline.monitor.ModelMonitor` (see the
    module docstring); a mixin, it holds no state of its own."""

    keep_training_rows: bool

    def _take_in(self, polled: Polled) -> list[ClosedWindow]:
        preds = [b for b in polled.batches if len(b) and b.stream != OUTCOMES]
        outs = [b for b in polled.batches if len(b) and b.stream == OUTCOMES]
        pred = Batch.concat(preds) if preds else None
        out = Batch.concat(outs) if outs else None
        if pred is not None:
            pred = numbered(pred, self.n_events)
        if pred is not None and self.policy is not None \
                and self.policy.reference.score_is == "p_good":
            # the policy says the score is P(good): every stage measures P(bad)
            pred = replace(pred, score=1.0 - pred.score)
        placed = self._placement(polled, pred, out)
        before_out, wm_pred, wm_out = placed.before_out, placed.wm_pred, placed.wm_out
        base = self.window.n_seen
        # records read that are no prediction (outcomes, bad records) are charged where
        # they sit in the stream, as joined outcomes are, so a pane's bad-record share does
        # not depend on how the stream was cut into polls; before this poll's predictions
        # are added, which may close the panes they belong to
        out_counted = out is not None and polled.order is not None
        if out_counted:
            t = np.where(np.isnan(out.event_time), wm_out, out.event_time)
            self.window.add_read_at("n_outcome_records", self.window.label_targets(
                event_index=base + before_out, time=t, watermark=wm_out))
        if placed.bad is not None:
            index, wm = placed.bad
            self.window.add_read_at("n_bad", self.window.label_targets(
                event_index=base + index, time=wm, watermark=wm))
        self._fit_book()
        book = self.joiner.book
        if isinstance(book, LandingBook):  # rows land no lower than the first open pane
            front = self.window.watermark - self.spec.allowed_lateness
            book.floor = math.floor(front / book.size) if math.isfinite(front) else None
        if out is not None and np.isnan(out.event_time).any():
            # outcomes without a time of their own (event_time: {source: arrival}) are
            # stamped with the event time where they arrive in the stream
            t = np.where(np.isnan(out.event_time) & np.isfinite(wm_out), wm_out,
                         out.event_time)
            out = replace(out, event_time=t)
        pred_rows = _KeyRows(pred.keys if pred is not None else np.zeros(0, np.uint64))
        if pred is not None:
            self.n_events += len(pred)
            if self.keep_training_rows:
                self.pending_features.add(pred)
            if self.on_predictions is not None:
                self.on_predictions(pred)
            # outcomes that arrived first join at once; each prediction's cohort is its pane
            # in merged order, the label waits run out where each record arrives; without
            # it (Kafka), where the poll ends, as the watermark there says
            late = self.joiner.add_predictions(
                pred, cohort_ids(self.window, pred.event_time),
                now=self._expiry_now(pred, None, wm_pred) if placed.ordered else None)
            if len(late.label):
                row = pred_rows(late.keys)
                self._label(late, base + row, late.outcome_time, wm_pred[row])
            if np.isfinite(pred.label).any():
                # a label on the predictions stream: the outcome came with its record, and
                # joins its prediction at once, charged where the prediction sits
                inline = pred.take(np.isfinite(pred.label))
                self.n_outcomes += len(inline)
                now = self.joiner.add_outcomes(inline)
                if len(now.label):
                    row = pred_rows(now.keys)
                    self._label(now, base + row, pred.event_time[row], wm_pred[row])
        if out is not None:
            self.n_outcomes += len(out)
            self.n_outcome_records += len(out)
            joined = self.joiner.add_outcomes(
                out, now=self._expiry_now(pred, before_out, wm_out) if placed.ordered else None)
            if len(joined.label):
                row = _joined_rows(out.keys, joined.keys)
                index, time, wm = before_out[row], out.event_time[row], wm_out[row]
                if pred is not None:
                    # an outcome ahead of its prediction in this poll joins where the
                    # prediction comes, as it would had the poll ended between them
                    prow = pred_rows(joined.keys)
                    ahead = (pred.keys[prow] == joined.keys) & (prow >= index)
                    # cut between them, the outcome would have waited and its prediction
                    # come late: counted so, the summary does not depend on the batch size
                    self.joiner.counters["late_predictions"] += int(ahead.sum())
                    index = np.where(ahead, prow, index)
                    time = np.where(ahead, joined.outcome_time, time)
                    wm = np.where(ahead, wm_pred[prow], wm)
                self._label(joined, base + index, time, wm)
        closed: list[ClosedWindow] = []
        if pred is not None:
            closed += self.window.add(pred)
        if out is not None and np.isfinite(out.event_time).any():
            closed += self.window.advance_to(float(np.nanmax(out.event_time)))
        if out is not None and not out_counted:  # no merged order: the pane being filled
            self.window.add_read("n_outcome_records", len(out))
        if polled.bad:
            count_bad(self.bad_by_reason, self.unknown_labels, polled.bad)
            if placed.bad is None:
                self.window.add_read("n_bad", len(polled.bad))
        if math.isfinite(self.window.watermark):
            self.joiner.expire(self.window.watermark)
            self.pending_features.expire(self.window.watermark - self.joiner.ttl)
        return closed

    def _expiry_now(self, pred: Batch | None, before: np.ndarray | None, wm: np.ndarray
                    ) -> np.ndarray:
        """The watermark the label waits are measured against where each record arrives:
        the window's, which outcomes move in time panes (``wm``, the merged stream's) and
        only predictions move in count panes (the largest prediction time before it;
        ``before``: the predictions ahead of each outcome, None for the predictions)."""
        if self.spec.kind == "time":
            return wm
        wm0 = self.window.watermark  # the poll's predictions are added after its joins
        if pred is None:
            return np.full(wm.size, wm0)
        wm_p = np.fmax.accumulate(np.concatenate(([wm0], pred.event_time)))
        return wm_p[:-1] if before is None else wm_p[before]

    def _placement(self, polled: Polled, pred: Batch | None, out: Batch | None) -> _Placement:
        """Where the poll's outcomes and bad records sit among its predictions (see
        :class:`_Placement`), from the source's merged order when it gives one."""
        n_pred = 0 if pred is None else len(pred)
        n_out = 0 if out is None else len(out)
        wm0 = self.window.watermark
        order = polled.order
        streams = [b.stream for b in polled.batches if len(b)]
        if order is None or len(order) != n_pred + n_out or len(set(streams)) != len(streams):
            # no merged order: outcomes come after the poll's predictions
            t_pred = np.empty(0) if pred is None else pred.event_time
            wm_p = np.maximum.accumulate(np.concatenate(([wm0], t_pred)))
            wm_out = np.full(n_out, wm_p[-1])
            return _Placement(np.full(n_out, n_pred), wm_p[:-1], wm_out, None, ordered=False)
        nonempty = [k for k, b in enumerate(polled.batches) if len(b)]
        kinds = np.array([polled.batches[k].stream == OUTCOMES for k in nonempty], dtype=bool)
        lut = np.full(len(polled.batches), -1, dtype=np.intp)
        lut[nonempty] = np.arange(len(nonempty))
        is_out = kinds[lut[order]] if len(order) else np.zeros(0, dtype=bool)
        # positions, not masks: a mask over a poll's interleaved records costs a
        # mispredicted branch a record, on every use
        out_at = np.flatnonzero(is_out)
        pred_at = np.flatnonzero(~is_out)
        # after the first k good records, wm[k]: the watermark
        wm = np.empty(len(order) + 1)
        wm[0] = wm0
        if pred is not None:
            wm[pred_at + 1] = pred.event_time
        if out is not None:
            wm[out_at + 1] = out.event_time
        np.fmax.accumulate(wm, out=wm)
        bad = None
        at = polled.bad_at
        if polled.bad and at is not None and len(at) == len(polled.bad):
            k = np.clip(np.asarray(at, dtype=np.intp), 0, len(order))
            preds = np.concatenate(([0], np.cumsum(~is_out)))  # predictions among them
            bad = (preds[k], wm[k])
        # the predictions before an outcome: its position less the outcomes before it
        before_out = out_at - np.arange(out_at.size)
        return _Placement(before_out, wm[pred_at], wm[out_at], bad)

    def _label(self, joined: Joined, index: np.ndarray, time: np.ndarray, wm: np.ndarray) -> None:
        targets = self.window.label_targets(event_index=index, time=time, watermark=wm)
        self.window.add_labelled_at(targets, joined.score, joined.label, joined.exposure)
        if not self.keep_training_rows:
            return
        found, num, cat = self.pending_features.take(joined.keys)
        if found.any():
            self.labelled_buffer.add(
                numeric=num,
                categorical=cat,
                label=joined.label[found],
                score=joined.score[found],
                event_time=joined.pred_time[found],
                exposure=joined.exposure[found],
                decision=joined.decision[found],
            )


def numbered(pred: Batch, before: int) -> Batch:
    """``pred`` with each prediction that carries no time (``event_time: {source: order}``)
    stamped with its number in the stream, counting from 1 (``before`` predictions came
    first): event time is then the record's position, so count windows, the label join and
    the timeline keep the file's order, and a checkpoint resumes the numbering.

    >>> b = Batch.build("predictions", n=3, event_time=[np.nan, np.nan, np.nan])
    >>> numbered(b, 1000).event_time.tolist()
    [1001.0, 1002.0, 1003.0]
    >>> timed = Batch.build("predictions", n=1, event_time=[5.0])
    >>> numbered(timed, 7) is timed
    True
    """
    missing = np.isnan(pred.event_time)
    if not missing.any():
        return pred
    at = before + 1 + np.arange(len(pred), dtype=np.float64)
    return replace(pred, event_time=np.where(missing, at, pred.event_time))


def _joined_rows(keys: np.ndarray, joined: np.ndarray) -> np.ndarray:
    """Row in ``keys`` (a poll's outcomes) of each of the ``joined`` keys the label joiner
    gave back for them. Those are unique (the joiner joins one outcome a key), so when
    they are all of ``keys``, in order (the common poll: every outcome found its
    prediction), each one's row is its position, and no index is built.

    >>> k = np.array([7, 3, 9], dtype=np.uint64)
    >>> _joined_rows(k, k).tolist(), _joined_rows(k, k[[2, 0]]).tolist()
    ([0, 1, 2], [2, 0])
    """
    if joined is keys or (joined.size == keys.size and np.array_equal(joined, keys)):
        return np.arange(keys.size)
    return _KeyRows(keys)(joined)


class _KeyRows:
    """Row of each wanted key in ``keys`` (its first occurrence), for keys that are there;
    a key that is not gets some row (callers that may ask for one check the key there).
    The keys are indexed once, on the first lookup, however many lookups a poll makes
    (late, inline and read-ahead outcomes all look up the poll's predictions): in a hash
    index of each key's first row where the compiled loops run, else sorted.

    >>> rows = _KeyRows(np.array([7, 3, 9, 3], dtype=np.uint64))
    >>> k = np.array([3, 9, 7], dtype=np.uint64)
    >>> rows(k[:2]).tolist(), rows(k[2:]).tolist()
    ([1, 2], [0])
    """

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys
        self._built = False
        self._index: HashIndex | None = None
        self._order = np.zeros(0, dtype=np.intp)
        self._sorted = keys

    def _build(self) -> None:
        self._built = True
        if hash_compiled() is not None:
            first = first_occurrences(self.keys)
            self._index = HashIndex(2 * first.size)
            self._index.insert(self.keys[first], first)
        else:
            self._order = np.argsort(self.keys, kind="stable")
            self._sorted = self.keys[self._order]

    def __call__(self, wanted: np.ndarray) -> np.ndarray:
        if not self._built:
            self._build()
        if self._index is not None:
            return np.maximum(self._index.lookup(wanted), 0)
        pos = np.searchsorted(self._sorted, wanted)
        return self._order[np.minimum(pos, len(self.keys) - 1)]
