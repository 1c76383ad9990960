"""A ragged row in a CSV sample (a row with fewer or more fields than the header) is named
by ``file:line``: pandas padded a short row and read on, so its values sat in other
columns and ``init`` failed to find the event time, showing the first good values of the
time column instead of the row that does not read."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.csvrows import first_ragged

from ._cli import run_cli


def _loans(tmp: Path, n: int = 60) -> list[str]:
    """A reference and a CSV sample whose event time is month text (``Jan-2024``); the
    sample's lines."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"loan_amnt": rng.integers(1000, 30000, n),
                          "grade": rng.choice(list("ABC"), n),
                          "score": rng.uniform(size=n).round(4),
                          "default": rng.integers(0, 2, n)})
    frame.to_csv(tmp / "ref.csv", index=False)
    live = frame.drop(columns=["default"])
    live.insert(0, "id", range(n))
    live.insert(1, "issue_date", pd.date_range("2020-01-01", periods=n, freq="MS")
                .strftime("%b-%Y"))
    return live.to_csv(index=False).splitlines()


def _init(tmp: Path, sample: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, _, err = run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                            str(tmp / sample), "--model", "m", "--connector-out",
                            str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml")],
                           capsys)
    return code, err


@pytest.mark.parametrize("shape", ["time dropped", "cut short", "two extra"])
def test_a_ragged_row_is_named_by_file_and_line(shape: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    lines = _loans(tmp_path)
    cells = lines[9].split(",")
    lines[9] = {"time dropped": ",".join([cells[0], *cells[2:]]),
                "cut short": cells[0],
                "two extra": ",".join([*cells, "x", "y"])}[shape]
    (tmp_path / "live.csv").write_text("\n".join(lines) + "\n")
    code, err = _init(tmp_path, "live.csv", capsys)
    assert code != 0
    first = err.splitlines()[0]
    assert f"live.csv:10: a ragged row: {len(lines[9].split(','))} field" in first, err
    assert "where the header has 5" in first and repr(lines[9]) in first, err
    assert "event time" not in err, err  # the cause, not what it broke downstream


def test_a_sample_without_ragged_rows_still_reads(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "live.csv").write_text("\n".join(_loans(tmp_path)) + "\n")
    code, err = _init(tmp_path, "live.csv", capsys)
    assert code == 0, err


def test_lines_count_quoted_newlines_blank_lines_and_gzip(tmp_path: Path) -> None:
    text = 'id,note,x\n1,"two\nlines",3\n\n2,b,4\n3,c\n4,d,5,6\n'
    (tmp_path / "s.csv").write_text(text)
    with gzip.open(tmp_path / "s.csv.gz", "wt") as f:
        f.write(text)
    for name in ("s.csv", "s.csv.gz"):
        row = first_ragged(tmp_path / name, ",", limit=100)
        assert row is not None and (row.line, row.fields, row.want, row.text) == \
            (6, 2, 3, "3,c"), row
    assert first_ragged(tmp_path / "s.csv", ",", limit=2) is None  # past the rows sampled
    # a headerless file: the count of --names, after the lines skipped
    (tmp_path / "n.csv").write_text("a;b\n1;2\n3\n")
    row = first_ragged(tmp_path / "n.csv", ";", limit=10, names=["a", "b"], skip=1)
    assert row is not None and (row.line, row.want) == (3, 2)
