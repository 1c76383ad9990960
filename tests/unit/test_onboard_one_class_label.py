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


@pytest.mark.parametrize(("value", "shown"), [(0, "0"), (1.0, "1.0"), ("no", "'no'")])
def test_a_label_of_one_class_is_named_in_the_refusal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object, shown: str) -> None:
    rng = np.random.default_rng(0)
    n = 300
    pd.DataFrame({"income": rng.lognormal(10, 0.5, n), "dti": rng.uniform(0, 1, n),
                  "default_flag": [value] * n}).to_csv(tmp_path / "ref.csv",
                                                                 index=False)
    pd.DataFrame({"id": np.arange(n), "ts": 1_700_000_000 + 60 * np.arange(n),
                  "income": rng.lognormal(10, 0.5, n), "dti": rng.uniform(0, 1, n),
                  "score": rng.uniform(0, 1, n)}).to_csv(tmp_path / "live.csv", index=False)
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                            str(tmp_path / "live.csv"), "--connector-out",
                            str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                           capsys)
    assert code != 0
    assert f"default_flag holds one value in the reference ({shown})" in err, err
    assert "needs rows of both outcomes" in err, err
    assert "Traceback" not in err


def test_a_constant_feature_the_sample_lacks_gets_the_usual_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(1)
    n = 200
    pd.DataFrame({"income": rng.lognormal(10, 0.5, n), "branch": ["b7"] * n,
                  "bad": rng.integers(0, 2, n)}).to_csv(tmp_path / "ref.csv", index=False)
    pd.DataFrame({"id": np.arange(n), "ts": 1_700_000_000 + 60 * np.arange(n),
                  "income": rng.lognormal(10, 0.5, n), "score": rng.uniform(0, 1, n)}).to_csv(
        tmp_path / "live.csv", index=False)
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                            str(tmp_path / "live.csv"), "--connector-out",
                            str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                           capsys)
    assert code != 0 and "holds one value" not in err, err
