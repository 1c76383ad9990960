"""A semicolon CSV with decimal commas (``3644,09``), as European exports write it, is read
as numbers everywhere: the decimal mark comes from the file's head, a connector's
``csv: {decimal: ","}`` settles it, and each command says so in one line. Thousands points
before a decimal comma (``1.234,56``) say the comma too, and are said (only ``format:
money`` reads them); commas beside points keep the point and are said."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource, separator_notes
from driftwatch.connectors.probe import sample_records
from driftwatch.csvdecimal import DecimalMark, file_decimal, text_decimal
from driftwatch.errors import ConnectorError
from driftwatch.onboard.sample import read_sample
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from ._csvconn import csv_connector

HEAD = '"id";"x"\n'


@pytest.mark.parametrize(("text", "sep", "mark", "ambiguous"), [
    (HEAD + "1;3644,09\n2;-12,5\n", ";", ",", False),
    (HEAD + '1;"3644,09"\n', ";", ",", False),  # quoted, as some exports write every field
    (HEAD + "1;1,5e-3\n2;2,25E+04\n", ";", ",", False),
    ('"id"\t"x"\n1\t0,5\n', "\t", ",", False),
    ("id|x\n1|0,5\n", "|", ",", False),
    (HEAD + "1;3644.09\n", ";", ".", False),
    (HEAD + "1;1700000000\n2;7\n", ";", ".", False),  # integers: nothing to tell
    (HEAD + "1;abc,def\n2;1,5x\n", ";", ".", False),  # text with commas is not a number
    ('id,x\n1,"3,5"\n', ",", ".", False),  # a comma file keeps the point
    (HEAD + "1;3,5\n2;1.5\n", ";", ".", True),  # both marks: cannot tell
    # thousands points before a decimal comma: no decimal point reads them
    (HEAD + "1;3,5\n2;1.234,56\n", ";", ",", False),
    (HEAD + "1;1.234.567,5\n", ";", ",", False),
    (HEAD + "1;3.5\n2;1.234,56\n", ";", ".", True),  # beside a decimal point: cannot tell
    (HEAD + "1;1.234,56 €\n2;€ -7,5\n", ";", ",", False),  # amounts tell the mark too
    (HEAD + "1;$3.50\n", ";", ".", False),
    # rates tell the mark as bare numbers do: a file whose only decimals are rates
    (HEAD + "1;12,5%\n2;7,25 %\n", ";", ",", False),
    (HEAD + "1;12.5%\n", ";", ".", False),
    (HEAD + "1;12,5%\n2;1.5\n", ";", ".", True),
    ('"id";"x;y"\n', ";", ".", False),  # a bare header
])
def test_the_rule_on_many_shapes(text: str, sep: str, mark: str, ambiguous: bool) -> None:
    found = text_decimal(text, sep)
    assert (found.mark, found.ambiguous) == (mark, ambiguous), found


def test_the_rule_reads_the_head_of_a_gzip_file_and_only_the_head(tmp_path: Path) -> None:
    body = "".join(f"{i};{i}\n" for i in range(20_000)) + "20000;3,5\n"
    (tmp_path / "late.csv").write_text(HEAD + body)
    assert file_decimal(tmp_path / "late.csv", ";").mark == "."  # past 64 KiB: unseen
    with gzip.open(tmp_path / "p.csv.gz", "wt") as f:
        f.write(HEAD + "1;3,5\n")
    assert file_decimal(tmp_path / "p.csv.gz", ";") == DecimalMark(",", "3,5")
    # a head cut inside a row leaves that row out: "1,5" here was "1,5.7"
    assert text_decimal(HEAD + "1;2\n2;1,5", ";", complete=False).mark == "."


# -- the connector setting ---------------------------------------------------------------


def _connector(tmp: Path, path: str, csv_line: str = "", *, fmt: str = "csv",
               features: str = "x: {path: x, type: numeric}") -> object:
    return csv_connector(tmp, path, csv_line, fmt=fmt, fields=(
        "event_id: id", "event_time: {path: ts, unit: s}", f"features: {{{features}}}",
        "score: score"))


@pytest.mark.parametrize(("line", "where", "message"), [
    ('csv: {decimal: ";"}', "10:22", "expected the decimal mark \".\" or \",\", found ';'"),
    ("csv: {decimal: comma}", "10:22", "expected the decimal mark"),
    ("csv: {decimal: 1}", "10:22", "expected text, found 1"),
    ('csv: {delimiter: ",", decimal: ","}', "10:38",
     "a comma-separated file cannot hold decimal commas"),
])
def test_a_decimal_that_is_not_a_mark_is_a_located_error(
    tmp_path: Path, line: str, where: str, message: str,
) -> None:
    with pytest.raises(ConnectorError) as exc:
        _connector(tmp_path, "p.csv", line)
    text = str(exc.value)
    assert text.startswith(f"t.yaml:{where}: {message}"), text
    assert "at source.streams.predictions.csv.decimal" in text


def test_decimal_is_kept_on_the_stream_and_belongs_to_csv(tmp_path: Path) -> None:
    conn = _connector(tmp_path, "p.csv", 'csv: {delimiter: ";", decimal: ","}')
    s = conn.streams[0]  # type: ignore[attr-defined]
    assert (s.delimiter, s.decimal) == (";", ",")
    point = _connector(tmp_path, "p.csv", 'csv: {decimal: "."}')
    assert point.streams[0].decimal == "."  # type: ignore[attr-defined]
    with pytest.raises(ConnectorError, match=r"t\.yaml:10:7: csv options are for CSV files"):
        _connector(tmp_path, "p.csv", 'csv: {decimal: ","}', fmt="jsonl")
    with pytest.raises(ConnectorError) as exc:
        _connector(tmp_path, "p.csv", 'csv: {decimel: ","}')
    assert "did you mean 'decimal'?" in str(exc.value)


# -- the reader ----------------------------------------------------------------------------


def _poll_all(src: FileSource) -> tuple[list, list, list, list, list]:
    ids, ts, x, score, bad = [], [], [], [], []
    while (polled := src.poll()) is not None:
        for b in polled.batches:
            ids += b.ids.tolist()
            ts += b.event_time.tolist()
            x += b.numeric[:, 0].tolist()
            score += b.score.tolist()
        bad += [(r.reason, r.position) for r in polled.bad]
    src.close()
    return ids, ts, x, score, bad


def test_the_reader_takes_decimal_commas_in_number_columns_only(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(
        '"id";"ts";"x";"cat";"score"\n'
        '"7,5";1700000000;3644,09;"1,5";0,25\n'
        "b;1700000060;-12,5;a;0,5\n"
        "c;1700000120;;a;1,5e-1\n")
    schema = FeatureSchema(numeric=("x",), categorical=("cat",), levels=(("1,5", "a"),))
    conn = _connector(tmp_path, "p.csv", features="x: {path: x, type: numeric}, "
                      "cat: {path: cat, type: categorical}")
    src = FileSource(conn, schema, batch_size=2, read_ahead=False)
    assert separator_notes(src.inputs) == [
        "p.csv is semicolon-separated with decimal commas (found in its first rows): "
        "read with ';' and ','"]
    batches = []
    while (polled := src.poll()) is not None:
        assert polled.bad == []
        batches += polled.batches
    src.close()
    ids = [i for b in batches for i in b.ids.tolist()]
    assert ids == ["7,5", "b", "c"]  # an id is text: left as written
    assert [t for b in batches for t in b.event_time.tolist()] == [1.7e9, 1.7e9 + 60,
                                                                   1.7e9 + 120]
    x = np.concatenate([b.numeric[:, 0] for b in batches])
    assert x[:2].tolist() == [3644.09, -12.5] and np.isnan(x[2])
    assert np.concatenate([b.categorical[:, 0] for b in batches]).tolist() == [0, 1, 1]
    assert np.concatenate([b.score for b in batches]).tolist() == [0.25, 0.5, 0.15]


def test_the_connector_setting_wins_over_the_head(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text('"id";"ts";"x";"score"\n'
                                    "a;1700000000;3,5;0,5\nb;1700000060;1.5;0.5\n")
    src = FileSource(_connector(tmp_path, "p.csv"), FeatureSchema(numeric=("x",)))
    notes = separator_notes(src.inputs)
    assert len(notes) == 2 and "decimal commas ('3,5') and with points ('1.5')" in notes[1]
    assert 'csv: {decimal: ","}' in notes[1] and "'predictions'" in notes[1], notes
    _, _, x, _, bad = _poll_all(src)  # read with the point: the comma rows are bad
    assert x == [1.5] and bad == [("wrong_type", 2)]
    conn = _connector(tmp_path, "p.csv", 'csv: {delimiter: ";", decimal: ","}')
    src = FileSource(conn, FeatureSchema(numeric=("x",)))
    assert separator_notes(src.inputs) == []  # configured: nothing to say
    _, _, x, _, bad = _poll_all(src)
    assert x == [3.5, 1.5] and bad == []
    # a configured separator and a found decimal comma
    (tmp_path / "q.csv").write_text('"id";"ts";"x";"score"\na;1700000000;3,5;0,5\n')
    src = FileSource(_connector(tmp_path, "q.csv", 'csv: {delimiter: ";"}'),
                     FeatureSchema(numeric=("x",)))
    assert separator_notes(src.inputs) == [
        "q.csv has decimal commas (found in its first rows): read with ','"]
    assert _poll_all(src)[2] == [3.5]


# -- every reader reads the same floats ------------------------------------------------------

_VALUE = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
_SCORE = st.one_of(st.none(), st.floats(0, 1))


def _text(v: float | None, form: str) -> str:
    return "" if v is None else format(v, form)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(_VALUE, _SCORE), min_size=1, max_size=30),
       form=st.sampled_from([".1f", ".2f", ".4f", ".6f", ".3e"]))
def test_floats_written_any_way_read_back_the_same_everywhere(
    tmp_path: Path, rows: list[tuple[float | None, float | None]], form: str,
) -> None:
    written = [(i, 1_700_000_000 + 60 * i, _text(a, form), _text(b, form))
               for i, (a, b) in enumerate(rows)]
    want = np.array([[float(t) if t else np.nan for t in r[2:]] for r in written])
    has_number = any(t for r in written for t in r[2:])
    for name, sep, mark in [("dc.csv", ";", ","), ("dp.csv", ";", "."), ("cp.csv", ",", ".")]:
        path = tmp_path / name
        lines = [sep.join(["id", "ts", "x", "score"])] + [
            sep.join([str(i), str(t), a.replace(".", mark), b.replace(".", mark)])
            for i, t, a, b in written]
        path.write_text("\n".join(lines) + "\n")
        assert file_decimal(path, sep).mark == (mark if has_number else ".")
        frame = read_reference_table(path)
        assert frame["id"].tolist() == list(range(len(rows)))
        assert frame["ts"].dtype == np.int64
        got = frame[["x", "score"]].to_numpy(dtype=np.float64, na_value=np.nan)
        assert np.allclose(got, want, rtol=1e-12, equal_nan=True), (name, got, want)
        sample = pd.DataFrame(read_sample(path))
        assert np.allclose(sample[["x", "score"]].to_numpy(dtype=np.float64, na_value=np.nan),
                           want, rtol=1e-12, equal_nan=True)
        probed = sample_records(path, "csv")
        assert [r["ts"] for r in probed] == [r[1] for r in written]
        # the stream: x a feature, score the score (NaN where blank: a missing score)
        ids, ts, x, score, bad = _poll_all(FileSource(
            _connector(tmp_path, name), FeatureSchema(numeric=("x",)), batch_size=7,
            read_ahead=False))
        assert bad == [] and ids == [str(r[0]) for r in written]
        assert ts == [float(r[1]) for r in written]
        assert np.allclose(np.array([x, score], dtype=np.float64).T, want, rtol=1e-12,
                           equal_nan=True), (name, x, score)


# -- end to end: init, check and replay on the table of the report ------------------------------


def _table(n: int, shift: float, start: int, seed: int) -> str:
    rng = random.Random(seed)
    out = ['"id";"ts";"income";"ratio";"grade";"score";"default"']
    for i in range(n):
        inc, r, s = rng.gauss(3000 + shift, 500), rng.random(), rng.random()
        out.append(";".join([str(start + i), str(1700000000 + i * 60),
                             f"{inc:.2f}".replace(".", ","), f"{r:.3f}".replace(".", ","),
                             rng.choice("ABC"), f"{s:.4f}".replace(".", ","),
                             str(int(rng.random() < s * 0.3))]))
    return "\n".join(out) + "\n"


def test_init_check_and_replay_read_a_decimal_comma_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ref.csv").write_text(_table(3000, 0, 0, 1))
    Path("live.csv").write_text(_table(2000, 800, 10000, 2))
    ref = read_reference_table("ref.csv")
    assert {c: str(ref[c].dtype) for c in ("id", "ts", "income", "ratio", "score")} == {
        "id": "int64", "ts": "int64", "income": "float64", "ratio": "float64",
        "score": "float64"}
    code, out, err = run_cli(["init", "--model", "m", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml", "--reference", "ref.csv",
                              "--sample", "live.csv"], capsys)
    assert code == 0, err
    assert ("the reference ref.csv is semicolon-separated with decimal commas (found in its "
            "first rows): read with ';' and ','") in out, out
    assert "live.csv is semicolon-separated with decimal commas" in out, out
    assert "(csv: delimiter, decimal)" in out, out
    assert "score: score" in out and "income: numeric" in out and "ratio: numeric" in out, out
    stream = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert stream["csv"] == {"delimiter": ";", "decimal": ","}, stream
    assert stream["fields"]["score"] == "score"
    assert yaml.safe_load(Path("p.yaml").read_text())["model"]["features"] == [
        "income", "ratio", "grade"]
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0 and out.splitlines()[-1] == "ok p.yaml", (out, err)
    code, out, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                              "--input", "live.csv", "--out", "run", "--quiet",
                              "--no-report"], capsys)
    assert code == 0, err
    assert "note: the reference ref.csv is semicolon-separated with decimal commas" in err
    summary = json.loads(Path("run/summary.json").read_text())
    assert summary["events"] == 2000 and summary["bad_records"] == 0, summary
    first = json.loads(Path("run/timeline.jsonl").read_text().splitlines()[0])
    assert first["features"]["income"]["type"] == "numeric"
    assert 0.4 < first["score"]["mean"] < 0.6, first["score"]
    # income moved by 800: the first window already says so
    assert any(r.get("feature") == "income" for r in first["decision"]["reasons"]), first


def _init_with_cell(cell: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:
    """init on a point reference and a decimal-comma sample whose second row's income is
    ``cell``: what it says, and the predictions stream it writes."""
    Path("ref.csv").write_text(_table(400, 0, 0, 1).replace(",", "."))
    lines = _table(400, 0, 0, 3).splitlines()
    lines[1] = lines[1].replace(lines[1].split(";")[2], "3644,09")
    lines[2] = lines[2].replace(lines[2].split(";")[2], cell)
    Path("live.csv").write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(["init", "--model", "m", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml", "--reference", "ref.csv",
                              "--sample", "live.csv"], capsys)
    assert code == 0, err
    return out, yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]


def test_init_says_when_it_cannot_tell_the_decimal_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    out, stream = _init_with_cell("1.5", capsys)
    assert "live.csv is semicolon-separated (found in its header)" in out, out
    assert "decimal commas ('3644,09') and with points ('1.5')" in out, out
    assert stream["csv"] == {"delimiter": ";"}, stream


def test_a_thousands_group_says_the_decimal_comma_and_reads_as_a_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """``1.234,56`` beside ``3644,09``: no decimal point reads it, so the file's mark is
    the comma (it was the point, and every income was text). The column of both is a
    column of numbers: before, only ``format: money`` read the grouped one and any other
    numeric mapping dead-lettered it as ``wrong_type``."""
    monkeypatch.chdir(tmp_path)
    out, stream = _init_with_cell("1.234,56", capsys)
    assert "live.csv is semicolon-separated with decimal commas" in out, out
    assert "thousands groups ('1.234,56'): read as the numbers they write" in out, out
    assert stream["csv"] == {"delimiter": ";", "decimal": ","}, stream
    assert stream["fields"]["features"]["income"] == {"path": "income", "type": "numeric"}
    assert "  income: numeric                  numbers" in out, out
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.csv", "--out", "run", "--quiet", "--no-report"],
                           capsys)
    assert code == 0, err
    assert json.loads(Path("run/summary.json").read_text())["bad_records"] == 0


# -- rates alone tell the decimal mark ---------------------------------------------------------


def test_a_file_whose_only_decimal_commas_are_rates_is_read_with_the_comma(
    tmp_path: Path,
) -> None:
    """Before, ``12,5%`` told nothing of the mark: a file whose other columns hold whole
    numbers was read with the point unless ``csv: {decimal: ","}`` was set, and a rate of
    three decimals (``1,234%``, which only the comma reads) was dead-lettered."""
    (tmp_path / "p.csv").write_text('"id";"ts";"rate";"score"\n'
                                    "a;1700000000;12,5%;1\n"
                                    "b;1700000060;1,234 %;0\n")
    assert file_decimal(tmp_path / "p.csv", ";") == DecimalMark(",", "12,5",
                                                                comma_or_group="1,234")
    src = FileSource(_connector(tmp_path, "p.csv",
                                features="rate: {path: rate, type: numeric, format: percent}"),
                     FeatureSchema(numeric=("rate",)))
    assert separator_notes(src.inputs) == [
        "p.csv is semicolon-separated with decimal commas (found in its first rows): "
        "read with ';' and ','"]
    _, _, x, _, bad = _poll_all(src)
    assert x == [12.5, 1.234] and bad == []
    assert read_reference_table(tmp_path / "p.csv").attrs["decimal_mark"] == ","
