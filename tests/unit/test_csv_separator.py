"""A CSV saved with semicolons (or tabs, or pipes) is read with the separator its header
shows, and each command says so in one line; a header that splits on several separators
is refused with the reason, and a connector's ``csv: {delimiter:}`` settles it."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError, SourceError
from driftwatch.schema import FeatureSchema
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from ._csvconn import csv_connector, read_batches

SEPS = [(";", "semicolon"), ("\t", "tab"), ("|", "pipe")]


def _frames(n: int = 200) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    ref = pd.DataFrame({"income": rng.normal(3000, 500, n).round(2),
                        "score": rng.uniform(size=n).round(3),
                        "default": rng.integers(0, 2, n)})
    live = ref.drop(columns=["default"]).copy()
    live.insert(0, "id", range(n))
    live.insert(1, "ts", 1.75e9 + np.arange(n) * 10)
    return ref, live


@pytest.mark.parametrize(("sep", "word"), SEPS)
def test_init_reads_the_reference_and_the_sample_and_writes_the_delimiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sep: str, word: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    ref, live = _frames()
    ref.to_csv("ref.csv", sep=sep, index=False)
    live.to_csv("live.csv", sep=sep, index=False)
    code, out, err = run_cli(["init", "--model", "m", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml", "--reference", "ref.csv",
                              "--sample", "live.csv"], capsys)
    assert code == 0, err
    assert f"the reference ref.csv is {word}-separated" in out, out
    assert f"live.csv is {word}-separated" in out and "csv: delimiter" in out, out
    stream = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert stream["csv"] == {"delimiter": sep}, stream
    assert yaml.safe_load(Path("p.yaml").read_text())["model"]["features"] == ["income"]
    assert read_reference_table("ref.csv").equals(ref)


def test_init_on_comma_files_writes_no_delimiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    ref, live = _frames()
    ref.to_csv("ref.csv", index=False)
    live.to_csv("live.csv", index=False)
    code, out, err = run_cli(["init", "--model", "m", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml", "--reference", "ref.csv",
                              "--sample", "live.csv"], capsys)
    assert code == 0, err
    assert "separated" not in out and "csv:" not in Path("c.yaml").read_text()


def test_a_header_that_splits_on_several_separators_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "ref.csv").write_text("income;score|default\n1;2|3\n")
    with pytest.raises(SourceError, match="splits on semicolon and on pipe"):
        read_reference_table(tmp_path / "ref.csv")
    # a stream says which: the refusal names the key, and the key reads it
    (tmp_path / "p.csv").write_text("application_id;ts;note|x;model.score\n"
                                    "a;1750000000;u|v;0.5\n")
    (tmp_path / "o.csv").write_text("application_id,outcome_ts,defaulted\n")
    with pytest.raises(SourceError, match=r"p\.csv: .*csv: \{delimiter"):
        FileSource(credit_connector("p.csv", "o.csv", base_dir=tmp_path), credit_schema())
    conn = _connector(tmp_path, "p.csv", 'csv: {delimiter: ";"}')
    src = FileSource(conn, FeatureSchema())
    polled = src.poll()
    assert polled is not None and polled.bad == [] and polled.batches[0].ids.tolist() == ["a"]
    src.close()


def test_a_replayed_semicolon_csv_is_read_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from driftwatch.connectors.file import separator_notes

    _, live = _frames()
    live = live.rename(columns={"id": "application_id", "score": "model.score"})
    live.to_csv(tmp_path / "p.csv", sep=";", index=False)
    (tmp_path / "o.csv").write_text("application_id,outcome_ts,defaulted\n")
    src = FileSource(credit_connector("p.csv", "o.csv", base_dir=tmp_path), credit_schema())
    assert separator_notes(src.inputs) == [
        "p.csv is semicolon-separated (found in its header): read with ';'"]
    polled = src.poll()
    assert polled is not None and polled.bad == []
    assert polled.batches[0].ids.tolist() == [str(i) for i in range(len(live))]
    assert np.allclose(polled.batches[0].score, live["model.score"])
    src.close()
    # a comma-separated file with semicolons inside a value is read as ever
    (tmp_path / "p.csv").write_text('application_id,ts,model.score\n"a;b",1750000000,0.5\n')
    src = FileSource(credit_connector("p.csv", "o.csv", base_dir=tmp_path), credit_schema())
    polled = src.poll()
    assert polled is not None and polled.batches[0].ids.tolist() == ["a;b"]
    assert separator_notes(src.inputs) == []
    src.close()


def _connector(tmp: Path, path: str, csv_line: str = "", *,
               fields: str = "event_time: {path: ts, unit: s}", fmt: str = "csv") -> object:
    return csv_connector(tmp, path, csv_line, fmt=fmt,
                         fields=("event_id: application_id", fields, "score: model.score"))


@pytest.mark.parametrize(("value", "found"), [('";;"', "';;'"), ("'\"'", "'\"'"),
                                              ('""', "''"), ('"\\n"', "'\\n'")])
def test_a_delimiter_that_is_not_one_character_is_a_located_error(
    tmp_path: Path, value: str, found: str,
) -> None:
    with pytest.raises(ConnectorError) as exc:
        _connector(tmp_path, "p.csv", f"csv: {{delimiter: {value}}}")
    text = str(exc.value)
    assert text.startswith("t.yaml:10:24: expected one character other than a quote"), text
    assert f"found {found}" in text and "at source.streams.predictions.csv.delimiter" in text


def test_delimiter_words_and_the_formats_it_belongs_to(tmp_path: Path) -> None:
    conn = _connector(tmp_path, "p.csv", "csv: {delimiter: tab}")
    assert conn.streams[0].delimiter == "\t"  # type: ignore[attr-defined]
    with pytest.raises(ConnectorError, match=r"t\.yaml:10:7: csv options are for CSV files, "
                       "not format: jsonl"):
        _connector(tmp_path, "p.csv", 'csv: {delimiter: ";"}', fmt="jsonl")
    with pytest.raises(ConnectorError) as exc:
        _connector(tmp_path, "p.csv", 'csv: {delimeter: ";"}')
    assert str(exc.value).startswith("t.yaml:10:13: unknown key 'delimeter'")
    assert "did you mean 'delimiter'?" in str(exc.value)


# -- the same batches whatever the separator --------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab ,;\t|\"'x1")), min_size=1, max_size=6)
_ROW = st.tuples(_TEXT, st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)),
                 st.one_of(st.none(), st.sampled_from(["a;b", "c|d", "e\tf", "g,h", "plain"])),
                 st.floats(0, 1))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=15),
       quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_NONNUMERIC]))
def test_any_separator_reads_into_the_batches_of_the_comma_version(
    tmp_path: Path, rows: list[tuple], quoting: int,
) -> None:
    frame = pd.DataFrame(rows, columns=["id", "x", "cat", "score"])
    frame.insert(1, "ts", 1.75e9 + np.arange(len(frame)))
    schema = FeatureSchema(numeric=("x",), categorical=("cat",),
                           levels=(("a;b", "c|d", "e\tf", "g,h", "plain"),))
    want = None
    for i, sep in enumerate([",", ";", "\t", "|"]):
        name = f"p{i}.csv"
        frame.to_csv(tmp_path / name, sep=sep, index=False, quoting=quoting)
        got = read_batches(tmp_path, name, schema)
        if want is None:
            want = got
            assert sum(len(b[0]) for b in got[0]) + len(got[1]) == len(frame)
        else:
            assert got == want, (repr(sep), (tmp_path / name).read_text())


# -- end to end: a table shaped like UCI Bank Marketing's bank-full.csv -----------------


def _bank(tmp: Path, n: int = 3000) -> None:
    """``;``-separated, text quoted and numbers bare, as bank-full.csv is written."""
    rng = np.random.default_rng(7)

    def frame(k: int) -> pd.DataFrame:
        balance = rng.normal(1400, 3000, k).round()
        p = 1 / (1 + np.exp(-(balance / 3000 - 2 + rng.normal(0, 1, k))))
        return pd.DataFrame({
            "age": rng.integers(18, 95, k),
            "job": rng.choice(["admin.", "blue-collar", "management", "self-employed"], k),
            "marital": rng.choice(["married", "single", "divorced"], k),
            "balance": balance,
            "housing": rng.choice(["yes", "no"], k),
            "duration": rng.integers(0, 3000, k),
            "score": p.round(4),
            "y": np.where(rng.uniform(size=k) < p, "yes", "no"),
        })

    kw = {"sep": ";", "index": False, "quoting": csv.QUOTE_NONNUMERIC}
    frame(n).to_csv(tmp / "bank_ref.csv", **kw)
    live = frame(n)
    live.insert(0, "id", [f"c{i}" for i in range(n)])
    live.insert(1, "ts", 1.7e9 + np.arange(n) * 60.0)
    live.drop(columns=["y"]).to_csv(tmp / "live.csv", **kw)
    live[["id", "y"]].to_csv(tmp / "out.csv", **kw)


def test_a_bank_marketing_table_goes_through_init_check_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    monkeypatch.chdir(tmp_path)
    _bank(tmp_path)
    code, out, err = run_cli(["init", "--reference", "bank_ref.csv", "--sample", "live.csv",
                              "--outcomes", "out.csv", "--model", "bank", "--label-bad", "yes",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "the reference bank_ref.csv is semicolon-separated" in out, out
    streams = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]
    assert {s["csv"]["delimiter"] for s in streams.values()} == {";"}, streams
    features = yaml.safe_load(Path("p.yaml").read_text())["model"]["features"]
    assert {"age", "job", "balance", "housing"} <= set(features), features
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    assert out.splitlines() == ["note: the reference bank_ref.csv is semicolon-separated "
                                "(found in its header): read with ';'", "ok p.yaml"], out
    # without `csv:` a stream's files are read by their header, and the replay says so
    text = Path("c.yaml").read_text()
    Path("c.yaml").write_text(text.replace('csv: {delimiter: ";"}', "", 1))
    code, out, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                              "--input", "live.csv", "out.csv", "--out", "run", "--quiet",
                              "--no-report"], capsys)
    assert code == 0, err
    assert "note: the reference bank_ref.csv is semicolon-separated" in err, err
    notes = [ln for ln in err.splitlines() if "-separated" in ln]
    assert len(notes) == 2 and "note: live.csv is semicolon-separated" in notes[1], err
    summary = json.loads(Path("run/summary.json").read_text())
    assert summary["events"] == 3000 and summary["bad_records"] == 0, summary
    assert summary["labels"]["joined"] == 3000, summary["labels"]
    dead = Path("run/dead_letter.jsonl")
    assert not dead.exists() or dead.read_text() == ""


# -- whitespace-separated: UCI's german.data / australian.dat with a header line added ------


def _german(tmp: Path, name: str, n: int, shift: int = 0) -> None:
    rng = np.random.default_rng(len(name) + shift)
    frame = pd.DataFrame({
        "status": rng.choice(["A11", "A12", "A13", "A14"], n),
        "duration": rng.integers(4, 72, n) + shift,
        "purpose": rng.choice(["A40", "A41", "A42", "A43"], n),
        "amount": rng.lognormal(7.8, 0.7, n).round().astype(int),
        "score": rng.uniform(size=n).round(4),
        "credit_risk": rng.choice([1, 2], n, p=[0.7, 0.3])})
    if name == "ref":
        frame.to_csv(tmp / "ref.data", sep=" ", index=False)
        return
    (tmp / name).mkdir()
    frame.insert(0, "id", range(n))
    frame.insert(1, "ts", 1.7e9 + 600 * np.arange(n))
    frame.drop(columns="credit_risk").to_csv(tmp / name / "pred.data", sep=" ", index=False)
    frame[["id", "ts", "credit_risk"]].to_csv(tmp / name / "out.data", sep=" ", index=False)


def test_a_space_separated_table_goes_through_init_check_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Read with commas it was one column, and init stopped on --label-field credit_risk
    with 'no such field' over a field list that was the whole header."""
    import json

    monkeypatch.chdir(tmp_path)
    _german(tmp_path, "ref", 1500)
    _german(tmp_path, "same", 3000)
    _german(tmp_path, "shift", 3000, shift=25)
    code, out, err = run_cli(["init", "--reference", "ref.data", "--sample", "same/pred.data",
                              "--outcomes", "same/out.data", "--label-field", "credit_risk",
                              "--label-bad", "2", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "the reference ref.data is space-separated (found in its header)" in out, out
    streams = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]
    assert {s["csv"]["delimiter"] for s in streams.values()} == {" "}, streams
    assert yaml.safe_load(Path("p.yaml").read_text())["model"]["features"] == [
        "status", "duration", "purpose", "amount"]
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0 and out.endswith("ok p.yaml\n"), err
    tiers = {}
    for name in ("same", "shift"):
        code, _, err = run_cli(["replay", "-q", "--no-report", "-c", "c.yaml", "-p", "p.yaml",
                                "-i", f"predictions={name}/pred.data",
                                f"outcomes={name}/out.data", "--out", f"o-{name}"], capsys)
        assert code == 0, err
        summary = json.loads(Path(f"o-{name}/summary.json").read_text())
        assert summary["bad_records"] == 0, summary
        tiers[name] = {json.loads(x)["tier"] for x in
                       Path(f"o-{name}/timeline.jsonl").read_text().splitlines()}
    assert tiers["same"] == {"none"} and "severe" in tiers["shift"], tiers


def test_columns_aligned_with_runs_of_spaces_are_refused(tmp_path: Path) -> None:
    (tmp_path / "ref.data").write_text("status  duration amount\nA11     6 1169\n")
    with pytest.raises(SourceError, match="splits on runs of spaces") as exc:
        read_reference_table(tmp_path / "ref.data")
    assert "save it with commas" in str(exc.value)


_NAME = st.text(st.sampled_from("abcxyz_0123456789.-"), min_size=1, max_size=8)


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_NAME, min_size=2, max_size=8), sep=st.sampled_from([";", "\t", "|"]),
       spaced=st.booleans())
def test_spaces_in_names_never_win_over_another_separator(
    names: list[str], sep: str, spaced: bool
) -> None:
    """A semicolon header whose names hold spaces (``Kredit Betrag;Laufzeit``) stays
    semicolon-separated; a header with none of the others reads on single spaces."""
    from driftwatch.csvsep import header_separator

    shown = [f"{n} {n}" if spaced else n for n in names]
    assert header_separator(sep.join(shown)) == sep
    assert header_separator(" ".join(names)) == " "
