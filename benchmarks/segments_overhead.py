#!/usr/bin/env python
"""What segments cost the pipeline: ModelMonitor throughput with and without them.

The same synthetic stream (``--features`` numeric and 3 categorical features, a segment
field with ``--values`` values, 10k-event count windows, a fixed-threshold PSI policy so
no resampling runs) goes through one monitor on a reference without a segment column
and one on the same reference with it (``segments.top_k`` = ``--top-k``). Both are
measured in the same run, alternately, best of ``--repeat``; the ratio is what to read.

    python benchmarks/segments_overhead.py
    python benchmarks/segments_overhead.py --events 400000 --top-k 10 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.batch import Batch  # noqa: E402
from driftwatch.connectors.base import Polled  # noqa: E402
from driftwatch.pipeline import ModelMonitor  # noqa: E402
from driftwatch.policy import load_policy_text  # noqa: E402
from driftwatch.windows.panes import WindowSpec  # noqa: E402
from driftwatch.windows.profile import ReferenceProfile  # noqa: E402

POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: bench}
model: {name: m, reference: r.parquet}
window: {kind: count, pane: 10000}
signals:
  - detector: psi
    thresholds: {mild: 0.1, moderate: 0.25}
segments: {min_events: 200}
"""
LEVELS = ("a", "b", "c", "d", "e")


def frame(rng: np.random.Generator, n: int, f: int, values: int) -> pd.DataFrame:
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(f)})
    for j in range(3):
        df[f"c{j}"] = rng.choice(LEVELS, n)
    df["segment"] = rng.choice([f"s{k}" for k in range(values)], n,
                               p=np.arange(values, 0, -1) / (values * (values + 1) / 2))
    df["score"] = rng.uniform(size=n)
    return df


def polls(prof: ReferenceProfile, df: pd.DataFrame, batch: int) -> list[Polled]:
    cat = np.stack([prof.schema.encode_categorical(j, df[f"c{j}"].to_numpy())
                    for j in range(3)], axis=1)
    num = df[list(prof.schema.numeric)].to_numpy()
    out = []
    for lo in range(0, len(df), batch):
        hi = min(len(df), lo + batch)
        out.append(Polled(batches=[Batch.build(
            "predictions", n=hi - lo, n_numeric=num.shape[1], n_categorical=3,
            ids=[f"e{i}" for i in range(lo, hi)], event_time=np.arange(lo, hi, dtype=float),
            numeric=num[lo:hi], categorical=cat[lo:hi], score=df["score"].to_numpy()[lo:hi],
            segment=df["segment"].to_numpy()[lo:hi])]))
    return out


def run(prof: ReferenceProfile, work: list[Polled], policy: object) -> float:
    mon = ModelMonitor("m", prof, WindowSpec(kind="count", pane_size=10_000), policy=policy)
    t0 = time.process_time()
    for p in work:
        mon.process(p)
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=10)
    ap.add_argument("--values", type=int, default=8, help="distinct segment values")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    ref = frame(rng, 50_000, args.features, args.values)
    numeric = [f"x{j}" for j in range(args.features)]
    categorical = [f"c{j}" for j in range(3)]
    plain = ReferenceProfile.build(ref.drop(columns="segment"), numeric=numeric,
                                   categorical=categorical)
    seg = ReferenceProfile.build(ref, numeric=numeric, categorical=categorical,
                                 segment="segment", segment_top_k=args.top_k)
    policy = load_policy_text(POLICY, file="bench.yaml")
    live = frame(rng, args.events, args.features, args.values)
    work_plain, work_seg = polls(plain, live, args.batch), polls(seg, live, args.batch)
    best = {"whole window only": float("inf"), "with segments": float("inf")}
    for _ in range(args.repeat):
        best["whole window only"] = min(best["whole window only"],
                                        run(plain, work_plain, policy))
        best["with segments"] = min(best["with segments"], run(seg, work_seg, policy))
    rates = {k: args.events / v for k, v in best.items()}
    res = {"events": args.events, "features": args.features + 3, "segments": args.top_k + 1,
           "events_per_cpu_second": rates,
           "cost_ratio": best["with segments"] / best["whole window only"]}
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in rates.items():
            print(f"{k:>18}: {v:12,.0f} events per CPU-second")
        print(f"segments ({args.top_k} + other) cost {res['cost_ratio']:.2f}x the whole "
              "window alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
