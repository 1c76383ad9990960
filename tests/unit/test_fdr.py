"""Benjamini-Hochberg: the level a statistic threshold is taken at stays a probability."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.detectors.assess import assess
from driftwatch.detectors.categorical import chi2_threshold
from driftwatch.detectors.fdr import benjamini_hochberg
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch


def test_all_rejected_cut_is_a_probability_and_thresholds_finite() -> None:
    r = benjamini_hochberg(np.array([1e-12, 3e-9, 2e-4]), 0.01)
    assert r.rejected.all()
    assert 2e-4 < r.p_cut <= 1.0
    thr = chi2_threshold(r.p_cut, np.array([1, 9, 19]))
    assert np.isfinite(thr).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.floats(0.001, 0.5))
@example([0.5, 5e-324], 0.05)  # the product of the two p-values underflows to 0
def test_reject_iff_below_cut(ps: list[float], q: float) -> None:
    p = np.array(ps)
    r = benjamini_hochberg(p, q)
    assert 0.0 < r.p_cut <= 1.0
    assert (r.rejected == (p < r.p_cut)).all()


def test_window_where_every_feature_drifts_alarms_on_chi2() -> None:
    rng = np.random.default_rng(3)
    ref = pd.DataFrame({"x": rng.normal(size=4000), "y": rng.normal(size=4000)})
    prof = ReferenceProfile.build(ref, numeric=["x", "y"])
    cur = Sketch.empty(prof.layout)
    cur.add_batch(Batch.build("predictions", n=4000, n_numeric=2,
                              numeric=rng.normal(1.5, 1.0, (4000, 2))))
    a = assess(prof, cur, model="m", window_id=0, start_time=0.0, end_time=1.0)
    chi = list(a.select(signal="chi2"))
    assert len(chi) == 2
    assert all(s.threshold is not None and math.isfinite(s.threshold) for s in chi)
    assert all(s.exceeds for s in chi)
