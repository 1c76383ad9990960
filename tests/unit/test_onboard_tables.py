"""A user's own tables: Parquet timestamp columns as event time, and a label that is not
named like one but arrives only with the outcomes.

pandas writes timestamps as nanoseconds, often with a zone; both ``init`` and the replay
must read them (the replay used to refuse the whole file: a cast to microseconds "would
lose data").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.eventtime import event_times

from ._cli import run_cli as _cli

START = pd.Timestamp("2025-03-01", tz="UTC")


def _tables(tmp: Path, n: int = 3000, tz: str | None = "UTC") -> None:
    rng = np.random.default_rng(3)

    def frame(k: int) -> pd.DataFrame:
        ltv = rng.beta(5, 3, k)
        fico = rng.normal(700, 50, k).round()
        pd_ = 1 / (1 + np.exp(-(-3 + 4 * (ltv - 0.6) - (fico - 700) / 50)))
        return pd.DataFrame({"ltv": ltv, "fico": fico, "state": rng.choice(["CA", "NY"], k),
                             "pd": pd_.round(5), "charged_off": rng.uniform(size=k) < pd_})

    frame(n).to_parquet(tmp / "reference.parquet")
    live = frame(n)
    # nanosecond ticks that a cast to microseconds would have to round
    offsets = np.sort(rng.uniform(0, 10 * 86400, n)) * 1e9 + 123
    t = START.tz_convert(tz) if tz else START.tz_localize(None)
    live.insert(0, "origination_time", t + pd.to_timedelta(offsets.astype(np.int64), unit="ns"))
    live.insert(0, "loan_id", np.arange(n) + 10**9)
    live.drop(columns=["charged_off"]).to_parquet(tmp / "live.parquet")
    out = live[["loan_id", "charged_off"]].copy()
    out["resolved_at"] = live["origination_time"] + pd.Timedelta(days=3)
    out.to_parquet(tmp / "outcomes.parquet")


@pytest.mark.parametrize("tz", ["UTC", "Europe/Paris", None])
def test_init_and_replay_read_parquet_timestamps_and_find_the_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    tz: str | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    _tables(tmp_path, tz=tz)
    code, out, err = _cli(["init", "--reference", "reference.parquet", "--sample",
                           "live.parquet", "--outcomes", "outcomes.parquet", "--model", "loans",
                           "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "event time: origination_time" in out and "reads as event time (timestamps)" in out
    assert "label: charged_off" in out and "outcomes time: resolved_at" in out
    conn = yaml.safe_load((tmp_path / "c.yaml").read_text())
    streams = conn["source"]["streams"]
    assert streams["predictions"]["fields"]["event_time"] == {"path": "origination_time",
                                                              "unit": "auto"}
    assert streams["outcomes"]["fields"]["event_time"]["path"] == "resolved_at"
    assert streams["outcomes"]["fields"]["label"]["path"] == "charged_off"
    code, out, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                           "live.parquet", "outcomes.parquet", "--out", "out"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "0 bad records" in out, out
    lines = (tmp_path / "out" / "timeline.jsonl").read_text().splitlines()
    starts = [w["start_time"] for w in map(json.loads, lines) if w.get("start_time")]
    first = min(starts)
    # naive timestamps are UTC; a zone moves no instant
    assert abs(first - START.timestamp()) < 86400, (first, summary)


def test_a_label_only_the_outcomes_carry_and_a_second_one_is_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _tables(tmp_path)
    ref = pd.read_parquet("reference.parquet")
    ref["written_off"] = ~ref["charged_off"]
    ref.to_parquet("reference.parquet")
    out = pd.read_parquet("outcomes.parquet")
    out["written_off"] = ~out["charged_off"]
    out.to_parquet("outcomes.parquet")
    args = ["init", "--reference", "reference.parquet", "--sample", "live.parquet",
            "--outcomes", "outcomes.parquet", "--model", "m", "--connector-out", "c.yaml",
            "--policy-out", "p.yaml"]
    code, _, err = _cli(args, capsys)
    assert code != 0 and "charged_off, written_off" in err and "--label-field" in err
    code, _, err = _cli([*args, "--label-field", "charged_off", "--ignore", "written_off"],
                        capsys)
    assert code == 0, err


def test_without_outcomes_the_missing_label_column_gets_the_flag_to_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _tables(tmp_path)
    code, _, err = _cli(["init", "--reference", "reference.parquet", "--sample",
                         "live.parquet", "--model", "m", "--connector-out", "c.yaml",
                         "--policy-out", "p.yaml"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "charged_off" in err and "--label-field charged_off" in err


@settings(max_examples=60, deadline=None)
@given(unit=st.sampled_from(["s", "ms", "us", "ns"]), tz=st.sampled_from([None, "UTC",
       "America/New_York"]), ticks=st.lists(st.one_of(st.none(), st.integers(-2**50, 2**50)),
                                            max_size=20))
def test_timestamp_columns_of_every_unit_read_as_seconds(unit: str, tz: str | None,
                                                         ticks: list[int | None]) -> None:
    per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    arr = pa.array(ticks, type=pa.int64()).cast(pa.timestamp(unit, tz=tz))
    secs, missing, bad = event_times(arr, "auto")
    assert missing.tolist() == [t is None for t in ticks]
    assert not bad.any()
    for got, t in zip(secs.tolist(), ticks, strict=True):
        if t is None:
            assert np.isnan(got)
        else:  # the exact seconds, to float precision
            assert got == pytest.approx(t / per, rel=1e-15, abs=1e-9)


def _unnamed_times(tmp: Path, n: int = 400, second: bool = False) -> None:
    rng = np.random.default_rng(4)
    ref = pd.DataFrame({"amt": rng.lognormal(4, 1, n).round(2),
                        "prob_fraud": rng.beta(1, 30, n).round(4),
                        "is_fraud": (rng.uniform(size=n) < 0.05).astype(int)})
    ref.to_csv(tmp / "ref.csv", index=False)
    at = pd.Timestamp("2025-05-01") + pd.to_timedelta(np.arange(n) * 30, unit="s")
    with open(tmp / "tx.jsonl", "w") as f:
        for i in range(n):
            rec = {"txn": {"id": 500 + i, "at": at[i].strftime("%Y-%m-%d %H:%M:%S")},
                   "amt": float(ref.amt[i]), "prob_fraud": float(ref.prob_fraud[i])}
            if second:
                rec["txn"]["settled"] = (at[i] + pd.Timedelta(days=1)).isoformat()
            f.write(json.dumps(rec) + "\n")
    pd.DataFrame({"txn_id": [str(500 + i) for i in range(n)], "is_fraud": ref.is_fraud,
                  "reported": [(t + pd.Timedelta(days=9)).isoformat() for t in at]}
                 ).to_csv(tmp / "reports.csv", index=False)


def test_times_not_named_like_one_are_found_by_their_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _unnamed_times(tmp_path)
    args = ["init", "--reference", "ref.csv", "--sample", "tx.jsonl", "--outcomes",
            "reports.csv", "--model", "fraud", "--connector-out", "c.yaml", "--policy-out",
            "p.yaml"]
    code, out, err = _cli(args, capsys)
    assert code == 0, err
    assert "event time: txn.at" in out and "outcomes time: reported" in out
    code, out, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                           "tx.jsonl", "reports.csv", "--out", "out"], capsys)
    assert code == 0, err
    labels = json.loads((tmp_path / "out" / "summary.json").read_text())["labels"]
    assert labels["joined"] == 400  # integer ids in the stream, text ids in the CSV


def test_two_fields_that_read_as_times_are_named_not_guessed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _unnamed_times(tmp_path, second=True)
    args = ["init", "--reference", "ref.csv", "--sample", "tx.jsonl", "--model", "fraud",
            "--connector-out", "c.yaml", "--policy-out", "p.yaml", "--ignore", "is_fraud"]
    code, _, err = _cli(args, capsys)
    assert code != 0 and "txn.at" in err and "txn.settled" in err and "--time-field" in err
    code, out, err = _cli([*args, "--time-field", "txn.settled"], capsys)
    assert code == 0 and "event time: txn.settled" in out, err


def _camel(tmp: Path, n: int = 3000, separates: bool = True) -> None:
    rng = np.random.default_rng(6)
    bad = rng.uniform(size=n) < 0.1
    # P(good): high for good rows when it separates, noise when it does not
    score = np.where(bad, rng.beta(2, 5, n), rng.beta(5, 2, n)) if separates else rng.uniform(
        size=n)
    ref = pd.DataFrame({"Income": rng.lognormal(10, 0.5, n).round(0),
                        "Region Code": rng.choice(["R1", "R2"], n), "Score": score.round(4),
                        "Bad": np.where(bad, "Y", "N")})
    ref.to_csv(tmp / "ref.csv", index=False)
    live = ref.drop(columns=["Bad"]).copy()
    live.insert(0, "AppId", [f"X-{i}" for i in range(n)])
    live.insert(1, "Timestamp", 1_746_000_000_000 + np.arange(n) * 60_000)
    live.to_json(tmp / "live.jsonl", orient="records", lines=True)
    pd.DataFrame({"AppId": live.AppId, "Bad": ref.Bad,
                  "ClosedAt": live.Timestamp + 30 * 86_400_000}).to_json(
        tmp / "outcomes.jsonl", orient="records", lines=True)


@pytest.mark.parametrize("separates", [True, False])
def test_camel_case_names_and_a_score_the_labels_cannot_orient(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    separates: bool,
) -> None:
    monkeypatch.chdir(tmp_path)
    _camel(tmp_path, separates=separates)
    code, out, err = _cli(["init", "--reference", "ref.csv", "--sample", "live.jsonl",
                           "--outcomes", "outcomes.jsonl", "--model", "m", "--connector-out",
                           "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "outcomes time: ClosedAt" in out and "reads as event time (ms)" in out
    score_line = next(x for x in out.splitlines() if x.startswith("score: Score ")
                      and "mean" in x)
    if separates:  # the labels say it plainly: P(good), with the AUC for bad rows
        from sklearn.metrics import roc_auc_score

        ref = pd.read_csv("ref.csv")
        auc = roc_auc_score(ref.Bad == "Y", ref.Score)
        assert "P(good)" in score_line and f"(AUC {auc:.2f})" in score_line, score_line
    else:  # a coin toss is not evidence: the usual P(bad), said so
        assert "P(bad)" in score_line and "too close to tell" in score_line, score_line


def test_outcomes_after_the_last_full_window_get_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """A stream ending on a pane boundary, its outcomes after it: the window of those
    outcomes alone was written without a time, and the daemon's report then failed
    sorting the timeline (None against a float)."""
    from driftwatch.replay.run import summarise

    monkeypatch.chdir(tmp_path)
    _unnamed_times(tmp_path, n=2000)
    code, _, err = _cli(["init", "--reference", "ref.csv", "--sample", "tx.jsonl",
                         "--outcomes", "reports.csv", "--model", "fraud", "--connector-out",
                         "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "pane: 1000" in (tmp_path / "p.yaml").read_text()  # two full windows, then none
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "tx.jsonl", "reports.csv", "--out", "out"], capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (tmp_path / "out" / "timeline.jsonl").read_text()
               .splitlines()]
    last = records[-1]
    assert last["n_events"] == 0 and last["n_labelled"] > 0  # the outcomes-only window
    last_prediction = pd.Timestamp("2025-05-01") + pd.Timedelta(seconds=1999 * 30)
    assert all(r["start_time"] is not None and r["end_time"] is not None for r in records)
    assert last["end_time"] >= last_prediction.timestamp()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["last_event"] is not None
    # a timeline an older version wrote, with a window without a time, still summarises
    from driftwatch.connectors.config import load_connector
    from driftwatch.policy.loader import load_policy
    from driftwatch.replay.run import build_monitor

    monitor = build_monitor(load_policy(tmp_path / "p.yaml"), reference=tmp_path / "ref.csv",
                            connector=load_connector(tmp_path / "c.yaml"))
    old = [*records[:-1], {**last, "start_time": None, "end_time": None}]
    assert summarise(old, monitor)["windows"] == len(records)
