"""A CSV whose first line is data (UCI German / Australian credit exports) is refused with
one line that says to add a header, by init, policy check and replay alike; a header of
names never is."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource
from driftwatch.csvheader import header_is_data, refuse_data_header, second_header, title_line
from driftwatch.errors import SourceError
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from ._csvconn import csv_connector

# the first two lines of UCI's German credit, written with commas
GERMAN = ("A11,6,A34,A43,1169,A65,A75,4,A93,A101,4,A121,67,A143,A152,2,A192,A201,1\n"
          "A12,48,A32,A43,5951,A61,A73,2,A92,A101,2,A121,22,A143,A152,1,A192,A201,2\n")
# UCI's Australian credit (statlog), comma-separated
AUSTRALIAN = ("1,22.08,11.46,2,4,4,1.585,0,0,0,1,2,100,1213,0\n"
              "0,22.67,7,2,8,4,0.165,0,0,0,0,2,160,1,0\n")
# UCI's Credit Approval (crx.data) as a shuffled split saves it: letter codes of one and
# two letters (cc over w), '?' for missing, the class +/-; no two lines share a shape
CRX = ("a,70.63,0.17,u,p,cc,j,0.341,f,f,06,f,g,01207,757,-\n"
       "a,79.77,1.314,u,g,w,o,4.872,f,t,01,t,g,00000,0,+\n"
       "?,76.64,2.80,u,g,a,o,0.673,f,t,00,f,g,01043,1606,-\n"
       "b,22.08,0.83,u,gg,cc,h,2.165,f,f,0,t,g,00128,0,+\n"
       "b,?,11.46,y,p,w,v,1.585,t,f,00,t,s,?,1213,-\n"
       "a,29.58,4.5,u,g,w,v,7.5,t,t,02,t,g,00330,0,+\n")


def _frames(n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(4)
    ref = pd.DataFrame({"duration": rng.integers(4, 72, n),
                        "amount": rng.integers(250, 18000, n).astype(float),
                        "age": rng.integers(19, 75, n),
                        "default": rng.integers(0, 2, n)})
    live = ref.drop(columns=["default"])
    live.insert(0, "id", np.arange(n))
    live.insert(1, "ts", 1_704_067_200 + 60 * np.arange(n))
    return ref, live


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.csv"), "--model", "m", "--connector-out",
                    str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml")], capsys)


def test_init_refuses_a_headerless_reference_and_a_headerless_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ref, live = _frames()
    ref.to_csv(tmp_path / "ref.csv", index=False, header=False)
    first = (tmp_path / "ref.csv").read_text().splitlines()[0]
    live.to_csv(tmp_path / "live.csv", index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code != 0 and out == ""
    assert err.splitlines()[0] == (
        f"error: reference dataset {tmp_path / 'ref.csv'}: its first line reads as data, not "
        f"column names (every cell is a number: {first!r}); add a header line with the column "
        "names (4 of them, separated by ','), or name them in the policy: reference: "
        "{csv: {names: [...]}} (init: --reference-names)"), err
    assert "Traceback" not in err
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live.to_csv(tmp_path / "live.csv", index=False, header=False)
    code, out, err = _init(tmp_path, capsys)
    assert code != 0
    assert f"the sample {tmp_path / 'live.csv'}: its first line reads as data" in err, err
    assert not (tmp_path / "c.yaml").exists()


def test_check_and_replay_refuse_a_headerless_reference_or_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    ref, live = _frames()
    ref.to_csv("ref.csv", index=False)
    live.to_csv("live.csv", index=False)
    code, _, err = _init(Path("."), capsys)
    assert code == 0, err
    live.to_csv("live.csv", index=False, header=False)
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.csv", "--out", "run", "--quiet", "--no-report"],
                           capsys)
    assert code != 0 and "live.csv: its first line reads as data" in err, err
    assert "add a header line" in err and "Traceback" not in err
    ref.to_csv("ref.csv", index=False, header=False)
    code, _, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code != 0 and "ref.csv: its first line reads as data" in err, err


def test_a_stream_with_its_delimiter_set_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("a;1750000000;0.5\nb;1750000060;0.25\n")
    conn = csv_connector(tmp_path, "p.csv", 'csv: {delimiter: ";"}',
                         fields=("event_id: application_id", "event_time: {path: ts, unit: s}",
                                 "score: model.score"))
    with pytest.raises(SourceError, match=r"p\.csv: its first line reads as data"):
        FileSource(conn, FeatureSchema())


@pytest.mark.parametrize(("text", "why"), [
    (AUSTRALIAN, "every cell is a number"),
    (GERMAN, "numbers and codes shaped as in the lines below"),
    (CRX, "its first line reads as data"),
    ("0.5\n0.25\n", "every cell is a number"),
    ("1;22,08;11,46\n0;22,67;7\n", "every cell is a number"),
])
def test_the_public_headerless_shapes_are_refused(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    sep = ";" if ";" in text else ","
    with pytest.raises(SourceError, match=why):
        refuse_data_header(tmp_path / "t.csv", sep, "t.csv", fix="")


@pytest.mark.parametrize("text", [
    ",0,1,2\n0,0.5,3,1\n",  # pandas' frame without names, with its index
    "0,1,2\n0.5,3,1\n",
    "age,2019,2020\n41,5,6\n",  # a name that is a number beside others
    "code,x1\nABCD,y2\n",  # codes under names, but no number among them
    ",SeriousDlqin2yrs,RevolvingUtilizationOfUnsecuredLines\n1,1,0.766\n",
    "region,2019,2020\nnorth,5,6\nsouth,7,8\nregion 2,9,9\n",  # names over their values
    "id,Y,2019\na1,Y,5\na2,N,7\n",  # one name of two is a value below: no majority
    "A1,2019,A3\na,5,?\n?,7,?\n",  # codes with no letter or digit decide nothing
    "id,ts\n",  # a header alone
    "",
])
def test_headers_of_names_are_read(tmp_path: Path, text: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    refuse_data_header(tmp_path / "t.csv", ",", "t.csv", fix="")


_NAME = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
    st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}([ .\-][A-Za-z0-9]{1,8}){1,3}", fullmatch=True),
)
_CELL = st.one_of(st.integers(-10**9, 10**9).map(str),
                  st.floats(allow_nan=False, allow_infinity=False).map(repr),
                  st.just(""), st.text(max_size=12), _NAME)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(_NAME, min_size=1, max_size=30), data=st.data())
def test_a_header_of_identifier_like_names_is_never_refused(names: list[str],
                                                            data: st.DataObject) -> None:
    second = data.draw(st.lists(_CELL, min_size=len(names), max_size=len(names)))
    assert header_is_data(names, [second]) is None
    assert header_is_data(names) is None


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=1, max_size=12, unique=True),
       sep=st.sampled_from([",", ";", "\t", "|"]))
def test_a_named_file_reads_whatever_its_separator(tmp_path: Path, names: list[str],
                                                   sep: str) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep)
    w.writerow(names)
    w.writerow([str(i) for i in range(len(names))])
    (tmp_path / "t.csv").write_text(buf.getvalue())
    refuse_data_header(tmp_path / "t.csv", sep, "t.csv", fix="")


def test_a_named_reference_reads_as_before(tmp_path: Path) -> None:
    ref, _ = _frames()
    ref.to_csv(tmp_path / "ref.csv", index=False)
    assert read_reference_table(tmp_path / "ref.csv").equals(ref)


# -- a second header line (a workbook with two header rows, saved as CSV) ---------------

# the first lines of UCI's "default of credit card clients" workbook saved as CSV
TAIWAN = (",X1,X2,X3,X4,X5,Y\n"
          "ID,LIMIT_BAL,SEX,EDUCATION,MARRIAGE,AGE,default payment next month\n"
          "1,20000,2,2,1,24,1\n2,120000,2,2,2,26,1\n3,90000,2,2,2,34,0\n")


def test_a_second_header_is_refused_by_init_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: the names line was read as the first row, every column was text, and init
    stopped on "cannot tell which label value is bad: values '0', '1', 'default payment
    next month' of Y"."""
    monkeypatch.chdir(tmp_path)
    Path("taiwan.csv").write_text(TAIWAN)
    _, live = _frames()
    live.to_csv("live.csv", index=False)
    code, _, err = run_cli(["init", "-r", "taiwan.csv", "-s", "live.csv"], capsys)
    assert code == 1, err
    assert ("taiwan.csv: its second line is a second header (ID, LIMIT_BAL, SEX, EDUCATION, "
            "MARRIAGE, ...), not data") in err and "keep one header line" in err, err


