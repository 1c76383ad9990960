"""A column whose name no connector path can hold (``.1``, a name of spaces) is refused by
``init`` with its name and the fix, not written into a connector that then fails to load.

Found by the onboarding fuzz (test_onboard_any_table): a reference and a stream with a
column ``.1`` made ``init`` write ``path: ".1"``, and ``policy check`` (and ``replay``) then
refused the connector ``init`` had just written.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import run_cli


def _files(tmp: Path, odd: str) -> list[str]:
    rng = np.random.default_rng(0)
    n = 60
    pd.DataFrame({"income": rng.normal(size=n), odd: rng.normal(size=n),
                  "label": rng.integers(0, 2, n)}).to_parquet(tmp / "reference.parquet")
    with (tmp / "live.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": i, "ts": 1_700_000_000 + 60 * i,
                                 "income": float(rng.normal()), odd: float(rng.normal())})
                     + "\n")
    return ["init", "--reference", str(tmp / "reference.parquet"), "--sample",
            str(tmp / "live.jsonl"), "--connector-out", str(tmp / "c.yaml"),
            "--policy-out", str(tmp / "p.yaml")]


@pytest.mark.parametrize("odd", [".1", "a..b", "x.", "   "])
def test_init_refuses_a_name_no_path_can_hold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], odd: str) -> None:
    code, _, err = run_cli(_files(tmp_path, odd), capsys)
    assert code != 0, err
    assert "cannot be a connector field path" in err and repr(odd) in err, err
    assert "--ignore COL" in err
    assert not (tmp_path / "c.yaml").exists()


def test_ignoring_it_onboards_the_rest(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([*_files(tmp_path, ".1"), "--ignore", ".1"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["policy", "check", "--connector", str(tmp_path / "c.yaml"),
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, out + err
