"""A reference whose label holds one class: init says so, not only "not found".

A label column of one value cannot be told from a constant feature, so init took it for a
feature the sample lacked and stopped with "reference columns not found in the sample:
label" and the generic hint; the user never learnt that the training extract held only
good loans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import run_cli


def test_a_label_of_one_class_is_named_in_the_refusal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    n = 300
    pd.DataFrame({"income": rng.lognormal(10, 0.5, n), "dti": rng.uniform(0, 1, n),
                  "default_flag": np.zeros(n, dtype=int)}).to_csv(tmp_path / "ref.csv",
                                                                 index=False)
    pd.DataFrame({"id": np.arange(n), "ts": 1_700_000_000 + 60 * np.arange(n),
                  "income": rng.lognormal(10, 0.5, n), "dti": rng.uniform(0, 1, n),
                  "score": rng.uniform(0, 1, n)}).to_csv(tmp_path / "live.csv", index=False)
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                            str(tmp_path / "live.csv"), "--connector-out",
                            str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                           capsys)
    assert code != 0
    assert "default_flag holds one value in the reference (0)" in err, err
    assert "needs rows of both outcomes" in err, err
    assert "Traceback" not in err
