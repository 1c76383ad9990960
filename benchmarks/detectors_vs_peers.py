"""Per-window drift computation: driftwatch vs Evidently and NannyML, in one run.

Two datasets: the project's (a reference and a current window of 100k rows each, 20
numeric features, a quarter of them Poisson counts, and 5 categorical ones, drift planted
in a known subset) and a continuous-only variant (the counts replaced by a continuous
Student-t feature; same categoricals, same planted drift). For each tool: the time to assess
one window (driftwatch: sketch update of the window + ``assess``; Evidently: the data
drift preset's report; NannyML: the univariate drift calculator's ``calculate``, fitted
once on the reference beforehand), as the median and the best of ``--repeat`` runs (on a
shared machine the best is the least disturbed), its peak memory, and which features it
flags. Also the sketch update's throughput as a share of this machine's memory
bandwidth (numpy summing a 1 GiB float64 array), with the counting kernel on one thread
against numpy on one thread, and on all cores against numpy on all cores; and
driftwatch's memory from 10k to 1M rows.

The peers are never driftwatch dependencies: the script makes its own virtual
environment under ``.cache/bench-peers/`` (pip from the package index; pandas < 3, which
Evidently needs) and runs each peer there as a subprocess that prints JSON. A peer that
cannot be installed or run is reported and skipped. ``--peer-python`` (or the environment
variable ``DRIFTWATCH_PEER_PYTHON``) names the interpreter of an environment where the
peers are installed already; nothing is installed then, and ``--peers`` picks which run.

    python benchmarks/detectors_vs_peers.py [--rows 100000] [--repeat 5] [--no-peers]
        [--data project continuous] [--peer-python PY] [--peers nannyml evidently]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "bench-peers"
VENV = CACHE / "venv"
PEER_PACKAGES = ["evidently", "nannyml", "pandas<3", "psutil"]
NUM = [f"x{j}" for j in range(20)]
CAT = [f"c{j}" for j in range(5)]
DRIFTED = {"x0", "x3", "x7", "x12", "c1"}


# -- data --------------------------------------------------------------------------------
def make_data(n: int, seed: int, drift: bool, continuous: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols: dict[str, np.ndarray] = {}
    for j in range(20):
        kind = j % 4
        if kind == 0:
            v = rng.normal(0, 1, n)
        elif kind == 1:
            v = rng.lognormal(10, 0.5, n)  # income-like
        elif kind == 2:
            v = 3 + rng.standard_t(5, n) if continuous else rng.poisson(3, n).astype(float)
        else:
            v = rng.gamma(2.0, 1.0, n)
        cols[f"x{j}"] = v
    if drift:
        cols["x0"] = cols["x0"] + 0.5  # mean shift, 0.5 sd
        cols["x3"] = rng.gamma(2.0, 1.3, n)  # scale up 30%
        cols["x7"] = rng.gamma(2.0, 1.0, n) + rng.normal(0, 1.0, n)  # variance x1.5
        cols["x12"] = cols["x12"] + 0.3  # 0.3 sd
    for j in range(5):
        k = 4 + 3 * j
        p = np.linspace(2, 1, k)
        p /= p.sum()
        if drift and j == 1:
            p = p[::-1]
        cols[f"c{j}"] = rng.choice([f"l{i}" for i in range(k)], n, p=p)
    miss = rng.uniform(size=n) < 0.02
    cols["x1"] = np.where(miss, np.nan, cols["x1"])
    lc = (cols["x0"] + (np.log(cols["x1"]) - 10) / 0.5) / np.sqrt(2)
    cols["score"] = 1 / (1 + np.exp(-(-2.2 + 0.8 * np.nan_to_num(lc))))
    return pd.DataFrame(cols)


# -- driftwatch --------------------------------------------------------------------------
def _bandwidth() -> tuple[float, float]:
    """GB/s for numpy summing a 1 GiB float64 array (best of 3), on one thread and on all
    cores (chunks on a thread pool: numpy releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    a = np.ones(2**27)
    cores = max(len(os.sched_getaffinity(0)), 1) if hasattr(os, "sched_getaffinity") else 1
    parts = np.array_split(a, cores)
    out = []
    with ThreadPoolExecutor(cores) as pool:
        for run in (a.sum, lambda: list(pool.map(np.sum, parts))):
            best = np.inf
            for _ in range(3):
                t = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - t)
            out.append(a.nbytes / best / 1e9)
    return out[0], out[1]


