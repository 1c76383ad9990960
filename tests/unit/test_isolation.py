"""A stage that raises on one window (or one poll) is recorded, and the run goes on.

The failures are injected into the real pipeline (file source, decoder, windows,
detectors, engine) by replacing one function with one that raises for one window only.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from driftwatch.connectors.deadletter import read_dead_letters
from driftwatch.metrics import Metrics
from driftwatch.pipeline import judging as pipeline
from driftwatch.policy import load_policy_text
from driftwatch.policy.watcher import MINIMAL
from driftwatch.replay import isolation, replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.testing.generator import write_scenario
from driftwatch.windows.panes import PaneWindow

ROOT = Path(__file__).resolve().parents[2]
CONNECTOR = ROOT / "connectors" / "demo-file.yaml"
POLICY = load_policy_text(MINIMAL.replace("pane: 500", "pane: 1000"), file="p.yaml")
BROKEN = 3


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quiet")
    write_scenario("quiet", out, seed=0, n_events=8_000, reference_rows=5_000)
    return out


def _replay(folder: Path, out: Path) -> list[dict[str, Any]]:
    res = replay(CONNECTOR, [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"],
                 out, policy=POLICY, reference=folder / "reference.parquet", progress=False,
                 report=False)
    assert res.summary["windows"] == len(read_timeline(out / "timeline.jsonl"))
    return read_timeline(out / "timeline.jsonl")


@pytest.fixture(scope="module")
def clean(scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _replay(scenario, tmp_path_factory.mktemp("clean"))


def _raising_for(real: Any, window_of: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if window_of(args, kwargs) == BROKEN:
            raise IndexError("index 7 is out of bounds for axis 0 with size 7")
        return real(*args, **kwargs)

    return wrapper


def test_a_detector_that_raises_on_one_window_is_recorded_and_the_replay_goes_on(
    scenario: Path, clean: list[dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(pipeline, "assess",
                        _raising_for(pipeline.assess, lambda a, k: k["window_id"]))
    with caplog.at_level(logging.ERROR):
        got = _replay(scenario, tmp_path)
    assert len(got) == len(clean) > BROKEN + 2
    bad = next(r for r in got if r["window_id"] == BROKEN)
    assert bad["error"] == {"stage": "detectors",
                            "message": "IndexError: index 7 is out of bounds for axis 0 "
                                       "with size 7"}
    assert bad["signals"] == [] and bad["decision"] is None
    # every other window measured exactly what it measures without the fault
    for a, b in zip(clean, got, strict=True):
        if a["window_id"] != BROKEN:
            assert "error" not in b and a["signals"] == b["signals"]
    assert f"window {BROKEN}: the detectors stage failed" in caplog.text
    summary = (tmp_path / "summary.json").read_text()
    assert '"errors_by_stage": {\n    "detectors": 1\n  }' in summary


def test_a_policy_engine_that_raises_keeps_the_signals_and_skips_the_decision(
    scenario: Path, clean: list[dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline, "evaluate",
                        _raising_for(pipeline.evaluate, lambda a, k: a[1].window_id))
    got = _replay(scenario, tmp_path)
    bad = next(r for r in got if r["window_id"] == BROKEN)
    assert bad["error"]["stage"] == "policy" and bad["decision"] is None
    assert bad["signals"] == clean[BROKEN]["signals"] != []
    assert [r for r in got if "error" in r] == [bad]
    assert all(r["decision"] is not None for r in got if r["window_id"] != BROKEN)


def test_a_timeline_line_that_cannot_be_built_is_written_short(
    scenario: Path, clean: list[dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(isolation, "window_record",
                        _raising_for(isolation.window_record, lambda a, k: a[0].window.window_id))
    got = _replay(scenario, tmp_path)
    assert [r["window_id"] for r in got] == [r["window_id"] for r in clean]
    bad = got[BROKEN]
    assert bad["error"]["stage"] == "timeline" and bad["end"] == clean[BROKEN]["end"]


def test_a_poll_that_raises_is_dead_lettered_and_the_next_polls_go_on(
    scenario: Path, clean: list[dict[str, Any]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {"n": 0}
    real = PaneWindow.add

    def add(self: PaneWindow, batch: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the second poll of predictions
            raise ValueError("a categorical code outside the reference's levels")
        return real(self, batch)

    monkeypatch.setattr(PaneWindow, "add", add)
    res = replay(CONNECTOR, [scenario / "predictions.jsonl.gz", scenario / "outcomes.jsonl.gz"],
                 tmp_path, policy=POLICY, reference=scenario / "reference.parquet",
                 progress=False, report=False, batch_size=1_000)
    dead = [d for d in read_dead_letters(tmp_path / "dead_letter.jsonl")
            if d["reason"] == "processing_error"]
    assert dead, "the poll's events were not dead-lettered"
    assert {d["detail"] for d in dead} == {
        "ingest: ValueError: a categorical code outside the reference's levels"}
    assert all(d["raw"] for d in dead)  # each names its event id
    assert res.summary["errors_by_stage"] == {"ingest": 1}
    assert res.summary["windows"] >= len(clean) - 2  # the rest of the stream was measured


def test_the_metric_counts_each_failed_window_by_stage() -> None:
    m = Metrics(CollectorRegistry())
    m.register_model("credit", ["income"])
    res = pipeline.WindowResult(window=None, assessment=pipeline.Assessment(  # type: ignore[arg-type]
        model="credit", window_id=1, start_time=0.0, end_time=1.0, n_events=0),
        error=pipeline.StageError("detectors", "IndexError: x"))
    m.record_window("credit", res)
    m.record_error("credit", "ingest")
    m.record_error("credit", "something new")

    def value(stage: str) -> float:
        return m["window_errors_total"].labels(model="credit", stage=stage)._value.get()

    assert (value("detectors"), value("ingest"), value("policy"), value("other")) == (1, 1, 0, 1)


def test_a_report_that_fails_leaves_the_timeline_and_summary(
    scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import driftwatch.report

    def broken(*args: Any, **kwargs: Any) -> None:
        raise KeyError("score")

    monkeypatch.setattr(driftwatch.report, "write_report", broken)
    with caplog.at_level(logging.ERROR):
        res = replay(CONNECTOR, [scenario / "predictions.jsonl.gz",
                                 scenario / "outcomes.jsonl.gz"], tmp_path, policy=POLICY,
                     reference=scenario / "reference.parquet", progress=False, report=True)
    assert res.summary["windows"] == len(read_timeline(tmp_path / "timeline.jsonl")) > 0
    assert (tmp_path / "summary.json").exists() and not (tmp_path / "report.html").exists()
    assert "writing the report failed (KeyError: 'score')" in caplog.text
