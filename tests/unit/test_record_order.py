"""Predictions that carry no time (``event_time: {source: order}``): a public credit table
(Taiwan's 'default of credit card clients', German credit, Give Me Some Credit) replayed
in file order, in count windows, its outcomes joined by id where they arrive; ``init``
proposes it when no field is named like or reads as a time, and every combination that
cannot work is refused at its line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.config import load_connector
from driftwatch.connectors.merge import EventMerger
from driftwatch.errors import ConnectorError
from driftwatch.pipeline.intake import numbered
from driftwatch.policy.loader import load_policy_text
from driftwatch.replay.timeline import read_timeline
from driftwatch.testing.timelines import assert_same_windows

from ._cli import run_cli

PAY = ["PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6"]
LABEL = "default payment next month"


def _taiwan(n: int, seed: int) -> pd.DataFrame:
    """A table shaped like UCI's Taiwan credit-card defaults: no time column."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"ID": np.arange(1, n + 1)})
    df["LIMIT_BAL"] = rng.gamma(2.0, 80_000, n).round(-4)
    df["SEX"] = rng.choice([1, 2], n)
    df["EDUCATION"] = rng.choice([1, 2, 3, 4], n, p=[.35, .45, .15, .05])
    df["MARRIAGE"] = rng.choice([1, 2, 3], n, p=[.45, .5, .05])
    df["AGE"] = rng.integers(21, 75, n)
    for k in PAY:
        df[k] = rng.choice([-2, -1, 0, 1, 2, 3], n, p=[.1, .2, .5, .1, .07, .03])
    for i in range(1, 7):
        df[f"BILL_AMT{i}"] = rng.lognormal(10, 1.2, n).round(0)
    for i in range(1, 7):
        df[f"PAY_AMT{i}"] = rng.lognormal(8, 1.5, n).round(0)
    p = 1 / (1 + np.exp(-(-1.5 + 0.6 * df["PAY_0"] - 2e-6 * df["LIMIT_BAL"])))
    df[LABEL] = (rng.random(n) < p).astype(int)
    return df


def _split(tmp: Path, n: int = 6000, seed: int = 1, drift: bool = True) -> None:
    """train.csv (with the label), scored.csv (score, no label; its second half drifted)
    and outcomes.csv (ID and label)."""
    df = _taiwan(2 * n, seed)
    df.iloc[:n].to_csv(tmp / "train.csv", index=False)
    scored = df.iloc[n:].copy()
    scored["score"] = (1 / (1 + np.exp(-(-1.5 + 0.6 * scored["PAY_0"])))).round(4)
    if drift:  # the second half: older applicants, three times the credit limit
        half = scored.index[n // 2:]
        scored.loc[half, "AGE"] += 20
        scored.loc[half, "LIMIT_BAL"] *= 3
    scored.drop(columns=[LABEL]).to_csv(tmp / "scored.csv", index=False)
    scored[["ID", LABEL]].to_csv(tmp / "outcomes.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "train.csv"), "--sample",
                    str(tmp / "scored.csv"), "--outcomes", str(tmp / "outcomes.csv"),
                    "--model", "taiwan", "--connector-out", str(tmp / "c.yaml"),
                    "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _replay(tmp: Path, capsys: pytest.CaptureFixture[str], out: str, batch: int
            ) -> tuple[int, str, str]:
    return run_cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                    str(tmp / "p.yaml"), "-i", str(tmp / "scored.csv"), "-i",
                    str(tmp / "outcomes.csv"), "--out", str(tmp / out), "--batch-size",
                    str(batch), "--quiet"], capsys)


