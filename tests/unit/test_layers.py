"""The layer contract in pyproject.toml holds, and it fails on a deliberately wrong import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    if not LINT.exists():
        pytest.fail(f"{LINT} is missing: install the dev extra (import-linter)")
    return subprocess.run([str(LINT), "--no-cache"], cwd=tree, capture_output=True,
                          text=True, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})


def _copy(tmp: Path) -> Path:
    shutil.copytree(ROOT / "driftwatch", tmp / "driftwatch",
                    ignore=shutil.ignore_patterns("__pycache__", "_bundle"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    return tmp


def test_the_tree_keeps_its_layers(tmp_path: Path) -> None:
    res = lint(_copy(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


@pytest.mark.parametrize(("module", "wrong", "contract"), [
    ("detectors/drift.py", "import driftwatch.actions", "Detectors are pure"),
    ("windows/sketch.py", "import driftwatch.policy", "Sources and sketches"),
    ("report/build.py", "import driftwatch.service", "Only the daemon, replay and the CLI"),
    ("replay/run.py", "import driftwatch.service.http", "replay never imports the daemon"),
])
def test_a_wrong_import_breaks_the_contract(tmp_path: Path, module: str, wrong: str,
                                            contract: str) -> None:
    tree = _copy(tmp_path)
    path = tree / "driftwatch" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{wrong}  # deliberately wrong\n",
                    encoding="utf-8")
    res = lint(tree)
    assert res.returncode != 0
    assert f"{contract}" in res.stdout and "BROKEN" in res.stdout, res.stdout
