"""A ragged row anywhere in a reference table (fewer or more fields than its header, or
than the names given) is refused with ``file:line``, as init's samples are: pandas padded a
short row and read on, so its values sat silently in other features' columns (a label of
4753, an amount in the income bins)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.csvrows import RAGGED_ROWS
from driftwatch.errors import SourceError
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli

NAMES = ["income", "amount", "score", "label"]


def _rows(n: int) -> list[str]:
    return [f"{20_000 + 37 * i},{1000 + i},0.{i % 10}{i % 7},{i % 2}" for i in range(n)]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 60), at=st.integers(0, 59), shape=st.sampled_from(
    ["short", "long", "one"]), form=st.sampled_from(["header", "names", "names+header"]),
    gz=st.booleans())
def test_a_ragged_row_is_refused_at_its_line(tmp_path: Path, n: int, at: int, shape: str,
                                             form: str, gz: bool) -> None:
    """Each form of the table (a header; names given, with or without a header equal to
    them), a row cut short, one too long or one field alone, anywhere among the first rows:
    refused at its line as an editor counts it."""
    at = at % n
    rows = _rows(n)
    cells = rows[at].split(",")
    rows[at] = {"short": ",".join(cells[1:]), "long": ",".join([*cells, "9"]),
                "one": cells[0]}[shape]
    head = form != "names"
    text = (",".join(NAMES) + "\n" if head else "") + "\n".join(rows) + "\n"
    path = tmp_path / ("ref.csv.gz" if gz else "ref.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    line = at + 1 + int(head)
    with pytest.raises(SourceError) as info:
        read_reference_table(path, None if form == "header" else NAMES)
    msg = str(info.value)
    fields = len(rows[at].split(","))
    assert msg.startswith(f"reference dataset {path}:{line}: a ragged row: {fields} field"), msg
    assert ("where the header has 4" if form == "header" else
            "where 4 column names are given (the policy's reference:") in msg, msg
    assert repr(rows[at]) in msg and msg.endswith("fix or drop that line of the reference")


def test_a_table_without_ragged_rows_reads_as_before(tmp_path: Path) -> None:
    (tmp_path / "ref.csv").write_text(",".join(NAMES) + "\n" + "\n".join(_rows(50)) + "\n")
    df = read_reference_table(tmp_path / "ref.csv")
    assert list(df.columns) == NAMES and len(df) == 50
    assert df["label"].tolist() == [i % 2 for i in range(50)]


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(past=st.integers(0, 3000), shape=st.sampled_from(["short", "long", "one"]),
       form=st.sampled_from(["header", "names"]), gz=st.booleans(),
       quoted=st.integers(0, 3))
def test_a_ragged_row_past_the_first_rows_is_refused_at_its_line(
        tmp_path: Path, past: int, shape: str, form: str, gz: bool, quoted: int) -> None:
    """Past the first RAGGED_ROWS records (read by the csv module), the whole table is
    searched too: a row cut short there had been read padded, its values in other
    features' bins. Quoted fields holding line ends before it make its line differ from
    its record number; the line is the editor's."""
    n = RAGGED_ROWS + past + 5
    rows = _rows(n)
    for i in range(quoted):  # a note with a line end inside, in the label's place
        rows[10 + i] = ",".join(rows[10 + i].split(",")[:3]) + ',"1\nsee note"'
    at = RAGGED_ROWS + past
    cells = rows[at].split(",")
    rows[at] = {"short": ",".join(cells[:3]), "long": ",".join([*cells, "9"]),
                "one": cells[0]}[shape]
    head = form == "header"
    text = (",".join(NAMES) + "\n" if head else "") + "\n".join(rows) + "\n"
    path = tmp_path / ("ref.csv.gz" if gz else "ref.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    with pytest.raises(SourceError) as info:
        read_reference_table(path, None if head else NAMES)
    line = at + 1 + int(head) + quoted
    fields = len(rows[at].split(","))
    assert str(info.value).startswith(
        f"reference dataset {path}:{line}: a ragged row: {fields} field"), str(info.value)


def test_a_long_table_with_quoted_line_ends_and_blank_lines_reads_as_before(
        tmp_path: Path) -> None:
    """No row refused that the csv module reads right: quoted line ends, blank lines and a
    line of spaces (no record, as pandas reads it) past the first rows."""
    rows = _rows(RAGGED_ROWS + 500)
    rows[RAGGED_ROWS + 7] = ",".join(rows[RAGGED_ROWS + 7].split(",")[:3]) + ',"1\nnote"'
    rows.insert(RAGGED_ROWS + 100, "")
    rows.insert(RAGGED_ROWS + 200, "   ")
    (tmp_path / "ref.csv").write_text(",".join(NAMES) + "\n" + "\n".join(rows) + "\n")
    df = read_reference_table(tmp_path / "ref.csv")
    assert len(df) == RAGGED_ROWS + 500
    assert df["income"].notna().all()


@pytest.mark.parametrize("command", ["init", "profile", "replay"])
def test_commands_that_read_the_reference_refuse_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        command: str) -> None:
    rows = _rows(300)
    good = ",".join(NAMES) + "\n" + "\n".join(rows) + "\n"
    rows[5] = ",".join(rows[5].split(",")[1:])  # the income dropped: a shifted row
    bad = ",".join(NAMES) + "\n" + "\n".join(rows) + "\n"
    monkeypatch.chdir(tmp_path)
    Path("live.csv").write_text("request_id,ts,income,amount,score\n" + "".join(
        f"r{i},{1_700_000_000 + 60 * i},{20_000 + i},{1000 + i},0.{i % 10}\n"
        for i in range(200)))
    init = ["init", "-r", "ref.csv", "-s", "live.csv", "--connector-out", "c.yaml",
            "--policy-out", "p.yaml"]
    if command == "replay":  # a policy written from the good table, then the bad one
        Path("ref.csv").write_text(good)
        code, _, err = run_cli(init, capsys)
        assert code == 0, err
    Path("ref.csv").write_text(bad)
    args = {"init": init, "profile": ["profile", "ref.csv", "-o", "p.json"],
            "replay": ["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                       "live.csv", "--out", "o", "--quiet", "--no-report"]}[command]
    code, out, err = run_cli(args, capsys)
    assert code != 0, out
    assert "ref.csv:7: a ragged row: 3 fields where the header has 4" in err, err
    assert "Traceback" not in out + err
