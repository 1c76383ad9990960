"""The Python API (``driftwatch.Monitor``): replay's pipeline on DataFrames."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch import Monitor
from driftwatch.errors import DataFrameError, DriftwatchError
from driftwatch.policy.loader import load_policy_text
from driftwatch.policy.schema import Policy
from driftwatch.replay import replay
from driftwatch.replay.monitor import SIGNAL_COLUMNS
from driftwatch.replay.timeline import read_timeline

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"
DEMO_POLICY = ROOT / "policies" / "credit-risk-demo.yaml"
FEATURES = ["income", "loan_amount", "debt_to_income", "credit_history_months", "age",
            "num_open_accounts", "utilization", "purpose", "home_ownership", "employment_type"]



def _policy(persistence: int) -> Policy:
    """PSI on every feature; one witness is enough."""
    return load_policy_text(
        "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: eager}\n"
        "model: {name: credit-risk, reference: not-read.parquet}\n"
        "window: {kind: count, pane: 1000}\n"
        "signals:\n"
        "  - detector: psi\n    features: all\n"
        "    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}\n"
        f"persistence: {persistence}\n",
        file="eager.yaml",
    )


# a tier acts at once: the tier of a single window shows
EAGER = _policy(1)


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return pd.read_parquet(DEMO / "reference.parquet")


@pytest.fixture(scope="module")
def monitor_factory(reference: pd.DataFrame):  # type: ignore[no-untyped-def]
    return lambda policy=EAGER: Monitor.from_reference(reference, policy=policy)


def _sample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    return df.sample(n=n, random_state=seed).reset_index(drop=True)


def test_unshifted_copy_is_tier_none(reference: pd.DataFrame, monitor_factory) -> None:
    mon = monitor_factory(DEMO_POLICY)
    v = mon.assess(_sample(reference, 4000, seed=1))
    assert (v.tier, v.raw_tier) == ("none", "none")
    assert v.reasons == ()
    assert list(v.signals.columns) == list(SIGNAL_COLUMNS)
    psi = v.signals[v.signals["signal"] == "psi"].set_index("feature")["value"]
    assert sorted(psi.index) == sorted(FEATURES)
    assert (psi < 0.05).all(), psi.to_dict()
    assert set(mon.features) == set(FEATURES)


def test_shifted_copy_names_the_shifted_feature(reference: pd.DataFrame, monitor_factory) -> None:
    mon = monitor_factory()
    cur = _sample(reference, 4000, seed=2)
    cur["utilization"] = (cur["utilization"] + 0.35).clip(upper=1.0)
    v = mon.assess(cur)
    assert v.tier in ("mild", "moderate", "severe")
    assert {r.feature for r in v.reasons} == {"utilization"}
    assert all(r.source.startswith("eager.yaml:") for r in v.reasons)
    row = v.signals.query("signal == 'psi' and feature == 'utilization'").iloc[0]
    assert row["tier"] == v.tier and bool(row["exceeds"])
    others = v.signals.query("signal == 'psi' and feature != 'utilization'")
    assert set(others["tier"]) == {"none"}


def test_windows_share_engine_state_in_order(reference: pd.DataFrame) -> None:
    """Persistence counts the windows assessed on one monitor, in order."""
    mon = Monitor.from_reference(reference, policy=_policy(2))
    cur = _sample(reference, 4000, seed=3)
    cur["utilization"] = (cur["utilization"] + 0.35).clip(upper=1.0)
    first = mon.assess(cur, at=pd.Timestamp("2024-05-01"))
    second = mon.assess(cur, at=pd.Timestamp("2024-05-02"))
    assert first.raw_tier != "none" and first.tier == "none"
    assert "persistence" in first.decision.suppressed_by
    assert second.tier == first.raw_tier
    assert (first.window_id, second.window_id) == (0, 1)
    assert second.decision.time == pd.Timestamp("2024-05-02", tz="UTC").timestamp()


def _demo_predictions(n: int) -> tuple[list[bytes], pd.DataFrame]:
    with gzip.open(DEMO / "predictions.jsonl.gz", "rb") as fh:
        lines = list(itertools.islice(fh, n))
    recs = [orjson.loads(line) for line in lines]
    df = pd.DataFrame({
        "income": [r["applicant"].get("income") for r in recs],
        "loan_amount": [r["loan"].get("amount") for r in recs],
        "debt_to_income": [r["applicant"].get("debt_to_income") for r in recs],
        "credit_history_months": [r["applicant"].get("credit_history_months") for r in recs],
        "age": [r["applicant"].get("age") for r in recs],
        "num_open_accounts": [r["applicant"].get("num_open_accounts") for r in recs],
        "utilization": [r["applicant"].get("utilization") for r in recs],
        "purpose": [r["loan"].get("purpose") for r in recs],
        "home_ownership": [r["applicant"].get("home_ownership") for r in recs],
        "employment_type": [r["applicant"].get("employment_type") for r in recs],
        "score": [r["model"]["score"] for r in recs],
        "decision": [r["decision"] for r in recs],
        "ts": [r["ts"] for r in recs],
    })
    return lines, df


def test_same_signals_as_replay(tmp_path: Path, reference: pd.DataFrame) -> None:
    """A window assessed through the API measures what replay measures on the same rows."""
    lines, df = _demo_predictions(1000)  # the demo policy's first window: one 1000-event pane
    rec = tmp_path / "predictions.jsonl"
    rec.write_bytes(b"".join(lines))
    replay(ROOT / "connectors" / "demo-file.yaml", [rec], tmp_path / "out", policy=DEMO_POLICY,
           reference=DEMO / "reference.parquet", progress=False, report=False)
    first = read_timeline(tmp_path / "out" / "timeline.jsonl")[0]
    mon = Monitor.from_reference(reference, policy=DEMO_POLICY, time="ts")
    v = mon.assess(df)
    want = {(s["signal"], s["feature"]): s["value"] for s in first["signals"]
            if s["group"] == "drift"}
    got = {(r.signal, r.feature): r.value for r in v.signals.itertuples() if r.group == "drift"}
    assert want and got.keys() == want.keys()
    assert got == pytest.approx(want, rel=1e-12, nan_ok=True)
    assert v.result.window.end_time == first["end_time"]


def test_report_is_written_with_the_features(tmp_path: Path, reference: pd.DataFrame,
                                             monitor_factory) -> None:
    mon = monitor_factory()
    cur = _sample(reference, 2000, seed=4)
    cur["income"] = cur["income"] * 1.7
    v = mon.assess(cur)
    mon.assess(_sample(reference, 2000, seed=5))
    one = v.report(tmp_path / "one.html")
    every = mon.report(tmp_path / "sub" / "all.html")
    html = one.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype")
    for name in ("income", "utilization", "purpose"):
        assert name in html
    assert "1 windows" in html
    assert "2 windows" in every.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda df: df.drop(columns=["income", "purpose"]),
         "lacks feature column(s) 'income', 'purpose'"),
        (lambda df: df.iloc[:0], "the current DataFrame is empty (0 rows"),
        (lambda df: df.to_dict(), "must be a pandas DataFrame, not dict"),
        (lambda df: df.assign(age="forty"), "column 'age' is numeric in the reference"),
    ],
)
def test_bad_current_frame_is_a_clear_error(reference: pd.DataFrame, monitor_factory, make,
                                            message: str) -> None:
    mon = monitor_factory()
    with pytest.raises(DataFrameError) as err:
        mon.assess(make(_sample(reference, 500, seed=6)))
    assert message in str(err.value)
    assert isinstance(err.value, DriftwatchError)


@pytest.mark.parametrize(
    ("df", "kwargs", "message"),
    [
        (pd.DataFrame(), {}, "the reference DataFrame is empty"),
        (pd.DataFrame({"score": [0.1, 0.2], "label": [0, 1]}), {},
         "the reference has no feature columns"),
        (pd.DataFrame({"x": [1.0, 2.0]}), {"ignore": ["id"]}, "the reference has no column 'id'"),
        (pd.DataFrame({"x": [1.0, 2.0]}), {"numeric": ["x", "y"]},
         "lacks feature column(s) 'y'"),
    ],
)
def test_bad_reference_frame_is_a_clear_error(df: pd.DataFrame, kwargs: dict,
                                              message: str) -> None:
    with pytest.raises(DataFrameError) as err:
        Monitor.from_reference(df, **kwargs)
    assert message in str(err.value)


def test_no_policy_gives_signals_only(reference: pd.DataFrame) -> None:
    mon = Monitor.from_reference(reference.drop(columns=["label"]), ignore=["decision"])
    cur = _sample(reference, 1000, seed=7)
    cur["age"] = cur["age"] + 15
    v = mon.assess(cur)
    assert (v.tier, v.reasons, v.decision) == ("none", (), None)
    psi = v.signals.query("signal == 'psi'").set_index("feature")["value"]
    assert psi.idxmax() == "age"
    assert np.isfinite(psi.to_numpy()).all()


def test_readme_python_api_block_runs_as_printed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1]
    code, rest = section.split("```python\n", 1)[1].split("```\n", 1)
    shown = rest.split("```\n", 1)[1].split("```", 1)[0]  # the block printed under it
    for name in ("data", "policies"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    first = shown.strip().splitlines()[0]
    assert out.splitlines()[0] == first == "severe ['debt_to_income', 'utilization']"
    assert "utilization" in (tmp_path / "out" / "api" / "report.html").read_text()


def test_labels_in_the_current_frame_feed_the_performance_signals(
    reference: pd.DataFrame, monitor_factory
) -> None:
    mon = monitor_factory(DEMO_POLICY)
    cur = _sample(reference, 4000, seed=8)
    labelled = mon.assess(cur)
    unlabelled = mon.assess(cur.drop(columns=["label"]))
    perf = labelled.signals.query("group == 'performance'").set_index("signal")
    approved = int((cur["decision"] == "approve").sum())
    assert labelled.result.window.sketch.lab_n.sum() == approved
    assert set(perf["n_cur"]) == {approved}
    assert 0.2 < perf.loc["gini", "value"] < 0.6  # the demo scorecard's Gini is about 0.4
    assert unlabelled.result.window.sketch.lab_n.sum() == 0
    assert unlabelled.signals.query("group == 'performance'").empty


def test_reference_from_a_table_file_or_a_saved_profile(tmp_path: Path,
                                                        reference: pd.DataFrame) -> None:
    cur = _sample(reference, 2000, seed=9)
    from_df = Monitor.from_reference(reference, policy=EAGER).assess(cur).signals
    from_file = Monitor.from_reference(DEMO / "reference.parquet", policy=EAGER)
    saved = from_file.profile.save(tmp_path / "profile.json.gz")
    from_profile = Monitor.from_reference(str(saved), policy=EAGER)
    assert from_profile.profile.fingerprint == from_file.profile.fingerprint
    for mon in (from_file, from_profile):
        pd.testing.assert_frame_equal(mon.assess(cur).signals, from_df)
    with pytest.raises(DriftwatchError, match="cannot read reference"):
        Monitor.from_reference(tmp_path / "nope.parquet")
