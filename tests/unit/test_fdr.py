"""Benjamini-Hochberg: the level a statistic threshold is taken at stays a probability."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.detectors import fdr
from driftwatch.detectors.assess import assess
from driftwatch.detectors.categorical import chi2_threshold
from driftwatch.detectors.fdr import SMALL, benjamini_hochberg
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


P_VALUES = st.one_of(st.floats(5e-324, 1.0), st.sampled_from(
    [5e-324, 1.0, 0.05, 0.01, math.nan, math.inf, 1e-300, 0.5]))


@settings(max_examples=400, deadline=None)
@given(st.lists(P_VALUES, min_size=0, max_size=SMALL), st.floats(1e-6, 1.0))
@example([0.2, 0.2, math.nan, 0.2], 0.5)
def test_small_families_give_the_array_paths_bits(ps: list[float], q: float) -> None:
    # a window's families (one test per feature) take the float path: every number the
    # timeline writes must be the array path's, to the bit
    got, want = fdr._small(ps, q), fdr._arrays(np.array(ps, dtype=np.float64), q)
    assert got.rejected.dtype == want.rejected.dtype == np.dtype(bool)
    assert got.rejected.tolist() == want.rejected.tolist()
    assert got.adjusted.dtype == want.adjusted.dtype
    assert got.adjusted.tobytes() == want.adjusted.tobytes()
    assert np.float64(got.p_cut).tobytes() == np.float64(want.p_cut).tobytes()


@pytest.mark.parametrize("ps", [[0.0, -0.0, 0.2], [-0.0, 0.01], [0.3, 0.0]])
def test_families_with_a_zero_give_the_array_paths_bits(ps: list[float]) -> None:
    # numpy's running minimum breaks a tie of 0.0 and -0.0 by position: left to it
    got, want = benjamini_hochberg(np.array(ps), 0.05), fdr._arrays(np.array(ps), 0.05)
    assert got.adjusted.tobytes() == want.adjusted.tobytes()
    assert got.rejected.tolist() == want.rejected.tolist() and got.p_cut == want.p_cut


def test_small_and_large_families_take_their_paths() -> None:
    with mock.patch.object(fdr, "_arrays", wraps=fdr._arrays) as arrays:
        benjamini_hochberg(np.full(SMALL, 0.5), 0.05)
        assert arrays.call_count == 0
        benjamini_hochberg(np.full(SMALL + 1, 0.5), 0.05)
        assert arrays.call_count == 1
        benjamini_hochberg(np.array([0.5, 0.0]), 0.05)
        assert arrays.call_count == 2
