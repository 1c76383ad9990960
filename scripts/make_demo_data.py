#!/usr/bin/env python
"""Generate a synthetic credit scenario: predictions, delayed outcomes, reference set, episodes.

    python scripts/make_demo_data.py                       # data/demo/ (the bundled demo)
    python scripts/make_demo_data.py --scenario concept    # data/concept/
    python scripts/make_demo_data.py --scenario large --events 1000000 --out .cache/bench \\
        --no-gzip --reference-rows 0

Same arguments, same bytes (gzip with a zero mtime). Scenarios: see
``driftwatch.testing.scenarios``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftwatch.testing.generator import write_scenario
from driftwatch.testing.scenarios import SCENARIOS


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", choices=SCENARIOS, default="demo")
    p.add_argument("--out", type=Path, help="output folder (default: data/<scenario>)")
    p.add_argument("--events", type=int, help="number of predictions (scenario default)")
    p.add_argument("--days", type=float, help="time span in days (scenario default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reference-rows", type=int, default=30_000, help="0: no reference.parquet")
    p.add_argument("--delay-days", type=float, nargs=2, default=(7.0, 45.0),
                   metavar=("MIN", "MAX"), help="outcome delay range")
    p.add_argument("--no-gzip", action="store_true", help="write plain .jsonl")
    a = p.parse_args(argv)
    out = a.out or Path("data") / a.scenario
    paths = write_scenario(a.scenario, out, seed=a.seed, n_events=a.events, days=a.days,
                           reference_rows=a.reference_rows, compress=not a.no_gzip,
                           delay_days=tuple(a.delay_days))
    for name, path in paths.items():
        print(f"{name:12s} {path}  {path.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
