"""Where a poll's outcomes and bad records sit among its predictions
(:meth:`~driftwatch.pipeline.intake.PollIntake._placement`): the same as walking the
merged stream one record at a time."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.pipeline.intake import PollIntake

_TIME = st.one_of(st.floats(-1e6, 1e6), st.just(math.nan))


def _walk(kinds: list[bool], times: list[float], wm0: float, bad_at: list[int]):
    """Record by record: predictions before each outcome, the watermark (NaN ignored)
    before each record, and for a bad record the predictions and watermark before it."""
    preds, wm, seen = 0, wm0, []
    before_out, wm_pred, wm_out = [], [], []
    for is_out, t in zip(kinds, times, strict=True):
        seen.append((preds, wm))
        (wm_out if is_out else wm_pred).append(wm)
        if is_out:
            before_out.append(preds)
        else:
            preds += 1
        wm = t if math.isnan(wm) else wm if math.isnan(t) else max(wm, t)
    seen.append((preds, wm))
    return before_out, wm_pred, wm_out, [seen[k] for k in bad_at]


@settings(max_examples=200, deadline=None)
@given(records=st.lists(st.tuples(st.booleans(), _TIME), max_size=60),
       wm0=st.one_of(st.just(-math.inf), st.floats(-1e6, 1e6), st.just(math.nan)),
       outcomes_first=st.booleans(), bad=st.lists(st.integers(0, 70), max_size=4))
def test_placement_walks_the_merged_stream(records, wm0, outcomes_first, bad) -> None:
    kinds = [k for k, _ in records]
    times = [t for _, t in records]
    n_out = sum(kinds)
    pred = Batch.build("predictions", n=len(kinds) - n_out,
                       event_time=[t for k, t in records if not k])
    out = Batch.build("outcomes", n=n_out, event_time=[t for k, t in records if k])
    batches = [out, pred] if outcomes_first else [pred, out]
    at_out = 0 if outcomes_first else 1
    order = np.array([at_out if k else 1 - at_out for k in kinds], dtype=np.int64)
    bad_at = np.array(bad, dtype=np.int64)
    polled = Polled(batches=batches, order=order, bad_at=bad_at,
                    bad=[BadRecord("bad_time", "", "f", i, b"") for i in range(len(bad))])
    me = SimpleNamespace(window=SimpleNamespace(watermark=wm0))
    got = PollIntake._placement(me, polled, pred if len(pred) else None,  # type: ignore[arg-type]
                                out if n_out else None)
    before_out, wm_pred, wm_out, at = _walk(kinds, times, wm0,
                                            [min(k, len(kinds)) for k in bad])
    assert got.before_out.tolist() == before_out
    np.testing.assert_array_equal(got.wm_pred, np.array(wm_pred, dtype=float))
    np.testing.assert_array_equal(got.wm_out, np.array(wm_out, dtype=float))
    if bad:
        assert got.bad is not None
        assert got.bad[0].tolist() == [p for p, _ in at]
        np.testing.assert_array_equal(got.bad[1], np.array([w for _, w in at], dtype=float))
    else:
        assert got.bad is None
