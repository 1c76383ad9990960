"""A CSV without a header line is read with the column names its stream gives
(``csv: {names: [...]}``): the same records and lines as the same file with the header
line written in it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError, SourceError
from driftwatch.schema import FeatureSchema

from ._csvconn import csv_connector, one_stream

NAMES = ("id", "ts", "x", "cat", "score")
_FIELDS = ("event_id: id", "event_time: {path: ts, unit: s}",
           "features: {x: {path: x, type: numeric}, cat: {path: cat, type: categorical}}",
           "score: score")


def _rows(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"L{i:07d}|{1_700_000_000 + 60 * i}|{rng.normal(3.5, 0.4):.3f}|"
            f"{rng.choice(['R', 'B', 'C'])}|{rng.random():.4f}" for i in range(n)]


def _read(tmp: Path, name: str, csv_line: str, batch: int = 7, stop: int | None = None
          ) -> tuple[list, list]:
    """Ids, numbers and positions of every record read, and the bad records' (reason,
    line); with ``stop``, the source is closed after that many polls and reopened, as a
    restart from positions does."""
    conn = csv_connector(tmp, name, csv_line, fields=_FIELDS)
    src = FileSource(conn, FeatureSchema(), batch_size=batch, read_ahead=False)
    got, bad, polls = [], [], 0
    while (polled := src.poll()) is not None:
        polls += 1
        for b in polled.batches:
            got += zip(b.ids.tolist(), np.nan_to_num(b.numeric, nan=-9.5).tolist(),
                       b.categorical.tolist(), b.position.tolist(), strict=True)
        bad += [(r.reason, r.position) for r in polled.bad]
        if polls == stop:
            src.close()
    src.close()
    return got, bad


_NAMED = 'csv: {delimiter: "|", names: [id, ts, x, cat, score]}'


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 60), batch=st.integers(1, 20), stop=st.integers(1, 5),
       bad_at=st.integers(0, 70))
def test_a_headerless_file_reads_as_the_same_file_with_its_header(
    tmp_path: Path, n: int, batch: int, stop: int, bad_at: int,
) -> None:
    """Before: the file was refused (its first line reads as data). Its records, the lines
    they and a bad line are charged to, and a restart part way through are those of the
    file with its header (whose lines count one more)."""
    rows = _rows(n)
    rows.insert(min(bad_at, n), "broken|line")
    (tmp_path / "bare.txt").write_text("".join(r + "\n" for r in rows))
    (tmp_path / "head.txt").write_text("|".join(NAMES) + "\n" + "".join(r + "\n" for r in rows))
    bare, bare_bad = _read(tmp_path, "bare.txt", _NAMED, batch, stop)
    head, head_bad = _read(tmp_path, "head.txt", 'csv: {delimiter: "|"}', batch)
    assert [r[:3] for r in bare] == [r[:3] for r in head] and len(bare) == n
    assert [r[3] + 1 for r in bare] == [r[3] for r in head]
    assert [(w, line + 1) for w, line in bare_bad] == head_bad == [
        ("invalid_csv", min(bad_at, n) + 2)]
    # names equal to its header line: the header is skipped, not read as a record
    named, named_bad = _read(tmp_path, "head.txt", _NAMED, batch, stop)
    assert named == head and named_bad == head_bad


def test_a_count_of_names_unlike_the_fields_names_both_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "bare.txt").write_text("".join(r + "\n" for r in _rows(5)))
    conn = csv_connector(tmp_path, "bare.txt", 'csv: {delimiter: "|", names: [id, ts, x]}',
                         fields=("event_id: id", "event_time: {path: ts, unit: s}"))
    with pytest.raises(SourceError, match=r"^bare\.txt:1: its line holds 5 fields, "
                                          r"but 3 column names are given"):
        FileSource(conn, FeatureSchema())


def test_a_header_of_other_names_is_refused_not_read_as_data(tmp_path: Path) -> None:
    (tmp_path / "head.txt").write_text("ts|id|x|cat|score\n" + _rows(3)[0] + "\n")
    conn = csv_connector(tmp_path, "head.txt", _NAMED, fields=_FIELDS)
    with pytest.raises(SourceError, match=r"head\.txt:1: its first line is a header "
                                          r"\('ts\|id\|x\|cat\|score'\) that is not the "
                                          "column names given"):
        FileSource(conn, FeatureSchema())


def test_a_headerless_stream_is_refused_with_the_names_option_named(tmp_path: Path) -> None:
    (tmp_path / "bare.txt").write_text("".join(r + "\n" for r in _rows(5)))
    conn = csv_connector(tmp_path, "bare.txt", 'csv: {delimiter: "|"}', fields=_FIELDS)
    with pytest.raises(SourceError, match=r"its first line reads as data.*\(5 of them, "
                       r"separated by '\|'\), or name the columns on stream 'predictions': "
                       r"csv: \{names: \[\.\.\.\]\}"):
        FileSource(conn, FeatureSchema())


@pytest.mark.parametrize(("names", "col", "said"), [
    ("names: loan_id", 20, "expected a list of column names"),
    ("names: []", 20, "expected a list of column names"),
    ("names: [id, '', x]", 25, "expected a column name (text)"),
    ("names: [id, ts, id]", 29, "column name 'id' is given twice"),
])
def test_bad_names_are_located_in_the_connector(names: str, col: int, said: str) -> None:
    text = one_stream("a.csv", _FIELDS, "format: csv", "csv: {" + names + "}")
    with pytest.raises(ConnectorError) as info:
        parse_connector(text, file="t.yaml")
    assert f"t.yaml:10:{col}" in str(info.value) and said in str(info.value), str(info.value)


def test_names_are_for_csv_files_only() -> None:
    text = one_stream("a.jsonl", _FIELDS, "format: jsonl", "csv: {names: [id, ts]}")
    with pytest.raises(ConnectorError, match="csv options are for CSV files, not format: jsonl"):
        parse_connector(text, file="t.yaml")

