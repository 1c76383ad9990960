"""The live path fuzzed with the schema tests' generator: random schemas (numeric,
few-valued, boolean, constant, all-missing, wide categoricals; null, ``""`` and absent
values; unseen levels; drift) through a real ``driftwatch run`` process.

Whatever the schema, the daemon reads the whole recording, exits 0 without a traceback,
and writes the windows replay writes for the same inputs (counts and signals).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.testing.timelines import assert_same_windows
from tests.unit.test_any_schema import Feature, _write, features

pytestmark = pytest.mark.integration

KEYS = ("window_id", "start_time", "end_time", "n_events", "n_labelled", "n_labelled_bad",
        "features", "tier")


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(feats=st.lists(features, min_size=1, max_size=5), seed=st.integers(0, 2**16),
       n_ref=st.integers(50, 800), n_live=st.integers(20, 1200))
def test_any_schema_runs_live_as_it_replays(
    tmp_path_factory: Any, driftwatch_daemon: Any, service_config_factory: Any,
    feats: list[Feature], seed: int, n_ref: int, n_live: int,
) -> None:
    tmp = tmp_path_factory.mktemp("live-any")
    inputs = _write(tmp, feats, seed, n_ref, n_live)
    res = replay(tmp / "connector.yaml", [f"{k}={v}" for k, v in inputs.items()], tmp / "out",
                 policy=tmp / "policy.yaml", progress=False, report=False)
    assert res.summary["events"] == n_live
    cfg = service_config_factory(tmp / "svc.yaml", tmp / "connector.yaml",
                                 tmp / "policy.yaml", batch_size=97)
    d = driftwatch_daemon(cfg, tmp / "state", "--exit-when-done")
    assert d.wait_exit(180) == 0, d.log()[-3000:]
    assert "Traceback" not in d.log(), d.log()[-3000:]
    got = read_timeline(tmp / "state" / "out" / "any-schema" / "timeline.jsonl")
    want = read_timeline(tmp / "out" / "timeline.jsonl")
    assert want, "the recording closes no window: the comparison would prove nothing"
    assert_same_windows([r for r in got if not r.get("cohort")],
                        [r for r in want if not r.get("cohort")], keys=KEYS)
