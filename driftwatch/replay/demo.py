"""``driftwatch demo`` and ``driftwatch examples``: the bundled files, no checkout needed.

``demo`` replays the bundled demo recording with the bundled connector and policy (the
same as the README's first replay, from any working directory); ``examples DEST`` writes
the example connectors, policies and retraining job into a folder to start from.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["DEMO_CONNECTOR", "DEMO_POLICY", "add_commands", "replay_demo"]

#: The bundled demo's connector and policy, relative to the bundle root.
DEMO_CONNECTOR = "connectors/demo-file.yaml"
DEMO_POLICY = "policies/credit-risk-demo.yaml"
_DEMO_INPUTS = ("predictions.jsonl.gz", "outcomes.jsonl.gz")


def add_commands(subparsers: Any) -> None:
    d = subparsers.add_parser(
        "demo", help="replay the bundled demo recording (no checkout needed)",
        description="Replay the bundled demo recording (140 days of synthetic credit "
                    "applications) with the bundled connector and policy; actions are "
                    "listed, not run. Writes timeline.jsonl, summary.json and report.html.")
    d.add_argument("--out", "-o", default="out/demo", help="output folder (default out/demo)")
    d.add_argument("--no-report", action="store_true", help="skip report.html")
    d.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    d.set_defaults(func=_cmd_demo)

    e = subparsers.add_parser(
        "examples", help="write the example connectors and policies into a folder",
        description="Write the bundled example connectors, policies and retraining job "
                    "into DEST (connectors/, policies/, examples/); never overwrites.")
    e.add_argument("dest", help="folder to write into (created if missing)")
    e.add_argument("--with-data", action="store_true",
                   help="also write the demo recording (data/demo/, about 4 MB), so the "
                        "README's demo commands run from DEST")
    e.set_defaults(func=_cmd_examples)


def replay_demo(out_dir: str | Path, *, progress: bool = True, report: bool = True) -> Any:
    """Replay the bundled demo; returns the :class:`~driftwatch.replay.ReplayResult`."""
    from driftwatch.bundled import bundle_root, bundled_path
    from driftwatch.connectors.config import load_connector
    from driftwatch.policy.loader import load_policy_text
    from driftwatch.replay import replay

    root = bundle_root()
    # the connector's and policy's relative paths are the checkout's: resolve them there
    connector = load_connector(root / DEMO_CONNECTOR, base_dir=root)
    # reasons name the policy as a checkout's replay does (`driftwatch examples` writes it
    # there), not by its place inside the installed package: the same timeline bytes
    policy = load_policy_text((root / DEMO_POLICY).read_text(encoding="utf-8"), file=DEMO_POLICY)
    reference = root / str(policy.model.reference)
    inputs = [bundled_path("demo") / name for name in _DEMO_INPUTS]
    return replay(connector, inputs, out_dir, policy=policy, reference=reference,
                  progress=progress, report=report)


def _cmd_demo(args: argparse.Namespace) -> int:
    from driftwatch.replay.cli import print_summary

    res = replay_demo(args.out, progress=not args.quiet, report=not args.no_report)
    print_summary(res.summary)
    out = Path(args.out)
    names = ["timeline.jsonl", "summary.json"] + ([] if args.no_report else ["report.html"])
    print("wrote " + ", ".join(str(out / n) for n in names))
    return 0


def _cmd_examples(args: argparse.Namespace) -> int:
    from driftwatch.bundled import write_examples

    dest = Path(args.dest)
    written = write_examples(dest, with_data=args.with_data)
    for p in written:
        print(f"wrote {p}")
    print(f"next: driftwatch policy check {dest / DEMO_POLICY}")
    return 0
