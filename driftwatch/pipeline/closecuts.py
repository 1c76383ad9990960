"""A poll cut right after each record that may close a pane, so whatever runs between
windows (replay's actions) sees the stream as it stood when each window closed.

The monitor's windows do not depend on how the stream is cut into polls, but what runs
after :meth:`~driftwatch.pipeline.monitor.ModelMonitor.process` does: a shadow started
after a poll counts only the outcomes joined after it, so on a recording read in one poll
it saw none. Fed the parts :func:`cut_at_closes` gives, one at a time, the monitor closes
each window at the end of a part, with exactly the records up to the one that closed it
taken in, whatever the batch size.

A count pane closes on the prediction that fills it; a time pane when the watermark (the
largest event time so far, of predictions and outcomes alike) passes its end plus the
allowed lateness. A cut where nothing closes (a time pane that was never opened) only
makes a part more.

>>> import numpy as np
>>> from driftwatch.batch import Batch
>>> from driftwatch.connectors.base import Polled
>>> pred = Batch.build("predictions", n=5, event_time=[0, 1, 2, 3, 4])
>>> out = Batch.build("outcomes", n=2, ids=["0", "1"], event_time=[1.5, 3.5], label=[0, 1])
>>> polled = Polled([pred, out], order=np.array([0, 0, 1, 0, 0, 1, 0]))
>>> parts = split_polled(polled, [3, 5])
>>> [p.order.tolist() for p in parts], [[len(b) for b in p.batches] for p in parts]
([[0, 0, 1], [0, 0], [1, 0]], [[2, 1], [2, 0], [1, 1]])
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from driftwatch.connectors.base import Polled
from driftwatch.windows.panes import PaneWindow

__all__ = ["close_points", "cut_at_closes", "split_polled"]


def _merged_order(polled: Polled) -> np.ndarray | None:
    """The poll's merged order; a poll of one non-empty batch is in its own order."""
    if polled.order is not None:
        return np.asarray(polled.order, dtype=np.intp)
    nonempty = [k for k, b in enumerate(polled.batches) if len(b)]
    if len(nonempty) == 1:
        return np.full(len(polled.batches[nonempty[0]]), nonempty[0], dtype=np.intp)
    return None


def close_points(window: PaneWindow, polled: Polled) -> list[int]:
    """Positions ``k`` (0 < k < records) in the poll's merged order such that the record
    at ``k - 1`` may close a pane of ``window`` (as it stands before the poll). Empty for a
    poll without a merged order (Kafka topics are consumed independently)."""
    order = _merged_order(polled)
    if order is None or len(order) < 2:
        return []
    is_pred = np.array([b.stream != "outcomes" for b in polled.batches], dtype=bool)[order]
    if window.spec.kind == "count":
        # the prediction that fills a pane is the last one landing in it (one prediction
        # more tells whether the poll's last fills its pane)
        panes = window.count_panes(int(is_pred.sum()) + 1)
        fills = np.flatnonzero(panes[1:] != panes[:-1])
        at = np.flatnonzero(is_pred)[fills] + 1
    else:
        times = np.empty(len(order))
        for k, b in enumerate(polled.batches):
            if len(b):
                times[order == k] = b.event_time
        wm = np.fmax.accumulate(np.concatenate(([window.watermark], times)))
        size, _ = window.spec.effective
        with np.errstate(invalid="ignore"):
            front = np.floor((wm - window.spec.allowed_lateness) / size)
        # where the frontier moves on, the panes before it close (from no watermark at
        # all too: bad records read before the first time sit in a pane of their own)
        moved = front[1:] > front[:-1]
        at = np.flatnonzero(moved) + 1
    return [int(k) for k in at if 0 < k < len(order)]


def split_polled(polled: Polled, cuts: Sequence[int]) -> list[Polled]:
    """``polled`` cut before each merged position in ``cuts`` (ascending): each part keeps
    every batch slot (empty where a stream has no record in it), so its ``order`` names
    the same batches. A bad record goes to the part holding the good records after it.
    Only the last part carries the poll's cursors and bytes read: a part ending mid-poll
    has no cursor of its own."""
    order = _merged_order(polled)
    if order is None or not cuts:
        return [polled]
    bounds = [0, *cuts, len(order)]
    # rows of each batch before each merged position
    before = [np.concatenate(([0], np.cumsum(order == k))) for k in range(len(polled.batches))]
    bad_at = (np.asarray(polled.bad_at, dtype=np.intp)
              if polled.bad_at is not None and len(polled.bad_at) == len(polled.bad)
              else np.full(len(polled.bad), len(order), dtype=np.intp))
    part_of_bad = np.searchsorted(np.asarray(cuts), bad_at, side="right")
    parts = []
    for i, (a, b) in enumerate(pairwise(bounds)):
        last = i == len(bounds) - 2
        mine = np.flatnonzero(part_of_bad == i)
        parts.append(Polled(
            batches=[batch.take(slice(int(rows[a]), int(rows[b])))
                     for batch, rows in zip(polled.batches, before, strict=True)],
            bad=[polled.bad[j] for j in mine],
            positions=dict(polled.positions) if last else {},
            bytes_read=polled.bytes_read if last else 0,
            order=order[a:b],
            bad_at=bad_at[mine] - a,
        ))
    return parts


def cut_at_closes(window: PaneWindow, polled: Polled) -> list[Polled]:
    """``polled`` in parts, each ending right after a record that may close a pane of
    ``window`` (the last part ends where the poll does); see the module docstring."""
    return split_polled(polled, close_points(window, polled))

