"""A count with few values in the reference (late payments, dependents, open loans) is
a number to init, not a category: a count the reference never reached is a larger one,
which out-of-range and the drift bins see, not a "new category" that closes the
data-quality gate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.infer import column_kind

from ._cli import run_cli
from .test_onboard_count_names import _gmsc, _init

COUNTS = st.sampled_from(["NumberOfDependents", "number_of_open_loans", "num_late",
                          "no_of_cards", "cnt_inquiries", "inquiry_count", "times_late",
                          "NumberOfTimes90DaysLate", "count_accounts"])
OTHERS = st.sampled_from(["grade", "region_code", "term", "level", "band", "tier",
                          "branch_cat", "num_cat"])


@given(name=COUNTS, levels=st.integers(3, 10), seed=st.integers(0, 1000))
def test_a_count_with_few_values_is_numeric(name: str, levels: int, seed: int) -> None:
    values = np.random.default_rng(seed).permutation(np.arange(levels).repeat(3))
    kind, why = column_kind(pd.Series(values, name=name))
    assert kind == "numeric" and "count" in why, (name, why)


@given(name=st.one_of(COUNTS, OTHERS), seed=st.integers(0, 1000))
def test_a_two_valued_count_and_other_small_integers_stay_categorical(name: str,
                                                                      seed: int) -> None:
    rng = np.random.default_rng(seed)
    assert column_kind(pd.Series(rng.integers(0, 2, 30), name=name))[0] == "categorical"
    if "cat" in name or not any(w in name.lower() for w in ("num", "count", "cnt", "times",
                                                           "no_of")):
        # a code (branch_cat) or a name that says nothing: categories, as before
        small = pd.Series(np.arange(5).repeat(4), name=name)
        assert column_kind(small)[0] == "categorical", name


def test_init_types_give_me_some_credits_counts_as_numbers_and_a_new_count_is_no_new_category(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gmsc(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--pane", "100")
    assert code == 0, err
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    feats = c["source"]["streams"]["predictions"]["fields"]["features"]
    for name in ("NumberOfTime30-59DaysPastDueNotWorse", "NumberOfTimes90DaysLate"):
        assert feats[name]["type"] == "numeric", feats[name]
    # the live feed reaches counts the reference never did
    scored = pd.read_csv(tmp_path / "scored.csv")
    scored.loc[scored.index[-50:], "NumberOfTimes90DaysLate"] = 7
    scored.to_csv(tmp_path / "scored.csv", index=False)
    code, _, err = run_cli(["replay", "-c", str(tmp_path / "c.yaml"), "-p",
                            str(tmp_path / "p.yaml"), "-i", str(tmp_path / "scored.csv"),
                            str(tmp_path / "outcomes.csv"), "--reference",
                            str(tmp_path / "cs-training.csv"), "-o", str(tmp_path / "out"),
                            "--no-report", "-q", "--no-levels-cache"], capsys)
    assert code == 0, err
    lines = (tmp_path / "out" / "timeline.jsonl").read_text().splitlines()
    seen = [s for line in lines for s in yaml.safe_load(line).get("signals", [])
            if s.get("feature") == "NumberOfTimes90DaysLate"]
    kinds = {s["signal"] for s in seen}
    assert "out_of_range" in kinds and "new_category_rate" not in kinds, kinds
    # the larger counts are out of the reference's range in the last window
    assert max(s["value"] for s in seen if s["signal"] == "out_of_range") > 0.2


@given(words=st.lists(st.sampled_from(["Real", "Estate", "Loans", "Or", "Lines", "Open",
                                       "Cards", "Late", "Payments", "Trades"]),
                      min_size=1, max_size=4),
       snake=st.booleans(), levels=st.integers(3, 10))
def test_a_name_that_starts_with_number_is_a_count(words: list[str], snake: bool,
                                                   levels: int) -> None:
    # Give Me Some Credit's NumberRealEstateLoansOrLines: "Number" without "Of"
    name = ("number_" + "_".join(w.lower() for w in words)) if snake \
        else "Number" + "".join(words)
    kind, why = column_kind(pd.Series(np.arange(levels).repeat(3), name=name))
    assert kind == "numeric" and "count" in why, (name, why)
