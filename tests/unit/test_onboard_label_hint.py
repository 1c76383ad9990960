"""Without an outcomes sample, a label whose name says nothing (Give Me Some Credit's
``SeriousDlqin2yrs``, German credit's ``class``) kept in the scored file is not found: init
said ``label: none`` and watched the outcome as a feature without a word. Its line now names
the two-valued columns the sample carries, with the flag that takes one as the label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.finding import no_label_note
from driftwatch.onboard.sample import Sample

from ._cli import run_cli

#: Names that say nothing of a label (the label's name patterns match none of them)
NAMES = st.sampled_from(["SeriousDlqin2yrs", "class", "credit_risk", "HasPhone", "flag_a",
                         "own_telephone", "foreign_worker", "kind_b"])


@given(two=st.lists(NAMES, min_size=1, max_size=8, unique=True),
       carried=st.data(), seed=st.integers(0, 1000))
def test_the_note_names_every_two_valued_column_the_sample_carries(
        two: list[str], carried: st.DataObject, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = pd.DataFrame({c: rng.integers(1, 3, 20) for c in two})
    ref["amount"] = rng.random(20)
    in_sample = carried.draw(st.lists(st.sampled_from(two), unique=True))
    sample = Sample([{**{c: 1 for c in in_sample}, "amount": 0.5}], "live.csv")
    note = no_label_note(ref, [*two, "amount"], sample)
    assert note.startswith("no two-valued column named like a label in the reference")
    assert "amount" not in note
    if not in_sample:
        assert "--label-field" not in note, note
        return
    # the first six, in the reference's order
    expected = [c for c in two if c in in_sample]
    at = [note.find(f" {c}") for c in expected[:6]]
    assert -1 not in at and at == sorted(at), note
    assert (len(expected) > 6) == (f"and {len(expected) - 6} more" in note), note
    flag = f"--label-field {in_sample[0]}" if len(in_sample) == 1 else "--label-field NAME"
    assert flag in note, note


def test_init_names_give_me_some_credits_label_kept_in_the_scored_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)

    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame({"SeriousDlqin2yrs": (rng.random(n) < 0.07).astype(int),
                             "age": rng.integers(21, 90, n),
                             "MonthlyIncome": rng.lognormal(8.5, 0.6, n).round()})

    frame(300).to_csv(tmp_path / "train.csv", index=False)
    frame(300).to_csv(tmp_path / "live.csv", index=False)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "train.csv"),
                              "--sample", str(tmp_path / "live.csv"), "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("label: none"))
    assert "--label-field SeriousDlqin2yrs" in line, line
