"""A stream file whose bytes are another format than its name says (pandas' ``to_feather``
or ``to_parquet`` saved as ``scored.csv``, an Excel workbook named ``.csv``) is refused
with one line that names the file, what it is and the fix, by ``init``'s sample reader and
by ``replay``: the CSV parser had failed on its bytes with a traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import run_cli


def _tables(tmp: Path) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"request_id": [f"r{i}" for i in range(400)],
                       "ts": 1_700_000_000 + 60 * np.arange(400),
                       "income": rng.integers(1000, 9000, 400),
                       "score": rng.random(400).round(3)})
    df.drop(columns=["request_id", "ts"]).assign(label=rng.integers(0, 2, 400)).to_csv(
        tmp / "ref.csv", index=False)
    df.to_csv(tmp / "live.csv", index=False)
    return df


WRITERS = {
    "feather": lambda df, p: df.to_feather(p),
    "parquet": lambda df, p: df.to_parquet(p),
}
SAID = {"feather": "is an Arrow IPC (Feather) file, not CSV",
        "parquet": "is a Parquet file, not CSV"}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_binary_table_named_csv_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        kind: str) -> None:
    monkeypatch.chdir(tmp_path)
    df = _tables(tmp_path)
    init = ["init", "-r", "ref.csv", "-s", "live.csv", "--connector-out", "c.yaml",
            "--policy-out", "p.yaml"]
    code, _, err = run_cli(init, capsys)
    assert code == 0, err
    WRITERS[kind](df, tmp_path / "live.csv")  # the same rows, saved in another format
    code, out, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                              "--input", "live.csv", "--out", "o", "--quiet", "--no-report"],
                             capsys)
    assert code != 0
    assert f"live.csv {SAID[kind]}" in err, err
    assert "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
    code, out, err = run_cli([*init, "--force"], capsys)
    assert code != 0 and f"live.csv {SAID[kind]}" in err, err
    assert "Traceback" not in out + err
