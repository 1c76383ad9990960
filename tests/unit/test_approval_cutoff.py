"""The policy's ``model.approval_cutoff`` drives ``approval_rate`` where no decision is
mapped: the share of scores at or below it, on the window and on the reference alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.detectors.business import business_signals
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.prepared import prepare
from driftwatch.policy.loader import load_policy_text
from driftwatch.replay.monitor import Monitor
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: m}
model:
  name: m
  reference: ref.parquet
  approval_cutoff: CUT
window: {kind: count, pane: 1000, panes: 1}
signals:
  - detector: psi
    features: all
    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}
actions: {mild: none, moderate: none, severe: none}
"""


def _frame(n: int, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    score = 1 / (1 + np.exp(-(x + shift - 1.0)))
    return pd.DataFrame({"x": x, "score": score})


def _approval(verdict) -> list:  # type: ignore[no-untyped-def]
    return [s for s in verdict.result.assessment.signals if s.signal == "approval_rate"]


@pytest.mark.parametrize("cut", [0.2, 0.35])
def test_policy_cutoff_gives_approval_rate_without_decisions(cut: float) -> None:
    ref = _frame(20_000, 0.0, seed=1)
    cur = _frame(5_000, 0.8, seed=2)  # riskier applicants: fewer scores under the cut
    mon = Monitor.from_reference(ref, load_policy_text(POLICY.replace("CUT", str(cut))),
                                 decision=None)
    (row,) = _approval(mon.assess(cur))
    # read from the fine score histogram: exact at its edges, linear inside a bin, so
    # within one fine bin's share of the truth
    assert row.value == pytest.approx(np.mean(cur.score <= cut), abs=0.01)
    details = row.details
    assert details["source"] == "cutoff"
    assert details["reference"] == pytest.approx(np.mean(ref.score <= cut), abs=0.01)
    assert details["outside_band"]


def test_no_cutoff_and_no_decisions_gives_no_approval_rate() -> None:
    text = POLICY.replace("  approval_cutoff: CUT\n", "")
    mon = Monitor.from_reference(_frame(20_000, 0.0, 1), load_policy_text(text), decision=None)
    assert _approval(mon.assess(_frame(5_000, 0.0, 2))) == []


def test_decisions_on_one_side_only_are_read_at_the_cutoff() -> None:
    """A reference with decisions and a stream without: both sides at the cut-off, not a
    decision share against a score share."""
    ref = _frame(20_000, 0.0, seed=3)
    ref["decision"] = np.where(ref.score <= 0.5, "approve", "decline")  # another rule
    prof = ReferenceProfile.build(ref, numeric=["x"])
    cut = float(prof.layout.score.fine_edges[0][60])  # a fine edge: exact
    cur = _frame(5_000, 0.0, seed=4)
    sk = Sketch.empty(prof.layout)
    sk.add_batch(Batch.build("predictions", n=len(cur), n_numeric=1,
                             numeric=cur[["x"]].to_numpy(), score=cur.score.to_numpy()))
    (a,) = [s for s in business_signals(prepare(prof), sk, DetectorConfig(approval_cutoff=cut))
            if s.signal == "approval_rate"]
    assert a.details["source"] == "cutoff"
    assert a.value == pytest.approx(np.mean(cur.score <= cut), abs=1e-12)
    assert a.details["reference"] == pytest.approx(np.mean(ref.score <= cut), abs=1e-12)
    assert not a.details["outside_band"]  # the same population