def run_driftwatch(ref: pd.DataFrame, cur: pd.DataFrame, repeat: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from driftwatch.batch import Batch
    from driftwatch.detectors.assess import assess
    from driftwatch.detectors.calibrate import Calibrator
    from driftwatch.detectors.config import alarm
    from driftwatch.detectors.prepared import prepare
    from driftwatch.windows.kernel import kernel_name
    from driftwatch.windows.profile import ReferenceProfile
    from driftwatch.windows.sketch import Sketch

    t = time.perf_counter()
    prof = ReferenceProfile.build(ref, numeric=NUM, categorical=CAT, label=None, decision=None)
    prepare(prof)
    t_profile = time.perf_counter() - t
    t = time.perf_counter()
    cal = Calibrator(prof, np.random.default_rng(0), rates=(0.01,))
    cal.thresholds(len(cur))
    t_cal = time.perf_counter() - t

    def encode(df: pd.DataFrame) -> Batch:
        # column-major features and codes, as the decoders build them
        cat = np.stack([prof.schema.encode_categorical(j, df[c].to_numpy())
                        for j, c in enumerate(CAT)], axis=1)
        return Batch.build("predictions", n=len(df), n_numeric=len(NUM), n_categorical=len(CAT),
                           ids=np.zeros(len(df), dtype="<U1"),
                           numeric=np.asfortranarray(df[NUM].to_numpy(np.float64)),
                           categorical=np.asfortranarray(cat),
                           score=df["score"].to_numpy())

    t = time.perf_counter()
    batch = encode(cur)
    t_encode = time.perf_counter() - t

    def window():
        s = Sketch.empty(prof.layout)
        s.add_batch(batch)
        return assess(prof, s, model="bench", window_id=1, start_time=0.0, end_time=1.0,
                      calibrator=cal)

    window()
    times, t_sketch, t_assess = [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s = Sketch.empty(prof.layout)
        s.add_batch(batch)
        t1 = time.perf_counter()
        a = assess(prof, s, model="bench", window_id=1, start_time=0.0, end_time=1.0,
                   calibrator=cal)
        t2 = time.perf_counter()
        times.append(t2 - t0)
        t_sketch.append(t1 - t0)
        t_assess.append(t2 - t1)
    # the same sketch update with the counting kernel on one thread, for the bandwidth share
    os.environ["DRIFTWATCH_KERNEL_THREADS"] = "1"
    try:
        t_sketch_1t = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            Sketch.empty(prof.layout).add_batch(batch)
            t_sketch_1t.append(time.perf_counter() - t0)
    finally:
        os.environ.pop("DRIFTWATCH_KERNEL_THREADS", None)
    tracemalloc.start()
    window()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    effect = {"psi", "js", "hellinger", "ks", "wasserstein", "cramers_v"}
    flagged = sorted({s.feature for s in a.select(group="drift") if s.feature and alarm(s)
                      and s.signal in effect})
    flagged_any = sorted({s.feature for s in a.select(group="drift") if s.feature and alarm(s)})
    window_bytes = batch.numeric.nbytes + batch.categorical.nbytes + batch.score.nbytes

    # memory flat in window length: stream 10k .. 1M rows in 10k-row batches
    mem = {}
    chunk = encode(make_data(10_000, 99, drift=False))
    for rows in (10_000, 100_000, 1_000_000):
        cal.thresholds(rows)  # resampled once per window size, outside the measurement
        tracemalloc.start()
        s = Sketch.empty(prof.layout)
        for _ in range(rows // 10_000):
            s.add_batch(chunk)
        assess(prof, s, model="bench", window_id=1, start_time=0.0, end_time=1.0,
               calibrator=cal)
        mem[rows] = {"peak": tracemalloc.get_traced_memory()[1],
                     "sketch_bytes": sum(getattr(s, k).nbytes for k in
                                         ("num_fine", "num_under", "num_over", "cat",
                                          "score_fine", "lab_score"))}
        tracemalloc.stop()
    return {
        "tool": "driftwatch",
        "kernel": kernel_name(),
        "per_window_s": float(np.median(times)),
        "best_window_s": float(np.min(times)),
        "sketch_s": float(np.median(t_sketch)),
        "best_sketch_s": float(np.min(t_sketch)),
        "best_sketch_1t_s": float(np.min(t_sketch_1t)),
        "assess_s": float(np.median(t_assess)),
        "best_assess_s": float(np.min(t_assess)),
        "encode_s": t_encode,
        "profile_once_s": t_profile,
        "calibrate_once_s": t_cal,
        "peak_bytes": peak,
        "flagged": flagged,
        "flagged_any_drift_signal": flagged_any,
        "window_bytes": window_bytes,
        "memory_by_rows": mem,
    }


# -- peers (run inside the peer venv; import nothing from driftwatch) ----------------------
def peer_main(tool: str, data_dir: str, repeat: int) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    ref = pd.read_parquet(Path(data_dir) / "ref.parquet")[NUM + CAT]
    cur = pd.read_parquet(Path(data_dir) / "cur.parquet")[NUM + CAT]
    out: dict = {"tool": tool}
    if tool == "nannyml":
        import nannyml as nml
        from nannyml.thresholds import ConstantThreshold

        out["version"] = nml.__version__
        calc = nml.UnivariateDriftCalculator(
            column_names=NUM + CAT, chunk_size=len(cur),
            thresholds={"jensen_shannon": ConstantThreshold(lower=None, upper=0.1)},
        )
        t = time.perf_counter()
        calc.fit(ref)
        out["fit_once_s"] = time.perf_counter() - t

        def one():
            return calc.calculate(cur)
    else:
        import evidently
        from evidently import DataDefinition, Dataset, Report
        from evidently.presets import DataDriftPreset

        out["version"] = evidently.__version__
        dd = DataDefinition(numerical_columns=NUM, categorical_columns=CAT)
        rds = Dataset.from_pandas(ref, data_definition=dd)

        def one():
            cds = Dataset.from_pandas(cur, data_definition=dd)
            return Report([DataDriftPreset()]).run(cds, rds)

    res = one()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = one()
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    res = one()
    out["peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out["per_window_s"] = float(np.median(times))
    out["best_window_s"] = float(np.min(times))
    if tool == "nannyml":
        df = res.filter(period="analysis").to_df()
        out["flagged"] = sorted(c for c in NUM + CAT
                                if bool(df[(c, "jensen_shannon", "alert")].iloc[-1]))
    else:
        flagged = []
        for m in res.dict()["metrics"]:
            name = str(m.get("metric_name", ""))
            if name.startswith("ValueDrift"):
                col = m["config"]["column"]
                thr = m["config"].get("threshold") or 0.1
                if float(m["value"]) >= thr:
                    flagged.append(col)
        out["flagged"] = sorted(flagged)
    print(json.dumps(out))


def ensure_peer_env() -> tuple[Path | None, str]:
    py = VENV / "bin" / "python"
    if not py.exists():
        r = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True,
                           text=True)
        if r.returncode:
            return None, f"venv failed: {r.stderr.strip()[-300:]}"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode:
        return py, f"pip install failed: {r.stderr.strip()[-300:]}"
    return py, "ok"


def run_peer(py: Path, tool: str, data_dir: Path, repeat: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(py), __file__, "--peer", tool, "--data-dir", str(data_dir),
                        "--repeat", str(repeat)], capture_output=True, text=True,
                       timeout=3600, env=env)
    if r.returncode:
        return {"tool": tool, "error": r.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(r.stdout.strip().splitlines()[-1])


# -- report ------------------------------------------------------------------------------
def _mb(b: float) -> str:
    return f"{b / 2**20:.1f}"


def report(results: list[dict], bw: tuple[float, float]) -> str:
    dw = results[0]
    lines = [
        "| tool | version | per-window time (ms), median / best | speed-up vs driftwatch, "
        "median / best | peak memory (MiB) | flagged features | planted drift found |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['tool']} | - | failed: {r['error'][0][:60]} | | | | |")
            continue
        flagged = set(r["flagged"])
        found = f"{len(flagged & DRIFTED)}/{len(DRIFTED)}, {len(flagged - DRIFTED)} false"
        lines.append(
            f"| {r['tool']} | {r.get('version', 'this repo')} "
            f"| {r['per_window_s'] * 1e3:.1f} / {r['best_window_s'] * 1e3:.1f} "
            f"| {r['per_window_s'] / dw['per_window_s']:.1f}x / "
            f"{r['best_window_s'] / dw['best_window_s']:.1f}x | {_mb(r['peak_bytes'])} "
            f"| {', '.join(r['flagged'])} | {found} |"
        )
    wb = dw["window_bytes"]
    rate_1t = wb / dw["best_sketch_1t_s"] / 1e9
    rate_all = wb / dw["best_sketch_s"] / 1e9
    lines += [
        "",
        f"driftwatch per window (median): sketch update {dw['sketch_s'] * 1e3:.1f} ms + assess "
        f"{dw['assess_s'] * 1e3:.2f} ms; best: {dw['best_sketch_s'] * 1e3:.1f} + "
        f"{dw['best_assess_s'] * 1e3:.2f} ms (once per reference: profile "
        f"{dw['profile_once_s']:.2f} s, calibration for this window size "
        f"{dw['calibrate_once_s']:.2f} s; categorical encoding of the raw window "
        f"{dw['encode_s'] * 1e3:.0f} ms, done by the decoder).",
        f"Counting kernel: {dw['kernel']}. Memory bandwidth (numpy sum of 1 GiB float64, "
        f"best of 3): {bw[0]:.1f} GB/s on one thread, {bw[1]:.1f} GB/s on all cores. The "
        f"sketch update reads the window's {_mb(wb)} MiB of columns at {rate_1t:.2f} GB/s "
        f"with the kernel on one thread = {100 * rate_1t / bw[0]:.1f}% of the first, and at "
        f"{rate_all:.2f} GB/s on all cores = {100 * rate_all / bw[1]:.1f}% of the second "
        f"(best of the repeats; with assess, all cores: "
        f"{100 * wb / dw['best_window_s'] / 1e9 / bw[1]:.1f}%).",
    ]
    peers = [r for r in results[1:] if "per_window_s" in r]
    if peers:
        med = min(r["per_window_s"] for r in peers) / dw["per_window_s"]
        best = min(r["best_window_s"] for r in peers) / dw["best_window_s"]
        lines.append(f"Speed-up over the fastest peer: {med:.1f}x (medians), {best:.1f}x (best "
                     "of each).")
    lines.append("")
    lines.append("| rows in window | sketch bytes | peak traced memory (MiB), 10k-row batches |")
    lines.append("|---:|---:|---:|")
    for rows, m in dw["memory_by_rows"].items():
        lines.append(f"| {int(rows):,} | {m['sketch_bytes']:,} | {_mb(m['peak'])} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--data", nargs="*", choices=["project", "continuous"],
                    default=["project", "continuous"])
    ap.add_argument("--peer", choices=["evidently", "nannyml"])
    ap.add_argument("--data-dir")
    ap.add_argument("--peer-python", type=Path,
                    default=os.environ.get("DRIFTWATCH_PEER_PYTHON") or None,
                    help="python of an environment with the peers installed (no install)")
    ap.add_argument("--peers", nargs="*", choices=["nannyml", "evidently"],
                    default=["nannyml", "evidently"])
    args = ap.parse_args()
    if args.peer:
        peer_main(args.peer, args.data_dir, args.repeat)
        return
    bw = _bandwidth()
    if args.no_peers:
        py, status = None, "skipped"
    elif args.peer_python is not None:
        py, status = Path(args.peer_python), "ok"
    else:
        py, status = ensure_peer_env()
    if status not in ("ok", "skipped"):
        print(f"peers not installed ({status}); reporting driftwatch alone", file=sys.stderr)
    for name in args.data:
        cont = name == "continuous"
        ref = make_data(args.rows, 1, drift=False, continuous=cont)
        cur = make_data(args.rows, 2, drift=True, continuous=cont)
        data_dir = CACHE / "data" / name
        data_dir.mkdir(parents=True, exist_ok=True)
        ref.to_parquet(data_dir / "ref.parquet")
        cur.to_parquet(data_dir / "cur.parquet")
        results = [run_driftwatch(ref, cur, args.repeat)]
        if py is not None and status == "ok":
            for tool in args.peers:
                results.append(run_peer(py, tool, data_dir, args.repeat))
        print(f"## {name} data\n")
        print(report(results, bw))
        print("\nplanted drift:", ", ".join(sorted(DRIFTED)), "\n")


if __name__ == "__main__":
    main()
