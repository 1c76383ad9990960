"""Recorded streams through `policies/` with `--expect`: the policy's regression tests.

Each scenario's episodes (from the generator's ``episodes.json``) say when drift starts
and the tier a sensible policy should reach. The demo policy's window is 4 panes of 1 000
applications, sliding by one pane. "Within one window of its onset" is checked as: the
tier is reached by the first window lying wholly after the onset or by the one after it,
i.e. by a window ending no later than onset + one window span + two panes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.testing.timelines import assert_same_windows

POLICY = "policies/credit-risk-demo.yaml"
CONNECTOR = "connectors/demo-file.yaml"
PANES, PANE_EVENTS = 4, 1000


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M")


def _episodes(folder: Path) -> dict:
    return json.loads((folder / "episodes.json").read_text())


def _run_cli(
    repo: Path, folder: Path, out: Path, expects: list[str]
) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "driftwatch.cli",
        "replay",
        "-q",
        "--no-report",
        "--connector",
        CONNECTOR,
        "--policy",
        POLICY,
        "--reference",
        str(folder / "reference.parquet"),
        "--input",
        str(folder / "predictions.jsonl.gz"),
        str(folder / "outcomes.jsonl.gz"),
        "--out",
        str(out),
    ]
    for e in expects:
        cmd += ["--expect", e]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=300)


def _onset_deadline(meta: dict, start: float) -> float:
    per_second = meta["n_events"] / (meta["days"] * 86400)
    return start + (PANES + 2) * PANE_EVENTS / per_second


def test_demo_episodes_reach_their_tiers_in_time(repo_root, scenario_dir, tmp_path) -> None:
    folder = scenario_dir("demo")
    meta = _episodes(folder)
    first = meta["episodes"][0]["start"]
    expects = [f"tier==none before {_iso(first)}"]
    severe_start = None
    for ep in meta["episodes"]:
        start, end = ep["start"], ep["end"]
        if ep["tier"] == "alert":  # a broken feed: alert, and never retrain on it
            expects += [
                f"data_quality_fault between {_iso(start)} and {_iso(end + 3 * 86400)}",
                f"no retrain between {_iso(start)} and {_iso(end + 7 * 86400)}",
            ]
            continue
        deadline = _onset_deadline(meta, start)
        expects.append(f"tier>={ep['tier']} between {_iso(start)} and {_iso(deadline)}")
        if ep["tier"] == "severe":
            severe_start = start
    assert severe_start is not None
    expects.append(f"no retrain before {_iso(severe_start)}")
    res = _run_cli(repo_root, folder, tmp_path / "out", expects)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("ok    expect") == len(expects)


def test_quiet_stream_raises_no_tier(repo_root, scenario_dir, tmp_path) -> None:
    folder = scenario_dir("quiet")
    res = _run_cli(
        repo_root,
        folder,
        tmp_path / "out",
        ["tier==none", "no alert", "no online_update", "no retrain"],
    )
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["windows_per_tier"]["none"] == summary["windows"] > 30


def test_feed_fault_alerts_and_never_retrains(repo_root, scenario_dir, tmp_path) -> None:
    folder = scenario_dir("feed_fault")
    ep = _episodes(folder)["episodes"][0]
    res = _run_cli(
        repo_root,
        folder,
        tmp_path / "out",
        [
            f"data_quality_fault between {_iso(ep['start'])} and {_iso(ep['end'] + 3 * 86400)}",
            "alert at least once",
            "no retrain",
            "no shadow",
            "no online_update",
        ],
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_concept_drift_is_caught_by_label_signals_only(scenario_dir, tmp_path) -> None:
    folder = scenario_dir("concept")
    ep = _episodes(folder)["episodes"][0]
    res = replay(
        CONNECTOR,
        [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"],
        tmp_path / "out",
        policy=POLICY,
        reference=folder / "reference.parquet",
        progress=False,
        report=False,
    )
    tiers = [(r["end_time"], r["tier"], r["decision"]) for r in res.records]
    assert all(t == "none" for end, t, _ in tiers if end < ep["start"])
    reached = [(end, d) for end, t, d in tiers if t in ("moderate", "severe")]
    assert reached, "concept drift never reached its intended tier"
    # outcomes mature 7-45 days after the prediction: evidence comes with the labels
    assert reached[0][0] < ep["start"] + 45 * 86400
    for _, d in reached:
        groups = {r["group"] for r in d["reasons"]}
        assert groups <= {"performance", "business"}, groups


def test_failed_expectation_exits_non_zero_with_a_clear_message(
    repo_root, scenario_dir, tmp_path
) -> None:
    folder = scenario_dir("quiet")
    res = _run_cli(repo_root, folder, tmp_path / "out", ["tier>=severe"])
    assert res.returncode == 1
    assert "FAIL  expect tier>=severe" in res.stderr


def test_replay_is_byte_identical(scenario_dir, tmp_path) -> None:
    folder = scenario_dir("demo")
    inputs = [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"]
    for name in ("a", "b"):
        replay(CONNECTOR, inputs, tmp_path / name, policy=POLICY, progress=False)
    for f in ("timeline.jsonl", "summary.json", "report.html"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


@pytest.mark.parametrize("batch_size", [997, 4096])
def test_windows_do_not_depend_on_batch_size(scenario_dir, tmp_path, batch_size) -> None:
    folder = scenario_dir("demo")
    inputs = [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"]
    replay(CONNECTOR, inputs, tmp_path / "ref", policy=POLICY, progress=False, report=False)
    replay(
        CONNECTOR,
        inputs,
        tmp_path / "b",
        policy=POLICY,
        progress=False,
        report=False,
        batch_size=batch_size,
    )
    ref = read_timeline(tmp_path / "ref" / "timeline.jsonl")
    got = read_timeline(tmp_path / "b" / "timeline.jsonl")
    # counts are exact; float sums agree to rounding (summation order differs)
    assert_same_windows(got, ref, keys=("window_id", "first_index", "last_index", "n_events",
                                        "n_labelled", "features", "tier"))
