"""init takes as the id the unique field the outcomes sample carries too, whatever its name:
Santander's ``ID_code`` and the SBA's ``LoanNr_ChkDgt`` are named like no id, and init
stopped with 'no field named like an id' though the outcomes file held just that field and
the label."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli as _cli


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], outcomes: bool) -> tuple[int, str]:
    n = 200
    rng = np.random.default_rng(4)
    pd.DataFrame({"target": rng.integers(0, 2, n), "var_0": rng.normal(size=n).round(4)}
                 ).to_csv(tmp / "train.csv", index=False)
    live = pd.DataFrame({"ID_code": [f"test_{i}" for i in range(n)],
                         "ts": 1_700_000_000 + 60 * np.arange(n),
                         "var_0": rng.normal(size=n).round(4), "score": 0.5})
    live.to_csv(tmp / "live.csv", index=False)
    pd.DataFrame({"ID_code": live["ID_code"], "target": rng.integers(0, 2, n)}).to_csv(
        tmp / "outcomes.csv", index=False)
    code, out, err = _cli(["init", "--reference", str(tmp / "train.csv"), "--sample",
                           str(tmp / "live.csv"),
                           *(["--outcomes", str(tmp / "outcomes.csv")] if outcomes else []),
                           "--model", "m", "--connector-out", str(tmp / "c.yaml"),
                           "--policy-out", str(tmp / "p.yaml")], capsys)
    return code, out + err


def test_the_field_outcomes_join_on_is_the_id(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _init(tmp_path, capsys, outcomes=True)
    assert code == 0, out
    streams = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"]
    assert streams["predictions"]["fields"]["event_id"] == "ID_code"
    assert streams["outcomes"]["fields"]["event_id"] == "ID_code"
    assert "id: ID_code" in out and "the outcomes sample carries it" in out


def test_without_outcomes_such_a_field_is_still_asked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _init(tmp_path, capsys, outcomes=False)
    assert code != 0 and "cannot find the id field" in out and "--id-field" in out
