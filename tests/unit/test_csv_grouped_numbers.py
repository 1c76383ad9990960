"""Numbers whose thousands are grouped (``"1,234"`` quoted in a comma CSV, ``1.234.567``
in a decimal-comma file, ``1 234`` with a space or a no-break space) are numbers on every
path that reads a CSV: the reference table, ``init``'s sample, the stream. Before, a
column of them was text: a numeric feature dead-lettered each as ``wrong_type`` unless
mapped with ``format: money``, and ``1 234`` made a column an identifier. Text the file's
decimal mark leaves ambiguous (``1,5`` where it is the point) stays text, as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.columns import numeric
from driftwatch.connectors.file import FileSource, separator_notes
from driftwatch.csvdecimal import file_decimal, text_decimal
from driftwatch.numbergroups import ungroup_array, ungrouped
from driftwatch.onboard.sample import read_sample
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from ._csvconn import csv_connector

NBSP, NNBSP = "\u00a0", "\u202f"
#: (decimal mark, grouping character) pairs as spreadsheets write them
CONVENTIONS = [(".", ","), (".", " "), (".", NBSP), (".", NNBSP),
               (",", "."), (",", " "), (",", NBSP), (",", NNBSP)]


def _write(whole: int, cents: str, decimal: str, group: str, minus: bool) -> str:
    """``whole`` with its thousands grouped by ``group`` (Python's own grouping, then the
    character swapped), and ``cents`` after ``decimal`` when given."""
    digits = f"{whole:,}".replace(",", group)
    return ("-" if minus else "") + digits + (decimal + cents if cents else "")


def _value(whole: int, cents: str, minus: bool) -> float:
    return float(("-" if minus else "") + f"{whole}" + (f".{cents}" if cents else ""))


_WHOLE = st.integers(1000, 10**15)
_CENTS = st.sampled_from(["", "5", "05", "50", "125", "0001"])


@settings(max_examples=400, deadline=None)
@given(whole=_WHOLE, cents=_CENTS, convention=st.sampled_from(CONVENTIONS),
       minus=st.booleans())
def test_a_grouped_number_reads_back_under_each_convention(
    whole: int, cents: str, convention: tuple[str, str], minus: bool,
) -> None:
    decimal, group = convention
    text = _write(whole, cents, decimal, group, minus)
    want = _value(whole, cents, minus)
    assert float(ungrouped(text, decimal)) == want, text
    assert float(ungrouped(f" {text} ", decimal)) == want  # spaces around: a padded field
    # the stream's path: ungrouped in arrow, the decimal comma made a point, then read
    arr = ungroup_array(pa.array([text, None]), decimal)
    if decimal == ",":
        arr = pa.array([None if v is None else v.replace(",", ".") for v in arr.to_pylist()])
    values, bad, null = numeric(arr, lenient=True)
    assert values[0] == want and bad.tolist() == [False, False] and null.tolist()[1], text


@settings(max_examples=400, deadline=None)
@given(whole=st.integers(0, 10**9), tail=st.integers(0, 10**6),
       width=st.sampled_from([1, 2, 4, 5, 7]), decimal=st.sampled_from([".", ","]),
       minus=st.booleans())
def test_a_mark_before_other_than_three_digits_is_no_grouped_number(
    whole: int, tail: int, width: int, decimal: str, minus: bool,
) -> None:
    """``1,5`` and ``1,2345`` where the mark is the point (``1.5`` where it is the comma):
    no thousands grouping writes them, and a guess would read another number."""
    other = "," if decimal == "." else "."
    text = f"{'-' if minus else ''}{whole}{other}{tail % 10**width:0{width}d}"
    assert ungrouped(text, decimal) is None, text
    arr = ungroup_array(pa.array([text]), decimal)
    assert arr.to_pylist() == [text]  # left as written: the decoder's bad value


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789,. \u00a0-+", min_size=1, max_size=14),
       decimal=st.sampled_from([".", ","]))
def test_no_text_is_read_as_another_number_than_its_groups_write(text: str,
                                                                 decimal: str) -> None:
    """Whatever the text, a number read from it is its digits with one grouping character
    taken out, never the decimal mark, with groups of exactly three."""
    got = ungrouped(text, decimal)
    if got is None:
        return
    t = text.strip()
    marks = {c for c in t if not c.isdigit() and c not in "+-"} - {decimal}
    assert len(marks) == 1 and decimal not in marks, text
    (mark,) = marks
    whole = t.split(decimal)[0].lstrip("+-").split(mark)
    assert 1 <= len(whole[0]) <= 3 and all(len(g) == 3 for g in whole[1:]), text
    assert float(got) == float(t.replace(mark, "").replace(decimal, ".")), text


@pytest.mark.parametrize(("text", "decimal"), [
    ("1,234 567", "."), ("1 234,567", "."), ("1.234.567", "."), ("1,23", "."),
    ("1234,567", "."), (",234", "."), ("1,234,", "."), ("1,234.5.6", "."),
    ("1,234", ","), ("1.234,5,6", ","), ("--1,234", "."), ("1,234e3", "."), ("$1,234", "."),
    ("1,234%", "."), ("", "."), ("  ", "."),
    ("\u0661,\u0662\u0663\u0664", "."),  # digits other than ASCII: the stream's RE2 reads none
])
def test_text_that_is_no_grouped_number_is_left_alone(text: str, decimal: str) -> None:
    assert ungrouped(text, decimal) is None


# -- the decimal mark a file's head shows ---------------------------------------------------


@pytest.mark.parametrize(("cell", "mark", "ambiguous"), [
    ("1.234.567", ",", False),  # two point groups: no decimal point reads it
    ("1 234,5", ",", False),
    (f"1{NBSP}234,5", ",", False),
    ("1,234.5", ".", False),  # comma groups before a decimal point
    ("12,345,678", ".", False),
    ("1 234.5", ".", False),
    ("1 234", ".", False),  # groups under either mark: says nothing
    ("1.234", ".", False),  # a decimal point (or a group): the point reads it either way
])
def test_grouped_numbers_tell_the_mark_only_where_one_mark_reads_them(
    cell: str, mark: str, ambiguous: bool,
) -> None:
    found = text_decimal(f"id;x\n1;{cell}\n2;7\n", ";")
    assert (found.mark, found.ambiguous) == (mark, ambiguous), found


@pytest.mark.parametrize(("cells", "mark", "ambiguous"), [
    # "1.000" is a thousands group where "0,25" says the comma: before, the two made the
    # head ambiguous, read with the point, and every decimal comma was text
    (("0,25", "1.000"), ",", False),
    (("0.25", "1,000"), ".", False),
    (("1,234", "1.234"), ".", True),  # either reads each: cannot tell, as before
    (("1,234",), ",", False),  # alone it says the comma, as before
    (("3,5", "1.5"), ".", True),
])
def test_a_number_that_either_mark_reads_gives_way_to_one_only_one_reads(
    cells: tuple[str, ...], mark: str, ambiguous: bool,
) -> None:
    found = text_decimal("id;x\n" + "".join(f"{i};{c}\n" for i, c in enumerate(cells)), ";")
    assert (found.mark, found.ambiguous) == (mark, ambiguous), found

def test_groups_only_the_point_reads_beside_decimal_commas_are_said() -> None:
    found = text_decimal("id;x\n1;3,5\n2;12,345,678\n", ";")
    assert found.ambiguous and found.mark == "."
    from driftwatch.csvdecimal import csv_notes

    note = csv_notes("p.csv", ";", found)[1]
    assert "decimal commas ('3,5') and with thousands commas ('12,345,678')" in note, note


# -- every reader of a file ----------------------------------------------------------------


def _connector(tmp: Path, name: str) -> object:
    return csv_connector(tmp, name, fields=(
        "event_id: id", "event_time: {path: ts, unit: s}",
        "features: {x: {path: x, type: numeric}, cat: {path: cat, type: categorical}}",
        "score: score"))


def _stream(tmp: Path, name: str) -> tuple[list[float], list[int], list[tuple[str, int]]]:
    src = FileSource(_connector(tmp, name), FeatureSchema(
        numeric=("x",), categorical=("cat",), levels=(("a",),)), batch_size=5,
        read_ahead=False)
    x, cat, bad = [], [], []
    while (polled := src.poll()) is not None:
        for b in polled.batches:
            x += np.nan_to_num(b.numeric[:, 0], nan=-0.5).tolist()
            cat += b.categorical[:, 0].tolist()
        bad += [(r.reason, r.position) for r in polled.bad]
    src.close()
    return x, cat, bad


#: (file name, separator, decimal mark, grouping character, whether to quote the field)
FILES = [("comma.csv", ",", ".", ",", True), ("spaced.csv", ",", ".", " ", False),
         ("semi.csv", ";", ",", ".", False), ("nbsp.csv", ";", ",", NBSP, False),
         ("tab.tsv", "\t", ".", ",", False)]


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 10**9), st.sampled_from(["", "25", "5"]),
                               st.booleans()), min_size=1, max_size=25))
def test_every_reader_reads_the_numbers_a_file_groups(
    tmp_path: Path, rows: list[tuple[int, str, bool]],
) -> None:
    """The reference, init's sample and the stream read a column of grouped numbers (and
    of small ones, which have no groups) as the same numbers."""
    want = [_value(w, c, m) for w, c, m in rows]
    for name, sep, decimal, group, quote in FILES:
        lines = [sep.join(["id", "ts", "x", "cat", "score"])]
        for i, (w, c, m) in enumerate(rows):
            cell = _write(w, c, decimal, group, m) if w >= 1000 else \
                ("-" if m else "") + str(w) + (decimal + c if c else "")
            cell = f'"{cell}"' if quote else cell
            score = "0" + decimal + "5"
            lines.append(sep.join([str(i), str(1_700_000_000 + 60 * i), cell, "a", score]))
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        ref = read_reference_table(path)
        assert pd.api.types.is_numeric_dtype(ref["x"]), (name, ref["x"].tolist())
        assert ref["x"].astype(float).tolist() == want, name
        sample = pd.DataFrame(read_sample(path))
        assert sample["x"].astype(float).tolist() == want, name
        x, _, bad = _stream(tmp_path, name)
        assert bad == [] and x == want, (name, x, bad)


def test_ambiguous_text_stays_as_it_is_on_every_path(tmp_path: Path) -> None:
    """``1,5`` in a comma CSV (the point its mark) is no number anyone can tell: the
    reference keeps the column's text, the sample too, and the stream dead-letters that
    row alone (its grouped neighbour reads)."""
    (tmp_path / "p.csv").write_text('id,ts,x,cat,score\n1,1700000000,"1,234",a,0.5\n'
                                    '2,1700000060,"1,5",a,0.5\n3,1700000120,7,a,0.5\n')
    ref = read_reference_table(tmp_path / "p.csv")
    assert ref["x"].tolist() == ["1,234", "1,5", "7"]
    assert [r["x"] for r in read_sample(tmp_path / "p.csv")] == ["1,234", "1,5", "7"]
    x, _, bad = _stream(tmp_path, "p.csv")
    assert x == [1234.0, 7.0] and bad == [("wrong_type", 3)], (x, bad)  # its line


def test_a_category_keeps_its_text_and_an_id_its_digits(tmp_path: Path) -> None:
    """Only the columns read as numbers lose their groups in the stream: a level is the
    reference's text."""
    (tmp_path / "p.csv").write_text('id,ts,x,cat,score\n"1,234",1700000000,"2,500",'
                                    '"1,000",0.5\n')
    src = FileSource(_connector(tmp_path, "p.csv"), FeatureSchema(
        numeric=("x",), categorical=("cat",), levels=(("1,000",),)), read_ahead=False)
    polled = src.poll()
    assert polled is not None and polled.bad == []
    (b,) = polled.batches
    assert b.ids.tolist() == ["1,234"] and b.numeric[:, 0].tolist() == [2500.0]
    assert b.categorical[:, 0].tolist() == [0]
    src.close()


