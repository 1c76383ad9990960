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

from driftwatch.countarg import at_least
from driftwatch.errors import ConfigError, DriftwatchError, PolicyError, SourceError
from driftwatch.policy.catalog import DETECTORS, measures_of
from driftwatch.policy.explain import explain_policy
from driftwatch.policy.levels import LevelTable, calibrated_table, load_reference, segment_tables
from driftwatch.policy.loader import load_policy
from driftwatch.policy.schema import Policy

__all__ = [
    "add_commands",
    "check_files",
    "detector_table",
    "load_policy",
    "run_check",
    "run_detectors",
    "run_explain",
]


def add_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``policy check`` and ``policy explain`` to a CLI's subparsers.

    Each leaf sets ``func``: call ``args.func(args)`` and exit with what it returns.
    """
    policy = subparsers.add_parser("policy", help="check and explain drift policies")
    sub = policy.add_subparsers(dest="policy_command", required=True)
    check = sub.add_parser(
        "check", help="validate policy files and open the reference each names; print every "
        "error")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument("--connector", "-c", metavar="FILE",
                       help="also check this connector's features against the reference")
    check.add_argument("--no-reference", action="store_true",
                       help="do not open model.reference (a template, data not there yet)")
    check.set_defaults(func=run_check)
    explain = sub.add_parser(
        "explain", help="print the effective policy and what each tier will do"
    )
    explain.add_argument("file", metavar="FILE")
    explain.add_argument("--reference", metavar="PATH",
                         help="reference dataset or profile: print every calibrated level "
                              "as a number (with --connector: the policy's model.reference "
                              "unless given)")
    explain.add_argument("--connector", "-c", metavar="FILE",
                         help="read the reference as this connector's streams are read: its "
                              "score's scale (log-odds, points, percent), feature types, "
                              "missing values and percent or money text")
    explain.add_argument("--window-size", type=at_least(1), metavar="N",
                         help="events per window for the calibrated levels (default: the "
                              "policy's count window, panes x pane)")
    explain.set_defaults(func=run_explain)
    detectors = sub.add_parser(
        "detectors", help="list every detector a policy may name (from the detectors' registry)"
    )
    detectors.set_defaults(func=run_detectors)
    return policy


def check_files(paths: Iterable[str | Path], *, out: TextIO | None = None,
                err: TextIO | None = None, reference: bool = False,
                connector: str | Path | None = None) -> int:
    """Check each file; ``ok FILE`` for a good one, every error for a bad one.

    With ``reference`` (what ``driftwatch policy check`` does), the reference each policy
    names is opened and its columns checked against the policy's ``reference:`` block and
    ``model.features`` (and the ``connector``'s features when one is given); a missing
    reference is an error. Relative reference paths are read from the working directory.

    Returns 0 when all are valid, 1 when one is not, 2 when checking one failed.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    status = 0
    for path in paths:
        try:
            policy = load_policy(path)
            notes = _check_reference(policy, connector) if reference else []
        except ConfigError as exc:
            print(exc, file=err)
            status = 1
        except DriftwatchError as exc:  # a reference that cannot be read
            print(f"{path}: {exc}", file=err)
            status = 1
        except Exception as exc:  # a bug of ours: say so in one line, check the other files
            print(f"{path}: internal error while checking ({type(exc).__name__}: {exc}); "
                  "please report it", file=err)
            status = 2
        else:
            for note in notes:
                print(f"note: {note}", file=out)
            print(f"ok {path}", file=out)
    return status


def _check_reference(policy: Policy, connector: str | Path | None) -> list[str]:
    """Check the reference (and connector); the lines to print before ``ok``: the
    separator and decimal mark a CSV reference is read with, when not the comma and the
    point."""
    # the check spans the connector layer: imported here, at the command's edge
    from driftwatch.connectors.config import load_connector
    from driftwatch.onboard.consistency import check_reference, resolve_reference
    from driftwatch.windows.profile import reference_notes

    conn = load_connector(connector) if connector is not None else None
    check_reference(policy, connector=conn)
    ref = policy.model.reference
    return [] if ref is None else reference_notes(resolve_reference(str(ref)),
                                                  f"the reference {ref}",
                                                  policy.reference.conventions().names)


def detector_table() -> str:
    """The detectors' registry as a Markdown table (what ``policy detectors`` prints).

    >>> print(detector_table().splitlines()[2][:53])
    | `psi` | drift | feature | above | value | 0.1 | yes
    """
    rows = ["| detector | group | per | worse when | compared by default | effect size "
            "| calibrated | statistic | measure may also be |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name, s in DETECTORS.items():
        cal = ("yes" if s.calibrated_measure == "value" else f"yes ({s.calibrated_measure})"
               ) if s.calibrated else "no"
        effect = "" if s.effect is None else f"{s.effect:g}"
        others = ", ".join(m for m in measures_of(s) if m != s.measure)
        rows.append(f"| `{name}` | {s.group} | {s.level} | {s.direction} | {s.measure} "
                    f"| {effect} | {cal} | {s.statistic} | {others} |")
    return "\n".join(rows) + "\n"


def run_detectors(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    (out or sys.stdout).write(detector_table())
    return 0


def run_check(args: argparse.Namespace) -> int:
    return check_files(args.files, reference=not args.no_reference, connector=args.connector)


def run_explain(args: argparse.Namespace, *, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    err = err or sys.stderr
    try:
        policy = load_policy(args.file)
    except PolicyError as exc:
        print(exc, file=err)
        return 1
    levels = None
    segments: list[tuple[str, int, LevelTable]] = []
    reference = getattr(args, "reference", None)
    n = getattr(args, "window_size", None)
    if reference is None and getattr(args, "connector", None) is not None:
        if policy.model.reference is None:
            print("error: --connector says how the reference is read, and the policy names "
                  "no model.reference: give --reference too", file=err)
            return 2
        # the policy's reference, opened as replay and `policy check` open it
        from driftwatch.onboard.consistency import resolve_reference

        reference = str(resolve_reference(str(policy.model.reference)))
    if reference is not None:
        w = policy.window
        if n is None and w.kind == "count":
            n = int(w.pane_size) * w.panes
        if n is None or n < 1:
            print("error: a time window has no fixed size: give --window-size N", file=err)
            return 2
        try:
            profile = load_reference(reference, policy,
                                     **_read_as(getattr(args, "connector", None), policy))
            levels = (n, calibrated_table(policy, profile, n))
            segments = segment_tables(policy, profile, n)
        except (ConfigError, SourceError) as exc:  # ConnectorError is a ConfigError
            print(f"error: {exc}", file=err)
            return 2
    numbered = paired = False
    if getattr(args, "connector", None) is not None:
        from driftwatch.connectors.config import load_connector  # at the command's edge

        try:
            conn = load_connector(args.connector)
        except ConfigError as exc:
            print(f"error: {exc}", file=err)
            return 2
        numbered, paired = conn.numbers_records(), conn.pairs_by_row()
    (out or sys.stdout).write(explain_policy(policy, levels=levels, segments=segments,
                                             numbered=numbered, paired=paired))
    return 0


def _read_as(connector: str | Path | None, policy: Policy) -> dict[str, Any]:
    """How ``connector`` (a file, or None) says the reference is read, as
    :func:`~driftwatch.policy.levels.load_reference` takes it."""
    if connector is None:
        return {}
    # the connector layer, imported here at the command's edge (as _check_reference does)
    from driftwatch.connectors.config import load_connector

    conn = load_connector(connector)
    return {"kinds": conn.declared_kinds(), "missing": conn.missing_values(),
            "formats": conn.text_formats(),
            "score_scale": conn.score_scale(policy.reference.score_is)}
