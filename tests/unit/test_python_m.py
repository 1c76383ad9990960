"""``python -m driftwatch`` is the ``driftwatch`` command (before: "No module named
driftwatch.__main__; 'driftwatch' is a package and cannot be directly executed")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from driftwatch import __version__

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_driftwatch_runs_the_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "driftwatch", "--version"], env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert (res.returncode, res.stdout, res.stderr) == (0, f"driftwatch {__version__}\n", "")
