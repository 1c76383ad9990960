"""The command line as a user runs it, for tests: exit code, stdout and stderr."""

from __future__ import annotations

import pytest

from driftwatch.cli import main

__all__ = ["run_cli"]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``driftwatch ARGS`` in this process; what it printed is taken from ``capsys``."""
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err
