#!/usr/bin/env python
"""Cost of one counting pass against rows and features, as ratios to baselines of the same run.

For a batch of ``rows x features`` values (a quarter each normal, income-like lognormal,
Poisson counts and gamma, plus the score) it times the sketch's counting pass
(:meth:`SketchLayout.count`: every numeric feature on its 200 fine bins, and the score):

* ``kernel``: the compiled pass on all cores, and on one thread;
* ``fallback``: the numpy counters (what runs without numba);
* ``decile``: the numpy floor for the simplest histogram there is, per column
  ``np.bincount(np.searchsorted(deciles, x[:, j]))`` on 10 edges;
* ``sum``: numpy summing the same bytes on one thread, and on all cores (row chunks on a
  thread pool; numpy releases the GIL), as the memory-bandwidth yardstick.

Each figure is the best of ``--repeat`` runs; the report gives nanoseconds per value
and the ratios (kernel / decile, share of the bandwidth). Sizes: rows 10k -> 1M at 25
features, then features 25 -> 400 at 100k rows.

    python benchmarks/scaling.py [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.windows import kernel  # noqa: E402
from driftwatch.windows.sketch import SketchLayout  # noqa: E402

ROWS = (10_000, 30_000, 100_000, 300_000, 1_000_000)
FEATURES = (25, 50, 100, 200, 400)


def columns(rng: np.random.Generator, n: int, f: int) -> np.ndarray:
    x = np.empty((n, f))
    for j in range(f):
        kind = j % 4
        if kind == 0:
            x[:, j] = rng.normal(0, 1, n)
        elif kind == 1:
            x[:, j] = rng.lognormal(10, 0.5, n)
        elif kind == 2:
            x[:, j] = rng.poisson(3, n)
        else:
            x[:, j] = rng.gamma(2.0, 1.0, n)
    x[rng.uniform(size=(n, f)) < 0.02] = np.nan
    return x


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The best of ``repeat`` runs (after one to warm up): on a shared machine the least
    disturbed, for the kernel and the baselines alike."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.min(times))


def threads(n: int | None) -> None:
    if n is None:
        os.environ.pop("DRIFTWATCH_KERNEL_THREADS", None)
    else:
        os.environ["DRIFTWATCH_KERNEL_THREADS"] = str(n)


def measure(rows: int, f: int, repeat: int, pool: ThreadPoolExecutor, cores: int,
            layout: str = "column") -> dict:
    rng = np.random.default_rng(rows + f)
    ref = columns(rng, 50_000, f)
    lay = SketchLayout.fit(numeric_names=tuple(f"x{j}" for j in range(f)), numeric=ref,
                           score=rng.beta(2, 5, 50_000))
    x = columns(rng, rows, f)
    if layout == "column":  # as the decoder builds a batch: each feature's values together
        x = np.asfortranarray(x)
    score = rng.beta(2, 5, rows)
    codes = np.zeros((rows, 0), np.int32)
    values = rows * (f + 1)
    deciles = [np.nanquantile(ref[:, j], np.linspace(0.1, 0.9, 9)) for j in range(f)]

    def decile() -> None:
        for j in range(f):
            np.bincount(np.searchsorted(deciles[j], x[:, j]), minlength=11)
        np.bincount(np.searchsorted(deciles[0], score), minlength=11)

    def fallback() -> None:
        lay.numeric._counter.count_numpy(x)
        lay.score._counter.count_numpy(score[:, None])

    chunks = np.array_split(np.arange(rows), cores)
    bounds = [(int(c[0]), int(c[-1]) + 1) for c in chunks if c.size]

    def sum_all() -> None:
        list(pool.map(lambda ab: x[ab[0]:ab[1]].sum() + score[ab[0]:ab[1]].sum(), bounds))

    out = {"rows": rows, "features": f, "values": values, "layout": layout}
    if kernel.kernel_name() == "numba":
        threads(None)
        out["kernel_s"] = best_time(lambda: lay.count(x, codes, score), repeat)
        threads(1)
        out["kernel_1t_s"] = best_time(lambda: lay.count(x, codes, score), repeat)
        threads(None)
    out["fallback_s"] = best_time(fallback, max(repeat // 2, 1))
    out["decile_s"] = best_time(decile, repeat)
    out["sum_s"] = best_time(lambda: (x.sum(), score.sum()), repeat)
    out["sum_all_s"] = best_time(sum_all, repeat)
    out["bytes"] = x.nbytes + score.nbytes
    return out


def ns(r: dict, key: str) -> str:
    return f"{r[key] / r['values'] * 1e9:.2f}" if key in r else "-"


def linearity(results: list[dict]) -> list[str]:
    """How far the cost per value moves along each axis (1.0: exactly linear), and the
    worst kernel / decile ratio."""
    out = []
    key = "kernel_s" if all("kernel_s" in r for r in results) else "fallback_s"
    for axis, fixed, other in (("rows", "features", 25), ("features", "rows", 100_000)):
        runs = sorted((r for r in results if r[fixed] == other), key=lambda r: r[axis])
        if len(runs) < 2:
            continue
        per = [r[key] / r["values"] * 1e9 for r in runs]
        out.append(
            f"{key.removesuffix('_s')} against {axis} ({runs[0][axis]:,} -> "
            f"{runs[-1][axis]:,}, {fixed} {other:,}): {min(per):.2f} .. {max(per):.2f} ns per "
            f"value, largest / smallest {max(per) / min(per):.2f}"
        )
    if key == "kernel_s":
        worst = max(r["kernel_s"] / r["decile_s"] for r in results)
        out.append(f"largest kernel / decile baseline: {worst:.2f}")
    return out


def report(results: list[dict], cores: int) -> str:
    lines = [
        f"kernel: {kernel.kernel_name()}, cores: {cores}, batch layout: {results[0]['layout']}"
        "-major; ns per value (best of the repeats); "
        "ratios are "
        "to the same run's baselines",
        "",
        "| rows | features | kernel | kernel 1 thread | fallback | decile baseline "
        "| kernel / decile | 1 thread / decile | bandwidth share 1 thread | bandwidth share all "
        "cores |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        k = r.get("kernel_s")
        k1 = r.get("kernel_1t_s")
        gbs = r["bytes"] / r["sum_s"]
        gba = r["bytes"] / r["sum_all_s"]
        lines.append(
            f"| {r['rows']:,} | {r['features']} | {ns(r, 'kernel_s')} | {ns(r, 'kernel_1t_s')} "
            f"| {ns(r, 'fallback_s')} | {ns(r, 'decile_s')} "
            f"| {k / r['decile_s']:.2f} | {k1 / r['decile_s']:.2f} "
            f"| {100 * r['bytes'] / k1 / gbs:.0f}% | {100 * r['bytes'] / k / gba:.0f}% |"
            if k and k1 else
            f"| {r['rows']:,} | {r['features']} | - | - | {ns(r, 'fallback_s')} "
            f"| {ns(r, 'decile_s')} | - | - | - | - |"
        )
    lines += ["", *linearity(results)]
    lines += ["", "Memory bandwidth seen by numpy sum: "
              + ", ".join(f"{r['rows'] // 1000}k x {r['features']}: "
                          f"{r['bytes'] / r['sum_s'] / 1e9:.1f} GB/s one thread, "
                          f"{r['bytes'] / r['sum_all_s'] / 1e9:.1f} GB/s all cores"
                          for r in results[-1:])]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rows", type=int, nargs="*", default=list(ROWS))
    ap.add_argument("--features", type=int, nargs="*", default=list(FEATURES))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--layout", choices=("column", "row"), default="column",
                    help="the batch's memory layout: column-major, as the decoder builds "
                         "batches (default), or row-major")
    a = ap.parse_args()
    cores = kernel._threads()
    results = []
    with ThreadPoolExecutor(cores) as pool:
        for rows in a.rows:
            results.append(measure(rows, 25, a.repeat, pool, cores, a.layout))
        for f in a.features:
            if f != 25 or 100_000 not in a.rows:
                results.append(measure(100_000, f, a.repeat, pool, cores, a.layout))
    results.sort(key=lambda r: (r["features"] != 25, r["features"], r["rows"]))
    if a.json:
        print(json.dumps(results))
    else:
        print(report(results, cores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
