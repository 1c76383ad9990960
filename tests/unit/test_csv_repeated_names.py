"""A repeated CSV header name is ``a``, ``a.1``, ... in every reader, as pandas names it.

Found while fuzzing onboarding (test_onboard_any_table): init (pandas) read a header
``id,ts,a,a`` as ``a`` and ``a.1`` and mapped both; the replay's stream reader kept two
columns named ``a``, so ``a.1`` was missing from every record and each window raised a
missing-rate data-quality fault that was not in the data.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.csvpad import csv_names

from ._cli import init_then_replay


@pytest.mark.parametrize("header", ["a,a,a.1,a", "x,,x,x.1,,x", "b.1,b,b,b", "a, a"])
def test_names_are_the_ones_pandas_gives(header: str) -> None:
    names = header.split(",")
    text = header + "\n" + ",".join("1" * len(names)) + "\n"
    pandas = list(pd.read_csv(io.StringIO(text), skipinitialspace=True).columns)
    assert csv_names(names) == pandas


def test_replay_reads_both_columns_init_mapped(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    n = 100
    (tmp_path / "ref.csv").write_text("a,a,label\n" + "".join(
        f"{rng.normal():.3f},{rng.normal() + 5:.3f},{int(rng.integers(0, 2))}\n"
        for _ in range(n)))
    (tmp_path / "live.csv").write_text("id,ts,a,a\n" + "".join(
        f"{i},{1_700_000_000 + 60 * i},{rng.normal():.3f},{rng.normal() + 5:.3f}\n"
        for i in range(n)))
    (tmp_path / "out.csv").write_text("id,label\n" + "".join(
        f"{i},{int(rng.integers(0, 2))}\n" for i in range(n)))
    said_init, said_replay = init_then_replay(tmp_path, capsys, reference="ref.csv",
                                              sample="live.csv", outcomes="out.csv")
    assert "a.1: numeric" in said_init, said_init
    assert "missing_rate[a.1]" not in said_replay, said_replay
    lines = (tmp_path / "o" / "timeline.jsonl").read_text().splitlines()
    for rec in map(json.loads, lines):
        assert "a.1" in rec["features"], rec["features"]
