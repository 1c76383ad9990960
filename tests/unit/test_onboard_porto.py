"""``init`` on Porto Seguro's shape: integer columns named ``*_cat`` are category codes
(categorical whatever their count), and their -1 (the dataset's documented "missing") is
proposed as a missing code; a genuine value range is never flagged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.infer import column_kind
from driftwatch.onboard.sentinels import likely_missing_values

from ._cli import run_cli


def _porto(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Columns shaped as Porto Seguro's train.csv: codes with -1 in a share of rows."""
    return pd.DataFrame({
        "target": (rng.uniform(size=n) < 0.2).astype(int),
        "ps_ind_02_cat": rng.choice([1, 2, 3, 4, -1], n, p=[.7, .2, .05, .03, .02]),
        "ps_car_03_cat": rng.choice([-1, 0, 1], n, p=[.69, .11, .20]),
        "ps_car_07_cat": rng.choice([-1, 0, 1], n, p=[.02, .05, .93]),
        "ps_car_11_cat": rng.integers(1, 105, n),  # 104 codes
        "ps_ind_01": rng.integers(0, 8, n),
        "ps_car_13": rng.uniform(0.25, 3.7, n).round(6),
    })


def _files(tmp: Path, n: int = 2000) -> None:
    rng = np.random.default_rng(3)
    _porto(n, rng).to_csv(tmp / "ref.csv", index=False)
    live = _porto(n, rng)
    live.insert(0, "id", np.arange(n))
    live.insert(1, "ts", 1_704_067_200 + 60 * np.arange(n))
    live.drop(columns=["target"]).to_csv(tmp / "live.csv", index=False)
    live[["id", "target"]].to_csv(tmp / "out.csv", index=False)


def test_porto_codes_are_categorical_with_minus_one_read_as_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The -1 of every *_cat column was a level of its own (or, in ps_car_11_cat's 104
    codes, a number), so a feed sending more missing values read as drift."""
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["init", "--reference", "ref.csv", "--sample", "live.csv",
                              "--outcomes", "out.csv", "--model", "porto", "--connector-out",
                              "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert ("ps_car_11_cat: categorical       integer codes named like categories (*_cat), "
            "104 distinct values") in out, out
    c = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    kinds = {k: v["type"] for k, v in c["fields"]["features"].items()}
    assert kinds == {"ps_ind_02_cat": "categorical", "ps_car_03_cat": "categorical",
                     "ps_car_07_cat": "categorical", "ps_car_11_cat": "categorical",
                     "ps_ind_01": "categorical", "ps_car_13": "numeric"}
    assert c["fields"]["missing_values_by_feature"] == {
        "ps_ind_02_cat": [-1], "ps_car_03_cat": [-1], "ps_car_07_cat": [-1]}
    ref = pd.read_csv("ref.csv")
    share = (ref["ps_car_07_cat"] == -1).mean()
    assert (f"-1 in {share:.1%} of rows, the one negative value among category codes (0 to "
            "1): a code, read as missing") in out, out
    code, _, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.csv", "out.csv", "--out", "run", "--quiet",
                            "--no-report"], capsys)
    assert code == 0, err
    live = pd.read_csv("live.csv")
    timeline = [json.loads(ln) for ln in Path("run/timeline.jsonl").read_text().splitlines()]
    missing = sum(w["features"]["ps_car_07_cat"]["missing"] for w in timeline)
    assert missing == (live["ps_car_07_cat"] == -1).sum()
    assert all("-1" not in w["features"]["ps_car_07_cat"]["levels"] for w in timeline)


def test_only_whole_numbers_named_as_codes_are_categorical() -> None:
    """ps_car_11_cat's 104 codes were binned as numbers."""
    codes = pd.Series(np.arange(200) % 104, name="ps_car_11_cat")
    assert column_kind(codes) == ("categorical", "integer codes named like categories "
                                  "(*_cat), 104 distinct values")
    assert column_kind(codes.rename("ps_car_11"))[0] == "numeric"
    assert column_kind((codes + 0.5).rename("ps_car_11_cat"))[0] == "numeric"
    assert column_kind(pd.Series(["a", "b"], name="x_cat"))[0] == "categorical"


