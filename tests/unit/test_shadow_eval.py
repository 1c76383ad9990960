"""Champion vs challenger on all live traffic and on the same joined outcomes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.actions.scoring import score_psi
from driftwatch.actions.shadow_eval import ShadowEvaluation


def _ev(cutoff: float | None = 0.25) -> ShadowEvaluation:
    return ShadowEvaluation("pd", "1", "2", metric="gini", margin=0.01, min_labelled=100,
                            max_duration=14 * 86400.0, started_at=0.0, cutoff=cutoff)


def test_live_traffic_gives_approval_rate_expected_loss_and_score_psi() -> None:
    rng = np.random.default_rng(3)
    ev = _ev()
    for start in range(0, 5000, 500):  # batches as they arrive
        champ = rng.beta(2, 12, 500)
        chall = np.clip(champ * 1.3, 0, 1)  # a harsher challenger: approves fewer
        ev.observe_live(champ, chall, np.full(500, 1000.0), np.arange(start, start + 500.0))
    m = ev.metrics()
    assert m["champion"]["live"] == m["challenger"]["live"] == 5000
    assert m["challenger"]["approval_rate"] < m["champion"]["approval_rate"]
    assert m["champion"]["expected_loss"] > 0
    assert (ev.first_live, ev.last_live) == (0.0, 4999.0)
    assert ev.score_psi() > 0.01
    back = ShadowEvaluation.from_dict(ev.to_dict())
    assert back.to_dict() == ev.to_dict() and back.score_psi() == ev.score_psi()


def test_without_a_cutoff_live_rows_are_still_counted_but_no_approval_is_claimed() -> None:
    ev = _ev(cutoff=None)
    ev.observe_live(np.array([0.1, 0.3]), np.array([0.2, 0.4]))
    m = ev.metrics()["champion"]
    assert m["live"] == 2 and "approval_rate" not in m and "expected_loss" not in m


def test_labelled_rows_compare_calibration_and_discrimination() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(0.05, 0.4, 4000)
    y = (rng.random(4000) < p).astype(float)
    ev = _ev()
    ev.observe_labelled(p / 2, p, y)  # the champion under-predicts by half
    m = ev.metrics()
    assert abs(m["challenger"]["calibration_ratio"] - 1) < 0.1
    assert abs(m["champion"]["calibration_ratio"] - 2) < 0.2
    assert m["challenger"]["log_loss"] < m["champion"]["log_loss"]
    assert ev.judge(now=1.0) == "discard"  # same ranking: no Gini gain, the rule says no


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=5, max_size=100))
def test_score_psi_of_a_histogram_with_itself_is_zero(counts: list[int]) -> None:
    a = np.array(counts, float)
    psi = score_psi(a, a)
    assert (psi == 0.0) if a.sum() > 0 else np.isnan(psi)


def test_rows_a_version_could_not_score_are_counted_and_named_in_the_verdict() -> None:
    """A strict MLflow signature leaves a row with a missing integer unscored (NaN): the
    comparison leaves it out, and says how many it left out."""
    rng = np.random.default_rng(9)
    ev = _ev()
    champ, chall = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300)
    chall[:7] = np.nan  # the challenger refused 7 rows
    champ[7:10] = np.nan  # the champion 3 others
    ev.observe_live(champ, chall)
    y = (rng.random(300) < 0.3).astype(float)
    y[-5:] = np.nan  # no outcome yet: not counted as unscored
    champ[-5:] = np.nan
    ev.observe_labelled(champ, chall, y)
    assert (ev.unscored_live, ev.unscored_labelled) == (10, 10)
    assert ev.metrics()["champion"]["live"] == 290
    assert ev.judge(now=1.0) is not None
    assert ev.reason.endswith("; 10 more outcomes left out: a version gave them no score")
    back = ShadowEvaluation.from_dict(ev.to_dict())
    assert (back.unscored_live, back.unscored_labelled) == (10, 10)
    old = {k: v for k, v in ev.to_dict().items() if not k.startswith("unscored")}
    assert ShadowEvaluation.from_dict(old).unscored_live == 0  # stored before this field
