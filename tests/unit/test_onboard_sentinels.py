"""``driftwatch init`` finds sentinel codes (HELOC's -9/-8/-7) and writes them into the
connector; a genuine negative-valued column is left alone; a feed that sends -9 twice as
often is a missing-rate fault, not drift of the value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.sentinels import likely_missing_values

from ._cli import run_cli

T0 = 1_700_000_000
FEATURES = ("ExternalRiskEstimate", "MSinceOldestTradeOpen", "MSinceMostRecentDelq",
            "NumTrades60Ever2DerogPubRec", "NetFractionRevolvingBurden")


def heloc(n: int, seed: int, no_record: float) -> pd.DataFrame:
    """HELOC-shaped rows: -9 for the whole row (no bureau record) in ``no_record`` of rows,
    -7 (no delinquency) in MSinceMostRecentDelq, -8 (no usable trades) here and there."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "ExternalRiskEstimate": rng.integers(40, 95, n),
        "MSinceOldestTradeOpen": rng.integers(2, 600, n),
        "MSinceMostRecentDelq": rng.integers(0, 80, n),
        "NumTrades60Ever2DerogPubRec": rng.poisson(1.0, n),
        "NetFractionRevolvingBurden": rng.integers(0, 120, n),
    })
    df.loc[rng.random(n) < 0.4, "MSinceMostRecentDelq"] = -7
    df.loc[rng.random(n) < 0.03, "MSinceOldestTradeOpen"] = -8
    df.loc[rng.random(n) < 0.05, "NetFractionRevolvingBurden"] = -8
    df.loc[rng.random(n) < no_record, list(FEATURES)] = -9
    return df


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_finds_the_codes_and_replay_calls_more_of_them_a_missing_rate_fault(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = heloc(4000, 0, 0.08)
    ref.insert(0, "RiskPerformance", np.where(np.random.default_rng(1).random(4000) < 0.5,
                                              "Bad", "Good"))
    ref.to_csv("ref.csv", index=False)
    # the live feed: as the reference for 1000 events, then -9 twice as often for 1000
    live = pd.concat([heloc(1000, 2, 0.08), heloc(1000, 3, 0.16)], ignore_index=True)
    live.insert(0, "application_id", [f"a{i}" for i in range(len(live))])
    live.insert(1, "ts", T0 + np.arange(len(live)))
    live.to_csv("live.csv", index=False)
    outcomes = live[["application_id", "ts"]].assign(ts=live["ts"] + 86_400 * 60)
    outcomes["RiskPerformance"] = np.where(np.arange(len(live)) % 2, "Bad", "Good")
    outcomes.to_csv("outcomes.csv", index=False)

    code, out, err = run_cli(["init", "--reference", "ref.csv", "--sample", "live.csv",
                              "--outcomes", "outcomes.csv", "--model", "heloc",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml",
                              "--pane", "1000"], capsys)
    assert code == 0, err
    said = [ln for ln in out.splitlines() if ln.strip().startswith("missing: [")]
    assert len(said) == len(FEATURES)  # one printed line per coded feature, with its reason
    assert all("of rows, apart from the other values" in ln for ln in said)
    assert "missing: [-9, -7]" in out and "-7 in 3" in out
    fields = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"][
        "fields"]
    assert fields["missing_values_by_feature"] == {
        "ExternalRiskEstimate": [-9], "MSinceOldestTradeOpen": [-9, -8],
        "MSinceMostRecentDelq": [-9, -7], "NumTrades60Ever2DerogPubRec": [-9],
        "NetFractionRevolvingBurden": [-9, -8]}

    code, checked, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err

    code, _, err = run_cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "--out", "o", "-i",
                            "predictions=live.csv", "outcomes=outcomes.csv",
                            "--no-levels-cache"], capsys)
    assert code == 0, err
    windows = [w for x in Path("o/timeline.jsonl").read_text().splitlines()
               if (w := orjson.loads(x))["n_events"]]  # not the labels-only tail
    assert len(windows) == 2
    faults = [w["decision"]["data_quality_fault"] for w in windows]
    assert faults == [False, True]
    raised = {(r["signal"], r.get("feature")) for r in windows[1]["decision"]["reasons"]}
    assert ("missing_rate", "ExternalRiskEstimate") in raised
    assert not any(sig == "psi" for sig, _ in raised), raised  # not drift of the value
    assert [w["tier"] for w in windows] == ["none", "none"]