@pytest.mark.parametrize(("values", "found"), [
    ([1, 2, 3, 4] * 240 + [-1] * 40, [-1]),           # ps_ind_02_cat: a gap below 1
    ([0] * 860 + list(range(1, 7)) * 20 + [-1] * 20, [-1]),  # ps_ind_05_cat: 2%, beside 0
    ([-1] * 690 + [0] * 110 + [1] * 200, [-1]),       # ps_car_03_cat: most rows
    ([-1] * 20 + [0] * 50 + [1] * 930, [-1]),         # ps_car_07_cat
    ([-1] * 20 + [5] * 980, None),                     # one other value: a flag, not codes
    ([-1] * 2 + [0, 1, 2] * 330, None),                # 0.2% of rows: a stray
    ([-1] * 30 + [-2] * 30 + [0, 1] * 470, None),      # two negative values
    ([-1] * 30 + [0.5, 1.5, 2.5] * 320, None),         # the others are no codes
])  # fmt: skip
def test_the_one_negative_code_among_category_codes(values: list[float],
                                                    found: list[int] | None) -> None:
    got = likely_missing_values(pd.Series(values), codes=True)
    assert (got[0] if got else None) == found


def test_without_the_name_a_negative_value_beside_zero_is_left_alone() -> None:
    """A sign or a change (-1, 0, 1) is a genuine range: only the name says codes."""
    for values in ([-1] * 20 + [0] * 50 + [1] * 930,
                   [0] * 860 + list(range(1, 7)) * 20 + [-1] * 20):
        assert likely_missing_values(pd.Series(values)) is None


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(-3, -1), hi=st.integers(1, 60), n=st.integers(50, 3000),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_a_genuine_integer_range_through_zero_is_never_flagged(
    lo: int, hi: int, n: int, seed: int, data: st.DataObject
) -> None:
    """Counts and changes from ``lo`` < 0 to ``hi`` with every value present, whose share
    does not fall from ``lo`` up to 0 (the values below zero are the rising tail of the
    distribution, not a spike beside it)."""
    rising = sorted(data.draw(st.lists(st.floats(0.1, 10), min_size=1 - lo,
                                       max_size=1 - lo)))  # lo .. 0
    rest = data.draw(st.lists(st.floats(0.01, 10), min_size=hi, max_size=hi))  # 1 .. hi
    weights = np.array(rising + rest)
    values = np.arange(lo, hi + 1)
    rng = np.random.default_rng(seed)
    x = np.concatenate([values, rng.choice(values, n, p=weights / weights.sum())])
    # counted shares, not drawn ones, must rise to zero
    counts = pd.Series(x).value_counts().reindex(range(lo, 1)).to_numpy()
    if (np.diff(counts) < 0).any():
        return
    assert likely_missing_values(pd.Series(x)) is None


@settings(max_examples=150, deadline=None)
@given(loc=st.floats(-1e4, 1e4), scale=st.floats(0.5, 1e4), n=st.integers(50, 3000),
       digits=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_fractions_named_as_codes_are_never_flagged(
    loc: float, scale: float, n: int, digits: int, seed: int
) -> None:
    """Measured values (with decimals) under a codes name hold no codes to relax the rule
    for, whatever their centre and spread."""
    rng = np.random.default_rng(seed)
    x = (loc + scale * rng.normal(0, 1, n)).round(digits)
    if not (x < 0).any():
        x[0] = -abs(x[0]) - 1.5
    assert likely_missing_values(pd.Series(x), codes=True) is None


@settings(max_examples=150, deadline=None)
@given(k=st.integers(2, 120), n=st.integers(200, 5000), share=st.floats(0.01, 0.7),
       seed=st.integers(0, 2**32 - 1))
def test_a_porto_minus_one_is_found_whatever_the_codes_beside_it(
    k: int, n: int, share: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.arange(k), rng.integers(0, k, n)])  # every code present
    m = max(int(share * len(x)), 5)
    x[rng.permutation(len(x))[:m]] = -1
    if pd.Series(x[x >= 0]).nunique() < 2:
        return
    found = likely_missing_values(pd.Series(x), codes=True)
    assert found is not None and found[0][0] == -1  # (99 atop codes 0-99 reads as nines)
