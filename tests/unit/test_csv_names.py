"""A CSV without a header line is read with the column names its stream gives
(``csv: {names: [...]}``) or init is given (``--names``, ``--names-file``): the same
records, lines and timeline as the same file with the header line written in it."""

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

from ._cli import run_cli
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


# -- init -> policy check -> replay on loan-level monthly drops ----------------------------

#: Columns shaped as a Fannie Mae loan-level drop (the last, the outcome, in the
#: reference only).
LOAN = ("LOAN_ID", "MONTHLY_REPORTING_PERIOD", "CREDIT_SCORE", "ORIG_DTI", "ORIG_UPB",
        "ORIG_INTEREST_RATE", "CHANNEL", "PROPERTY_STATE", "SELLER_NAME", "SCORE", "DEFAULT")
_SELLERS = ("Other sellers", "WELLS FARGO BANK, N.A.", "Quicken Loans Inc.")


def _loans(rng: np.random.Generator, n: int, first: int, t0: int, shift: float
           ) -> list[str]:
    out = []
    for i in range(n):
        cs = int(rng.normal(740 - 40 * shift, 40))
        p = 1 / (1 + np.exp((cs - 650) / 30))
        out.append("|".join([
            f"F19Q1{first + i:07d}", str(t0 + 60 * i), str(cs), str(rng.integers(10, 50)),
            str(int(rng.integers(60, 700)) * 1000), f"{rng.normal(3.5 + shift, 0.4):.3f}",
            str(rng.choice(["R", "B", "C"])), str(rng.choice(["CA", "TX", "NY", "FL"])),
            str(rng.choice(_SELLERS)), f"{p:.4f}", str(int(rng.random() < p))]))
    return out


def _drop(path: Path, rows: list[str], header: bool, k: int) -> None:
    """``rows`` cut to their first ``k`` fields, after a header line or not."""
    head = "|".join(LOAN[:k]) + "\n" if header else ""
    path.write_text(head + "".join("|".join(r.split("|")[:k]) + "\n" for r in rows))


def test_a_headerless_drop_runs_init_check_and_replay_as_with_its_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: init refused the drop (its first line reads as data). With its names
    (``--names-file``, written to the connector) the timeline is byte for byte the one of
    the same drop with a header line, and of that drop read with the names too."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(11)
    ref = _loans(rng, 3000, 0, 1_704_067_200, 0.0)
    live = (_loans(rng, 3000, 10_000, 1_706_745_600, 0.0)
            + _loans(rng, 2000, 20_000, 1_706_745_600 + 60 * 3000, 1.0))
    _drop(Path("ref.txt"), ref, True, len(LOAN))
    _drop(Path("drop.txt"), live, False, len(LOAN) - 1)
    _drop(Path("headed.txt"), live, True, len(LOAN) - 1)
    Path("layout.txt").write_text("# loan-level layout\n" + "\n".join(LOAN[:-1]) + "\n")
    init = ["init", "-r", "ref.txt", "-s", "drop.txt", "--model", "fm", "--time-field",
            "MONTHLY_REPORTING_PERIOD", "--id-field", "LOAN_ID", "--score-field", "SCORE",
            "--label-field", "DEFAULT", "--connector-out", "c.yaml", "--policy-out", "p.yaml"]
    code, _, err = run_cli(init, capsys)
    assert code != 0 and "or give them to init: --names" in err, err
    code, _, err = run_cli([*init, "--names-file", "layout.txt"], capsys)
    assert code == 0, err
    conn = Path("c.yaml").read_text()
    assert f"        names: [{', '.join(LOAN[:-1])}]\n" in conn, conn
    code, _, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    Path("c_headed.yaml").write_text(conn.replace("drop.txt", "headed.txt").replace(
        f"        names: [{', '.join(LOAN[:-1])}]\n", ""))
    timelines = []
    for c, data, out_dir in (("c.yaml", "drop.txt", "bare"), ("c_headed.yaml", "headed.txt",
                             "headed"), ("c.yaml", "predictions=headed.txt", "named")):
        code, _, err = run_cli(["replay", "--connector", c, "--policy", "p.yaml", "--input",
                                data, "--out", out_dir, "--quiet", "--no-report"], capsys)
        assert code == 0, err
        timelines.append(Path(out_dir, "timeline.jsonl").read_bytes())
    assert timelines[0].count(b"\n") >= 5
    assert '"severe"' in timelines[0].decode()  # the shifted months are seen, not lost
    assert timelines[0] == timelines[1] == timelines[2]