_TEXT_CELL = st.one_of(st.just(""), st.just("NA"), st.text(
    alphabet=st.sampled_from("abcXYZ_-. "), min_size=1, max_size=8))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n_num=st.integers(0, 6), n_text=st.integers(0, 4),
       n_rows=st.integers(1, 25))
def test_a_file_with_one_header_never_reads_as_having_two(
    data: st.DataObject, n_num: int, n_text: int, n_rows: int,
) -> None:
    """Any table of number and text columns, written with one header line, whatever its
    first data row holds (numbers missing, codes, blanks)."""
    width = n_num + n_text
    if width == 0:
        return
    num = st.one_of(st.just(""), st.just("NA"),
                    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:g}"))
    rows = [[f"c{j}" for j in range(width)]]
    for _ in range(n_rows):
        rows.append([data.draw(num) for _ in range(n_num)]
                    + [data.draw(_TEXT_CELL) for _ in range(n_text)])
    first = rows[1]
    # a first row with no number and text in two or more number columns is a second
    # header by the rule: leave it out (a number column's text other than a missing
    # token is not data this test writes)
    assert second_header(rows) is None or not any(
        c.strip() and c.strip() != "NA" for c in first[:n_num])


@settings(max_examples=100, deadline=None)
@given(n_num=st.integers(2, 8), n_rows=st.integers(1, 20), seed=st.integers(0, 1000))
def test_a_names_line_over_number_columns_is_always_found(n_num: int, n_rows: int,
                                                          seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [[f"X{j}" for j in range(n_num)], [f"NAME_{j}" for j in range(n_num)]]
    rows += [[f"{v:g}" for v in rng.normal(0, 1000, n_num)] for _ in range(n_rows)]
    assert second_header(rows) == [f"NAME_{j}" for j in range(n_num)]


_LEVEL = st.from_regex(r"[a-z]{1,2}", fullmatch=True)
_NUMBER_CELL = st.one_of(st.integers(0, 10**5).map(str),
                         st.floats(0, 1e5, allow_nan=False).map(lambda x: f"{x:.3f}"))


@st.composite
def _headerless(draw: st.DrawFn) -> list[list[str]]:
    """A table without names: number columns and columns of one- or two-letter codes
    (``?`` for missing here and there), whose first row's codes come again below."""
    kinds = draw(st.lists(st.booleans(), min_size=2, max_size=16).filter(
        lambda k: any(k) and not all(k)))  # True: a number column
    n = draw(st.integers(3, 21))
    cols = []
    for number in kinds:
        cell = _NUMBER_CELL if number else _LEVEL
        col = draw(st.lists(st.one_of(cell, st.just("?")), min_size=n, max_size=n))
        col[0] = draw(cell)
        # a number below a number; the first row's code again below it
        col[draw(st.integers(1, n - 1))] = draw(cell) if number else col[0]
        cols.append(col)
    return [list(r) for r in zip(*cols, strict=True)]


@settings(max_examples=100, deadline=None)
@given(rows=_headerless())
def test_a_headerless_table_of_numbers_and_letter_codes_is_refused(
        rows: list[list[str]]) -> None:
    assert header_is_data(rows[0], rows[1:]) is not None


@settings(max_examples=60, deadline=None)
@given(rows=_headerless(), data=st.data())
def test_names_over_such_a_table_are_never_refused(rows: list[list[str]],
                                                   data: st.DataObject) -> None:
    """Names of three characters or more, some of them numbers (years) over number
    columns, none a value of its own column below. (A one-letter name over one-letter
    codes, ``A`` over ``a``, has the shape of a code: the second line's rule takes it.)"""
    names = []
    for j in range(len(rows[0])):
        values = {r[j] for r in rows}
        number = all(c == "?" or not c.isalpha() for c in values)
        name = st.integers(1900, 2100).map(str) if number else _NAME.filter(
            lambda x: len(x) > 2)
        names.append(data.draw(name.filter(lambda x, v=values: x not in v)))
    assert header_is_data(names, rows) is None
# -- loan-level files without a header (Fannie Mae, Freddie Mac) ---------------------------

_SELLERS = ["Other sellers", "WELLS FARGO BANK, N.A.", "U.S. BANK N.A.", "Quicken Loans Inc.",
            "JPMORGAN CHASE BANK, NATIONAL ASSOCIATION", "AmeriHome Mortgage Company, LLC"]


def _freddie_rows(rng: np.random.Generator, n: int) -> list[list[str]]:
    """Rows shaped as Freddie Mac's origination file: credit score (9999 missing), first
    payment ``yyyymm``, first-time buyer ``Y``/``N``/``9``, MSA (often blank), occupancy,
    DTI, UPB, rate, channel, state, property type, loan id, seller name, a blank flag."""
    rows = []
    for i in range(n):
        rows.append([
            str(rng.choice([int(rng.integers(580, 850)), 9999], p=[0.97, 0.03])),
            f"2019{int(rng.integers(1, 13)):02d}",
            str(rng.choice(["Y", "N", "9"], p=[0.3, 0.65, 0.05])),
            str(rng.choice(["", "31084", "35620"])), str(rng.choice(["P", "I", "S"])),
            str(rng.integers(10, 50)), str(int(rng.integers(60, 700)) * 1000),
            f"{rng.normal(3.5, 0.4):.3f}", str(rng.choice(["R", "B", "C"])),
            str(rng.choice(["CA", "TX", "NY", "FL"])), str(rng.choice(["SF", "PU", "CO"])),
            f"F19Q{int(rng.integers(1, 5))}{i:07d}", str(rng.choice(_SELLERS)), ""])
    return rows


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40))
def test_a_headerless_loan_level_file_is_refused_and_with_its_header_read(
    tmp_path: Path, seed: int, n: int,
) -> None:
    """Before: only the second line was compared with the first, cell by cell; a ``9``
    among ``Y``/``N``, a blank MSA above a filled one or another lender's name made the
    first loan the column names, and init then said "cannot find the id field"."""
    rows = _freddie_rows(np.random.default_rng(seed), n)
    body = "".join("|".join(r) + "\n" for r in rows)
    (tmp_path / "t.txt").write_text(body)
    with pytest.raises(SourceError, match=r"its first line reads as data.*\(14 of them, "
                                          r"separated by '\|'\)"):
        refuse_data_header(tmp_path / "t.txt", "|", "t.txt", fix="")
    names = ["CREDIT_SCORE", "FIRST_PAYMENT_DATE", "FIRST_TIME_HOMEBUYER_FLAG", "MSA",
             "OCCUPANCY_STATUS", "ORIG_DTI", "ORIG_UPB", "ORIG_INTEREST_RATE", "CHANNEL",
             "PROPERTY_STATE", "PROPERTY_TYPE", "LOAN_SEQUENCE_NUMBER", "SELLER_NAME",
             "SUPER_CONFORMING_FLAG"]
    (tmp_path / "t.txt").write_text("|".join(names) + "\n" + body)
    refuse_data_header(tmp_path / "t.txt", "|", "t.txt", fix="")


