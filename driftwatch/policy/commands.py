"""The ``driftwatch policy`` commands: ``check FILE...`` and ``explain FILE``.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="driftwatch")
>>> _ = add_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["policy", "check", "a.yaml", "b.yaml"])
>>> args.files, args.func is run_check
(['a.yaml', 'b.yaml'], True)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from driftwatch.errors import PolicyError
from driftwatch.policy.explain import explain_policy
from driftwatch.policy.loader import load_policy

__all__ = ["add_commands", "check_files", "load_policy", "run_check", "run_explain"]


def add_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``policy check`` and ``policy explain`` to a CLI's subparsers.

    Each leaf sets ``func``: call ``args.func(args)`` and exit with what it returns.
    """
    policy = subparsers.add_parser("policy", help="check and explain drift policies")
    sub = policy.add_subparsers(dest="policy_command", required=True)
    check = sub.add_parser("check", help="validate policy files; print every error")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(func=run_check)
    explain = sub.add_parser(
        "explain", help="print the effective policy and what each tier will do"
    )
    explain.add_argument("file", metavar="FILE")
    explain.set_defaults(func=run_explain)
    return policy


def check_files(paths: Iterable[str | Path], *, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    """Check each file; ``ok FILE`` for a good one, every error for a bad one.

    Returns 0 when all are valid, 1 otherwise.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    status = 0
    for path in paths:
        try:
            load_policy(path)
        except PolicyError as exc:
            print(exc, file=err)
            status = 1
        else:
            print(f"ok {path}", file=out)
    return status


def run_check(args: argparse.Namespace) -> int:
    return check_files(args.files)


def run_explain(args: argparse.Namespace, *, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    try:
        policy = load_policy(args.file)
    except PolicyError as exc:
        print(exc, file=err or sys.stderr)
        return 1
    (out or sys.stdout).write(explain_policy(policy))
    return 0