def test_a_taiwan_table_without_times_runs_init_check_explain_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the policy names train.csv as init was given it
    _split(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("event time:"))
    assert "record order (source: order)" in line and "scored.csv" in line
    conn = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"]
    assert conn["predictions"]["fields"]["event_time"] == {"source": "order"}
    assert conn["outcomes"]["fields"]["event_time"] == {"source": "arrival"}
    pol = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert pol["window"]["kind"] == "count"
    # durations count records: 3, 6 and 12 windows of 1000 records
    assert pol["cooldown"] == {"mild": "3000s", "moderate": "6000s", "severe": "12000s"}
    code, out, err = run_cli(["policy", "check", "--connector", str(tmp_path / "c.yaml"),
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    code, out, err = run_cli(["policy", "explain", "--connector", str(tmp_path / "c.yaml"),
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert "every duration counts records" in out
    # each duration in records, not as a span of hours: a cooldown of 3000s is 3000 records
    assert ("at most 2 per 86,400 records; then no action at moderate or below for 6,000 "
            "records (their windows") in out, out
    assert "predictions wait 10,368,000 records for their outcome" in out
    assert "actions per tier in any 86,400 records" in out
    shown, said = out.split("# What happens")  # the effective YAML, then the lines
    assert "50m" not in said and "120d" not in said and "24 hours" not in said
    # the YAML's durations too, in whole seconds (records): 3000s, not 50m
    effective = yaml.safe_load(shown)
    assert effective["cooldown"] == {"mild": "3000s", "moderate": "6000s", "severe": "12000s"}
    assert effective["labels"]["ttl"] == "10368000s"
    assert load_policy_text(shown).cooldown == load_policy_text(
        (tmp_path / "p.yaml").read_text()).cooldown  # and it reads back the same
    for batch in (1000, 3000, 10_000, 777):
        code, out, err = _replay(tmp_path, capsys, f"o{batch}", batch)
        assert code == 0, err
    o = tmp_path / "o1000"
    summary = json.loads((o / "summary.json").read_text())
    assert summary["event_time"] == "record order"
    assert (summary["first_event"], summary["last_event"]) == ("record 1", "record 6000")
    assert summary["events"] == 6000 and summary["labels"]["joined"] == 6000
    recs = read_timeline(o / "timeline.jsonl")
    assert [(r["start"], r["end"]) for r in recs[:2]] == [("record 1", "record 1000"),
                                                          ("record 1001", "record 2000")]
    assert all(r["n_labelled"] == r["n_events"] == 1000 for r in recs)
    # the drift is in records 3001 to 6000: found there, and not before
    assert [r["tier"] for r in recs[:3]] == ["none"] * 3
    drifted = [s for r in recs[3:] for s in r["signals"]
               if s["signal"] == "psi" and s["feature"] == "AGE"]
    assert drifted and all(s["value"] > 0.5 for s in drifted)
    assert any(r["tier"] != "none" or (r["decision"] or {}).get("data_quality_fault")
               for r in recs[3:])
    for f in ("timeline.jsonl", "summary.json", "report.html"):
        assert "1970-" not in (o / f).read_text(), f
    # byte-identical whatever the batch size cuts; where a pane's float sums are cut in
    # other places (777), equal to rounding, counts and tiers exact
    for batch in (3000, 10_000):
        for f in ("timeline.jsonl", "summary.json"):
            assert (tmp_path / f"o{batch}" / f).read_bytes() == (o / f).read_bytes(), \
                (batch, f)
    assert (tmp_path / "o777" / "summary.json").read_bytes() == \
        (o / "summary.json").read_bytes()
    assert_same_windows(read_timeline(tmp_path / "o777" / "timeline.jsonl"), recs,
                        keys=("window_id", "start", "end", "n_events", "n_labelled",
                              "features", "tier"), rel=1e-6)


def test_time_field_still_overrides_record_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _split(tmp_path, n=500, drift=False)
    scored = pd.read_csv(tmp_path / "scored.csv")
    scored.insert(1, "scored_on", pd.date_range("2024-01-01", periods=len(scored), freq="h")
                  .strftime("%Y-%m-%dT%H:%M:%SZ"))
    scored.to_csv(tmp_path / "scored.csv", index=False)
    code, out, err = _init(tmp_path, capsys, "--time-field", "scored_on")
    assert code == 0, err
    assert "event time: scored_on" in out and "record order" not in out
    conn = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"]
    assert conn["predictions"]["fields"]["event_time"]["path"] == "scored_on"


_CONNECTOR = """apiVersion: driftwatch/v1
kind: Connector
metadata: {name: c}
source:
  kind: KIND
  streams:
    predictions:
      PLACE
      fields:
        event_id: ID
        event_time: {source: order}
        features: infer
    outcomes:
      PLACE2
      fields:
        event_id: ID
        event_time: {source: OUT}
        label: {path: y}
"""


def _conn(tmp: Path, kind: str = "file", out: str = "arrival") -> Path:
    place = ("topic: p", "topic: o") if kind == "kafka" else ("paths: [p.csv]", "paths: [o.csv]")
    text = (_CONNECTOR.replace("KIND", kind).replace("PLACE2", place[1])
            .replace("PLACE", place[0]).replace("OUT", out))
    if kind == "kafka":
        text = text.replace("  kind: kafka\n", "  kind: kafka\n  connection: "
                            "{bootstrap_servers: [localhost:9092], group_id: g}\n")
    (tmp / "c.yaml").write_text(text)
    return tmp / "c.yaml"


def test_record_order_is_for_predictions_read_from_files(tmp_path: Path) -> None:
    assert load_connector(_conn(tmp_path)).numbers_records()
    with pytest.raises(ConnectorError) as exc:
        load_connector(_conn(tmp_path, out="order"))
    assert "c.yaml:17:30:" in str(exc.value)
    assert "source: order is for a predictions stream, found role 'outcomes'" in str(exc.value)
    assert "source: arrival" in str(exc.value)
    with pytest.raises(ConnectorError) as exc:
        load_connector(_conn(tmp_path, kind="kafka"))
    assert "c.yaml:12:30:" in str(exc.value)  # below the connection line
    assert "expected kind: file, found kind 'kafka'" in str(exc.value)
    assert "source: kafka_timestamp" in str(exc.value)


def test_record_order_goes_for_every_predictions_stream_or_none(tmp_path: Path) -> None:
    text = _CONNECTOR.replace("KIND", "file").replace("PLACE2", "paths: [o.csv]") \
        .replace("PLACE", "paths: [p.csv]").replace("OUT", "arrival")
    text += ("    more:\n      role: predictions\n      paths: [q.csv]\n      fields:\n"
             "        event_id: ID\n        event_time: {path: ts}\n        features: infer\n")
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(ConnectorError) as exc:
        load_connector(tmp_path / "c.yaml")
    assert "c.yaml:11:30:" in str(exc.value)
    assert "found stream 'more' with times of its own" in str(exc.value)


def test_a_time_window_on_records_without_times_is_refused_at_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _split(tmp_path, n=500, drift=False)
    code, _, err = _init(tmp_path, capsys)
    assert code == 0, err
    text = (tmp_path / "p.yaml").read_text()
    (tmp_path / "p.yaml").write_text(text.replace("kind: count", "kind: time")
                                     .replace("pane: 1000", "pane: 1h"))
    line = next(i for i, x in enumerate(text.splitlines(), 1) if x == "  kind: count")
    code, _, err = run_cli(["policy", "check", "--connector", str(tmp_path / "c.yaml"),
                            str(tmp_path / "p.yaml")], capsys)
    assert code == 1
    assert f"p.yaml:{line}:9: the connector's predictions carry no time" in err
    assert "expected window.kind: count" in err and "Traceback" not in err
    code, _, err = _replay(tmp_path, capsys, "o", 1000)
    assert code != 0 and f"p.yaml:{line}:9:" in err and "Traceback" not in err


def _chunk(n: int, stream: str, first: int = 1) -> tuple[Batch, np.ndarray]:
    lines = np.arange(first, first + n)
    return Batch.build(stream, n=n, event_time=np.full(n, np.nan), position=lines), lines


def test_files_without_times_merge_in_file_order_after_outcomes_without_times() -> None:
    # predictions a.csv (rank 0) and b.csv (rank 1), outcomes (rank 2): all without time
    m = EventMerger([0, 1, 2], untimed=[True, True, False])
    m.add(1, {0: _chunk(2, "predictions")}, [], [], end_line=2, exhausted=True)
    m.add(0, {0: _chunk(3, "predictions")}, [], [], end_line=3, exhausted=True)
    m.add(2, {1: _chunk(2, "outcomes")}, [], [], end_line=2, exhausted=True)
    got = m.take(100)
    assert got.order.tolist() == [1, 1, 0, 0, 0, 0, 0]
    (_, pred), _ = got.batches
    assert pred.position.tolist() == [1, 2, 3, 1, 2]  # a.csv's three, then b.csv's two


def test_numbering_continues_across_polls() -> None:
    first = numbered(Batch.build("predictions", n=2, event_time=[np.nan, np.nan]), 0)
    then = numbered(Batch.build("predictions", n=2, event_time=[np.nan, np.nan]), 2)
    assert [*first.event_time.tolist(), *then.event_time.tolist()] == [1.0, 2.0, 3.0, 4.0]


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(60, 400), n_num=st.integers(1, 4), n_cat=st.integers(0, 3),
       seed=st.integers(0, 2**16), score=st.booleans())
def test_init_and_replay_run_on_any_table_without_times(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
        n: int, n_num: int, n_cat: int, seed: int, score: bool) -> None:
    tmp = tmp_path_factory.mktemp("t")
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"cust_no": rng.permutation(np.arange(10**5, 10**5 + 2 * n))})
    for j in range(n_num):
        df[f"x{j}"] = rng.normal(50 * j, 10, 2 * n).round(3)
    for j in range(n_cat):
        df[f"c{j}"] = rng.choice(["a", "b", "c", "d"][: 2 + j], 2 * n)
    df["bad"] = rng.integers(0, 2, 2 * n)
    if score:
        df["score"] = rng.random(2 * n).round(4)
    df.iloc[:n].to_csv(tmp / "train.csv", index=False)
    df.iloc[n:].drop(columns=["bad"]).to_csv(tmp / "scored.csv", index=False)
    df.iloc[n:][["cust_no", "bad"]].to_csv(tmp / "outcomes.csv", index=False)
    code, out, err = run_cli(["init", "--reference", str(tmp / "train.csv"), "--sample",
                              str(tmp / "scored.csv"), "--outcomes", str(tmp / "outcomes.csv"),
                              "--id-field", "cust_no", "--pane", "50", "--connector-out",
                              str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml")],
                             capsys)
    assert code == 0, err
    assert "event time: record order" in out
    pol = yaml.safe_load((tmp / "p.yaml").read_text())
    pol["model"]["reference"] = str(tmp / "train.csv")
    (tmp / "p.yaml").write_text(yaml.safe_dump(pol))
    code, out, err = _replay(tmp, capsys, "o", 97)
    assert code == 0, err
    summary = json.loads((tmp / "o" / "summary.json").read_text())
    assert summary["events"] == n and summary["labels"]["joined"] == n
    assert summary["windows"] == -(-n // 50)
    assert (summary["first_event"], summary["last_event"]) == ("record 1", f"record {n}")


@pytest.mark.parametrize(("max_pending", "lost"), [(3000, 0), (1000, 2000)])
def test_outcomes_read_ahead_wait_up_to_max_pending_and_a_loss_is_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        max_pending: int, lost: int) -> None:
    # a table without times: its outcomes are read ahead of the predictions and wait for
    # them; a tenth of labels.max_pending (a live stream's room for them) dropped 2,700
    # of these 3,000 outcomes without a word
    monkeypatch.chdir(tmp_path)
    _split(tmp_path, n=3000, drift=False)
    code, _, err = _init(tmp_path, capsys)
    assert code == 0, err
    pol = yaml.safe_load((tmp_path / "p.yaml").read_text())
    pol["labels"] = {**pol.get("labels", {}), "max_pending": max_pending}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pol))
    code, out, err = _replay(tmp_path, capsys, "o", 1000)
    assert code == 0, err
    labels = json.loads((tmp_path / "o" / "summary.json").read_text())["labels"]
    assert (labels["joined"], labels["orphan_outcomes"]) == (3000 - lost, lost)
    said = [ln.strip() for ln in out.splitlines() if "outcomes lost" in ln]
    assert said == ([f"outcomes lost: {lost} of 3000 found no prediction (orphan_outcomes): "
                     "their predictions were not in the recording, or came after the "
                     "outcome had waited 7 days of event time or the room for waiting "
                     "outcomes (labels.max_pending) was full"] if lost else [])


def test_an_expectation_with_a_date_is_refused_on_records_without_times(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _split(tmp_path, n=2000, drift=False)
    assert _init(tmp_path, capsys)[0] == 0
    code, out, err = run_cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                              str(tmp_path / "p.yaml"), "-i", str(tmp_path / "scored.csv"),
                              "-i", str(tmp_path / "outcomes.csv"), "--out",
                              str(tmp_path / "o"), "-q", "--expect",
                              "no retrain before 2024-04-08"], capsys)
    assert code == 2 and out == "", (code, out)
    assert "names a date, but the connector numbers records in file order" in err, err
    assert "Traceback" not in err and not (tmp_path / "o" / "timeline.jsonl").exists()
    code, out, err = run_cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                              str(tmp_path / "p.yaml"), "-i", str(tmp_path / "scored.csv"),
                              "-i", str(tmp_path / "outcomes.csv"), "--out",
                              str(tmp_path / "o"), "-q", "--expect", "no retrain"], capsys)
    assert code == 0 and "ok    expect no retrain" in out, err
