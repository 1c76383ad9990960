"""Segments end to end in replay: the connector's ``segment`` field, the policy's
``reference.segment`` column, a drift in one channel named in the timeline and report."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch import Monitor
from driftwatch.connectors.config import parse_connector
from driftwatch.errors import ConnectorError, DataFrameError
from driftwatch.onboard.consistency import check_reference
from driftwatch.policy import load_policy_text
from driftwatch.policy.explain import describe_tiers
from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline

CONNECTOR = """apiVersion: driftwatch/v1
kind: Connector
metadata: {name: channels}
source:
  kind: file
  streams:
    predictions:
      paths: [predictions.jsonl]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features:
          x: {path: x, type: numeric}
          purpose: {path: purpose, type: categorical}
        score: score
SEGMENT"""
POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: channels}
model: {name: credit, reference: reference.parquet}
reference: {segment: channel, label: null, decision: null}
window: {kind: count, pane: 3000}
signals:
  - detector: psi
    thresholds: {mild: {calibrated: {false_alarm_rate: 0.01}}}
detectors: {calibration: {draws: 300}}
segments: {top_k: 2, min_events: 300}
persistence: 1
"""
PURPOSES = ("car", "home", "boat")


def _rows(rng: np.random.Generator, n: int, web_mix: tuple[float, ...]) -> pd.DataFrame:
    ch = rng.choice(["web", "branch", "broker"], n, p=[0.5, 0.4, 0.1])
    purpose = rng.choice(PURPOSES, n, p=[0.5, 0.3, 0.2])
    web = ch == "web"
    purpose[web] = rng.choice(PURPOSES, int(web.sum()), p=web_mix)
    return pd.DataFrame({"x": rng.normal(size=n), "purpose": purpose, "channel": ch,
                         "score": rng.uniform(size=n)})


def write_recording(d: Path) -> Path:
    """Reference, recording (a quiet window, then web alone moves), connector and policy
    under ``d``; returns ``d``."""
    rng = np.random.default_rng(11)
    _rows(rng, 12_000, (0.5, 0.3, 0.2)).to_parquet(d / "reference.parquet")
    quiet = _rows(rng, 3000, (0.5, 0.3, 0.2))
    moved = _rows(rng, 3000, (0.8, 0.1, 0.1))  # web only: the whole mix moves a little
    live = pd.concat([quiet, moved], ignore_index=True)
    with (d / "predictions.jsonl").open("wb") as fh:
        for i, r in enumerate(live.itertuples(index=False)):
            fh.write(orjson.dumps({"id": f"a{i}", "ts": 1_700_000_000 + i, "x": r.x,
                                   "purpose": r.purpose, "channel": r.channel,
                                   "score": r.score}) + b"\n")
    (d / "channels.yaml").write_text(CONNECTOR.replace("SEGMENT", "        segment: channel\n"))
    (d / "policy.yaml").write_text(POLICY)
    return d


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_recording(tmp_path_factory.mktemp("channels"))


def test_replay_names_the_channel_in_timeline_and_report(recording: Path) -> None:
    out = recording / "out"
    replay(recording / "channels.yaml", [recording / "predictions.jsonl"], out,
           policy=recording / "policy.yaml", reference=recording / "reference.parquet",
           progress=False)
    quiet, moved = read_timeline(out / "timeline.jsonl")
    assert quiet["decision"]["tier"] == "none"
    reasons = moved["decision"]["reasons"]
    assert moved["decision"]["tier"] == "mild"
    assert {(r["feature"], r.get("segment")) for r in reasons} >= {("purpose", "web")}
    assert all(r.get("segment") != "branch" for r in reasons)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="segments"' in html and "Segments that moved" in html


def test_a_segment_column_without_a_segment_field_is_refused(recording: Path) -> None:
    conn = parse_connector(CONNECTOR.replace("SEGMENT", ""), file="c.yaml",
                           base_dir=recording)
    policy = load_policy_text(POLICY, file=str(recording / "policy.yaml"))
    with pytest.raises(ConnectorError, match="no stream maps a segment field"):
        check_reference(policy, connector=conn, reference=recording / "reference.parquet")


def test_policy_explain_shows_the_segment_settings() -> None:
    lines = describe_tiers(load_policy_text(POLICY, file="p.yaml"))
    (seg,) = [x for x in lines if x.startswith("segments:")]
    assert "2 most frequent values of reference column 'channel'" in seg
    assert "300 events" in seg
    plain = POLICY.replace("reference: {segment: channel, label: null, decision: null}\n", "")
    (off,) = [x for x in describe_tiers(load_policy_text(plain, file="p.yaml"))
              if x.startswith("segments:")]
    assert off.startswith("segments: none")


def test_the_python_api_splits_a_dataframe_by_segment(recording: Path) -> None:
    policy = load_policy_text(POLICY, file="p.yaml")
    mon = Monitor.from_reference(pd.read_parquet(recording / "reference.parquet"),
                                 policy=policy)
    rng = np.random.default_rng(12)
    v = mon.assess(_rows(rng, 3000, (0.8, 0.1, 0.1)))
    assert ("purpose", "web") in {(r.feature, r.segment) for r in v.reasons}
    rows = v.signals[(v.signals["signal"] == "psi") & (v.signals["feature"] == "purpose")]
    # broker (10%, in other) sits near min_events: measured or not, nothing else is
    assert {"web", "branch"} <= set(rows["segment"].dropna()) <= {"web", "branch", "other"}
    assert rows["segment"].isna().sum() == 1  # and the whole window's row
    assert rows.set_index("segment", drop=False).loc["web", "tier"] == "mild"
    with pytest.raises(DataFrameError, match="segment column 'channel'"):
        mon.assess(_rows(rng, 3000, (0.5, 0.3, 0.2)).drop(columns="channel"))


def test_policy_explain_with_a_reference_prints_each_segments_own_levels(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from driftwatch.cli import main

    code = main(["policy", "explain", str(recording / "policy.yaml"), "--reference",
                 str(recording / "reference.parquet")])
    out = capsys.readouterr().out
    assert code == 0
    lines = {ln.split("'")[1]: ln for ln in out.splitlines() if ln.startswith("#   segment '")}
    assert set(lines) <= {"web", "branch", "other"} and {"web", "branch"} <= set(lines)
    web = lines["web"]
    share = re.search(r"about (\d+) events a window", web)
    assert share and 1400 < int(share[1]) < 1650 and "psi at 0.01: x " in web  # half of 3000
    level = float(web.split("purpose ")[1].rstrip("."))
    whole_at = re.search(r"at 3000 events: x [\d.e-]+, purpose ([\d.e-]+)\)", out)
    assert whole_at, out
    whole = float(whole_at[1])
    assert level > whole > 0  # a segment's level, at its own smaller size, sits higher