@pytest.mark.parametrize(("extra", "said"), [
    (["--names", "a,b", "--names-file", "l.txt"], "give --names or --names-file, not both"),
    (["--names", "a,,b"], "--names: expected column names, none of them empty; found 'a,,b'"),
    (["--names", "a,b,a"], "--names: column names given twice: a"),
    (["--outcomes-names", "a,b"],
     "--outcomes-names names the columns of a CSV file sample; there is none to read"),
])
def test_init_names_flags_that_cannot_work_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str,
) -> None:
    (tmp_path / "ref.csv").write_text("x,score,label\n1,0.5,0\n")
    (tmp_path / "s.csv").write_text("1,2\n")
    code, out, err = run_cli(["init", "-r", str(tmp_path / "ref.csv"), "-s",
                              str(tmp_path / "s.csv"), *extra], capsys)
    assert (code, out, err) == (2, "", f"error: {said}\n")


def test_the_probe_reads_a_headerless_file_with_the_names(tmp_path: Path) -> None:
    """Before: the probe that checks a stream's paths read the first line as names, so
    every field the connector maps looked absent."""
    from driftwatch.connectors.file import bind_inputs
    from driftwatch.connectors.probe import sample_records

    (tmp_path / "bare.txt").write_text("".join(r + "\n" for r in _rows(4)))
    conn = csv_connector(tmp_path, "bare.txt", _NAMED, fields=_FIELDS)
    (inp,) = bind_inputs(conn, [tmp_path / "bare.txt"])
    recs = sample_records(inp.path, inp.format, 10, inp.delimiter, inp.decimal, inp.names,
                          inp.named_header)
    assert [r["id"] for r in recs] == [f"L{i:07d}" for i in range(4)]
    assert list(recs[0]) == list(NAMES)


_NAME = st.from_regex(r"[A-Z][A-Z_]{0,8}", fullmatch=True)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=2, max_size=8, unique=True), seed=st.integers(0, 999),
       data=st.data())
def test_the_first_line_is_judged_against_the_names(
    tmp_path: Path, names: list[str], seed: int, data: st.DataObject,
) -> None:
    """Data is read as data, the names as a header to skip, a header of the names in
    another order or with a name dropped is refused, never read as a row."""
    from driftwatch.csvnames import named_header

    rng = np.random.default_rng(seed)
    body = "".join("|".join(f"{v:.2f}" for v in rng.normal(size=len(names))) + "\n"
                   for _ in range(5))
    p = tmp_path / "f.txt"
    p.write_text(body)
    assert named_header(p, "|", names, "f.txt") is False
    p.write_text(" | ".join(names) + "\n" + body)
    assert named_header(p, "|", names, "f.txt") is True
    other = data.draw(st.permutations(names).filter(lambda o: list(o) != names))
    p.write_text("|".join(other) + "\n" + body)
    with pytest.raises(SourceError, match=r"f\.txt:1: its first line is a header"):
        named_header(p, "|", names, "f.txt")
    with pytest.raises(SourceError, match=rf"f\.txt:1: its line holds {len(names)} fields, "
                                          rf"but {len(names) - 1} column names are given"):
        named_header(p, "|", names[:-1], "f.txt")


def test_the_sample_names_are_not_taken_for_a_headerless_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """--names are the sample's (its stream's): a headerless reference (here with one
    column more, the outcome) is refused, saying where its own names go, rather than read
    with the sample's names."""
    monkeypatch.chdir(tmp_path)
    rows = _loans(np.random.default_rng(3), 300, 0, 1_704_067_200, 0.0)
    _drop(Path("ref.txt"), rows, False, len(LOAN))
    _drop(Path("drop.txt"), rows, False, len(LOAN) - 1)
    code, out, err = run_cli(["init", "-r", "ref.txt", "-s", "drop.txt", "--names",
                              ",".join(LOAN[:-1])], capsys)
    assert code != 0 and out == "" and "Traceback" not in err
    assert err.startswith("error: reference dataset ref.txt: its first line reads as data")
    assert err.rstrip().endswith("add a header line with the column names (11 of them, "
                                 "separated by '|'), or name them in the policy: reference: "
                                 "{csv: {names: [...]}} (init: --reference-names)"), err