# -- init, policy check and replay: a spreadsheet's numbers ----------------------------------


def _table(n: int, start: int, seed: int, shift: float) -> str:
    rng = np.random.default_rng(seed)
    out = ['"id";"ts";"income";"grade";"score";"default"']
    for i in range(n):
        income = int(rng.lognormal(10.5, 0.6) + shift)
        s = rng.uniform()
        out.append(";".join([str(start + i), str(1_700_000_000 + 60 * i),
                             f"{income:,}".replace(",", NBSP) + ",00",
                             str(rng.choice(["A", "B"])), f"{s:.4f}".replace(".", ","),
                             str(int(rng.uniform() < s * 0.3))]))
    return "\n".join(out) + "\n"


def test_init_check_and_replay_read_a_french_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """``36 310,00`` with a no-break space, as a French spreadsheet saves an income: init
    left it out as an identifier (a value per row), and a connector mapping it as a number
    dead-lettered every record."""
    monkeypatch.chdir(tmp_path)
    Path("ref.csv").write_text(_table(3000, 0, 1, 0.0))
    Path("live.csv").write_text(_table(2000, 10_000, 2, 20_000.0))
    assert file_decimal("live.csv", ";").mark == ","
    code, out, err = run_cli(["init", "--model", "m", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml", "--reference", "ref.csv",
                              "--sample", "live.csv"], capsys)
    assert code == 0, err
    assert "  income: numeric                  numbers" in out, out
    stream = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert stream["fields"]["features"]["income"] == {"path": "income", "type": "numeric"}
    assert stream["csv"] == {"delimiter": ";", "decimal": ","}
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0 and out.splitlines()[-1] == "ok p.yaml", (out, err)
    src = FileSource(_connector_of("c.yaml"), FeatureSchema(numeric=("income",),
                                                            categorical=("grade",),
                                                            levels=(("A", "B"),)))
    assert separator_notes(src.inputs) == []  # the connector says it all
    src.close()
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.csv", "--out", "run", "--quiet", "--no-report"],
                           capsys)
    assert code == 0, err
    summary = json.loads(Path("run/summary.json").read_text())
    assert summary["events"] == 2000 and summary["bad_records"] == 0, summary
    first = json.loads(Path("run/timeline.jsonl").read_text().splitlines()[0])
    assert any(r.get("feature") == "income" for r in first["decision"]["reasons"]), first


def _connector_of(path: str) -> object:
    from driftwatch.connectors.config import load_connector

    return load_connector(Path(path))


@pytest.mark.parametrize(("group", "decimal"), [(",", "."), (NBSP, "."), (".", ",")])
def test_a_grouped_number_in_a_later_batch_alone_is_read(tmp_path: Path, group: str,
                                                         decimal: str) -> None:
    """The reader skips its regex on a batch of plain numbers: a batch that holds one
    grouped number among them, past batches without, must still read it."""
    sep = ";" if decimal == "," else ","
    rows = [sep.join([str(i), str(1_700_000_000 + 60 * i), str(i), "a", f"0{decimal}5"])
            for i in range(11)]
    cell = f"12{group}345{group}678{decimal}5"
    rows.append(sep.join(["11", "1700000660", f'"{cell}"', "a", f"0{decimal}5"]))
    (tmp_path / "p.csv").write_text(sep.join(["id", "ts", "x", "cat", "score"]) + "\n"
                                    + "\n".join(rows) + "\n")
    x, _, bad = _stream(tmp_path, "p.csv")
    assert bad == [] and x == [*map(float, range(11)), 12_345_678.5], (x, bad)
