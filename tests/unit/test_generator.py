"""The synthetic credit stream: deterministic, selective labels, drift where the plan says."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import orjson
import pyarrow.parquet as pq
import pytest

from driftwatch.testing.generator import (
    CUTOFF,
    NUMERIC,
    generate,
    outcome_records,
    write_scenario,
)
from driftwatch.testing.scenarios import DAY, SCENARIOS, scenario_plan


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = write_scenario("demo", tmp_path / "a", n_events=2000, days=20, reference_rows=500)
    b = write_scenario("demo", tmp_path / "b", n_events=2000, days=20, reference_rows=500)
    for k in a:
        assert a[k].read_bytes() == b[k].read_bytes(), k
    c = write_scenario("demo", tmp_path / "c", n_events=2000, days=20, reference_rows=500,
                       seed=1)  # fmt: skip
    assert c["predictions"].read_bytes() != a["predictions"].read_bytes()


def test_outcomes_are_for_approved_applications_only_and_arrive_late() -> None:
    s = generate(scenario_plan("quiet", n_events=5000, days=90), seed=3, delay_days=(7, 45))
    assert (s.score[s.outcome_index] < CUTOFF).all()
    delay = (s.outcome_ts - s.ts[s.outcome_index]) / DAY
    assert delay.min() >= 7 and delay.max() <= 45
    assert (np.diff(s.outcome_ts) >= 0).all() and (np.diff(s.ts) >= 0).all()
    assert (s.outcome_ts < s.plan.end).all()  # the recording stops with the stream
    first = next(outcome_records(s))
    assert set(first) == {"application_id", "outcome_ts", "defaulted"}


def test_episodes_shift_what_they_say() -> None:
    s = generate(scenario_plan("demo", n_events=30_000), seed=0)
    eps = {e.kind: e for e in s.plan.episodes}
    quiet = s.ts < eps["covariate"].start

    def inside(kind: str) -> np.ndarray:
        return (s.ts >= eps[kind].start) & (s.ts < eps[kind].end)

    income = s.features["income"]
    assert np.median(income[inside("covariate")]) < 0.85 * np.median(income[quiet])
    dti_missing = np.isnan(s.features["debt_to_income"])
    assert dti_missing[quiet].mean() == 0 and 0.3 < dti_missing[inside("feed_fault")].mean() < 0.5
    severe = inside("covariate+concept") & s.approved  # bad rate among approved: broken
    assert s.true_pd[severe].mean() > 1.5 * s.score[severe].mean()
    assert np.allclose(s.true_pd[quiet], s.score[quiet], atol=1e-5)


def test_concept_scenario_moves_labels_not_features() -> None:
    s = generate(scenario_plan("concept", n_events=20_000), seed=4)
    ep = s.plan.episodes[0]
    before, after = s.ts < ep.start, s.ts >= ep.start
    for f in NUMERIC[:2]:
        assert abs(np.nanmedian(s.features[f][after]) / np.nanmedian(s.features[f][before])
                   - 1) < 0.05  # fmt: skip
    labelled = s.ts[s.outcome_index]
    bad_after = s.label[labelled >= ep.start].mean()
    bad_before = s.label[labelled < ep.start].mean()
    assert bad_after > 1.4 * bad_before


def test_written_files_and_sidecar(tmp_path: Path) -> None:
    paths = write_scenario("feed_fault", tmp_path, n_events=1000, reference_rows=800)
    meta = orjson.loads(paths["episodes"].read_bytes())
    assert meta["scenario"] == "feed_fault" and meta["n_events"] == 1000
    (ep,) = meta["episodes"]
    assert ep["tier"] == "alert" and ep["features"] == ["debt_to_income"]
    assert meta["start"] <= ep["start"] < ep["end"] <= meta["end"]
    with gzip.open(paths["predictions"]) as f:
        assert sum(1 for _ in f) == 1000
    ref = pq.read_table(paths["reference"])
    assert ref.num_rows == 800
    assert ref.column_names[-3:] == ["score", "label", "decision"]


def test_every_scenario_has_a_plan() -> None:
    for name in SCENARIOS:
        plan = scenario_plan(name, n_events=10)
        assert plan.n_events == 10 and plan.end > plan.start
    assert scenario_plan("large").n_events == 1_000_000
    with pytest.raises(LookupError, match="valid: concept, demo"):
        scenario_plan("drifty")
