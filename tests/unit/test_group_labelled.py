"""Labelled rows across a group, without a broker.

The predictions and outcomes of one stream, split over partitions in any way, each
partition keeping its feature rows and staging joined rows by landing pane, published
through the pane log's encoding (and a partition moved to a new owner midway through its
state), give the decider's buffer the labelled rows one monitor holds: the same rows,
for every outcome in a complete pane.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.monitor import window_spec_from_policy
from driftwatch.policy.loader import load_policy_text
from driftwatch.service.group.labelled import LabelledPanes, LabelledParts
from driftwatch.service.group.merge import PaneMerger
from driftwatch.service.group.panelog import decode_value, encode_value
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.profile import ReferenceProfile

from ._group_streams import delayed_outcomes, polls, share

PANE = 500.0
TTL = 2500.0
LEVELS = ("car", "home", "boat")

POLICY = load_policy_text(
    "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: g}\n"
    "model: {name: m, reference: not-read.parquet}\n"
    f"window: {{kind: time, pane: {int(PANE)}s, panes: 2, mode: sliding}}\n"
    f"labels: {{ttl: {int(TTL)}s}}\n"
    "signals:\n  - detector: psi\n    features: all\n    thresholds: {mild: 0.1}\n",
    file="g.yaml")


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    x = rng.normal(size=5_000)
    df = pd.DataFrame({"x": x, "purpose": rng.choice(LEVELS[:2], x.size),
                       "score": 1 / (1 + np.exp(2 - x)), "label": (x > 1) * 1.0})
    return ReferenceProfile.build(df, numeric=["x"], categorical=["purpose"])


def _stream(seed: int, n: int, profile: ReferenceProfile) -> tuple[Batch, Batch]:
    """Time-ordered predictions (some missing values, a level the reference never saw)
    and, for most of them, an outcome up to 2000 s later, in outcome-time order."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 6000.0, n))
    x = np.where(rng.uniform(size=n) < 0.05, np.nan, rng.normal(size=n))
    codes = profile.schema.encode_categorical(0, rng.choice(LEVELS, n))
    ids = np.char.add("k", np.arange(n).astype(str))
    pred = Batch.build("predictions", n=n, n_numeric=1, n_categorical=1, ids=ids,
                       numeric=x[:, None], categorical=codes[:, None],
                       score=rng.uniform(size=n), event_time=t)
    return pred, delayed_outcomes(rng, t, ids)


def _rows(buf: LabelledBuffer) -> list[tuple]:  # type: ignore[type-arg]
    f = buf.frame().drop(columns=["seq"]).fillna(-999.0)
    return sorted(map(tuple, f.astype(str).values.tolist()))


def _part(profile: ReferenceProfile, feature_rows: int = 100_000) -> PartitionPanes:
    return PartitionPanes(profile.layout, pane_size=PANE, ttl=TTL,
                          labelled=LabelledPanes(profile.schema, feature_rows=feature_rows,
                                                 pane_rows=100_000))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 5),
       step=st.sampled_from([70.0, 300.0, 900.0]), move_at=st.integers(0, 30))
def test_the_deciders_rows_are_one_monitors(profile, seed, n_parts, step, move_at) -> None:
    pred, out = _stream(seed, 1500, profile)
    rng = np.random.default_rng(seed)
    key_part = dict(zip(pred.keys.tolist(), rng.integers(0, n_parts, len(pred)).tolist(),
                        strict=True))
    parts = [_part(profile) for _ in range(n_parts)]
    merger = PaneMerger(profile.layout, n_partitions=n_parts)
    held, buf = LabelledParts(profile.schema), LabelledBuffer(profile.schema, 100_000)
    for i_poll, (p_all, o_all) in enumerate(polls(pred, out, step)):
        if i_poll == move_at:  # every partition moves to a new owner, through its state
            for i, part in enumerate(parts):
                parts[i] = _part(profile)
                parts[i].load(decode_value(encode_value(part.to_dict())))
        for i, part in enumerate(parts):
            for k, sk in part.take(*share(p_all, o_all, key_part, i)):
                merger.add_pane(i, k, sk)
            for k, rows in part.take_labelled():  # through the log's encoding
                held.add(i, k, decode_value(encode_value({"r": rows}))["r"],
                         next_pane=merger.next_pane)
            if part.frontier is not None:
                merger.add_mark(i, part.frontier)
        below = merger.complete_below
        held.feed(buf, below=below)
        merger.complete()
    # one monitor, given the outcomes that landed in the panes the decider has merged
    assert below is not None and below > 2
    whole = ModelMonitor("m", profile, window_spec_from_policy(POLICY), policy=POLICY)
    early = out.take(out.event_time < below * PANE)
    for p, o in polls(pred, early, 200.0):
        whole.process(Polled(batches=[b for b in (p, o) if len(b)]))
    want = _rows(whole.labelled_buffer)
    assert len(want) > 100, "few labelled rows: nothing compared"
    assert _rows(buf) == want
    assert buf.seq == whole.labelled_buffer.seq


def test_a_partition_keeps_its_share_of_feature_rows(profile) -> None:
    """The feature rows a partition keeps are bounded: the oldest go first, and an outcome
    for an evicted prediction joins (its statistics count) but adds no row."""
    pred, out = _stream(1, 400, profile)
    part = _part(profile, feature_rows=50)
    part.take(pred, None)
    assert len(part.labelled.features) == 50
    part.take(None, out)
    rows = [r for _, d in part.take_labelled()
            for r in LabelledBuffer.from_dict(profile.schema, d).frame()["event_time"]]
    newest = np.sort(pred.event_time)[-50:]
    assert rows and set(rows) <= set(newest.tolist())
