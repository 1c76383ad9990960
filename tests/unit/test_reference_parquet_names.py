"""A Parquet reference is read as Parquet whatever it is called: ``.pq`` and ``.parq``
(NannyML ships ``employment_MA_reference.pq``), or any name over Parquet's magic bytes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from driftwatch.csvsep import file_separator
from driftwatch.onboard.consistency import reference_columns
from driftwatch.windows.profile import is_parquet, read_reference_table, reference_separator


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"AGEP": [62.0, 48.0, 30.0],
                         "SCHL": pd.Categorical(["16", "21", "16"]),
                         "employed": [0, 1, 1]})


@pytest.mark.parametrize("name", ["ref.pq", "ref.parq", "ref.PARQUET", "ref.data", "ref"])
def test_a_parquet_reference_is_read_whatever_its_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    _frame().to_parquet(path)
    assert is_parquet(path)
    assert reference_separator(path) is None
    got = read_reference_table(path)
    pd.testing.assert_frame_equal(got, _frame())
    assert reference_columns(path) == ["AGEP", "SCHL", "employed"]


def test_a_saved_pandas_index_is_no_reference_column(tmp_path: Path) -> None:
    path = tmp_path / "ref.pq"
    _frame().set_index("AGEP").to_parquet(path)
    assert reference_columns(path) == list(read_reference_table(path).columns)


def test_a_csv_is_not_taken_for_parquet(tmp_path: Path) -> None:
    path = tmp_path / "ref.data"
    _frame().to_csv(path, index=False)
    assert not is_parquet(path)
    assert list(read_reference_table(path).columns) == ["AGEP", "SCHL", "employed"]


def test_a_binary_header_reads_as_one_column_not_a_csv_error(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x00\x01abc\rdef,\r\x90\xff\n,;|")
    assert file_separator(path) == ","


def test_a_zip_archive_is_refused_with_what_to_do(tmp_path: Path) -> None:
    import zipfile

    from driftwatch.connectors.readers import detect_format
    from driftwatch.errors import SourceError

    path = tmp_path / "book.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    said = r"zip archive \(an Excel \.xlsx workbook\?\).*save it as CSV"
    with pytest.raises(SourceError, match=said):
        read_reference_table(path)
    with pytest.raises(SourceError, match=said):
        detect_format(path)


def test_an_xls_workbook_is_refused_with_what_to_do(tmp_path: Path) -> None:
    """UCI's "default of credit card clients" is an .xls file (OLE2, not a zip): before,
    pandas' CSV reader failed on its first byte with a codec error."""
    from driftwatch.connectors.readers import detect_format
    from driftwatch.errors import SourceError

    path = tmp_path / "default of credit card clients.xls"
    path.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(512))
    said = r"is an Excel \.xls workbook: .*save it as CSV or Parquet"
    with pytest.raises(SourceError, match=said):
        read_reference_table(path)
    with pytest.raises(SourceError, match=said):
        detect_format(path)


@pytest.mark.parametrize("writer", ["file", "stream"])
def test_an_arrow_file_is_refused_with_what_to_do(tmp_path: Path, writer: str) -> None:
    """pandas' ``to_feather`` (an Arrow IPC file) or an Arrow stream, given as the
    reference or the stream: before, the reference failed with a codec error and replay,
    reading it as a CSV, ended in pyarrow's traceback."""
    import pyarrow as pa
    import pyarrow.ipc

    from driftwatch.connectors.readers import detect_format
    from driftwatch.errors import SourceError

    table = pa.Table.from_pandas(_frame(), preserve_index=False)
    path = tmp_path / "cs-training.feather"
    new = pa.ipc.new_file if writer == "file" else pa.ipc.new_stream
    with new(str(path), table.schema) as w:
        w.write_table(table)
    said = r"is an Arrow IPC .*save it as CSV or Parquet"
    with pytest.raises(SourceError, match=said):
        read_reference_table(path)
    with pytest.raises(SourceError, match=said):
        detect_format(path)


def test_a_csv_whose_first_name_starts_like_arrow_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ref.data"
    path.write_text("ARROW1,x\n1,2\n3,4\n")
    assert list(read_reference_table(path).columns) == ["ARROW1", "x"]


@pytest.mark.parametrize("name", ["cs-training.feather.gz", "cs-training.feather",
                                  "cs-training.csv.gz"])
def test_an_arrow_file_gzipped_or_not_is_refused_by_every_reference_read(
    tmp_path: Path, name: str,
) -> None:
    """A gzipped ``to_feather`` file: the check read its raw first bytes (gzip's), so the
    reference failed with a codec error; ``policy check`` and ``replay``, whose notes read
    the head first, failed so even on an uncompressed one. Every read now says what it is."""
    import gzip

    import pyarrow as pa
    import pyarrow.ipc

    from driftwatch.errors import SourceError
    from driftwatch.windows.profile import reference_notes

    table = pa.Table.from_pandas(_frame(), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    data = sink.getvalue().to_pybytes()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    said = (rf"^reference dataset {path} is an Arrow IPC \(Feather\) file: save it as CSV or "
            r"Parquet \(one header line with the column names\)$")
    for read in (read_reference_table, reference_separator, reference_columns,
                 lambda p: reference_notes(p, "the reference")):
        with pytest.raises(SourceError, match=said):
            read(path)


def test_a_missing_reference_still_says_it_cannot_be_read(tmp_path: Path) -> None:
    from driftwatch.errors import SourceError

    with pytest.raises(SourceError, match=r"^cannot read reference dataset .*No such file"):
        read_reference_table(tmp_path / "absent.csv")


@pytest.mark.parametrize("name", ["ref.jsonl", "ref.jsonl.gz", "ref.json"])
def test_a_json_reference_is_refused_with_what_to_do(tmp_path: Path, name: str) -> None:
    """A JSON-lines file (a sample of the stream) given as the reference: before, it was
    read as a CSV, its first line taken for column names, and refused for a ragged row
    (``16 fields where the header has 17``)."""
    import gzip

    from driftwatch.errors import SourceError

    lines = [f'{{"id": "a{i}", "applicant": {{"age": {20 + i}, "income": {1000 * i}, '
             f'"kind": "x"}}}}' for i in range(5)]
    text = ("[\n" + ",\n".join(lines) + "\n]\n" if name.endswith(".json")
            else "\n".join(lines) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    with pytest.raises(SourceError, match=r"holds JSON \(JSON lines\?\), not a table: save "
                                          "it as CSV or Parquet"):
        read_reference_table(path)


def test_a_csv_whose_names_are_bracketed_is_read(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("[id],[income]\na,1\nb,2\n")
    assert list(read_reference_table(path).columns) == ["[id]", "[income]"]
