"""A reference CSV without a header line is read with the column names the policy gives
(``reference: {csv: {names: [...]}}``, written by ``init --reference-names``) by every
reader of the reference: the same table, profile and timeline as the same file with its
header line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.actions.reference import ReferenceReader
from driftwatch.csvrows import RAGGED_ROWS
from driftwatch.errors import SourceError
from driftwatch.policy.errors import PolicyErrors
from driftwatch.policy.levels import build_calibrator, load_reference
from driftwatch.policy.loader import load_policy_text
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from .test_csv_names import LOAN, _drop, _loans


def _policy(names: str | None, reference: str = "ref.txt", extra: str = "") -> str:
    csv = "" if names is None else f"  csv: {{names: {names}}}\n"
    return ("apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: p}\n"
            f"model: {{name: m, reference: {reference}}}\n"
            f"reference:\n{csv}  score: s\n  label: y\n  decision: null\n"
            "window: {pane: 500}\nsignals:\n  - detector: psi\n"
            f"    thresholds: {{mild: 0.1}}\n{extra}")


_NAME = st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=2, max_size=6, unique=True), rows=st.integers(1, 30),
       seed=st.integers(0, 999), sep=st.sampled_from([",", "|", ";", "\t"]))
def test_a_headerless_reference_reads_as_the_same_file_with_its_header(
    tmp_path: Path, names: list[str], rows: int, seed: int, sep: str,
) -> None:
    """Before: refused (its first line reads as data). Read with its names it is the
    table of the file with a header line; a header equal to the names is skipped; names
    one short are refused at file:line with both counts."""
    rng = np.random.default_rng(seed)
    body = "".join(sep.join(f"{v:.3f}" if j % 2 == 0 else rng.choice(["A", "B", "C"])
                            for j, v in enumerate(rng.normal(size=len(names)))) + "\n"
                   for _ in range(rows))
    (tmp_path / "bare.csv").write_text(body)
    (tmp_path / "head.csv").write_text(sep.join(names) + "\n" + body)
    headed = read_reference_table(tmp_path / "head.csv")
    assert list(headed.columns) == names and len(headed) == rows
    pd.testing.assert_frame_equal(read_reference_table(tmp_path / "bare.csv", names), headed)
    pd.testing.assert_frame_equal(read_reference_table(tmp_path / "head.csv", names), headed)
    with pytest.raises(SourceError, match=rf"bare\.csv:1: its line holds {len(names)} "
                       rf"fields, but {len(names) - 1} column names are given \(the "
                       r"policy's reference: \{csv: \{names: \[\.\.\.\]\}\}\)"):
        read_reference_table(tmp_path / "bare.csv", names[:-1])


def test_a_long_line_deep_in_the_file_is_refused_with_its_line(tmp_path: Path) -> None:
    """Past the first rows the csv module reads for ragged ones (csvrows), the whole
    file's check finds it, and says it as for those rows."""
    lines = [f"{i}|0.{i}|A" for i in range(RAGGED_ROWS + 30)]
    lines[RAGGED_ROWS + 25] += "|extra"
    (tmp_path / "ref.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(SourceError, match=rf"ref\.txt:{RAGGED_ROWS + 26}: a ragged row: 4 "
                                          "fields where 3 column names are given .*, read "
                                          "with pipe as the separator"):
        read_reference_table(tmp_path / "ref.txt", ["x", "s", "c"])


def test_names_for_a_parquet_reference_are_refused_not_ignored(tmp_path: Path) -> None:
    pd.DataFrame({"x": [1.0, 2.0]}).to_parquet(tmp_path / "ref.parquet")
    with pytest.raises(SourceError, match=r"is Parquet, which names its columns, but column "
                                          "names are given"):
        read_reference_table(tmp_path / "ref.parquet", ["x"])


