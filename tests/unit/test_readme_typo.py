"""The README's tour shows what ``policy check`` prints for a typo in the demo policy; that
excerpt is checked against the command, so a moved line or a reworded hint shows here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = "policies/credit-risk-demo.yaml"


def readme_typo_example() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("A typo gets a pointed answer:\n\n```\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def test_the_readme_typo_example_is_what_policy_check_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = readme_typo_example()
    m = re.match(rf"{re.escape(DEMO)}:(\d+):\d+: unknown key '(\w+)'", shown[0])
    assert m, shown[0]
    line_no, typo = int(m.group(1)), m.group(2)
    (tmp_path / "policies").mkdir()
    (tmp_path / "data").symlink_to(ROOT / "data")
    lines = (ROOT / DEMO).read_text(encoding="utf-8").splitlines(keepends=True)
    assert "thresholds:" in lines[line_no - 1], "the README's line is not a thresholds line"
    lines[line_no - 1] = lines[line_no - 1].replace("thresholds:", f"{typo}:", 1)
    (tmp_path / DEMO).write_text("".join(lines), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    code, out, err = run_cli(["policy", "check", DEMO], capsys)

    assert code == 1
    printed = (out + err).splitlines()
    for line in shown:
        assert line in printed, (line, printed)
