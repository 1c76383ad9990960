#!/usr/bin/env python
"""End-to-end replay throughput and memory, against the raw parse rate of the same file.

On a generated recording (scenario ``large``: ``--events`` predictions, default 1M, plus
their delayed outcomes; written once under ``.cache/bench/``) it measures, in one run:

* the raw parse rate: ``orjson.loads`` on every line of both files (lines in memory), and
  ``pyarrow.json.read_json`` on each whole file: the floor any JSON pipeline pays;
* ``driftwatch replay`` end to end (decode, merge, label join, sketches, every detector,
  the policy engine, timeline) with the demo policy (windows of 4 panes sliding by 1,000
  events), and with tumbling windows of 10k events, events per second and as a share of
  the orjson rate;
* the same replays with the windows judged in the loop (``judge_process=False``): what
  the judge process (``driftwatch replay``'s default where the files are read in a
  process) gains in wall time; with the files read in the loop's own process, ahead on a
  thread (``read_process=False``, so judged in the loop too): what the reader process
  (the default on a large recording with a second core) gains over that; and the
  demo-policy replay with the file source on the loop's thread (``read_ahead=False``):
  what that thread gains;
* peak RSS of the same replay with windows of 10k and of 1M events, each in a fresh
  process: the sketches' memory depends on features x bins, not on events per window.

Calibrated levels are resampled once per reference and window size and kept in a levels
cache (``--levels-cache``, default under ``--data``), as ``driftwatch replay`` keeps them
between runs: with ``--levels warm`` (the default) the cache is filled before the timed
replays, which then read them back (and the reference's profile, kept there too), as a
data scientist's second replay of a policy does; ``--levels cold`` gives each timed
replay an empty cache, so it pays the resampling and the binning itself (a first run on
a new reference or window size).

    python benchmarks/replay_throughput.py                 # 1M events
    python benchmarks/replay_throughput.py --events 200000 --json
    python benchmarks/replay_throughput.py --events 200000 --levels cold
    python benchmarks/replay_throughput.py --repeat 3     # medians of 3 alternated rounds

The recording is written once under ``--data``: the default 1M in the folder itself, any
other ``--events`` in its own ``events-N`` folder beside it (:mod:`_recording`), so a run
of another size never writes over a recording another run may be reading.

Ratios are against the baselines measured in the same run, so a noisy machine moves
both sides alike. Each rate is also given per CPU-second (process CPU time, all threads),
which holds still on a machine shared with other work where wall time does not
(the reader and judge processes' CPU included). ``--repeat N`` times the orjson parse and
every replay N times, round after round, and reports each one's median.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pyarrow.json as pj

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _recording import sized  # noqa: E402  (beside this script)

from driftwatch.testing.generator import write_scenario  # noqa: E402

POLICY = ROOT / "policies" / "credit-risk-demo.yaml"
CONNECTOR = ROOT / "connectors" / "demo-file.yaml"


def ensure_data(folder: Path, events: int) -> tuple[Path, Path, Path]:
    pred, out, ref = (folder / "predictions.jsonl", folder / "outcomes.jsonl",
                      folder / "reference.parquet")
    stamp = folder / "replay-events.txt"
    if not (stamp.exists() and stamp.read_text().strip() == str(events) and ref.exists()):
        print(f"generating {events:,} events under {folder} ...", file=sys.stderr)
        write_scenario("large", folder, n_events=events, compress=False)
        stamp.write_text(f"{events}\n")
    return pred, out, ref


def raw_parse(paths: list[Path]) -> dict[str, float]:
    lines = [ln for p in paths for ln in p.read_bytes().splitlines() if ln]
    t0, c0 = time.perf_counter(), time.process_time()
    for ln in lines:
        orjson.loads(ln)
    t_orjson, c_orjson = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    n = sum(pj.read_json(p).num_rows for p in paths)
    t_arrow = time.perf_counter() - t0
    return {"events": len(lines), "orjson_s": t_orjson, "pyarrow_s": t_arrow,
            "orjson_eps": len(lines) / t_orjson, "pyarrow_eps": n / t_arrow,
            "orjson_cpu_eps": len(lines) / c_orjson}


def policy_with_window(events_per_window: int, folder: Path) -> Path:
    """The demo policy with one tumbling window of ``events_per_window`` events."""
    text = POLICY.read_text()
    start = text.index("window:\n")
    end = text.index("\n\n", start)
    window = (f"window:\n  kind: count\n  pane: {events_per_window}\n  panes: 1\n"
              "  mode: tumbling")
    path = folder / f"policy-{events_per_window}.yaml"
    path.write_text(text[:start] + window + text[end:])
    return path


_CHILD = """
import json, resource, sys, time
from driftwatch.connectors.decode import Decoder
from driftwatch.replay import replay
decode_cpu = [0.0]
def timed(f):  # the calling thread's CPU: decoding runs on the file source's reader thread
    def run(*a, **k):
        c = time.thread_time()
        try:
            return f(*a, **k)
        finally:
            decode_cpu[0] += time.thread_time() - c
    return run
