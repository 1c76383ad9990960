"""Soak test: a continuous stream through ``driftwatch run`` for N minutes.

Ten models (``--models``) of fifty numeric features each (``--features``) read one
synthetic recording (predictions, and each one's outcome 3000 events later), paced so
that it lasts ``--minutes`` of wall time at ``--rate`` predictions per second per model.
The daemon checkpoints every ``--checkpoint`` seconds. The script samples the daemon's
resident memory every few seconds, reads checkpoint duration and size from ``/metrics``,
then stops the daemon (SIGTERM), starts it again on the same state and reads how long the
restore took. It prints a table and writes ``soak.json`` in the output folder.

    python benchmarks/soak.py                  # 10 minutes
    python benchmarks/soak.py --minutes 2      # a short run

Flat memory means the RSS slope after warm-up stays near zero (window memory does not
depend on how long the daemon runs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import psutil
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
DRIFTWATCH = [sys.executable, "-c", "import sys; from driftwatch.cli import main; sys.exit(main())"]
START = 1_704_067_200.0  # 2024-01-01
SPACING = 60.0  # event seconds between events (pacing maps them onto wall time)
OUTCOME_DELAY = 3_000  # events between a prediction and its outcome


def features(n: int) -> list[str]:
    return [f"x{j:02d}" for j in range(n)]


def write_inputs(out: Path, *, n_events: int, n_features: int, seed: int) -> dict[str, Path]:
    """Reference profile, one shared recording, connector and policy."""
    from driftwatch.windows.profile import ReferenceProfile

    rng = np.random.default_rng(seed)
    names = features(n_features)
    ref = pd.DataFrame(rng.lognormal(0.0, 0.5, (20_000, n_features)), columns=names)
    ref["score"] = rng.beta(2, 8, len(ref))
    profile = ReferenceProfile.build(ref, numeric=names, meta={"source": "soak"})
    profile.save(out / "reference.json.gz")
    rec, outcomes = out / "stream.jsonl.gz", out / "outcomes.jsonl.gz"
    with gzip.open(rec, "wb", compresslevel=1) as fh, \
            gzip.open(outcomes, "wb", compresslevel=1) as oh:
        chunk = 5_000
        for lo in range(0, n_events, chunk):
            n = min(chunk, n_events - lo)
            # a slow drift of the first features over the run: windows keep deciding
            shift = np.linspace(lo, lo + n, n, endpoint=False)[:, None] / n_events
            x = rng.lognormal(0.0, 0.5, (n, n_features)) * (1 + 0.3 * shift * (np.arange(
                n_features) < 5))
            score = rng.beta(2, 8, n)
            bad = rng.random(n) < score
            for i in range(n):
                ts = START + (lo + i) * SPACING
                row = {"id": f"e{lo + i}", "ts": ts, "score": round(float(score[i]), 5)}
                row.update(zip(names, np.round(x[i], 4).tolist(), strict=True))
                fh.write(orjson.dumps(row) + b"\n")
                # every outcome arrives OUTCOME_DELAY events later: the joiner's backlog
                # and the feature rows it holds reach a steady state
                outcome = {"id": f"e{lo + i}", "ts": ts + OUTCOME_DELAY * SPACING,
                           "bad": int(bad[i])}
                oh.write(orjson.dumps(outcome) + b"\n")
    connector = out / "connector.yaml"
    connector.write_text(
        "apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: soak}\n"
        "source:\n  kind: file\n  streams:\n    predictions:\n"
        f"      paths: [{rec}]\n      fields:\n        event_id: id\n"
        "        event_time: {path: ts, unit: s}\n        features: infer\n"
        "        score: score\n"
        f"    outcomes:\n      paths: [{outcomes}]\n      fields:\n        event_id: id\n"
        "        event_time: {path: ts, unit: s}\n        label: {path: bad}\n")
    policy = out / "policy.yaml"
    policy.write_text(
        "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: soak}\n"
        f"model: {{name: soak, reference: {out / 'reference.json.gz'}}}\n"
        "window: {kind: count, pane: 1000, panes: 5, mode: sliding}\n"
        "signals:\n  - detector: psi\n    features: all\n"
        "    thresholds: {mild: 0.1, moderate: 0.25, severe: 0.5}\n"
        "actions:\n  mild: {type: alert, channels: [soak]}\n")
    return {"connector": connector, "policy": policy, "reference": out / "reference.json.gz"}


def write_config(out: Path, inputs: dict[str, Path], *, models: int, speed: float,
                 checkpoint_s: int) -> Path:
    body = "models:\n"
    for m in range(models):
        body += (f"  - name: m{m:02d}\n    connector: {inputs['connector']}\n"
                 f"    policy: {inputs['policy']}\n    reference: {inputs['reference']}\n"
                 f"    live: {{speed: {speed}}}\n    batch_size: 200\n")
    body += (f"http: {{port: 0}}\ncheckpoint: {{interval: {checkpoint_s}s, max_age: 10m}}\n"
             "actions: {execute: false}\nmetrics: {feature_cap: 50}\n")
    cfg = out / "soak.yaml"
    cfg.write_text(body)
    return cfg


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def start(cfg: Path, state: Path, log: Path) -> tuple[subprocess.Popen, str]:
    fh = log.open("ab")
    proc = subprocess.Popen([*DRIFTWATCH, "run", "--config", str(cfg), "--state-dir",
                             str(state)], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    info = state / "service.json"
    for _ in range(1200):
        if proc.poll() is not None:
            sys.exit(f"daemon exited ({proc.returncode}); see {log}")
        try:
            d = json.loads(info.read_text())
            if d.get("pid") == proc.pid:
                return proc, d["url"]
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"daemon did not start; see {log}")


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(120)


def total(m: dict, name: str) -> float:
    return sum(v for (n, _), v in m.items() if n == name)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--models", type=int, default=10)
    p.add_argument("--features", type=int, default=50)
    p.add_argument("--rate", type=float, default=100.0, help="events/s per model")
    p.add_argument("--checkpoint", type=int, default=10, help="checkpoint interval, s")
    p.add_argument("--sample", type=float, default=5.0, help="RSS sample interval, s")
    p.add_argument("--warmup", type=float, default=None,
                   help="minutes before the memory slope is measured (default 40%% of the "
                        "run: the labelled-row buffers fill in the first minutes)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)

    out = args.out or Path(tempfile.mkdtemp(prefix="dw-soak-"))
    out.mkdir(parents=True, exist_ok=True)
    n_events = int(args.rate * args.minutes * 60 * 1.1) + 1000  # never run dry early
    print(f"writing {n_events} events x {args.features} features to {out} ...", flush=True)
    inputs = write_inputs(out, n_events=n_events, n_features=args.features, seed=args.seed)
    cfg = write_config(out, inputs, models=args.models, speed=args.rate * SPACING,
                       checkpoint_s=args.checkpoint)
    state, log = out / "state", out / "daemon.log"

    proc, url = start(cfg, state, log)
    ps = psutil.Process(proc.pid)
    t0 = time.monotonic()
    samples: list[tuple[float, float, float]] = []  # (minutes, rss MiB, events)
    while (elapsed := time.monotonic() - t0) < args.minutes * 60:
        time.sleep(args.sample)
        m = scrape(url)
        samples.append((elapsed / 60, ps.memory_info().rss / 2**20,
                        total(m, "driftwatch_events_total")))
        print(f"  {samples[-1][0]:5.2f} min  rss {samples[-1][1]:7.1f} MiB  "
              f"events {samples[-1][2]:10.0f}", flush=True)
    m = scrape(url)
    n_cp = total(m, "driftwatch_checkpoint_duration_seconds_count")
    cp_mean = total(m, "driftwatch_checkpoint_duration_seconds_sum") / max(n_cp, 1)
    cp_bytes = total(m, "driftwatch_checkpoint_size_bytes")
    events = total(m, "driftwatch_events_total")
    windows = total(m, "driftwatch_windows_closed_total")
    rc = stop(proc)

    proc, url = start(cfg, state, log)  # same state: measure the restore
    restore = total(scrape(url), "driftwatch_restore_duration_seconds")
    rc2 = stop(proc)

    warmup = args.warmup if args.warmup is not None else 0.4 * args.minutes
    warm = [s for s in samples if s[0] >= warmup] or samples
    slope = float(np.polyfit([s[0] for s in warm], [s[1] for s in warm], 1)[0]) \
        if len(warm) > 2 else float("nan")
    result = {
        "minutes": args.minutes, "models": args.models, "features": args.features,
        "rate_per_model": args.rate, "events": events, "windows": windows,
        "events_per_second": events / (args.minutes * 60),
        "rss_mib_first": samples[0][1] if samples else None,
        "rss_mib_after_warmup": warm[0][1] if warm else None,
        "rss_mib_last": samples[-1][1] if samples else None,
        "rss_mib_max": max(s[1] for s in samples) if samples else None,
        "warmup_minutes": warmup,
        "rss_slope_mib_per_min_after_warmup": slope,
        "checkpoints": n_cp, "checkpoint_seconds_mean": cp_mean,
        "checkpoint_bytes": cp_bytes, "restore_seconds": restore,
        "exit_codes": [rc, rc2], "rss_samples": samples,
    }
    (out / "soak.json").write_text(json.dumps(result, indent=2))
    print(f"\n{args.models} models x {args.features} features, {args.minutes:g} min, "
          f"{events:.0f} events ({result['events_per_second']:.0f}/s), {windows:.0f} windows")
    print(f"RSS MiB: first {result['rss_mib_first']:.1f}, after {warmup:g} min warm-up "
          f"{result['rss_mib_after_warmup']:.1f}, last {result['rss_mib_last']:.1f}, "
          f"max {result['rss_mib_max']:.1f}; slope after warm-up {slope:+.2f} MiB/min")
    print(f"checkpoint: {n_cp:.0f} written, mean {cp_mean * 1000:.0f} ms from the first "
          f"capture to durable (the loop goes on meanwhile), {cp_bytes / 2**20:.2f} MiB; "
          f"restore {restore * 1000:.0f} ms")
    print(f"exit codes {rc}, {rc2}; details in {out / 'soak.json'}")
    return 0 if rc == rc2 == 0 else 1


if __name__ == "__main__":
    if os.environ.get("CI", "").lower() == "true" and "--minutes" not in sys.argv:
        print("note: a full soak takes 10 minutes", file=sys.stderr)
    sys.exit(main())
