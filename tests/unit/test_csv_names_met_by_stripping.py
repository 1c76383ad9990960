"""Two CSV column names that are one once their spaces are dropped are refused, by name.

Found by the onboarding fuzz (test_onboard_any_table): a reference header ``pad ,pad``
became two columns named ``pad``, whose ``.str`` accessor does not exist (a DataFrame, not
a column), and ``init`` ended in an AttributeError traceback.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from driftwatch.csvpad import trimmed_frame

from ._cli import run_cli


def test_trimming_refuses_names_that_meet() -> None:
    frame = pd.DataFrame([["a", "b"]], columns=["pad ", "pad"])
    with pytest.raises(ValueError, match=r"columns 'pad ' and 'pad' are one name, 'pad'"):
        trimmed_frame(frame)


def test_init_says_which_columns_meet(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    rows = "\n".join(f"{i},t{i % 3},u{i % 2},{i % 2}" for i in range(40))
    (tmp_path / "reference.csv").write_text("x,pad ,pad,label\n" + rows + "\n")
    (tmp_path / "live.jsonl").write_text("".join(
        f'{{"id": {i}, "x": {i}, "pad": "t1"}}\n' for i in range(40)))
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "reference.csv"),
                              "--sample", str(tmp_path / "live.jsonl"), "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code != 0
    assert err.startswith("error: cannot read reference dataset "), err
    assert "columns 'pad ' and 'pad' are one name, 'pad'" in err
    assert "Traceback" not in err
