"""Credit tables' counts named by their abbreviations (Lending Club's ``delinq_2yrs``,
``inq_last_6mths``, ``pub_rec``, ``mort_acc``, ``acc_now_delinq``; HMEQ's ``DEROG``,
``DELINQ``, ``NINQ``, ``CLNO``) are counts: with at most 10 integer values in the reference
they were typed categorical, so a count above the reference's maximum read as a new
category (holding the data-quality gate) instead of a larger number. Coded categoricals
(Taiwan's ``PAY_0`` repayment status, -2..8; ``EDUCATION``; an ``acc_type``) stay
categorical, and no count is taken for a time (a ``last_delinq_date`` still reads as one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.infer import column_kind, name_rank, named_count
from driftwatch.onboard.roles import TIME

from ._cli import run_cli

WORDS = st.sampled_from(["delinq", "delinquencies", "inq", "ninq", "inquiries", "derog",
                         "derogatory", "pub_rec", "acc", "accts", "mths", "6mths", "months",
                         "tl", "cnt", "count", "90g_dpd", "clno", "cl_no"])
#: other words of a count's name, none of them a code's or a time's
TOKENS = st.lists(st.sampled_from(["open", "total", "last", "mort", "bc", "now", "il", "2yrs",
                                   "6m", "24m", "12m", "ever", "bankruptcies", "x1"]),
                  max_size=3)
CODE_ENDS = st.sampled_from(["cat", "code", "type", "flag", "cd", "status", "band"])
TIME_ENDS = st.sampled_from(["date", "time", "at", "timestamp", "ts"])
CASE = st.sampled_from([str, str.upper])


def _name(before: list[str], word: str, after: list[str]) -> str:
    return "_".join([*before, word, *after])


@given(TOKENS, WORDS, TOKENS, CASE)
def test_a_name_with_a_count_word_is_a_count_and_no_time(before: list[str], word: str,
                                                         after: list[str], case: object) -> None:
    name = case(_name(before, word, after))  # type: ignore[operator]
    assert named_count(name), name
    assert name_rank(name, *TIME) == 0, name


@given(TOKENS, WORDS, TOKENS, CODE_ENDS, CASE)
def test_a_count_word_ending_as_a_code_is_no_count(before: list[str], word: str,
                                                   after: list[str], end: str,
                                                   case: object) -> None:
    name = case(_name(before, word, [*after, end]))  # type: ignore[operator]
    assert not named_count(name), name
    small = pd.Series(np.arange(-2, 4).repeat(3), name=name)
    assert column_kind(small)[0] == "categorical", name


# a name that starts with cnt_ or count_ is a count whatever follows (count_time_outs)
@given(TOKENS, WORDS.filter(lambda w: w not in ("cnt", "count")), TOKENS, TIME_ENDS)
def test_a_count_word_beside_a_time_word_is_still_a_time_name(before: list[str], word: str,
                                                              after: list[str],
                                                              end: str) -> None:
    name = _name(before, word, [*after, end])
    assert not named_count(name), name
    assert name_rank(name, *TIME) >= 2, name


CODED = ["EDUCATION", "MARRIAGE", "SEX", *(f"PAY_{k}" for k in (0, 2, 3, 4, 5, 6)), "grade",
         "emp_length", "purpose", "home_ownership", "term", "REASON", "JOB", "ProductCD",
         "card4", "M4", "region_code", "branch_cat", "account_type", "risk_band"]


@given(st.sampled_from(CODED), st.integers(3, 10), st.integers(0, 1000))
def test_coded_categoricals_stay_categorical(name: str, levels: int, seed: int) -> None:
    assert not named_count(name)
    values = np.random.default_rng(seed).permutation(np.arange(-2, levels - 2).repeat(3))
    assert column_kind(pd.Series(values, name=name))[0] == "categorical", name


@given(st.sampled_from(["delinq_2yrs", "inq_last_6mths", "pub_rec", "open_acc_6m", "mort_acc",
                        "num_tl_90g_dpd_24m", "acc_now_delinq", "DEROG", "DELINQ", "NINQ",
                        "CLNO"]), st.integers(3, 10), st.integers(0, 1000))
def test_the_public_tables_counts_are_numeric(name: str, levels: int, seed: int) -> None:
    values = np.random.default_rng(seed).permutation(np.arange(levels).repeat(3))
    kind, why = column_kind(pd.Series(values, name=name))
    assert kind == "numeric" and "count" in why, (name, why)


def _hmeq(tmp: Path, n: int = 600) -> None:
    rng = np.random.default_rng(11)

    def frame(k: int) -> pd.DataFrame:
        return pd.DataFrame({"LOAN": rng.integers(11, 900, k) * 100.0,
                             "DEROG": rng.poisson(0.25, k).clip(0, 3).astype(float),
                             "DELINQ": rng.poisson(0.45, k).clip(0, 4).astype(float),
                             "NINQ": rng.poisson(1.2, k).clip(0, 6),
                             "PAY_0": rng.integers(-2, 8, k),  # ten of its codes
                             "BAD": rng.integers(0, 2, k)})

    frame(n).to_csv(tmp / "ref.csv", index=False)
    live = frame(n)
    live.loc[live.index[-200:], "DELINQ"] = 7.0  # more than the reference ever had
    live.insert(0, "loan_id", np.arange(1, n + 1))
    live["score"] = rng.random(n).round(4)
    live.drop(columns=["BAD"]).to_csv(tmp / "scored.csv", index=False)
    live[["loan_id", "BAD"]].to_csv(tmp / "outcomes.csv", index=False)


def test_init_types_hmeqs_counts_as_numbers_and_a_larger_count_is_no_new_category(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _hmeq(tmp_path)
    code, out, err = run_cli(
        ["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
         str(tmp_path / "scored.csv"), "--outcomes", str(tmp_path / "outcomes.csv"),
         "--model", "hmeq", "--connector-out", str(tmp_path / "c.yaml"), "--policy-out",
         str(tmp_path / "p.yaml"), "--pane", "100"], capsys)
    assert code == 0, err
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]["features"]
    for name in ("DEROG", "DELINQ", "NINQ"):
        assert feats[name]["type"] == "numeric", (name, out)
    assert feats["PAY_0"]["type"] == "categorical", out
    code, _, err = run_cli(["replay", "-c", str(tmp_path / "c.yaml"), "-p",
                            str(tmp_path / "p.yaml"), "-i", str(tmp_path / "scored.csv"),
                            str(tmp_path / "outcomes.csv"), "-o", str(tmp_path / "out"),
                            "--no-report", "-q", "--no-levels-cache"], capsys)
    assert code == 0, err
    lines = (tmp_path / "out" / "timeline.jsonl").read_text().splitlines()
    kinds = {s["signal"] for line in lines for s in yaml.safe_load(line).get("signals", [])
             if s.get("feature") == "DELINQ"}
    assert "out_of_range" in kinds and "new_category_rate" not in kinds, kinds
