"""``driftwatch profile DATA`` and ``driftwatch report --reference DATASET`` read no policy,
so a headerless CSV was refused with a hint naming the policy's ``reference: {csv: {names:
}}``, which neither reads. Both take ``--names A,B,...`` / ``--names-file F`` now, read by
the reference reader's rules, and their refusal names that flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from driftwatch.report import commands as report_commands
from driftwatch.windows.profile import ReferenceProfile

from ._cli import run_cli

NAMES = ["income", "months", "status", "bad"]


def _tables(tmp: Path, n: int = 300) -> None:
    """The same rows as ``bare.csv`` (no header) and ``head.csv`` (a header line)."""
    rng = np.random.default_rng(8)
    body = "".join(f"{rng.normal(5e4, 1e4):.0f},{rng.integers(1, 60)},"
                   f"A1{rng.integers(1, 5)},{rng.integers(0, 2)}\n" for _ in range(n))
    (tmp / "bare.csv").write_text(body)
    (tmp / "head.csv").write_text(",".join(NAMES) + "\n" + body)


def _same(a: ReferenceProfile, b: ReferenceProfile) -> None:
    assert a.schema.to_dict() == b.schema.to_dict()
    assert a.sketch.to_dict() == b.sketch.to_dict()


@pytest.mark.parametrize("how", ["list", "file"])
def test_profile_reads_a_headerless_csv_by_the_names_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    _tables(tmp_path)
    (tmp_path / "layout.txt").write_text("# layout\n" + "\n".join(NAMES) + "\n\n")
    flags = (["--names", ",".join(NAMES)] if how == "list"
             else ["--names-file", str(tmp_path / "layout.txt")])
    for data, out in (("bare.csv", "bare.json"), ("head.csv", "head.json")):
        code, said, err = run_cli(["profile", str(tmp_path / data), "--out",
                                   str(tmp_path / out), *flags], capsys)
        assert code == 0, err
    assert "3 numeric, 1 categorical features, 300 rows" in said
    _same(ReferenceProfile.load(tmp_path / "bare.json"),
          ReferenceProfile.load(tmp_path / "head.json"))


def test_profile_refuses_a_headerless_csv_naming_its_own_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _tables(tmp_path)
    code, _, err = run_cli(["profile", str(tmp_path / "bare.csv"), "--out",
                            str(tmp_path / "p.json")], capsys)
    assert code != 0 and "its first line reads as data" in err, err
    assert "or give them: --names A,B,... (or --names-file FILE, one a line)" in err, err
    assert "policy" not in err and "Traceback" not in err


def test_profile_names_one_short_are_refused_at_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _tables(tmp_path)
    code, _, err = run_cli(["profile", str(tmp_path / "bare.csv"), "--out",
                            str(tmp_path / "p.json"), "--names", "income,months,status"],
                           capsys)
    assert code != 0
    assert "bare.csv:1: its line holds 4 fields, but 3 column names are given (--names)" \
        in err, err


def test_report_builds_its_reference_by_the_names_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _tables(tmp_path)
    seen: dict[str, Any] = {}

    def write_report(run: Path, *, reference: ReferenceProfile | None, **_: Any) -> Path:
        seen["reference"] = reference
        out = tmp_path / "r.html"
        out.write_text("report")
        return out

    monkeypatch.setattr(report_commands, "write_report", write_report)
    code, _, err = run_cli(["report", "--input", str(tmp_path), "--reference",
                            str(tmp_path / "bare.csv"), "--names", ",".join(NAMES)], capsys)
    assert code == 0, err
    _same(seen["reference"], ReferenceProfile.from_file(tmp_path / "head.csv"))


@pytest.mark.parametrize(("extra", "said"), [
    ([], "or give them: --names A,B,... (or --names-file FILE, one a line)"),
    (["--names", "a,b"], "prof.json is a saved profile, not a CSV dataset, but column names "
                         "are given (--names): remove them"),
    (["--names", "a,,b"], "--names: expected column names, none of them empty; found 'a,,b'"),
])
def test_report_refusals_name_its_own_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
        said: str) -> None:
    _tables(tmp_path)
    ref = "bare.csv" if not extra or "a,,b" in extra else "prof.json"
    if ref == "prof.json":
        ReferenceProfile.from_file(tmp_path / "head.csv").save(tmp_path / "prof.json")
    code, _, err = run_cli(["report", "--input", str(tmp_path), "--reference",
                            str(tmp_path / ref), *extra], capsys)
    assert code != 0 and said in err, err
    assert "policy" not in err and "Traceback" not in err


def test_report_names_without_a_reference_are_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["report", "--input", str(tmp_path), "--names", "a,b"], capsys)
    assert (code, out, err) == (2, "", "error: --names names the columns of a --reference "
                                "CSV dataset; there is none to read\n")
