"""Five data shapes go end to end: ``driftwatch init`` -> ``policy check`` -> ``replay``
-> report, through the command line, on data generated here (seeded).

Each live stream is drawn from the reference's own distribution, so the run must stay
quiet on the score and find the model as good as on the reference; what each shape
exercises (booleans, nesting, a 1,000-level categorical, P(good), no outcome times) is
asserted on the files ``init`` wrote and on the replay's summary and timeline.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml

from driftwatch.cli import main

T0 = 1_700_000_000


def _credit(rng: np.random.Generator, n: int, *, extra: int = 0) -> pd.DataFrame:
    """Applicants whose default depends on income and a flag; ``extra`` more features."""
    income = rng.lognormal(10.5, 0.4, n)
    flag = rng.integers(0, 2, n)
    has_phone = rng.random(n) < 0.7
    region = rng.choice(["north", "south", "east", "west"], n, p=[.4, .3, .2, .1])
    logit = -1.5 - 1.2 * (np.log(income) - 10.5) / 0.4 + 0.8 * flag
    p_bad = 1 / (1 + np.exp(-logit))
    df = pd.DataFrame({"income": income.round(2), "is_homeowner": flag,
                       "has_phone": has_phone, "region": region})
    for j in range(extra):
        df[f"f{j:02d}"] = rng.normal(0, 1, n).round(4) if j % 3 else rng.choice(
            ["a", "b", "c"], n)
    df["score"] = p_bad.round(5)
    df["label"] = (rng.random(n) < p_bad).astype(int)
    df["decision"] = np.where(p_bad < 0.5, "approve", "decline")
    return df


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _end_to_end(tmp: Path, capsys: pytest.CaptureFixture[str], init: list[str],
                inputs: list[str]) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    code, out, err = _run(["init", *init, "--model", "m", "--pane", "500",
                           "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    code, checked, err = _run(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err
    code, _, err = _run(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", *inputs,
                         "-o", "out"], capsys)
    assert code == 0, err
    summary = orjson.loads((tmp / "out" / "summary.json").read_bytes())
    timeline = [orjson.loads(x) for x in (tmp / "out" / "timeline.jsonl").read_bytes()
                .splitlines()]
    html = (tmp / "out" / "report.html").read_text()
    assert "<html" in html.lower() and summary["windows"] == len(timeline) > 0
    assert summary["bad_records"] == 0, summary["bad_by_reason"]
    return out, summary, timeline


def _stream(df: pd.DataFrame, start: int = 0) -> pd.DataFrame:
    live = df.drop(columns=["label"]).copy()
    live.insert(0, "id", [f"e{start + i}" for i in range(len(df))])
    live.insert(1, "ts", T0 + 60 * np.arange(len(df)))
    return live


def _outcomes(df: pd.DataFrame, *, times: bool = True) -> pd.DataFrame:
    out = pd.DataFrame({"id": [f"e{i}" for i in range(len(df))], "label": df["label"]})
    out = out[df["decision"].to_numpy() == "approve"]
    if times:
        out.insert(1, "outcome_ts", T0 + 60 * out.index.to_numpy() + 30 * 86400)
        out = out.sort_values("outcome_ts")
    return out


def _features(path: str) -> dict[str, Any]:
    doc = yaml.safe_load(Path(path).read_text())
    return doc["source"]["streams"]["predictions"]["fields"]["features"]


def _quiet_score(timeline: list[dict[str, Any]]) -> None:
    for rec in (r for r in timeline if r["n_events"]):  # not the labels-only windows
        psi = [s["value"] for s in rec["signals"] if s["signal"] == "score_psi"]
        assert psi and psi[0] < 0.1, (rec["window_id"], psi)


def test_flat_csv_with_booleans_and_two_level_flags(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    ref, live = _credit(rng, 3000), _credit(rng, 3000)
    ref.to_csv("reference.csv", index=False)
    _stream(live).to_csv("predictions.csv", index=False)
    _outcomes(live).to_csv("outcomes.csv", index=False)
    out, summary, timeline = _end_to_end(
        tmp_path, capsys, ["--reference", "reference.csv", "--sample", "predictions.csv",
                           "--outcomes", "outcomes.csv"], ["predictions.csv", "outcomes.csv"])
    feats = _features("c.yaml")
    assert feats["has_phone"]["type"] == feats["is_homeowner"]["type"] == "categorical"
    assert feats["income"]["type"] == "numeric"
    assert "has_phone: categorical" in out and "boolean" in out
    assert "integer with 2 distinct values" in out
    assert summary["labels"]["joined"] == len(_outcomes(live))
    _quiet_score(timeline)
    # the levels the reference and the live CSV spell differently (True / true) still meet
    unseen = [s["value"] for r in timeline for s in r["signals"]
              if s["signal"] == "new_category_rate" and s["feature"] == "has_phone"]
    assert unseen and max(unseen) == 0.0


def test_nested_json_with_fifty_features(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(2)
    ref, live = _credit(rng, 2000, extra=46), _credit(rng, 2000, extra=46)
    ref.to_parquet("reference.parquet")
    names = [c for c in ref.columns if c not in ("score", "label", "decision")]
    assert len(names) == 50
    with gzip.open("predictions.jsonl.gz", "wb") as fh:
        for i, row in enumerate(_stream(live).to_dict(orient="records")):
            rec = {"meta": {"request_id": row["id"], "at": row["ts"]},
                   "applicant": {n: row[n] for n in names[:25]},
                   "bureau": {"report": {n: row[n] for n in names[25:]}},
                   "model": {"score": row["score"], "version": "v1"},
                   "decision": row["decision"]}
            fh.write(orjson.dumps(rec, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
            assert i < len(live)
    with open("outcomes.jsonl", "wb") as fh:
        for row in _outcomes(live).to_dict(orient="records"):
            rec = {"meta": {"request_id": row["id"]}, "result": {"label": row["label"]},
                   "at": row["outcome_ts"]}
            fh.write(orjson.dumps(rec, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    out, summary, timeline = _end_to_end(
        tmp_path, capsys, ["--reference", "reference.parquet", "--sample",
                           "predictions.jsonl.gz", "--outcomes", "outcomes.jsonl",
                           "--time-field", "meta.at"],
        ["predictions.jsonl.gz", "outcomes.jsonl"])
    feats = _features("c.yaml")
    assert len(feats) == 50
    assert feats["f30"]["path"] == "bureau.report.f30"
    assert feats["income"]["path"] == "applicant.income"
    assert "id: meta.request_id" in out
    assert summary["labels"]["joined"] == len(_outcomes(live))
    assert len(yaml.safe_load(Path("p.yaml").read_text())["model"]["features"]) == 50
    _quiet_score(timeline)


def test_parquet_with_a_thousand_level_categorical(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    merchants = np.array([f"m{i:04d}" for i in range(1000)])
    weights = 1 / np.arange(1, 1001)
    weights /= weights.sum()
    ref, live = _credit(rng, 4000), _credit(rng, 3000)
    # the reference holds every level (the long tail too), so live draws are never unseen
    ref["merchant"] = np.concatenate([merchants, rng.choice(merchants, len(ref) - 1000,
                                                            p=weights)])
    live["merchant"] = rng.choice(merchants, len(live), p=weights)
    assert ref["merchant"].nunique() == 1000
    ref.to_parquet("reference.parquet")
    _stream(live).to_parquet("predictions.parquet")
    _outcomes(live).to_parquet("outcomes.parquet")
    out, summary, timeline = _end_to_end(
        tmp_path, capsys, ["--reference", "reference.parquet", "--sample",
                           "predictions.parquet", "--outcomes", "outcomes.parquet"],
        ["predictions.parquet", "outcomes.parquet"])
    assert _features("c.yaml")["merchant"]["type"] == "categorical"
    assert f"text with {ref['merchant'].nunique()} levels" in out
    assert summary["events"] == len(live)
    psi = [s["value"] for r in timeline for s in r["signals"]
           if s["signal"] == "psi" and s["feature"] == "merchant"]
    assert psi and max(psi) < 0.25  # same distribution: top 20 + other stay put
    unseen = [s["value"] for r in timeline for s in r["signals"]
              if s["signal"] == "new_category_rate" and s["feature"] == "merchant"]
    assert unseen and max(unseen) == 0.0


def test_p_good_score_with_string_labels(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(4)

    def shape(df: pd.DataFrame) -> pd.DataFrame:
        df = df.rename(columns={"score": "p_good", "label": "outcome"})
        df["p_good"] = (1 - df["p_good"]).round(5)
        df["outcome"] = np.where(df["outcome"] == 1, "bad", "good")
        df["decision"] = np.where(df["decision"] == "approve", "A", "D")
        return df

    ref, live = shape(_credit(rng, 3000)), shape(_credit(rng, 3000))
    ref.to_csv("reference.csv", index=False)
    stream = live.drop(columns=["outcome"])
    stream.insert(0, "id", [f"e{i}" for i in range(len(live))])
    stream.insert(1, "ts", T0 + 60 * np.arange(len(live)))
    stream.to_json("predictions.jsonl", orient="records", lines=True)
    approved = live["decision"].to_numpy() == "A"
    pd.DataFrame({"id": stream["id"][approved], "outcome_ts": stream["ts"][approved] + 86400,
                  "outcome": live["outcome"][approved]}).to_json(
        "outcomes.jsonl", orient="records", lines=True)
    out, summary, timeline = _end_to_end(
        tmp_path, capsys, ["--reference", "reference.csv", "--sample", "predictions.jsonl",
                           "--outcomes", "outcomes.jsonl"],
        ["predictions.jsonl", "outcomes.jsonl"])
    pol = yaml.safe_load(Path("p.yaml").read_text())
    assert pol["reference"]["score_is"] == "p_good"
    assert pol["reference"]["label"] == {"column": "outcome", "bad": ["bad"], "good": ["good"]}
    assert pol["reference"]["decision"]["approve"] == ["A"]
    assert "score: p_good" in out and "P(good)" in out
    assert summary["labels"]["joined"] == int(approved.sum())
    _quiet_score(timeline)  # flipped on both sides, or the score distribution would mirror
    auc = [s["value"] for r in timeline for s in r["signals"] if s["signal"] == "auc"
           and s["value"] is not None]
    assert auc and min(auc) > 0.6  # P(bad) ranks the bad ones first
    # mostly approved (low-risk) applicants: P(bad) is low on average, P(good) would be high
    assert all(r["score"]["mean"] < 0.5 for r in timeline if r["n_events"])


def test_outcomes_without_timestamps_join_by_id(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    ref, live = _credit(rng, 3000), _credit(rng, 3000)
    ref.to_csv("reference.csv", index=False)
    _stream(live).to_csv("predictions.csv", index=False)
    outs = _outcomes(live, times=False)
    assert list(outs.columns) == ["id", "label"]
    outs.sample(frac=1.0, random_state=0).to_csv("outcomes.csv", index=False)
    out, summary, timeline = _end_to_end(
        tmp_path, capsys, ["--reference", "reference.csv", "--sample", "predictions.csv",
                           "--outcomes", "outcomes.csv"], ["predictions.csv", "outcomes.csv"])
    conn = yaml.safe_load(Path("c.yaml").read_text())
    assert conn["source"]["streams"]["outcomes"]["fields"]["event_time"] == {
        "source": "arrival"}
    assert "outcomes time: arrival" in out
    assert summary["labels"]["joined"] == len(outs)
    assert summary["labels"]["orphan_outcomes"] == 0
    assert sum(r["n_labelled"] for r in timeline) == len(outs)
