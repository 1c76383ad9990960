"""The line that says which separator a CSV is read with said it was 'found in its header'
for a file with no header line too (its names given: ``--names``, ``csv: {names:}``,
``reference: {csv: {names:}}``), streams and reference alike: it says 'its first line'
there, and still 'its header' where a first line equal to the names is one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ._cli import run_cli

REF_NAMES = "income,score,label"
LIVE_NAMES = "id,ts,income,score"


def _files(tmp: Path, header: bool) -> None:
    rng = np.random.default_rng(4)
    ref = "".join(f"{rng.normal(5e4, 1e4):.0f}|{rng.random():.3f}|{rng.integers(0, 2)}\n"
                  for _ in range(300))
    live = "".join(f"r{i}|{1_700_000_000 + 60 * i}|{rng.normal(5e4, 1e4):.0f}|"
                   f"{rng.random():.3f}\n" for i in range(200))
    (tmp / "ref.txt").write_text((REF_NAMES.replace(",", "|") + "\n" if header else "") + ref)
    (tmp / "live.txt").write_text((LIVE_NAMES.replace(",", "|") + "\n" if header else "")
                                  + live)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code, out, err = run_cli(["init", "-r", str(tmp / "ref.txt"), "--reference-names",
                              REF_NAMES, "-s", str(tmp / "live.txt"), "--names", LIVE_NAMES,
                              "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                              str(tmp / "p.yaml")], capsys)
    assert code == 0, err
    return [ln for ln in out.splitlines() if "pipe-separated" in ln]


@pytest.mark.parametrize(("header", "where"), [(False, "its first line"),
                                               (True, "its header")])
def test_init_says_where_the_separator_was_found(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], header: bool, where: str) -> None:
    _files(tmp_path, header)
    said = _init(tmp_path, capsys)
    assert said == [f"the reference {tmp_path / 'ref.txt'} is pipe-separated (found in "
                    f"{where}): read with '|'",
                    f"{tmp_path / 'live.txt'} is pipe-separated (found in {where}): read "
                    "with '|'; the connector says so (csv: delimiter)"], said


def test_replay_and_policy_check_say_its_first_line_for_a_headerless_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _files(tmp_path, header=False)
    _init(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    conn = Path("c.yaml").read_text()
    assert '        delimiter: "|"\n' in conn
    Path("c.yaml").write_text(conn.replace('        delimiter: "|"\n', ""))  # found again
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "live.txt", "--out", "o", "--quiet", "--no-report"],
                           capsys)
    assert code == 0, err
    notes = [ln for ln in err.splitlines() if "pipe-separated" in ln]
    assert len(notes) == 2, err
    assert all("(found in its first line)" in ln for ln in notes), notes
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    assert "is pipe-separated (found in its first line)" in out + err, out + err
    assert "found in its header" not in out + err