# -- what init flags, and what it leaves alone ----------------------------------------------


@pytest.mark.parametrize(("values", "codes"), [
    (list(range(0, 60)) * 20 + [-9] * 40 + [-7] * 300, [-9, -7]),
    (list(np.linspace(1e3, 9e4, 1000).round()) + [999999] * 30, [999999]),
    (list(np.linspace(0, 1, 1000)) + [-999] * 10, [-999]),
    (list(range(1, 30)) * 30 + [-1] * 100, [-1]),  # each -1 far above the smallest value's
])  # fmt: skip
def test_codes_apart_from_the_values_are_found(values: list[float], codes: list[int]) -> None:
    found = likely_missing_values(pd.Series(values))
    assert found is not None and found[0] == codes


@pytest.mark.parametrize("values", [
    list(np.random.default_rng(0).normal(0, 500, 2000).round(2)),   # a balance
    list(np.random.default_rng(1).normal(2, 1, 5000).round()),      # a tail through zero
    list(range(-3, 40)) * 50,                                        # a change in counts
    [-9] * 40 + [1, 2, 3] * 300,                                     # too few real values
    list(range(0, 60)) * 20 + [-9] * 3,                              # a stray, not a spike
    list(range(0, 1200)) + [999] * 30,                               # 999 inside the range
])  # fmt: skip
def test_values_that_are_real_are_left_alone(values: list[float]) -> None:
    assert likely_missing_values(pd.Series(values)) is None


@settings(max_examples=150, deadline=None)
@given(loc=st.floats(-1e5, 1e5), scale=st.floats(0.5, 1e5), n=st.integers(50, 3000),
       digits=st.integers(0, 2), seed=st.integers(0, 2**32 - 1),
       shape=st.sampled_from(["normal", "laplace", "uniform", "t"]))
def test_a_column_with_genuine_negative_values_is_never_flagged(
    loc: float, scale: float, n: int, digits: int, seed: int, shape: str
) -> None:
    """Balances, changes, scores: continuous values that reach below zero, rounded to
    whole numbers or cents, whatever their centre and spread."""
    rng = np.random.default_rng(seed)
    draw = {"normal": lambda: rng.normal(0, 1, n), "laplace": lambda: rng.laplace(0, 1, n),
            "uniform": lambda: rng.uniform(-1, 1, n), "t": lambda: rng.standard_t(3, n)}
    x = (loc + scale * draw[shape]()).round(digits)
    if not (x < 0).any():
        x[0] = -abs(x[0]) - 1  # make it reach below zero
    assert likely_missing_values(pd.Series(x)) is None


# -- a code far above a column whose values are all <= 0 (Home Credit's DAYS_EMPLOYED) ------


def _days(n: int, seed: int = 0) -> np.ndarray:
    return -np.random.default_rng(seed).integers(0, 17913, n).astype(float)


def test_a_frequent_code_far_above_non_positive_values_is_found() -> None:
    x = _days(1000)
    x[:180] = 365243  # 18% of rows, as in Home Credit's application table
    found = likely_missing_values(pd.Series(x))
    assert found is not None and found[0] == [365243]
    lo, hi = int(x[180:].min()), int(x[180:].max())
    assert found[1] == (f"365243 in 18.0% of rows, apart from the other values ({lo} to "
                        f"{hi}): a code, read as missing")


@pytest.mark.parametrize("case", [
    "rare",            # 0.5% of rows: above the usual share, below the far rule's 1%
    "near",            # a positive value within ten spans of the others
    "two_values",      # two distinct positive values: not one code
    "fractional",      # not an integer
    "positive_column"  # large and frequent, but on the same side as the others
])  # fmt: skip
def test_large_values_that_are_not_a_far_code_are_left_alone(case: str) -> None:
    x = _days(1000)
    if case == "rare":
        x[:5] = 365243
    elif case == "near":
        x[:180] = 17912 * 9
    elif case == "two_values":
        x[:90], x[90:180] = 365243, 365244
    elif case == "fractional":
        x[:180] = 365243.5
    else:
        x = -x + 1  # 1 to 17913
        x[:180] = 365243
    assert likely_missing_values(pd.Series(x)) is None


