"""One model's score written three ways (a probability, scorecard points, log-odds), in the
stream and the reference: replay reads each as the same P(bad), so the score's signals
agree window by window."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch.connectors.config import parse_connector
from driftwatch.errors import ConnectorError
from driftwatch.onboard.consistency import check_reference
from driftwatch.policy import load_policy_text
from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline

from ._csvconn import one_stream


def _text(score: str) -> str:
    return one_stream("predictions.jsonl", (
        "event_id: id", "event_time: {path: ts, unit: s}", "features:",
        "  x: {path: x, type: numeric}", f"score: {score}"))


POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: t}
model: {name: credit, reference: reference.csv}
reference: {label: null, decision: null}
window: {kind: count, pane: 1000}
signals:
  - detector: score_psi
    thresholds: {mild: 0.1}
  - detector: mean_shift
    thresholds: {mild: 0.5}
persistence: 1
"""
BASE, ODDS, PDO = 600.0, 50.0, 20.0
SCALES = {
    "probability": "score",
    "points": f"{{path: score, points: {{base: {BASE:g}, odds: {ODDS:g}, pdo: {PDO:g}}}}}",
    "log_odds": "{path: score, log_odds: true}",
}


def written(p: np.ndarray, scale: str) -> np.ndarray:
    """P(bad) ``p`` as the model writes it: by the scorecard's definition (odds good:bad
    ``ODDS`` at ``BASE``, doubling every ``PDO``), or as ln(p / (1 - p))."""
    if scale == "points":
        return BASE + PDO * np.log2((1 - p) / p / ODDS)
    if scale == "log_odds":
        return np.log(p / (1 - p))
    return p


def run(d: Path, stream: str, reference: str) -> list[dict]:
    """Replay the same draws with the stream's score in ``stream``'s scale and the
    reference's in ``reference``'s; the timeline."""
    rng = np.random.default_rng(5)
    ref_p = rng.beta(2, 8, 5000)
    pd.DataFrame({"x": rng.normal(size=5000), "score": written(ref_p, reference)}).to_csv(
        d / "reference.csv", index=False)
    live_p = np.concatenate([rng.beta(2, 8, 1500), rng.beta(3, 8, 1500)])  # riskier later
    live = written(live_p, stream)
    x = rng.normal(size=3000)
    with (d / "predictions.jsonl").open("wb") as fh:
        for i in range(3000):
            fh.write(orjson.dumps({"id": f"a{i}", "ts": 1_700_000_000 + i, "x": float(x[i]),
                                   "score": float(live[i])}) + b"\n")
    (d / "c.yaml").write_text(_text(SCALES[stream]))
    (d / "p.yaml").write_text(POLICY)
    replay(d / "c.yaml", [d / "predictions.jsonl"], d / "out", policy=d / "p.yaml",
           reference=d / "reference.csv",
           progress=False, report=False)
    return read_timeline(d / "out" / "timeline.jsonl")


def score_signals(timeline: list[dict]) -> list[dict[str, float]]:
    return [{s["signal"]: s["value"] for s in w["signals"]
             if s["signal"] in ("score_psi", "mean_shift")} | {"mean": w["score"]["mean"]}
            for w in timeline]


@pytest.mark.parametrize(("stream", "reference"), [
    ("points", "points"), ("log_odds", "log_odds"),
    ("points", "probability"),  # a reference written as probabilities stays so
])
def test_a_scaled_score_gives_the_probabilitys_score_signals(
        tmp_path: Path, stream: str, reference: str) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "s").mkdir()
    want = score_signals(run(tmp_path / "p", "probability", "probability"))
    got = score_signals(run(tmp_path / "s", stream, reference))
    assert len(want) == 3 and want[-1]["score_psi"] > 0.1  # the riskier windows move
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys()
        for k in w:
            assert g[k] == pytest.approx(w[k], rel=1e-6, abs=1e-9), k


def test_policy_check_refuses_points_read_as_p_good(tmp_path: Path) -> None:
    pd.DataFrame({"x": [1.0, 2.0], "score": [610.0, 590.0]}).to_csv(
        tmp_path / "reference.csv", index=False)
    policy = load_policy_text(POLICY.replace("reference: {", "reference: {score_is: p_good, "),
                              file="p.yaml")
    conn = parse_connector(_text(SCALES["points"]), file="c.yaml")
    with pytest.raises(ConnectorError, match=r"^c\.yaml:14:30: scorecard points are read as"):
        check_reference(policy, connector=conn, reference=tmp_path / "reference.csv")


def test_the_reference_reads_its_points_as_the_probabilities_they_are(tmp_path: Path) -> None:
    from driftwatch.policy.levels import load_reference
    from driftwatch.scorescale import ScoreScale

    p = np.random.default_rng(3).beta(2, 8, 2000)
    pd.DataFrame({"x": p, "score": p}).to_csv(tmp_path / "prob.csv", index=False)
    pd.DataFrame({"x": p, "score": written(p, "points")}).to_csv(tmp_path / "pts.csv",
                                                                 index=False)
    policy = load_policy_text(POLICY, file="p.yaml")
    card = ScoreScale.points(base=BASE, odds=ODDS, pdo=PDO)
    want = load_reference(tmp_path / "prob.csv", policy, score_scale=card)
    got = load_reference(tmp_path / "pts.csv", policy, score_scale=card)
    for key in ("coarse_edges", "fine_edges"):
        assert np.allclose(got.layout.score.to_dict()[key], want.layout.score.to_dict()[key])
    assert got.layout.score_center == pytest.approx(want.layout.score_center, rel=1e-9)
    assert "score_scale" in got.meta and "score_scale" not in want.meta  # as read


def test_policy_explain_reads_the_reference_as_the_connector_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from driftwatch.cli import main

    p = np.random.default_rng(3).beta(2, 8, 2000)
    pd.DataFrame({"x": p, "score": written(p, "points")}).to_csv(
        tmp_path / "reference.csv", index=False)
    (tmp_path / "c.yaml").write_text(_text(SCALES["points"]))
    bad = "{path: score, points: {base: 600, odds: 50, pdo: 0}}"
    (tmp_path / "bad.yaml").write_text(_text(bad))
    (tmp_path / "p.yaml").write_text(POLICY)
    ref = str(tmp_path / "reference.csv")
    # without --reference, the policy's own: read as replay opens it, as `policy check` does
    monkeypatch.chdir(tmp_path)
    assert main(["policy", "explain", "p.yaml", "-c", "c.yaml"]) == 0
    from_policy = capsys.readouterr().out
    assert main(["policy", "explain", "p.yaml", "-c", "c.yaml", "--reference", ref]) == 0
    assert from_policy == capsys.readouterr().out
    assert main(["policy", "explain", str(tmp_path / "p.yaml"), "--reference", ref, "-c",
                 str(tmp_path / "bad.yaml")]) == 2
    assert "bad.yaml:14:" in capsys.readouterr().err
    assert main(["policy", "explain", str(tmp_path / "p.yaml"), "--reference", ref, "-c",
                 str(tmp_path / "c.yaml")]) == 0
