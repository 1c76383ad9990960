"""A count flag given 0 (or a negative number) is refused in one line by argparse, never a
hang or a traceback.

Before: ``replay --batch-size 0`` polled empty batches for ever; ``init --pane 0`` and
``profile --bins 0`` ended in ``ZeroDivisionError``, ``profile --fine-bins 0`` in a
``ValueError`` from numpy, and ``profile --bins 7`` (200 fine bins) in ``fine_bins must be a
multiple of coarse_bins`` raised from the bin layout; ``policy explain --window-size 0``
said the policy's count window was a time window."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import run_cli


@pytest.mark.parametrize(("args", "said"), [
    (["replay", "-c", "c.yaml", "-i", "p.jsonl", "-o", "out", "--batch-size", "0"],
     "argument --batch-size: expected a whole number of at least 1, found '0'"),
    (["init", "-r", "ref.csv", "-s", "live.csv", "--pane", "0"],
     "argument --pane: expected a whole number of at least 1, found '0'"),
    (["init", "-r", "ref.csv", "-s", "live.csv", "--rows", "-5"],
     "argument --rows: expected a whole number of at least 1, found '-5'"),
    (["profile", "ref.csv", "-o", "p.json", "--bins", "0"],
     "argument --bins: expected a whole number of at least 2, found '0'"),
    (["profile", "ref.csv", "-o", "p.json", "--fine-bins", "0"],
     "argument --fine-bins: expected a whole number of at least 10, found '0'"),
    (["profile", "ref.csv", "-o", "p.json", "--top-k", "zero"],
     "argument --top-k: expected a whole number of at least 1, found 'zero'"),
    (["policy", "explain", "p.yaml", "--window-size", "0"],
     "argument --window-size: expected a whole number of at least 1, found '0'"),
])
def test_a_count_below_its_least_value_is_one_line(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_cli(args, capsys)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert said in err.splitlines()[-1]
    assert "Traceback" not in err


def test_profile_fine_bins_must_split_every_coarse_bin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    pd.DataFrame({"income": rng.normal(3000, 400, 200)}).to_csv("ref.csv", index=False)
    code, _, err = run_cli(["profile", "ref.csv", "-o", "p.json", "--bins", "7"], capsys)
    assert (code, err) == (2, "error: --fine-bins must be a multiple of --bins (7), "
                              "found 200\n")
    assert not (tmp_path / "p.json").exists()
    code, out, _ = run_cli(["profile", "ref.csv", "-o", "p.json", "--bins", "8"], capsys)
    assert code == 0 and out.startswith("wrote p.json: 1 numeric")
