"""A stream score with no reference score beside it: its name says P(good) or not, as it
would for a reference column; a P(good) score written as P(bad) turns every score-based
signal upside down."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli as _cli


def _files(tmp: Path, score: str, n: int = 500) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(n, 2))
    ref = pd.DataFrame(x, columns=["income", "utilization"])
    ref["default"] = (rng.random(n) < 0.2).astype(int)
    ref.to_csv(tmp / "ref.csv", index=False)
    live = pd.DataFrame(x, columns=["income", "utilization"])
    live.insert(0, "app_id", [f"a{i}" for i in range(n)])
    live.insert(1, "ts", 1_700_000_000 + np.arange(n))
    live[score] = rng.uniform(size=n)
    live.to_csv(tmp / "live.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[str, dict]:
    code, out, err = _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                           str(tmp / "live.csv"), "--model", "m", "--connector-out",
                           str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra],
                          capsys)
    assert code == 0, err
    return out, yaml.safe_load((tmp / "p.yaml").read_text())


@pytest.mark.parametrize(("name", "want"), [("p_good", "p_good"), ("prob_good", "p_good"),
                                            ("p_bad", "p_bad"), ("pd_score", "p_bad")])
def test_the_stream_scores_name_decides_without_a_reference_score(tmp_path, capsys, name,
                                                                   want):
    _files(tmp_path, name)
    out, pol = _init(tmp_path, capsys)
    line = next(ln for ln in out.splitlines() if ln.startswith("score:"))
    assert line.split()[1] == name
    assert pol["reference"]["score_is"] == want
    assert f"P({want[2:]})" in line


def test_score_is_flag_still_wins_over_the_name(tmp_path, capsys):
    _files(tmp_path, "p_good")
    _, pol = _init(tmp_path, capsys, "--score-is", "p_bad")
    assert pol["reference"]["score_is"] == "p_bad"
