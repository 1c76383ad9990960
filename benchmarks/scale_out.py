#!/usr/bin/env python3
"""Scale-out throughput: one vs two ``driftwatch run`` instances in one consumer group.

Writes the demo scenario (``--events`` predictions and their outcomes), produces it keyed
by application id to two co-partitioned topics (``--partitions``, 16 by default) on a
local broker (started here from ``scripts/kafka_broker.py`` unless ``--bootstrap`` names
one), then, for 1 and then 2 instances (each a fresh consumer group and pane log), starts
real daemons with ``group: {enabled: true}`` and measures messages consumed per second
by the whole group while it is stable: from the moment every instance owns partitions
to the moment every partition is read to its end (the sum of the positions the
instances report in ``/status``). It prints both rates and their ratio, the messages per
CPU-second the instances used (the cost of the group's work, which does not depend on
free cores) and how busy the machine's cores were meanwhile.

The policy is the demo's with event-time panes (a group merges by pane) and a fixed KS
level (calibrating the level of every window size costs seconds per size and would be
measured instead of the stream).

Measuring 4 or more instances needs at least as many free cores as instances plus one
for the broker: each instance is one Python process that decodes and sketches on one
core. On a 2-core machine two instances already share the cores with the broker, so
the ratio printed there is a floor, not the scaling; run it on a machine with 8+ idle
cores (``--instances 1 2 4``) to measure 4.

    python benchmarks/scale_out.py --events 200000
"""

from __future__ import annotations

import argparse
import gzip
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zlib
from pathlib import Path
from typing import Any

import orjson
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.testing.generator import write_scenario  # noqa: E402
from driftwatch.testing.kafka import bootstrap_or_broker  # noqa: E402
from driftwatch.testing.recording import demo_kafka_connector  # noqa: E402

DRIFTWATCH = [sys.executable, "-c", "import sys; from driftwatch.cli import main; sys.exit(main())"]


def time_policy(out: Path) -> Path:
    text = (ROOT / "policies" / "credit-risk-demo.yaml").read_text(encoding="utf-8")
    start, end = text.index("window:\n"), text.index("mode: sliding")
    text = text[:start] + "window:\n  kind: time\n  pane: 7d\n  panes: 4\n  " + text[end:]
    path = out / "policy.yaml"
    path.write_text(text.replace("mild: {calibrated: {false_alarm_rate: 0.001}}", "mild: 0.12"),
                    encoding="utf-8")
    return path


def produce(bootstrap: str, data: Path, partitions: int) -> tuple[dict[str, str], int]:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    tag = uuid.uuid4().hex[:8]
    topics = {s: f"scale-{s}-{tag}" for s in ("predictions", "outcomes")}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(t, partitions, 1) for t in topics.values()])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20,
                             batch_size=1 << 20)
    n = 0
    for stream, topic in topics.items():
        with gzip.open(data / f"{stream}.jsonl.gz", "rb") as fh:
            for line in fh:
                if line.strip():
                    key = orjson.loads(line)["application_id"].encode()
                    producer.send(topic, key=key, value=line.rstrip(b"\n"),
                                  partition=zlib.crc32(key) % partitions)
                    n += 1
    producer.flush()
    producer.close()
    return topics, n


def config(tmp: Path, bootstrap: str, topics: dict[str, str], data: Path, policy: Path) -> Path:
    group = f"scale-{uuid.uuid4().hex[:8]}"
    demo_kafka_connector(tmp / "connector.yaml", bootstrap, topics, group)
    path = tmp / "driftwatch.yaml"
    path.write_text(
        f"models:\n  - connector: {tmp / 'connector.yaml'}\n    policy: {policy}\n"
        f"    reference: {data / 'reference.parquet'}\n    batch_size: 10000\n"
        "http: {port: 0}\ncheckpoint: {interval: 5s, max_age: 1m}\n"
        "actions: {execute: false}\npool: {gpus: 0}\n"
        f"group: {{enabled: true, topic: {group}.panes}}\n", encoding="utf-8")
    return path


