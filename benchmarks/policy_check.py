#!/usr/bin/env python
"""Time and memory of ``policy check`` on every malformed policy, against a valid one.

Each file of ``tests/data/bad_policies`` (plus a 7 MiB policy, built here) is checked in
this process: wall time (``time.perf_counter``, best of ``--repeat``) and, in one more
run, the peak of Python allocations while checking it (``tracemalloc``). The baseline is the valid
``policies/credit-risk-demo.yaml`` measured in the same run; the table gives each file's
ratios to it, and the summary the worst file. The caps in ``driftwatch.yamlio`` are what
keep these bounded (tests pin the caps, not the timings).

    python benchmarks/policy_check.py
    python benchmarks/policy_check.py --json --repeat 5
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from driftwatch.policy import check_files

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "bad_policies"
BASELINE = ROOT / "policies" / "credit-risk-demo.yaml"


def _oversize(path: Path) -> Path:
    spec = importlib.util.spec_from_file_location("make_bad_policies",
                                                  ROOT / "scripts" / "make_bad_policies.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.oversize(path, 7 * 1024 * 1024)


def measure(path: Path, repeat: int) -> tuple[float, int]:
    """Best wall seconds and the largest allocation peak (bytes) of checking ``path``."""
    best = float("inf")
    for _ in range(repeat):  # timed without tracemalloc, which slows allocation down
        t0 = time.perf_counter()
        check_files([path], out=io.StringIO(), err=io.StringIO())
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    check_files([path], out=io.StringIO(), err=io.StringIO())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = [*sorted(CORPUS.glob("*.yaml")), _oversize(Path(tmp) / "seven-mib.yaml")]
        base_t, base_m = measure(BASELINE, args.repeat)
        rows = [(f.name, *measure(f, args.repeat)) for f in files]
    worst_t = max(rows, key=lambda r: r[1])
    worst_m = max(rows, key=lambda r: r[2])
    summary = {
        "python": platform.python_version(),
        "files": len(rows),
        "baseline": {"file": BASELINE.name, "seconds": base_t, "peak_bytes": base_m},
        "median_time_ratio": statistics.median(r[1] / base_t for r in rows),
        "worst_time": {"file": worst_t[0], "seconds": worst_t[1],
                       "ratio": worst_t[1] / base_t},
        "worst_memory": {"file": worst_m[0], "peak_bytes": worst_m[2],
                         "ratio": worst_m[2] / base_m},
    }
    if args.json:
        print(json.dumps({**summary, "rows": [
            {"file": n, "seconds": t, "peak_bytes": m} for n, t, m in rows]}, indent=1))
        return
    print(f"baseline {BASELINE.name}: {base_t * 1e3:.1f} ms, {base_m / 1024:.0f} KiB peak")
    print(f"{'file':<48} {'ms':>8} {'x time':>7} {'KiB':>8} {'x mem':>6}")
    for name, t, m in rows:
        print(f"{name:<48} {t * 1e3:8.1f} {t / base_t:7.2f} {m / 1024:8.0f} {m / base_m:6.2f}")
    print(f"worst time: {worst_t[0]} {worst_t[1]:.3f} s ({summary['worst_time']['ratio']:.1f}x)"
          f"; worst memory: {worst_m[0]} {worst_m[2] / 2**20:.1f} MiB "
          f"({summary['worst_memory']['ratio']:.1f}x)")


if __name__ == "__main__":
    main()
