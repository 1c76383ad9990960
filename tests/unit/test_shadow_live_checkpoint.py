"""A shadow's live counts survive a crash without loss or double counting.

The shadow's counts are written to the outbox with every prediction batch, while the
monitor (and the offsets it covers) is checkpointed now and then: after a crash the
monitor re-reads the events its checkpoint had not covered. Each batch carries the
monitor's index of its first event and the monitor's lineage, so the rows already counted
are skipped. Real monitor, outbox and shadow code; the challenger is an in-process scorer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.actions.context import ActionEnv
from driftwatch.actions.labelled_buffer import features_frame
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.actions.shadow import SHADOW_KEY, observe_live
from driftwatch.actions.shadow_eval import ShadowEvaluation
from driftwatch.batch import Batch
from driftwatch.clock import ManualClock
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.scorer import Scorer
from driftwatch.registry.scorers import ScorerCache
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

MODEL, POLL = "credit", 500


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=5000), "score": rng.uniform(size=5000)})
    return ReferenceProfile.build(df, numeric=["x"])


def _polls(n: int) -> list[Polled]:
    rng = np.random.default_rng(3)
    out = []
    for i in range(n):
        t0 = i * POLL
        out.append(Polled(batches=[Batch.build(
            "predictions", n=POLL, n_numeric=1, numeric=rng.normal(size=(POLL, 1)),
            ids=[f"e{t0 + k}" for k in range(POLL)],
            event_time=np.arange(t0, t0 + POLL, dtype=float), score=rng.uniform(size=POLL))]))
    return out


class Shadow:
    """One running shadow in a real outbox, and the monitor hook that feeds it."""

    def __init__(self, state: Path) -> None:
        clock = ManualClock(1_700_000_000.0)
        self.outbox = Outbox(state, clock=clock)
        cache = ScorerCache(None, state / "cache")
        cache._loaded[(MODEL, "2")] = Scorer(  # the challenger, scoring in process
            MODEL, "2", "custom", ("x",), lambda df: 1 / (1 + np.exp(-df["x"].to_numpy())))
        self.env = ActionEnv(registry=None, clock=clock, state_dir=state,  # type: ignore[arg-type]
                             cutoff=0.5, _scorers=cache)
        decision = Decision(MODEL, 1, clock.now(), Tier.MODERATE, Tier.MODERATE, action="shadow")
        self.id, _ = self.outbox.record(decision, state=ActionState.RUNNING)
        ev = ShadowEvaluation(MODEL, None, "2", metric="gini", margin=0.0, min_labelled=10**6,
                              max_duration=1e9, started_at=clock.now(), cutoff=0.5)
        self.outbox.update(self.id, artifacts={SHADOW_KEY: ev.to_dict()})

    def hook(self, monitor: ModelMonitor):  # as the daemon and replay wire it
        def observe(batch: Batch) -> None:
            rec = self.outbox.get(self.id)
            assert rec is not None
            observe_live(rec, self.env, self.outbox, features_frame(monitor.profile.schema, batch),
                         batch.score, None, batch.event_time, monitor.n_events - len(batch),
                         monitor.lineage)
        return observe

    def evaluation(self) -> dict:
        rec = self.outbox.get(self.id)
        assert rec is not None
        return rec.artifacts[SHADOW_KEY]


def _monitor(profile: ReferenceProfile, shadow: Shadow) -> ModelMonitor:
    mon = ModelMonitor(MODEL, profile, WindowSpec(kind="count", pane_size=1000))
    mon.on_predictions = shadow.hook(mon)
    return mon


def _counts(ev: dict) -> tuple:
    return (ev["champion"], ev["challenger"], ev["first_live"], ev["last_live"])


def test_a_crash_after_the_checkpoint_neither_loses_nor_double_counts(
    tmp_path: Path, profile: ReferenceProfile
) -> None:
    polls = _polls(10)
    whole = Shadow(tmp_path / "whole")
    mon = _monitor(profile, whole)
    for p in polls:
        mon.process(p)
    expected = whole.evaluation()
    assert expected["challenger"]["live"] == expected["champion"]["live"] == 10 * POLL

    crashed = Shadow(tmp_path / "crashed")
    mon = _monitor(profile, crashed)
    for p in polls[:4]:
        mon.process(p)
    checkpoint = json.loads(json.dumps(mon.state_dict()))  # offsets covered: 4 polls
    for p in polls[4:7]:  # counted in the outbox, then the process dies
        mon.process(p)
    assert crashed.evaluation()["challenger"]["live"] == 7 * POLL
    restarted = _monitor(profile, crashed)
    restarted.load_state(checkpoint)
    for p in polls[4:]:  # the source resumes at the checkpoint's offsets
        restarted.process(p)
    got = crashed.evaluation()
    assert got["challenger"]["live"] == got["champion"]["live"] == 10 * POLL
    assert _counts(got) == _counts(expected)


def test_a_batch_across_the_mark_counts_only_its_new_rows(
    tmp_path: Path, profile: ReferenceProfile
) -> None:
    polls = _polls(4)
    shadow = Shadow(tmp_path / "s")
    mon = _monitor(profile, shadow)
    for p in polls[:3]:
        mon.process(p)
    checkpoint = json.loads(json.dumps(mon.state_dict()))
    checkpoint["n_events"] -= POLL // 2  # a checkpoint in the middle of the last poll
    again = _monitor(profile, shadow)
    again.load_state(checkpoint)
    again.process(polls[2])  # indices 1250..1749: the first 250 were counted
    assert shadow.evaluation()["challenger"]["live"] == 3 * POLL + POLL // 2
    assert shadow.evaluation()["live_through"] == 3 * POLL + POLL // 2


def test_a_fresh_monitor_counts_from_its_own_lineage(
    tmp_path: Path, profile: ReferenceProfile
) -> None:
    polls = _polls(3)
    shadow = Shadow(tmp_path / "s")
    mon = _monitor(profile, shadow)
    for p in polls[:2]:
        mon.process(p)
    fresh = _monitor(profile, shadow)  # no checkpoint: its indices start again at 0
    assert fresh.lineage != mon.lineage
    fresh.process(polls[2])
    ev = shadow.evaluation()
    assert ev["challenger"]["live"] == 3 * POLL and ev["live_lineage"] == fresh.lineage