@pytest.mark.parametrize(("names", "at", "said"), [
    ("[]", "6:16", "expected at least 1 item"),
    ("[x, ' ', s]", "6:16", "expected a column name (text) for every field, none empty"),
    ("[x, s, x]", "6:16", "column names given twice: x"),
    ("[x, 2]", "6:20", "expected a string, found 2"),
])
def test_bad_reference_names_are_located_in_the_policy(names: str, at: str, said: str
                                                       ) -> None:
    with pytest.raises(PolicyErrors) as info:
        load_policy_text(_policy(names), file="p.yaml")
    assert f"p.yaml:{at}: {said}" in str(info.value), str(info.value)


def _reference(tmp: Path, n: int = 600, header: bool = False) -> None:
    rng = np.random.default_rng(5)
    x, z = rng.normal(0, 1, n), rng.lognormal(3, 1, n)
    s = 1 / (1 + np.exp(-x))
    head = "id|x|z|s|y\n" if header else ""
    (tmp / "ref.txt").write_text(head + "".join(
        f"c{i}|{x[i]:.4f}|{z[i]:.3f}|{s[i]:.4f}|{int(rng.random() < s[i])}\n"
        for i in range(n)))


def test_every_reader_of_the_reference_acts_on_the_names(tmp_path: Path) -> None:
    """The monitor's profile (and the levels seeded by it), the actions' rows and the
    Python API all read the headerless table by the policy's names: swapping two names
    swaps the features, so the fingerprint and the levels' store key change with them."""
    _reference(tmp_path)
    ref = tmp_path / "ref.txt"
    extra = ("  - detector: ks\n    thresholds: {mild: {calibrated: {false_alarm_rate: "
             "0.05}}}\n")
    pol = load_policy_text(_policy("[id, x, z, s, y]", extra=extra), file="p.yaml")
    swapped = load_policy_text(_policy("[id, z, x, s, y]", extra=extra), file="p.yaml")
    bare = ReferenceReader.of(pol).profile(ref)
    other = ReferenceReader.of(swapped).profile(ref)
    assert bare.schema.numeric == ("x", "z") and bare.sketch.n == 600
    assert bare.fingerprint != other.fingerprint
    keys = [build_calibrator(p, pol, sizes=(500,)).key(500) for p in (bare, other)]
    assert keys[0] != keys[1]
    _reference(tmp_path, header=True)
    headed = load_reference(ref, load_policy_text(_policy(None, extra=extra), file="p.yaml"))
    assert headed.fingerprint == bare.fingerprint  # the header line equal to the names
    _reference(tmp_path)
    rows = ReferenceReader.of(pol).rows(ref)
    assert rows is not None and list(rows.columns) == ["id", "x", "z", "score", "label"]
    assert rows["label"].isin([0.0, 1.0]).all() and len(rows) == 600
    from driftwatch import Monitor

    mon = Monitor.from_reference(ref, policy=pol, ignore=[])
    assert mon.profile.schema.numeric == ("x", "z")


