"""Labelled rows in a group: what an online update learns and a shadow is judged on.

One process keeps the feature rows of the predictions waiting for an outcome and, at each
join, appends the joined row (features, score, outcome) to its
:class:`~driftwatch.actions.labelled_buffer.LabelledBuffer`. In a group the joins happen
on the partition that holds the prediction, so each partition keeps its own feature rows
(:class:`LabelledPanes`) and stages each joined row by the pane it lands in (the pane its
labelled statistics go to). Once that pane closed on the partition, its rows go to the
pane log (``labelled/<p>/<k>/m``, beside the pane's sketch). The decider adds every
partition's rows of a pane to its buffer once the pane is complete
(:class:`LabelledParts`), pane by pane and partition by partition, before it judges the
windows those panes close: its actions see the rows one process would hold, the same
whatever the number of instances.

>>> import numpy as np
>>> from driftwatch.actions.labelled_buffer import LabelledBuffer
>>> from driftwatch.batch import Batch
>>> from driftwatch.labels.joiner import LabelJoiner
>>> from driftwatch.schema import FeatureSchema
>>> schema = FeatureSchema(numeric=("x",))
>>> part = LabelledPanes(schema, feature_rows=100, pane_rows=100)
>>> pred = Batch.build("predictions", n=2, n_numeric=1, ids=["a", "b"],
...                    numeric=[[1.5], [2.5]], score=[0.1, 0.9], event_time=[1.0, 2.0])
>>> part.add_predictions(pred)
>>> joiner = LabelJoiner(100.0, 1000)
>>> _ = joiner.add_predictions(pred)
>>> out = Batch.build("outcomes", n=1, ids=["b"], label=[1.0], event_time=[13.0])
>>> part.join(joiner.add_outcomes(out), target=np.array([1]))
>>> decider, held = LabelledParts(schema), LabelledBuffer(schema, 10)
>>> for pane, rows in part.take(frontier=2):
...     decider.add(7, pane, rows, next_pane=None)
>>> decider.feed(held, below=2)
[(1, 7)]
>>> held.frame()[["x", "label", "score"]].values.tolist()
[[2.5, 1.0, 0.9]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.batch import Batch
from driftwatch.labels.features import PendingFeatures
from driftwatch.labels.joiner import Joined
from driftwatch.schema import FeatureSchema
from driftwatch.service.group.paneparts import PaneParts

__all__ = ["LOG_ROWS_BYTES", "LabelledPanes", "LabelledParts", "row_bytes"]

#: Raw bytes of labelled or feature rows one pane-log message carries at most (its limit
#: is 16 MiB, compressed JSON with base64 columns beside the rest of a state)
LOG_ROWS_BYTES = 6 * 1024 * 1024


def row_bytes(schema: FeatureSchema) -> int:
    """Bytes of one labelled row (features, score, outcome and the other columns)."""
    return 8 * schema.n_numeric + 4 * schema.n_categorical + 8 * 6


class LabelledPanes:
    """One partition's feature rows of waiting predictions and the labelled rows it staged
    by landing pane (module docstring).

    ``feature_rows`` bounds the waiting feature rows (the oldest by event time go first,
    as in one process); ``pane_rows`` bounds the rows staged for one pane (the newest
    stay: the decider's buffer keeps the newest rows).
    """

    def __init__(self, schema: FeatureSchema, *, feature_rows: int, pane_rows: int) -> None:
        self.schema = schema
        self.features = PendingFeatures(schema, max(1, feature_rows))
        self.pane_rows = max(1, int(pane_rows))
        self.staged: dict[int, LabelledBuffer] = {}

    def add_predictions(self, pred: Batch) -> None:
        self.features.add(pred)

    def join(self, joined: Joined, target: np.ndarray) -> None:
        """Joined predictions become labelled rows, staged in their landing pane
        (``target``, one per row of ``joined``)."""
        found, num, cat = self.features.take(joined.keys)
        if not found.any():
            return
        panes = np.asarray(target)[found]
        cols = {"label": joined.label[found], "score": joined.score[found],
                "event_time": joined.pred_time[found], "exposure": joined.exposure[found],
                "decision": joined.decision[found]}
        for k in np.unique(panes).tolist():
            m = panes == k
            buf = self.staged.get(k)
            if buf is None:
                buf = self.staged[k] = LabelledBuffer(self.schema, self.pane_rows)
            buf.add(numeric=num[m], categorical=cat[m], **{c: v[m] for c, v in cols.items()})

    def expire(self, before: float) -> None:
        """Forget the feature rows of predictions older than ``before`` (their outcome will
        not come)."""
        self.features.expire(before)

    def open_rows(self) -> list[tuple[int, dict[str, Any]]]:
        """Copies of the rows staged in open panes, by pane (an idle partition's
        provisional copies: the rows stay staged)."""
        return [(k, self.staged[k].to_dict()) for k in sorted(self.staged)]

    def take(self, frontier: int | None) -> list[tuple[int, dict[str, Any]]]:
        """The rows staged in panes below ``frontier`` (closed here), by pane, for the log."""
        if frontier is None:
            return []
        done = sorted(k for k in self.staged if k < frontier)
        return [(k, self.staged.pop(k).to_dict()) for k in done]

    def to_dict(self) -> dict[str, Any]:
        return {"features": self.features.to_dict(),
                "staged": [[k, self.staged[k].to_dict()] for k in sorted(self.staged)]}

    def load(self, d: dict[str, Any]) -> None:
        """Back to a state written by :meth:`to_dict` (bounds stay this object's)."""
        cap = self.features.capacity
        self.features = PendingFeatures.from_dict(self.schema, d["features"])
        self.features.capacity = cap
        self.staged = {int(k): LabelledBuffer.from_dict(self.schema, v) for k, v in d["staged"]}


class LabelledParts(PaneParts):
    """The decider's side: every partition's labelled rows per pane, until the pane is
    complete (:class:`~driftwatch.service.group.paneparts.PaneParts`)."""

    def __init__(self, schema: FeatureSchema) -> None:
        super().__init__()
        self.schema = schema

    def accounted(self, payload: Any) -> dict[str, int]:
        """Of a provisional copy merged, its rows' last number: later copies of the same
        staged rows number on from it."""
        return {"seq": int(payload["seq"])}

    def delta(self, payload: Any, merged: Any) -> tuple[Any, int]:
        return payload, 0 if merged is None else int(merged["seq"])

    def feed(self, buffer: LabelledBuffer, *, below: int | None) -> list[tuple[int, int]]:
        """Append the rows of every pane below ``below`` to ``buffer``, then the late rows
        of panes merged from provisional copies; returns their ``(pane, partition)`` (the
        log may forget them)."""
        done = []
        for pane, p, rows in self.take_below(below):
            buffer.add(**LabelledBuffer.columns_of(self.schema, rows))
            done.append((pane, p))
        for pane, p, (rows, after) in self.take_late():
            buffer.add(**LabelledBuffer.columns_of(self.schema, rows, after_seq=after))
            done.append((pane, p))
        return done