for name in ("decode", "decode_block", "decode_table"):  # the decoder's share of the replay
    setattr(Decoder, name, timed(getattr(Decoder, name)))
mode = sys.argv[8]
if mode == "sync":  # the same replay with the file source reading on the loop's thread
    import functools
    from driftwatch.connectors import file as _file
    _file.FileSource.__init__ = functools.partialmethod(_file.FileSource.__init__,
                                                        read_ahead=False)
process = {"auto": None, "thread": False, "sync": False, "loop-judge": None}[mode]
judge = False if mode == "loop-judge" else None
def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime
t0, c0, k0 = time.perf_counter(), time.process_time(), children_cpu()
r = replay(sys.argv[1], sys.argv[2:4], sys.argv[4], policy=sys.argv[5], reference=sys.argv[6],
           progress=False, report=False, levels_cache=sys.argv[7] or None,
           read_process=process, judge_process=judge)
dt = time.perf_counter() - t0
cpu = time.process_time() - c0 + children_cpu() - k0  # with the reader process's
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec
hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM"))
# the largest child (the reader or the judge process, when there are): forked, its peak
# counts pages shared with this one
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": dt, "cpu_seconds": cpu, "decode_cpu_seconds": decode_cpu[0],
                  "events": r.summary["events"] + r.summary["outcomes"],
                  "windows": r.summary["windows"], "max_rss_mb": hwm / 1024,
                  "child_rss_mb": children}))
"""


def warm_levels(policy: Path, ref: Path, cache: Path) -> None:
    """Resample the calibrated levels the replay of ``policy`` reads into ``cache``, and
    keep the reference's profile there (what a first replay leaves there)."""
    from driftwatch.connectors.config import load_connector
    from driftwatch.policy.level_store import LevelStore
    from driftwatch.policy.loader import load_policy
    from driftwatch.replay.run import build_monitor

    mon = build_monitor(load_policy(policy), reference=ref,
                        connector=load_connector(CONNECTOR), profile_cache=cache)
    mon.calibrators.store = LevelStore(cache)
    mon.warm_up()