@pytest.mark.parametrize("text", [
    "country,1990,1991\nGermany,3.1,2.9\nFrance,2.5,2.7\nPeru,1,4\n",  # years as names
    "ID,2019\n17,5\n",  # a code-like name over numbers
    "flag,2019,name\nY,5,Ann\nN,6,Bob\n",  # a name over codes of another shape
])
def test_names_over_the_rows_below_are_read(tmp_path: Path, text: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    refuse_data_header(tmp_path / "t.csv", ",", "t.csv", fix="")


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_NAME, min_size=14, max_size=14), years=st.sets(st.integers(0, 13),
       max_size=3), seed=st.integers(0, 10_000), n=st.integers(1, 21))
def test_a_header_with_years_among_its_names_over_loan_rows_is_read(
    names: list[str], years: set[int], seed: int, n: int,
) -> None:
    header = [str(2000 + j) if j in years else name for j, name in enumerate(names)]
    assert header_is_data(header, _freddie_rows(np.random.default_rng(seed), n)) is None


# -- a title line above the header (Lending Club's downloads) -----------------------------

_LC_TITLE = "Notes offered by Prospectus (https://www.lendingclub.com/info/prospectus.action)"


def test_a_title_line_above_the_header_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: the title's spaces made it a space-separated header of five names, and init
    stopped on pandas' 'Error tokenizing data. C error: Expected 5 fields in line 3, saw
    7'."""
    monkeypatch.chdir(tmp_path)
    ref, live = _frames()
    Path("ref.csv").write_text(_LC_TITLE + "\n" + ref.to_csv(index=False))
    live.to_csv("live.csv", index=False)
    code, out, err = _init(Path("."), capsys)
    assert code != 0 and out == "", err
    assert err.splitlines()[0] == (
        "error: reference dataset ref.csv: its first line ('Notes offered by Prospectus "
        "(https://www.lendingclub.com/inf...') is a title above the header, not column "
        "names: the line below splits on commas into 4 fields; remove the first line"), err
    ref.to_csv("ref.csv", index=False)
    code, _, err = _init(Path("."), capsys)
    assert code == 0, err
    Path("live.csv").write_text(_LC_TITLE + "\n" + live.to_csv(index=False))
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.csv", "--out", "run", "--quiet", "--no-report"],
                           capsys)
    assert code != 0 and "live.csv: its first line ('Notes offered" in err, err
    assert "Traceback" not in err


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=1, max_size=8, unique=True),
       cells=st.lists(st.lists(st.one_of(
           st.text(st.characters(blacklist_characters="\r\n"), max_size=12), _NAME,
           st.just("1,5"), st.just("a, b, c")), min_size=8, max_size=8), min_size=1, max_size=5),
       sep=st.sampled_from([",", ";", "\t", "|"]))
def test_a_header_over_rows_written_with_any_separator_is_no_title(
    tmp_path: Path, names: list[str], cells: list[list[str]], sep: str) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    w.writerow(names)
    for row in cells:
        w.writerow(row[:len(names)])
    lines = buf.getvalue().split("\n")
    assert not title_line(lines[0], lines[1], sep)
