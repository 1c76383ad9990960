"""The generated completion script, run by a real bash against the real parser."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from driftwatch.cli import build_parser, main
from driftwatch.completion import bash_script, command_table

BASH = shutil.which("bash")


def complete(script: str, words: list[str], cwd: str) -> list[str]:
    """COMPREPLY after completing the last of ``words`` (the line typed so far)."""
    quoted = " ".join(f"'{w}'" for w in words)
    prog = f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _driftwatch; " \
           'printf "%s\\n" "${COMPREPLY[@]}"'
    out = subprocess.run([BASH, "--norc", "-c", prog], capture_output=True, text=True, cwd=cwd,
                         check=True)
    assert out.stderr == ""
    return [w for w in out.stdout.splitlines() if w]


@pytest.fixture(scope="module")
def script() -> str:
    if BASH is None:
        pytest.skip("bash is not installed")
    return bash_script(build_parser())


def test_every_command_of_the_parser_is_in_the_table():
    table = command_table(build_parser())
    assert {"replay", "policy", "actions", "run", "completion"} <= set(table[""])
    assert "check" in table["policy"] and "--connector" in table["replay"]


def test_bash_completes_commands_subcommands_options_and_files(script, tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text("x: 1\n")
    assert complete(script, ["driftwatch", "rep"], str(tmp_path)) == ["replay", "report"]
    assert "approve" in complete(script, ["driftwatch", "actions", ""], str(tmp_path))
    assert complete(script, ["driftwatch", "replay", "--conn"], str(tmp_path)) == ["--connector"]
    # an option's value and a positional argument are file names
    assert complete(script, ["driftwatch", "replay", "--policy", "pol"], str(tmp_path)) == \
        ["policies"]
    assert complete(script, ["driftwatch", "policy", "check", "pol"], str(tmp_path)) == \
        ["policies"]
    # a flag without a value does not switch to file names
    assert complete(script, ["driftwatch", "replay", "--quiet", "--exe"], str(tmp_path)) == \
        ["--execute"]


def test_the_completion_command_prints_the_script(capsys):
    assert main(["completion"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# driftwatch completion") and "complete -o filenames" in out