def test_policy_check_names_the_line_when_the_names_do_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _reference(tmp_path)
    Path("p.yaml").write_text(_policy("[id, x, z, s, y, extra]"))
    code, out, err = run_cli(["policy", "check", "p.yaml"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "ref.txt:1: its line holds 5 fields, but 6 column names are given (the " \
           "policy's reference: {csv: {names: [...]}})" in out + err, out + err
    Path("p.yaml").write_text(_policy("[id, x, z, s, y]"))
    code, out, err = run_cli(["policy", "check", "p.yaml"], capsys)
    assert code == 0, out + err
    Path("p.yaml").write_text(_policy(None))
    code, out, err = run_cli(["policy", "check", "p.yaml"], capsys)
    assert code != 0 and "(init: --reference-names)" in out + err, out + err


def _timeline(path: Path) -> list[dict]:
    """The timeline's records less what names the policy file (its digest, and the
    file:line of each reason): the policy with names holds two lines more."""
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec["decision"].pop("policy_digest")
        for r in rec["decision"]["reasons"]:
            r.pop("source")
        out.append(rec)
    return out


def test_a_headerless_drop_and_reference_run_init_check_explain_replay_as_with_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: init refused the headerless reference. With its names
    (``--reference-names-file``, written to the policy) init, policy check, policy
    explain and replay work, and the timeline and summary are those of the same drop and
    reference with their header lines, run through init the same way."""
    rng = np.random.default_rng(11)
    ref = _loans(rng, 3000, 0, 1_704_067_200, 0.0)
    live = (_loans(rng, 3000, 10_000, 1_706_745_600, 0.0)
            + _loans(rng, 2000, 20_000, 1_706_745_600 + 60 * 3000, 1.0))
    init = ["init", "-r", "ref.txt", "-s", "drop.txt", "--model", "fm", "--time-field",
            "MONTHLY_REPORTING_PERIOD", "--id-field", "LOAN_ID", "--score-field", "SCORE",
            "--label-field", "DEFAULT", "--connector-out", "c.yaml", "--policy-out", "p.yaml"]
    for folder, header in (("bare", False), ("headed", True)):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        _drop(Path("ref.txt"), ref, header, len(LOAN))
        _drop(Path("drop.txt"), live, header, len(LOAN) - 1)
        flags = [] if header else ["--names", ",".join(LOAN[:-1]),
                                   "--reference-names-file", "layout.txt"]
        Path("layout.txt").write_text("# loan-level layout\n" + "\n".join(LOAN) + "\n")
        code, _, err = run_cli([*init, *flags], capsys)
        assert code == 0, err
        code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
        assert code == 0, out + err
        code, out, err = run_cli(["policy", "explain", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
        assert code == 0, err
        said = "a CSV reference has no header line: its 11 columns are named by csv.names"
        assert (said in out) is not header, out
        code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                                "--input", "drop.txt", "--out", "o", "--quiet",
                                "--no-report"], capsys)
        assert code == 0, err
    bare, headed = tmp_path / "bare", tmp_path / "headed"
    pol = (bare / "p.yaml").read_text()
    assert f"    names: [{', '.join(LOAN)}]\n" in pol, pol
    assert (bare / "p.yaml").read_text().count("\n") == (headed / "p.yaml").read_text(
        ).count("\n") + 2
    timeline = _timeline(bare / "o/timeline.jsonl")
    assert len(timeline) >= 5 and any(r["decision"]["tier"] == "severe" for r in timeline)
    assert timeline == _timeline(headed / "o/timeline.jsonl")
    assert (bare / "o/summary.json").read_bytes() == (headed / "o/summary.json").read_bytes()
    # the names policy on the files with their header lines: each header is skipped
    monkeypatch.chdir(bare)
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--reference", str(headed / "ref.txt"), "--input",
                            f"predictions={headed / 'drop.txt'}", "--out", "named",
                            "--quiet", "--no-report"], capsys)
    assert code == 0, err
    assert (bare / "named/timeline.jsonl").read_bytes() == (
        bare / "o/timeline.jsonl").read_bytes()


def test_init_refuses_reference_names_that_do_not_fit_with_the_flag_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = _loans(np.random.default_rng(3), 300, 0, 1_704_067_200, 0.0)
    _drop(Path("ref.txt"), rows, False, len(LOAN))
    _drop(Path("drop.txt"), rows, False, len(LOAN) - 1)
    init = ["init", "-r", "ref.txt", "-s", "drop.txt", "--names", ",".join(LOAN[:-1])]
    code, out, err = run_cli([*init, "--reference-names", ",".join(LOAN[:-1])], capsys)
    assert code != 0 and out == "" and "Traceback" not in err
    assert err.startswith("error: reference dataset ref.txt:1: its line holds 11 fields, but "
                          "10 column names are given (--reference-names)"), err
    pd.DataFrame({"x": [1.0, 2.0]}).to_parquet("ref.parquet")
    code, out, err = run_cli(["init", "-r", "ref.parquet", "-s", "drop.txt", "--names",
                              ",".join(LOAN[:-1]), "--reference-names", "x"], capsys)
    assert code != 0 and "Traceback" not in err
    assert "is Parquet, which names its columns, but column names are given for a CSV " \
           "without a header line (--reference-names): remove them" in err, err
