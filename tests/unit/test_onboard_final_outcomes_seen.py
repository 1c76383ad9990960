"""A final outcome of a recognised loan status that the outcomes sample holds and the
reference lacks goes on its side. Lending Club's ``Default`` (bad, a few dozen loans in
millions) was written ``pending`` whenever the outcomes sample held one and the reference
did not, so each such loan was left out of the label join as "no outcome yet"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.outcomewords import LENDING_CLUB, LOAN_STATES, final_side, word_side

from ._cli import run_cli

FINALS = [*LENDING_CLUB.bad, *LENDING_CLUB.good]


@given(st.sampled_from(FINALS), st.sets(st.sampled_from([*FINALS, *LOAN_STATES[:5]])))
def test_a_final_outcome_of_a_told_status_reads_on_its_words_side(
        value: str, others: set[str]) -> None:
    told = LENDING_CLUB.told_by({v.lower() for v in {value, *others}})
    side = final_side(value, [value, *others])
    assert side == (word_side(value) if told else None)


def test_init_writes_a_default_the_reference_lacks_as_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    n = 600
    ref = pd.DataFrame({"loan_amnt": rng.integers(1000, 30000, n),
                        "loan_status": rng.choice(["Charged Off", "Fully Paid"], n)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live = ref.drop(columns="loan_status")
    live.insert(0, "id", range(n))
    live.insert(1, "ts", 1.7e9 + np.arange(n) * 3600.0)
    live["score"] = rng.uniform(size=n).round(4)
    live.to_csv(tmp_path / "live.csv", index=False)
    status = rng.choice(["Charged Off", "Fully Paid", "Current", "Default"], n)
    pd.DataFrame({"id": range(n), "loan_status": status}).to_csv(tmp_path / "out.csv",
                                                                 index=False)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                              str(tmp_path / "live.csv"), "--outcomes",
                              str(tmp_path / "out.csv"), "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "outcomes"]["fields"]["label"]
    assert "Default" in label["bad"] and "Default" not in label["pending"], label
    assert "Current" in label["pending"], label
    assert "'Default' (bad) in the outcomes: a final outcome" in out, out
