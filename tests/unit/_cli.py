"""The command line as a user runs it, for tests: exit code, stdout and stderr."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from driftwatch.cli import main

__all__ = ["init_then_replay", "replay_summary", "run_cli"]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``driftwatch ARGS`` in this process; what it printed is taken from ``capsys``."""
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def init_then_replay(tmp: Path, capsys: pytest.CaptureFixture[str], *, reference: str,
                     sample: str, outcomes: str, init_flags: Sequence[str] = ()
                     ) -> tuple[str, str]:
    """``driftwatch init`` on files in ``tmp`` (writing ``c.yaml`` and ``p.yaml``; with
    ``init_flags`` too), then ``replay`` of the sample and outcomes with them into
    ``tmp/o``; each must succeed. What each printed."""
    code, said_init, err = run_cli(
        ["init", "--reference", str(tmp / reference), "--sample", str(tmp / sample),
         "--outcomes", str(tmp / outcomes), "--connector-out", str(tmp / "c.yaml"),
         "--policy-out", str(tmp / "p.yaml"), *init_flags], capsys)
    assert code == 0, err
    code, said_replay, err = run_cli(
        ["replay", "--connector", str(tmp / "c.yaml"), "--policy", str(tmp / "p.yaml"),
         "--input", f"predictions={tmp / sample}", f"outcomes={tmp / outcomes}",
         "--out", str(tmp / "o")], capsys)
    assert code == 0, err
    return said_init, said_replay


def replay_summary(tmp: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch,
                   inputs: Sequence[str] = ("live.jsonl", "out.csv")) -> dict[str, Any]:
    """``driftwatch replay`` in ``tmp`` of ``inputs`` with the ``c.yaml`` and ``p.yaml``
    an ``init`` wrote there, quietly and without a report, into ``tmp/run``; it must
    succeed. Its ``summary.json``."""
    monkeypatch.chdir(tmp)
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", *inputs, "--out", "run", "--quiet", "--no-report"],
                           capsys)
    assert code == 0, err
    return dict(json.loads((tmp / "run" / "summary.json").read_text()))
