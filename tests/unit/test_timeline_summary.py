"""The timeline's per-feature summary, built from the count arrays, reads as one built
feature by feature from each feature's own counts."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.detectors.base import SignalResult
from driftwatch.replay.timeline import _signal, sketch_summary
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"x": rng.normal(size=n), "k": rng.poisson(3, n).astype(float),
                       "c": rng.choice(["a", "b", "c", "d"], n), "e": rng.choice(["u", "v"], n),
                       "score": rng.uniform(size=n)})
    return ReferenceProfile.build(df, numeric=["x", "k"], categorical=["c", "e"], top_k=3)


def _by_feature(sk: Sketch) -> dict[str, object]:
    """Each feature from its own row of counts (shares rounded as numpy rounds)."""
    lay, out = sk.layout, {}

    def share(a: np.integer, n: np.integer) -> float | None:
        return float(np.round(np.float64(a) / n, 6)) if n else None

    coarse = sk.num_coarse()
    for j, name in enumerate(lay.numeric.names):
        row, k = coarse[j], int(lay.numeric.n_coarse[j])
        n = row.sum()
        out[name] = {"type": "numeric", "bins": [int(v) for v in row[:k]],
                     "missing": int(row[-1]), "missing_share": share(row[-1], n),
                     "out_of_range_share": share(sk.num_under[j] + sk.num_over[j],
                                                 n - row[-1])}
    cl = lay.categorical
    for j, name in enumerate(cl.names):
        row, levels = sk.cat[j], cl.levels[j]
        out[name] = {"type": "categorical",
                     "levels": {lv: int(row[i]) for i, lv in enumerate(levels)},
                     "other": int(row[cl.other_col]), "unseen": int(row[cl.unseen_col]),
                     "missing": int(row[cl.missing_col]),
                     "missing_share": share(row[cl.missing_col], row.sum())}
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 400),
       missing=st.sampled_from([0.0, 0.3, 1.0]))
def test_summary_from_arrays_equals_the_one_per_feature(profile, seed: int, n: int,
                                                       missing: float) -> None:
    rng = np.random.default_rng(seed)
    num = np.column_stack([rng.normal(0, 3, n), rng.poisson(3, n).astype(float)])
    num[rng.uniform(size=num.shape) < missing] = np.nan
    cat = rng.integers(-1, 6, (n, 2)).astype(np.int32)
    sk = Sketch.empty(profile.layout)
    sk.add_batch(Batch.build("predictions", n=n, n_numeric=2, n_categorical=2, numeric=num,
                             categorical=cat, score=rng.uniform(size=n)))
    got = sketch_summary(sk)
    assert got == _by_feature(sk)
    assert orjson.dumps(got, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        _by_feature(sk), option=orjson.OPT_SORT_KEYS)


def test_a_signal_reads_as_its_dict() -> None:
    for s in (SignalResult("psi", "drift", 0.2, "x", 0.1, 10, 20, None, {"eps": 1e-4}),
              SignalResult("ks", "drift", 0.3, "x", segment="north")):
        assert _signal(s) == s.to_dict()