def run_replay(pred: Path, out: Path, ref: Path, policy: Path, tmp: Path,
               levels: Path | None, mode: str = "auto") -> dict[str, float]:
    """One replay in a fresh process. ``mode``: ``auto`` (as ``driftwatch replay`` runs:
    a reader process for a large recording, and a judge process), ``loop-judge`` (the
    reader process, the windows judged in the loop), ``thread`` (in the loop's process,
    reading ahead on a thread), ``sync`` (in the loop's process, on the loop's thread)."""
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, str(CONNECTOR), str(pred), str(out), str(tmp / "out"),
         str(policy), str(ref), str(levels) if levels is not None else "", mode],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    """The run of median wall time (the lower middle one of an even count): a whole
    run, so its events, CPU and memory go together."""
    return sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=ROOT / ".cache" / "bench")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--levels", choices=("warm", "cold"), default="warm",
                    help="calibrated levels read from a filled cache (warm) or resampled by "
                         "each timed replay (cold)")
    ap.add_argument("--levels-cache", type=Path, default=None,
                    help="levels cache folder (default: DATA/levels)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="time every replay N times, alternated, and report each one's "
                         "median run (by wall time): on a shared machine one run can be "
                         "10%% off")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error(f"--repeat must be at least 1, found {a.repeat}")
    data = sized(a.data, a.events)  # another size beside the default one, never over it
    pred, out, ref = ensure_data(data, a.events)
    raws = [raw_parse([pred, out]) for _ in range(a.repeat)]
    raw = sorted(raws, key=lambda r: r["orjson_s"])[(a.repeat - 1) // 2]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        policies = (POLICY, policy_with_window(10_000, tmp), policy_with_window(1_000_000, tmp))
        levels: Path | None = None
        if a.levels == "warm":
            levels = a.levels_cache or data / "levels"
            for pol in policies:
                warm_levels(pol, ref, levels)
        runs: dict[str, list[dict[str, float]]] = {}
        plan = [("e2e", POLICY, "auto"), ("small", policies[1], "auto"),
                ("large", policies[2], "auto"), ("sync", POLICY, "sync"),
                ("thread", POLICY, "thread"), ("thread_small", policies[1], "thread"),
                ("loop_judge", POLICY, "loop-judge"),
                ("loop_judge_small", policies[1], "loop-judge")]
        for i in range(a.repeat):  # each round runs every replay once: alternated
            if a.repeat > 1:
                print(f"round {i + 1} of {a.repeat} ...", file=sys.stderr)
            for key, pol, mode in plan:
                runs.setdefault(key, []).append(
                    run_replay(pred, out, ref, pol, tmp, levels, mode=mode))
        e2e, small, large, sync, thread, thread_small, loop_judge, loop_judge_small = (
            _median(runs[key]) for key, _, _ in plan)
    rate = e2e["events"] / e2e["seconds"]
    rate_small = small["events"] / small["seconds"]
    result = {
        "events": e2e["events"],
        "levels": a.levels,
        "raw_orjson_eps": round(raw["orjson_eps"]),
        "raw_pyarrow_eps": round(raw["pyarrow_eps"]),
        "replay_eps": round(rate),
        "replay_vs_orjson": round(rate / raw["orjson_eps"], 3),
        "replay_vs_orjson_window_10k": round(rate_small / raw["orjson_eps"], 3),
        "replay_vs_pyarrow": round(rate / raw["pyarrow_eps"], 3),
        "raw_orjson_cpu_eps": round(raw["orjson_cpu_eps"]),
        "replay_cpu_eps": round(e2e["events"] / e2e["cpu_seconds"]),
        "replay_vs_orjson_cpu": round(e2e["events"] / e2e["cpu_seconds"]
                                      / raw["orjson_cpu_eps"], 3),
        "replay_vs_orjson_cpu_window_10k": round(small["events"] / small["cpu_seconds"]
                                                 / raw["orjson_cpu_eps"], 3),
        "windows_demo_policy": e2e["windows"],
        "decode_share_of_replay_cpu": round(sync["decode_cpu_seconds"] / sync["cpu_seconds"],
                                            3),
        "replay_eps_without_read_ahead": round(sync["events"] / sync["seconds"]),
        "read_ahead_speedup": round(sync["seconds"] / thread["seconds"], 3),
        "replay_eps_reading_on_a_thread": round(thread["events"] / thread["seconds"]),
        "reader_process_speedup": round(thread["seconds"] / loop_judge["seconds"], 3),
        "reader_process_speedup_window_10k": round(
            thread_small["seconds"] / loop_judge_small["seconds"], 3),
        "replay_eps_judging_in_the_loop": round(loop_judge["events"] / loop_judge["seconds"]),
        "judge_process_speedup": round(loop_judge["seconds"] / e2e["seconds"], 3),
        "judge_process_speedup_window_10k": round(
            loop_judge_small["seconds"] / small["seconds"], 3),
        "repeat": a.repeat,
        "largest_child_rss_mb": round(e2e["child_rss_mb"], 1),
        "replay_eps_window_10k": round(rate_small),
        "replay_eps_window_1m": round(large["events"] / large["seconds"]),
        "peak_rss_mb_window_10k": round(small["max_rss_mb"], 1),
        "peak_rss_mb_window_1m": round(large["max_rss_mb"], 1),
        "rss_ratio_1m_vs_10k": round(large["max_rss_mb"] / small["max_rss_mb"], 3),
        "bench_process_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if a.json:
        print(json.dumps(result))
        return 0
    print(f"events (predictions + outcomes): {result['events']:,}; calibrated levels "
          f"{result['levels']}")
    print(f"raw parse  orjson per line : {result['raw_orjson_eps']:>10,} events/s")
    print(f"raw parse  pyarrow read_json: {result['raw_pyarrow_eps']:>10,} events/s")
    print(f"replay end to end          : {result['replay_eps']:>10,} events/s "
          f"({result['replay_vs_orjson']:.0%} of orjson, {result['replay_vs_pyarrow']:.0%} "
          f"of pyarrow; {result['windows_demo_policy']} windows)")
    print(f"per CPU-second: replay {result['replay_cpu_eps']:,} vs orjson "
          f"{result['raw_orjson_cpu_eps']:,} events = {result['replay_vs_orjson_cpu']:.0%} "
          f"(10k-event windows: {result['replay_vs_orjson_cpu_window_10k']:.0%})")
    print(f"decoding's share of replay : {result['decode_share_of_replay_cpu']:.0%} of its CPU "
          "time (read on the loop's thread)")
    print(f"judging in the loop        : {result['replay_eps_judging_in_the_loop']:>10,} "
          f"events/s (the judge process x{result['judge_process_speedup']:.2f} wall; "
          f"10k-event windows x{result['judge_process_speedup_window_10k']:.2f})")
    print(f"reading on a thread        : {result['replay_eps_reading_on_a_thread']:>10,} "
          f"events/s (the reader process x{result['reader_process_speedup']:.2f} wall, "
          f"both judging in the loop; 10k-event windows "
          f"x{result['reader_process_speedup_window_10k']:.2f})")
    print(f"same, reading on one thread: {result['replay_eps_without_read_ahead']:>10,} events/s "
          f"(read-ahead thread x{result['read_ahead_speedup']:.2f} wall)")
    print(f"replay, 10k-event windows  : {result['replay_eps_window_10k']:>10,} events/s "
          f"({result['replay_vs_orjson_window_10k']:.0%} of orjson)")
    print(f"replay, 1M-event windows   : {result['replay_eps_window_1m']:>10,} events/s")
    print(f"peak RSS, 10k-event windows: {result['peak_rss_mb_window_10k']} MB (the "
          f"larger of the reader and judge processes, demo policy: "
          f"{result['largest_child_rss_mb']} MB, pages shared)")
    print(f"peak RSS, 1M-event windows : {result['peak_rss_mb_window_1m']} MB "
          f"(x{result['rss_ratio_1m_vs_10k']} of 10k)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
