"""Data-quality signals: exact shares, counts, and a feed fault told apart from drift."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.detectors.assess import assess
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.quality import quality_rows, quality_signals
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

N_REF = 20_000


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"x{j}": rng.normal(size=N_REF) for j in range(5)})
    df.loc[rng.uniform(size=N_REF) < 0.05, "x1"] = np.nan  # 5% missing in the reference
    df["purpose"] = rng.choice(["car", "home", "boat", "ufo"], N_REF, p=[0.6, 0.3, 0.08, 0.02])
    df["score"] = rng.uniform(size=N_REF)
    return ReferenceProfile.build(df, numeric=[f"x{j}" for j in range(5)],
                                  categorical=["purpose"], top_k=3)


def _window(prof: ReferenceProfile, n: int, seed: int, *, fault=None, raw=None) -> Sketch:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    x[rng.uniform(size=n) < 0.05, 1] = np.nan
    purpose = rng.choice(["car", "home", "boat", "ufo"], n, p=[0.6, 0.3, 0.08, 0.02]).astype(object)
    if fault is not None:
        fault(x, purpose, rng)
    if raw is not None:
        raw.extend([x, purpose])
    codes = prof.schema.encode_categorical(0, purpose)[:, None]
    s = Sketch.empty(prof.layout)
    s.add_batch(Batch.build("predictions", n=n, n_numeric=5, n_categorical=1, numeric=x,
                            categorical=codes, score=rng.uniform(size=n)))
    return s


def _ref_col(prof: ReferenceProfile, j: int) -> np.ndarray:
    edges = prof.layout.numeric.fine_edges[j]  # first and last edge: reference min and max
    return np.array([edges[0], edges[-1]])


def _by(results, signal):
    return {r.feature: r for r in results if r.signal == signal}


def test_values_are_exact_shares_and_counts(prof) -> None:
    def fault(x, purpose, rng):
        x[:100, 0] = np.nan
        x[100:130, 2] = 99.0  # above the reference max
        x[130:140, 2] = -99.0
        purpose[:25] = "spaceship"  # never seen
        purpose[25:30] = None

    raw: list = []
    cur = _window(prof, 2_000, 1, fault=fault, raw=raw)
    x = raw[0]
    res, _ = quality_signals(prepare(prof), cur, DetectorConfig())
    miss = _by(res, "missing_rate")
    assert miss["x0"].value == 100 / 2000 and miss["x0"].details["count"] == 100
    assert miss["x0"].details["reference"] == 0.0
    assert miss["x1"].details["reference"] == pytest.approx(
        prof.sketch.num_fine[1, -1] / N_REF)
    oor = _by(res, "out_of_range")["x2"]
    lo, hi = np.nanmin(prof_x2 := _ref_col(prof, 2)), np.nanmax(prof_x2)
    under, over = int((x[:, 2] < lo).sum()), int((x[:, 2] > hi).sum())
    assert (oor.details["under"], oor.details["over"]) == (under, over)
    assert under >= 10 and over >= 30
    assert oor.value == (under + over) / np.isfinite(x[:, 2]).sum()
    new = _by(res, "new_category_rate")["purpose"]
    assert new.value == 25 / 2000
    assert new.details["unseen"] == 25
    assert new.details["missing"] == miss["purpose"].details["count"]
    assert new.details["other"] == int(cur.cat[0, prof.layout.categorical.other_col])
    assert all(r.group == "data_quality" for r in res)


def test_stable_feed_raises_nothing_at_small_and_large_windows(prof) -> None:
    for n, seed in ((500, 2), (50_000, 3)):
        res, flags = quality_signals(prepare(prof), _window(prof, n, seed), DetectorConfig())
        assert [r.signal for r in res if r.exceeds] == []
        assert not flags.numeric.any() and not flags.categorical.any()


def test_sudden_missing_jump_in_one_feature_is_a_fault_not_drift(prof) -> None:
    def fault(x, purpose, rng):
        x[rng.uniform(size=len(x)) < 0.37, 3] = np.nan  # the join dropped the column

    cur = _window(prof, 10_000, 4, fault=fault)
    a = assess(prof, cur, model="m", window_id=1, start_time=0.0, end_time=1.0)
    flagged = [(s.signal, s.feature) for s in a.select(group="data_quality") if s.exceeds]
    assert flagged == [("missing_rate", "x3")]
    miss = next(a.select(signal="missing_rate", feature="x3"))
    assert miss.details["features_flagged"] == 1 and miss.p_value < 1e-12
    psi = next(a.select(signal="psi", feature="x3"))
    assert psi.details["data_quality_flag"] is True
    assert psi.details["psi_without_missing"] < 0.01  # the observed values did not move
    others = [s for s in a.select(signal="psi") if s.feature not in ("x3", None)]
    assert not any(s.details["data_quality_flag"] for s in others)


def test_default_value_filling_nulls_shows_as_a_spike(prof) -> None:
    def fault(x, purpose, rng):
        x[rng.uniform(size=len(x)) < 0.12, 4] = 0.0  # nulls filled with 0

    res, flags = quality_signals(prepare(prof), _window(prof, 10_000, 5, fault=fault),
                                 DetectorConfig())
    oor = _by(res, "out_of_range")
    assert oor["x4"].details["spike"] is True and oor["x4"].details["spike_excess"] > 0.1
    assert flags.numeric.tolist() == [False, False, False, False, True]
    assert not any(oor[f].details["spike"] for f in ("x0", "x1", "x2", "x3"))


def test_population_shift_is_not_a_spike(prof) -> None:
    def shift(x, purpose, rng):
        x[:, 4] += 0.5

    _, flags = quality_signals(prepare(prof), _window(prof, 10_000, 6, fault=shift),
                                 DetectorConfig())
    assert not flags.numeric.any()


def test_bad_record_rate_is_model_level_with_reasons(prof) -> None:
    cur = _window(prof, 980, 7)
    res, _ = quality_signals(prepare(prof), cur, DetectorConfig(),
                             bad_records={"schema": 15, "json": 5})
    (bad,) = [r for r in res if r.signal == "bad_record_rate"]
    assert bad.feature is None and bad.value == 20 / 1000 and bad.exceeds
    assert bad.details == {"count": 20, "records": 1000,
                           "by_reason": {"json": 5, "schema": 15}}


def test_bad_record_rate_counts_the_outcome_records_read(prof) -> None:
    """A window of outcomes alone (read after the last prediction, as a replay reads an
    outcomes file without times): 2 rejected among 3000 outcome records read is 2 / 3002,
    not 2 / 2 (100%), and 300 among them is a fault."""
    cur = _window(prof, 0, 9)
    cur.n_outcome_records = 3000
    res, _ = quality_signals(prepare(prof), cur, DetectorConfig(), bad_records={"bad": 2})
    (bad,) = [r for r in res if r.signal == "bad_record_rate"]
    assert bad.value == 2 / 3002 and not bad.exceeds
    res, _ = quality_signals(prepare(prof), cur, DetectorConfig(), bad_records={"bad": 300})
    (bad,) = [r for r in res if r.signal == "bad_record_rate"]
    assert bad.value == 300 / 3300 and bad.exceeds


def test_small_window_threshold_includes_binomial_margin(prof) -> None:
    res, _ = quality_signals(prepare(prof), _window(prof, 200, 8), DetectorConfig())
    x1 = _by(res, "missing_rate")["x1"]
    # reference 5% missing: at 200 events the binomial margin exceeds the 2-point effect size
    assert x1.threshold > x1.details["reference"] + 0.02


def _faulty(prof: ReferenceProfile, n: int, seed: int, kind: int) -> Sketch:
    """A window with one of a few feed faults (or none), so rows differ in every part."""
    def fault(x, purpose, rng):
        if kind == 1:
            x[rng.uniform(size=len(x)) < 0.3, 3] = np.nan
        elif kind == 2:
            x[rng.uniform(size=len(x)) < 0.2, 4] = 0.0  # a spike
        elif kind == 3:
            x[: len(x) // 3, 2] = 99.0  # out of range
            purpose[: len(x) // 4] = "spaceship"
        elif kind == 4:
            x[:] = np.nan  # nothing observed

    return _window(prof, n, seed, fault=fault) if n else Sketch.empty(prof.layout)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.sampled_from([0, 1, 3, 40, 700, 3000]), min_size=1, max_size=5),
       kinds=st.lists(st.integers(0, 4), min_size=5, max_size=5),
       seed=st.integers(0, 10_000), alpha=st.sampled_from([0.01, 0.2]),
       fdr=st.sampled_from([0.01, 0.5]))
def test_rows_of_windows_together_have_the_bits_of_each_alone(prof, sizes, kinds, seed,
                                                              alpha, fdr) -> None:
    cfg = DetectorConfig(alpha=alpha, fdr=fdr)
    sketches = [_faulty(prof, n, seed + i, kinds[i]) for i, n in enumerate(sizes)]
    together = quality_rows(prepare(prof), sketches, cfg)
    assert len(together) == len(sketches)
    for sk, row in zip(sketches, together, strict=True):
        (alone,) = quality_rows(prepare(prof), [sk], cfg)
        assert repr(row) == repr(alone)  # repr spells every float to its last bit
        res, flags = quality_signals(prepare(prof), sk, cfg, row=row)
        res_a, flags_a = quality_signals(prepare(prof), sk, cfg)
        assert [repr(r.to_dict()) for r in res] == [repr(r.to_dict()) for r in res_a]
        assert flags.numeric.tolist() == flags_a.numeric.tolist()
        assert flags.categorical.tolist() == flags_a.categorical.tolist()


def test_a_row_is_not_changed_by_the_window_that_reads_it(prof) -> None:
    """An absent field flags its feature in that call's flags, not in the shared row."""
    cur = _window(prof, 500, 11)
    (row,) = quality_rows(prepare(prof), [cur], DetectorConfig())
    _, flags = quality_signals(prepare(prof), cur, DetectorConfig(), row=row,
                               absent_fields={"x0": (9, 10, "$.x0")})
    assert flags.numeric.tolist() == [True, False, False, False, False]
    _, again = quality_signals(prepare(prof), cur, DetectorConfig(), row=row)
    assert not again.numeric.any() and not row.numeric_flag.any()


def test_a_reference_without_features_has_only_model_level_results() -> None:
    """A score-only reference: no per-feature numbers, alone or with other windows."""
    rng = np.random.default_rng(12)
    bare = ReferenceProfile.build(pd.DataFrame({"score": rng.uniform(size=500)}), numeric=[])
    sketches = []
    for _ in range(3):
        sk = Sketch.empty(bare.layout)
        sk.add_batch(Batch.build("predictions", n=99, n_numeric=0,
                                 score=rng.uniform(size=99)))
        sketches.append(sk)
    rows = quality_rows(prepare(bare), sketches, DetectorConfig())
    for sk, row in [(sketches[0], None), *zip(sketches, rows, strict=True)]:
        res, flags = quality_signals(prepare(bare), sk, DetectorConfig(),
                                     bad_records={"json": 1}, row=row)
        assert [(r.signal, r.value) for r in res] == [("bad_record_rate", 1 / 100)]
        assert flags.numeric.shape == flags.categorical.shape == (0,)
