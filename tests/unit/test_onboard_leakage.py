"""``init`` warns on features that most likely leak the outcome (recorded after it:
Lending Club's ``recoveries``, the SBA's ``ChgOffPrinGr``), by their values where features
and outcomes meet, and more weakly by their names; it drops none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.leakage import post_outcome_name, rank_auc, separation

from ._cli import run_cli as _cli


def _write(tmp: Path, n: int = 1200, *, seed: int = 3, leak: bool = True) -> None:
    """A loan table: ``z_amt`` leaks the outcome (planted), ``grade_num`` is an ordinary
    informative feature (rank AUC about 0.7), ``income`` is noise."""
    rng = np.random.default_rng(seed)

    def frame(start: int) -> pd.DataFrame:
        bad = rng.uniform(size=n) < 0.25
        df = pd.DataFrame({
            "id": np.arange(start, start + n),
            "income": rng.lognormal(10, 0.5, n).round(2),
            "grade_num": (bad * 0.75 + rng.normal(0, 1, n)).round(3),
            "purpose": rng.choice(["car", "debt", "home", "other"], n),
            "status": np.where(bad, "Charged Off", "Fully Paid"),
        })
        if leak:
            df["z_amt"] = np.where(bad, rng.uniform(0, 900, n),
                                   rng.uniform(1000, 35000, n)).round(2)
        return df

    frame(0).to_csv(tmp / "ref.csv", index=False)
    live = frame(10**6)
    live.insert(1, "ts", 1.7e9 + np.arange(n) * 60.0)
    live.drop(columns=["status"]).to_csv(tmp / "live.csv", index=False)
    live[["id", "status"]].to_csv(tmp / "out.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                 str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                 "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                 "--label-bad", "Charged Off"], capsys)


def _warned(out: str, col: str) -> str | None:
    lines = [ln for ln in out.splitlines() if ln.strip().startswith(f"warning: {col} ")]
    return lines[0] if lines else None


def test_a_planted_leaky_column_is_warned_from_the_joined_samples_and_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = _warned(out, "z_amt")
    assert line is not None, out
    assert "rank AUC 0.0" in line and "joined by id" in line, line
    assert "--ignore z_amt" in line, line
    assert _warned(out, "grade_num") is None and _warned(out, "income") is None, out
    assert _warned(out, "purpose") is None, out
    # a warning, not a decision: the column stays a feature
    conn = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert "z_amt" in str(conn), conn


def test_without_a_join_the_reference_label_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    # outcomes of other loans than the sample's: nothing joins
    out = pd.read_csv(tmp_path / "out.csv")
    out["id"] += 10**7
    out.to_csv(tmp_path / "out.csv", index=False)
    code, text, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = _warned(text, "z_amt")
    assert line is not None and "the reference's labelled rows" in line, text
    assert _warned(text, "grade_num") is None, text


def test_no_leak_no_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, leak=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "warning:" not in out, out


def test_a_post_outcome_name_is_a_weaker_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, leak=False)
    for name in ("ref.csv", "live.csv"):
        df = pd.read_csv(tmp_path / name)
        df["recoveries"] = np.random.default_rng(1).uniform(0, 10, len(df)).round(2)
        df.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = _warned(out, "recoveries")
    assert line is not None and "'recover' in its name" in line, out
    assert "--ignore recoveries" in line and "AUC" not in line, line


def test_the_level_rule_separates_a_categorical_leak_but_not_a_rare_class() -> None:
    rng = np.random.default_rng(0)
    bad = rng.uniform(size=2000) < 0.02  # fraud-rare: "always good" is 98% accurate
    status = np.where(bad, "CHGOFF", rng.choice(["P I F", "EXEMPT"], 2000))
    assert separation(status, bad, "categorical") is not None
    assert separation(rng.choice(["A", "B"], 2000), bad, "categorical") is None
    # a value per row: each level alone would predict perfectly; pooled, they say nothing
    assert separation([f"r{i}" for i in range(2000)], bad, "categorical") is None


def test_missing_is_a_level_of_a_categorical() -> None:
    # a charge-off date is only written for charged-off loans
    bad = np.arange(400) % 5 == 0
    assert separation(np.where(bad, "2010", None), bad, "categorical") is not None


def test_rank_auc_matches_pair_counting() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 5, 60).astype(float)
    bad = rng.uniform(size=60) < 0.4
    pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a in x[bad] for b in x[~bad]]
    assert rank_auc(x, bad) == pytest.approx(np.mean(pairs))


@pytest.mark.parametrize(("name", "part"), [
    ("total_rec_prncp", "total_rec"), ("recoveries", "recover"),
    ("collection_recovery_fee", "recover"), ("last_pymnt_d", "last_pymnt"),
    ("out_prncp", "out_prncp"), ("ChgOffPrinGr", "chgoff"), ("ChgOffDate", "chgoff"),
    ("charge_off_amt", "charge_off"), ("debt_settlement_flag", "settlement"),
    ("loan_amnt", None), ("annual_inc", None), ("DisbursementGross", None),
    # counts over the months before the application, off the credit report: no hint
    ("collections_12_mths_ex_med", None), ("chargeoff_within_12_mths", None),
    ("sent_to_collection", "collection"), ("CollectionAmount", "collection"),
])
def test_post_outcome_names(name: str, part: str | None) -> None:
    assert post_outcome_name(name) == part


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(40, 600),
       rate=st.floats(0.05, 0.6), levels=st.integers(1, 30), kind=st.sampled_from(
           ["numeric", "categorical", "informative"]))
def test_features_drawn_apart_from_the_outcome_never_warn(
        seed: int, n: int, rate: float, levels: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    bad = rng.uniform(size=n) < rate
    if kind == "numeric":
        x: object = np.where(rng.uniform(size=n) < 0.1, np.nan, rng.normal(0, 1, n))
    elif kind == "categorical":
        x = rng.integers(0, levels, n).astype(str)
    else:  # informative, AUC about 0.7: a good feature, no leak
        x = bad * 0.75 + rng.normal(0, 1, n)
    assert separation(x, bad, "categorical" if kind == "categorical" else "numeric") is None


# -- the codes init proposes for missing are missing to the leak check too -------------------

def _write_coded(tmp: Path, column: dict[str, np.ndarray], bad: np.ndarray) -> None:
    """The reference and the joined samples of :func:`_write` (no leak planted) with one
    more column, the same values on both sides."""
    _write(tmp, leak=False)
    n = len(bad)
    for name in ("ref.csv", "live.csv"):
        df = pd.read_csv(tmp / name)
        if name == "ref.csv":
            df["status"] = np.where(bad, "Charged Off", "Fully Paid")
        for c, v in column.items():
            df[c] = v[:n]
        df.to_csv(tmp / name, index=False)
    out = pd.read_csv(tmp / "out.csv")
    out["status"] = np.where(bad, "Charged Off", "Fully Paid")
    out.to_csv(tmp / "out.csv", index=False)


def test_a_leak_hidden_behind_a_sentinel_is_warned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A third of the rows, of either class, hold 999999 (init proposes it as missing): it
    ranked above every amount and pulled the AUC to 0.25; the other rows separate wholly."""
    rng = np.random.default_rng(11)
    n = 1200
    bad = rng.uniform(size=n) < 0.25
    amt = np.where(bad, rng.uniform(0, 900, n), rng.uniform(1000, 35000, n)).round(2)
    amt[rng.uniform(size=n) < 0.3] = 999999
    _write_coded(tmp_path, {"paid_amt": amt}, bad)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "missing: [999999]" in out, out  # the code init proposes
    line = _warned(out, "paid_amt")
    assert line is not None and "rank AUC 0.000" in line, out


def test_a_sentinel_that_coincides_with_the_outcome_is_no_leak(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nearly every bad row holds the code -9 (no record); the recorded values are alike in
    both classes. The code ranked below every value: an AUC of 0.01, a leak warned."""
    rng = np.random.default_rng(12)
    n = 1200
    bad = rng.uniform(size=n) < 0.25
    months = rng.integers(0, 120, n).astype(float)
    months[bad & (rng.uniform(size=n) < 0.99)] = -9
    _write_coded(tmp_path, {"months_on_file": months}, bad)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "missing: [-9]" in out, out  # the code init proposes
    assert _warned(out, "months_on_file") is None, out
