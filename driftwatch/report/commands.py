"""The ``driftwatch report`` command: a self-contained HTML report of a replay output folder.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="driftwatch")
>>> _ = add_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["report", "--input", "out/demo", "--decision", "12"])
>>> args.input, args.decision, args.out, args.func is run_report
('out/demo', 12, None, True)
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from driftwatch.namesflags import add_names_flags, names_fix, names_given
from driftwatch.report.build import MAX_BYTES, write_report

__all__ = ["add_commands", "run_report"]


def add_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``report`` to a CLI's subparsers; it sets ``func`` to :func:`run_report`."""
    p = subparsers.add_parser(
        "report", help="write a self-contained HTML report of a run or of one decision"
    )
    p.add_argument("--input", "-i", required=True, metavar="OUT_DIR",
                   help="replay output folder (timeline.jsonl, summary.json, ...)")
    p.add_argument("--decision", "-d", type=int, metavar="WINDOW_ID",
                   help="report on the decision of this window only")
    p.add_argument("--out", "-o", metavar="FILE",
                   help="report file (default: OUT_DIR/report.html or "
                        "OUT_DIR/report-window-N.html)")
    p.add_argument("--reference", metavar="PROFILE",
                   help="reference profile or dataset the run was measured against "
                        "(default: OUT_DIR/reference.json[.gz] if present; a CSV dataset "
                        "without a header line: --names)")
    add_names_flags(p, "names", "a --reference CSV dataset")
    p.add_argument("--generated-at", metavar="TEXT",
                   help="a generation time to print in the footer (default: none, so the "
                        "same run gives the same bytes)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES,
                   help=f"size bound; detail is reduced to fit (default {MAX_BYTES:,})")
    p.set_defaults(func=run_report)
    return p


def run_report(args: argparse.Namespace) -> int:
    from driftwatch.windows.profile import ReferenceProfile

    names = names_given(args.names, args.names_file, "names", args.reference,
                        what="--reference CSV dataset")
    ref = ReferenceProfile.from_file(args.reference, names, given="--names",
                                     fix=names_fix("names")) if args.reference else None
    path = write_report(
        Path(args.input),
        reference=ref,
        decision=args.decision,
        generated_at=args.generated_at,
        path=Path(args.out) if args.out else None,
        max_bytes=args.max_bytes,
    )
    print(f"wrote {path} ({path.stat().st_size / 1024:,.0f} KiB)")
    return 0
