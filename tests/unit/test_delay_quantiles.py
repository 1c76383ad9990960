"""The label delay's quantiles (summary ``label_delay``, the report's delay lines) come from
log-spaced bins; interpolated inside the last bin they read past the longest delay seen (a
replay of outcomes 30 to 90 days late said p99 109 days, max 90). Each quantile now lies
within the delays seen, and in order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.cohorts import DelayHistogram

DAY = 86_400.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 400 * DAY, allow_nan=False), min_size=1, max_size=300),
       st.lists(st.floats(-3 * DAY, 0.0), max_size=5))
def test_delay_quantiles_lie_within_the_delays_seen(late: list[float],
                                                    early: list[float]) -> None:
    h = DelayHistogram()
    h.add(np.array(late + early))
    s = h.summary()
    assert s["max"] == max(late + early)
    assert 0.0 <= s["p50"] <= s["p90"] <= s["p99"] <= max(s["max"], 0.0), s


def test_outcomes_thirty_to_ninety_days_late() -> None:
    rng = np.random.default_rng(7)
    h = DelayHistogram()
    h.add(rng.uniform(30 * DAY, 90 * DAY, 6853))
    s = h.summary()
    assert s["p99"] <= s["max"] < 90 * DAY
    assert abs(s["p50"] - 60 * DAY) < 0.15 * 60 * DAY, s