@settings(max_examples=150, deadline=None)
@given(hi=st.floats(-1e6, 0), span=st.floats(5, 1e6), n=st.integers(50, 3000),
       outliers=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       digits=st.integers(0, 2))
def test_genuine_large_values_above_non_positive_ones_are_never_flagged(
    hi: float, span: float, n: int, outliers: int, seed: int, digits: int
) -> None:
    """Values at or below zero with real large ones above them: each large value drawn
    on its own (a heavy tail), so no single one repeats as a code does."""
    rng = np.random.default_rng(seed)
    x = (hi - span * rng.uniform(0, 1, n)).round(digits)
    k = min(outliers, n // 2)
    x[:k] = (rng.uniform(1, 1e7, k) + rng.uniform(0, 1, k)).round(digits)
    found = likely_missing_values(pd.Series(x))
    assert found is None or not any(v > 0 for v in found[0]), found


@settings(max_examples=100, deadline=None)
@given(span=st.integers(10, 10**5), n=st.integers(200, 3000),
       share=st.floats(0.02, 0.4), seed=st.integers(0, 2**32 - 1))
def test_a_far_code_is_found_whatever_the_column_below_it(
    span: int, n: int, share: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = -rng.integers(0, span + 1, n).astype(float)
    code = 11 * span + int(rng.integers(1, 10**6))
    k = max(int(share * n), 5)  # at least 5 rows, as every code
    x[:k] = code
    if len(np.unique(x[k:])) < 5:
        return  # too few real values: nothing is named, by the rule on distinct values
    found = likely_missing_values(pd.Series(x))
    assert found is not None and found[0] == [code]


# -- an all-nines value is a code only when set apart from the other values -----------------


@settings(max_examples=80, deadline=None)
@given(top=st.sampled_from([99, 999, 9999]), seed=st.integers(0, 2**32 - 1),
       n=st.integers(200, 4000), spike=st.floats(0.005, 0.3), low=st.integers(0, 20))
def test_the_top_of_a_dense_code_range_is_never_a_missing_code(
        top: int, seed: int, n: int, spike: float, low: int) -> None:
    """A 0..99 (or 0..999) code column: its top code is the end of the range, however
    often it comes, not a missing value."""
    rng = np.random.default_rng(seed)
    x = rng.integers(low, top + 1, n)
    x[rng.uniform(size=n) < spike] = top
    found = likely_missing_values(pd.Series(x))
    assert found is None or top not in found[0], found


@settings(max_examples=80, deadline=None)
@given(code=st.sampled_from([999, 9999, 99999, -999, -9999]), seed=st.integers(0, 2**32 - 1),
       n=st.integers(200, 4000), hi=st.integers(30, 400), share=st.floats(0.01, 0.3))
def test_an_all_nines_value_far_from_the_others_is_a_missing_code(
        code: int, seed: int, n: int, hi: int, share: float) -> None:
    """9999 after values up to 400 (or -999 below values from 0): a code."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, hi + 1, n)
    x[rng.uniform(size=n) < share] = code
    x[:5] = code  # the spike's least rows
    found = likely_missing_values(pd.Series(x))
    assert found is not None and found[0] == [code], found


@pytest.mark.parametrize(("values", "codes"), [
    (list(range(0, 41)) * 20 + [99] * 30, [99]),      # 99 atop 0..40: apart
    (list(range(0, 99)) * 20 + [99] * 300, None),     # 99 atop a dense 0..98: the top code
    (list(range(0, 51)) * 20 + [99] * 30, None),      # 49 away from 99: not half of it
])  # fmt: skip
def test_the_nines_gap_rule(values: list[int], codes: list[int] | None) -> None:
    found = likely_missing_values(pd.Series(values))
    assert (found[0] if found else None) == codes
