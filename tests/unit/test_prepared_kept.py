"""The reference's side of the business signals is derived once per prepared reference
(its labelled count, its approval share at a cut-off), not once per window."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest

from driftwatch.detectors import prepared
from driftwatch.detectors.prepared import approval_share, prepare
from driftwatch.windows.profile import ReferenceProfile


@pytest.mark.parametrize("decisions", [False, True])
def test_labelled_count_and_approval_are_the_reference_own(decisions) -> None:
    rng = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame({"x": rng.normal(size=n), "score": rng.uniform(size=n),
                       "label": rng.uniform(size=n) < 0.2})
    if decisions:
        df["decision"] = np.where(rng.uniform(size=n) < 0.7, "approve", "decline")
    prep = prepare(ReferenceProfile.build(df, numeric=["x"]))
    assert prep.n_labelled == int(prep.sketch.lab_n.sum()) > 0
    for cut in (None, 0.25, 0.8):
        want = approval_share(prep.sketch, prep.score_geo, cut)
        first = prep.approval(cut)
        with mock.patch.object(prepared, "approval_share", side_effect=AssertionError):
            again = prep.approval(cut)  # kept: not computed again
        assert first == again
        assert np.array_equal(np.array(first[:2], dtype=np.float64),
                              np.array(want[:2], dtype=np.float64), equal_nan=True)
        assert first[2] == want[2]
