"""What ``drift_signals`` lists beside the values (top bins, current shares, the KS
edge) is computed once for the windows of a poll (:func:`~driftwatch.detectors.drift.listed`)
and gives each window the results it gets when ``drift_signals`` works them out alone."""

from __future__ import annotations

from unittest import mock

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.detectors import drift
from driftwatch.detectors.categorical import chi2_threshold, chi2_thresholds
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.drift import block_stats, drift_signals
from driftwatch.detectors.prepared import PreparedReference, prepare
from driftwatch.detectors.stacked import _row, categorical_stats, numeric_stats
from driftwatch.windows.profile import ReferenceProfile

OPT = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
CONFIGS = [DetectorConfig(), DetectorConfig(top_bins=1), DetectorConfig(top_bins=50),
           DetectorConfig(detectors=("ks", "chi2")), DetectorConfig(detectors=("psi",))]


@pytest.fixture(scope="module")
def prep() -> PreparedReference:
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"x0": rng.normal(size=n), "x1": rng.lognormal(3, 1, n),
                       "c": rng.choice(["a", "b", "c"], n).astype(object)})
    return prepare(ReferenceProfile.build(df, numeric=["x0", "x1"], categorical=["c"]))


def _results(prep: PreparedReference, numeric: bool, st, cur, cfg) -> bytes:  # type: ignore[no-untyped-def]
    f = len(prep.num_names if numeric else prep.cat_names)
    geo = prep.num_geo
    res = drift_signals(
        prep.num_names if numeric else prep.cat_names, st,
        ref_coarse=prep.num_coarse if numeric else prep.cat, cur_coarse=cur,
        valid=prep.num_coarse_valid if numeric else prep.cat_valid,
        labels=geo.coarse_labels if numeric else prep.cat_labels, n_ref=prep.n, n_cur=7,
        cfg=cfg, calibrated=None, report=np.ones(f, bool), quality_flag=np.zeros(f, bool),
        chi_adjusted=st.chi.p_value, chi_p_cut=0.01,
        ks_adjusted=st.ks.p_value if st.ks is not None else None,
        ks_p_cut=0.01 if st.ks is not None else None,
        fine_hi=geo.fine_hi if numeric else None,
        bounds=(geo.coarse_lo, geo.coarse_hi) if numeric else None)
    return orjson.dumps([r.to_dict() for r in res], option=OPT)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(1, 5), seed=st.integers(0, 10_000), empty=st.booleans(),
       cfg=st.sampled_from(CONFIGS))
def test_each_listed_row_gives_the_window_alone_its_results(prep, k, seed, empty,
                                                            cfg) -> None:
    rng = np.random.default_rng(seed)
    fine = rng.poisson(rng.uniform(0, 3), (k, *prep.num_fine.shape)).astype(np.int64)
    cat = rng.poisson(rng.uniform(0, 20), (k, *prep.cat.shape)).astype(np.int64)
    if empty:  # a window without events (every share 0, every row's top bins tied)
        fine[0], cat[0] = 0, 0
    cc, num = numeric_stats(prep, fine, cfg)
    cats = categorical_stats(prep, cat, cfg)
    geo = prep.num_geo
    for i in range(k):
        # the window alone, as a caller without the listing has it
        alone_num = block_stats(prep.num_coarse, cc[i], prep.num_coarse_valid, cfg.eps,
                                ref_fine=prep.num_fine, cur_fine=fine[i],
                                widths=geo.widths, sd=prep.num_sd,
                                without_missing=cfg.wants("psi", "drift"))
        alone_cat = block_stats(prep.cat, cat[i], prep.cat_valid, cfg.eps,
                                without_missing=cfg.wants("psi", "drift"))
        assert alone_num.top is None and alone_cat.top is None
        with mock.patch.object(drift, "_top", side_effect=AssertionError), \
                mock.patch.object(drift, "_shares", side_effect=AssertionError), \
                mock.patch.object(drift, "_ks_at", side_effect=AssertionError):
            got_num = _results(prep, True, _row(num, i), cc[i], cfg)  # nothing of its own
            got_cat = _results(prep, False, _row(cats, i), cat[i], cfg)
        assert got_num == _results(prep, True, alone_num, cc[i], cfg)
        assert got_cat == _results(prep, False, alone_cat, cat[i], cfg)


def test_a_listing_for_other_settings_is_not_read(prep) -> None:
    rng = np.random.default_rng(3)
    fine = rng.poisson(2, (2, *prep.num_fine.shape)).astype(np.int64)
    cc, num = numeric_stats(prep, fine, DetectorConfig(top_bins=1))
    other = DetectorConfig(top_bins=4)
    _, want = numeric_stats(prep, fine[1], other)
    assert _results(prep, True, _row(num, 1), cc[1], other) == \
        _results(prep, True, want, cc[1], other)


@given(p=st.floats(1e-12, 1.0), dof=st.lists(st.integers(-1, 400), max_size=12))
def test_kept_chi2_thresholds_are_the_computed_ones(p, dof) -> None:
    want = chi2_threshold(p, np.array(dof, dtype=np.int64)).tolist()
    first, again = chi2_thresholds(p, dof), chi2_thresholds(p, dof)
    assert first == again  # kept
    assert np.array(first, dtype=np.float64).view(np.int64).tolist() == \
        np.array(want, dtype=np.float64).view(np.int64).tolist()
