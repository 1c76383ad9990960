"""A path the machine refuses (a folder that cannot be made, a file where a folder should
be, a full disk) is one ``error:`` line naming it, exit code 1, never a traceback.

Before: ``driftwatch replay ... --out /proc/x`` ended in ``FileNotFoundError`` raised from
``pathlib.mkdir``, with the whole stack."""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch import cli

from ._cli import run_cli


def _files(tmp: Path) -> None:
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"income": rng.normal(3000, 400, 300).round(2),
                        "score": rng.uniform(size=300).round(3)})
    live = ref.copy()
    live.insert(0, "id", [f"a{i}" for i in range(300)])
    live.insert(1, "ts", 1.7e9 + np.arange(300) * 60.0)
    ref.to_csv(tmp / "ref.csv", index=False)
    live.to_csv(tmp / "live.csv", index=False)
    (tmp / "a-file").write_text("not a folder\n")


def test_init_and_replay_into_a_path_under_a_file_say_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    code, _, err = run_cli(["init", "-r", "ref.csv", "-s", "live.csv",
                            "--connector-out", "a-file/c.yaml", "--policy-out", "p.yaml"],
                           capsys)
    # pathlib's mkdir says "File exists" of a file where the folder should be
    assert code == 1 and err.startswith("error: File exists: a-file"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    code, _, err = run_cli(["init", "-r", "ref.csv", "-s", "live.csv",
                            "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", "live.csv",
                            "--out", "a-file/out"], capsys)
    assert code == 1 and err == "error: Not a directory: a-file/out\n", err


def test_a_full_disk_is_said_with_what_to_do(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    def full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    parser = cli.build_parser()
    args = parser.parse_args(["report", "--input", "x"])
    monkeypatch.setattr(args, "func", full)
    monkeypatch.setattr(cli.argparse.ArgumentParser, "parse_args", lambda *_a, **_k: args)
    assert cli.main([]) == 1
    assert capsys.readouterr().err == ("error: No space left on device (free some space, or "
                                       "write elsewhere)\n")


def test_other_os_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused connection is not a path the user gave: the code that made it says it
    (or it is a defect to see whole)."""
    def refused(args: object) -> int:
        raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")

    args = cli.build_parser().parse_args(["report", "--input", "x"])
    monkeypatch.setattr(args, "func", refused)
    monkeypatch.setattr(cli.argparse.ArgumentParser, "parse_args", lambda *_a, **_k: args)
    with pytest.raises(ConnectionRefusedError):
        cli.main([])