def status(state: Path) -> dict[str, Any] | None:
    try:
        url = orjson.loads((state / "service.json").read_bytes())["url"]
        with urllib.request.urlopen(url + "/status", timeout=5) as resp:
            return orjson.loads(resp.read())
    except (OSError, ValueError, KeyError):
        return None


def _cpu(procs: list[Any]) -> tuple[float, float]:
    """CPU seconds the instances have used, and the whole machine's busy seconds."""
    mine = 0.0
    for p in procs:
        try:
            t = psutil.Process(p.pid).cpu_times()
            mine += t.user + t.system
        except psutil.Error:
            pass
    machine = psutil.cpu_times()
    return mine, sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)


def run_group(n: int, tmp: Path, cfg: Path, total: int) -> tuple[float, float, float]:
    """Messages per second of ``n`` instances while the group is stable, messages per
    CPU-second of the instances, and the share of the machine's cores busy meanwhile."""
    procs, states = [], [tmp / f"i{i}" for i in range(n)]
    for st in states:
        log = (tmp / f"{st.name}.log").open("wb")
        procs.append(subprocess.Popen([*DRIFTWATCH, "run", "--config", str(cfg), "--state-dir",
                                       str(st)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))
    try:
        def consumed() -> tuple[int, bool]:
            seen, owned = 0, True
            for st in states:
                s = status(st)
                if s is None:
                    return 0, False
                m = s["models"][0]
                owned = owned and bool(m["group"]["partitions"])
                seen += sum(m["source"]["positions"].values())
            return seen, owned

        while True:  # every instance owns partitions: the group is stable
            seen0, owned = consumed()
            if owned:
                break
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"an instance exited; see {tmp}/*.log")
            time.sleep(0.05)
        if seen0 > total // 2:  # the timed part would be mostly one instance, or nothing
            raise SystemExit(f"{n} instance(s): the group settled only after {seen0:,} of "
                             f"{total:,} messages were read; rerun with a larger --events")
        t0, (cpu0, busy0) = time.perf_counter(), _cpu(procs)
        while True:
            seen, _ = consumed()
            if seen >= total:
                break
            time.sleep(0.05)
        wall, (cpu1, busy1) = time.perf_counter() - t0, _cpu(procs)
        busy = (busy1 - busy0) / (wall * (os.cpu_count() or 1))
        return (seen - seen0) / wall, (seen - seen0) / max(cpu1 - cpu0, 1e-9), busy
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(60)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--partitions", type=int, default=16)
    p.add_argument("--instances", type=int, nargs="+", default=[1, 2])
    p.add_argument("--bootstrap", help="use this broker instead of starting one")
    args = p.parse_args()
    with bootstrap_or_broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        data = tmp / "data"
        write_scenario("demo", data, seed=5, n_events=args.events, reference_rows=6_000)
        topics, total = produce(bootstrap, data, args.partitions)
        policy = time_policy(tmp)
        rates: dict[int, tuple[float, float, float]] = {}
        for n in args.instances:
            run = tmp / f"run{n}"
            run.mkdir()
            rates[n] = run_group(n, run, config(run, bootstrap, topics, data, policy), total)
    print(f"messages          {total} ({args.events} predictions and their outcomes), "
          f"{args.partitions} partitions, {os.cpu_count()} CPU(s)")
    base, base_cpu, _ = rates[args.instances[0]]
    for n, (r, per_cpu, busy) in rates.items():
        print(f"{n} instance(s)     {r:12,.0f} messages/s   x{r / base:.2f}   "
              f"{per_cpu:10,.0f} per instance CPU-second (x{per_cpu / base_cpu:.2f})   "
              f"machine {busy:4.0%} busy")
    print("Wall-clock scaling needs a free core per instance; the per-CPU-second rate says "
          "what the group's work costs (x1.00: no overhead from splitting the stream).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
