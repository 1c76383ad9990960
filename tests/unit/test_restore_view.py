"""The window gauges set from a timeline line after a restart equal those the window set."""

from __future__ import annotations

import math
from pathlib import Path

from prometheus_client import CollectorRegistry

from driftwatch.metrics import Metrics
from driftwatch.policy import load_policy_text
from driftwatch.policy.watcher import MINIMAL
from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.service.view import last_record, restore_view
from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]
#: The gauges a window sets (the checkpoint covers them through the timeline).
VIEW = ("driftwatch_tier", "driftwatch_signal_severity", "driftwatch_data_quality_fault",
        "driftwatch_feature_drift_score", "driftwatch_model_drift_score",
        "driftwatch_data_quality_ratio", "driftwatch_confidence_value",
        "driftwatch_business_value", "driftwatch_window_events")
POLICY = MINIMAL.replace("pane: 500", "pane: 1000") + """  - detector: score_psi
    thresholds: {mild: 0.01}
data_quality:
  signals:
    - {detector: missing_rate, threshold: 0.5}
"""


def _view(registry: CollectorRegistry) -> dict[tuple, float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in registry.collect() for s in fam.samples if s.name in VIEW}


def _same(a: dict[tuple, float], b: dict[tuple, float]) -> bool:
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


def test_the_view_restored_from_the_last_timeline_line_is_the_view_it_left(
        tmp_path: Path) -> None:
    folder = tmp_path / "data"
    write_scenario("demo", folder, seed=1, n_events=6_000, reference_rows=4_000)
    res = replay(ROOT / "connectors" / "demo-file.yaml",
                 [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"],
                 tmp_path / "out", policy=load_policy_text(POLICY), progress=False,
                 reference=folder / "reference.parquet", report=False, keep_results=True)
    features = res.results[0].assessment.signals
    names = sorted({s.feature for s in features if s.feature})
    before = Metrics(CollectorRegistry())
    before.register_model("credit", names)
    for r in res.results:
        before.record_window("credit", r)

    after = Metrics(CollectorRegistry())
    after.register_model("credit", names)
    record = last_record(tmp_path / "out" / "timeline.jsonl")
    assert record == read_timeline(tmp_path / "out" / "timeline.jsonl")[-1]
    assert restore_view(after, "credit", record)
    want, got = _view(before.registry), _view(after.registry)
    assert len(want) > 20 and any(k[0] == "driftwatch_feature_drift_score" for k in want)
    assert _same(want, got)


def test_no_line_no_view(tmp_path: Path) -> None:
    m = Metrics(CollectorRegistry())
    assert not restore_view(m, "credit", last_record(tmp_path / "absent.jsonl"))
    assert not restore_view(m, "credit", {"window_id": 3})
