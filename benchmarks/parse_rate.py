#!/usr/bin/env python
"""How fast records become batches: raw JSON parsing against the decoder and the file source.

On a generated JSONL stream (scenario ``large``, 1M predictions by default, written once under
``.cache/bench/``) it measures, in the same run, events per second of:

* ``orjson.loads`` per line (lines already split, in memory): the floor of per-line parsing;
* ``pyarrow.json.read_json`` on the whole file, inferring types, and with an explicit schema
  of the mapped paths (what the decoder's block parser does);
* ``Decoder.decode_block`` on in-memory blocks of ``--batch-size`` lines, block parser on
  and off (``block_parse=False`` reads every line with orjson);
* ``FileSource`` end to end on the predictions file alone, and merged with its outcomes.

    python benchmarks/parse_rate.py                # 1M events
    python benchmarks/parse_rate.py --events 200000 --json

Timings are wall-clock (``time.perf_counter``), best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.json as pj

from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.file import FileSource
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.testing.generator import write_scenario


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    """(seconds, events) of the fastest of ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        runs.append((time.perf_counter() - t0, n))
    return min(runs)


def ensure_data(folder: Path, events: int) -> tuple[Path, Path]:
    pred, out = folder / "predictions.jsonl", folder / "outcomes.jsonl"
    stamp = folder / "events.txt"
    if not (pred.exists() and out.exists() and stamp.exists()
            and stamp.read_text().strip() == str(events)):  # fmt: skip
        print(f"generating {events:,} events under {folder} ...", file=sys.stderr)
        write_scenario("large", folder, n_events=events, reference_rows=0, compress=False)
        stamp.write_text(f"{events}\n")
    return pred, out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--batch-size", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--data", type=Path, default=Path(".cache/bench"))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)

    pred, out = ensure_data(a.data, a.events)
    data = pred.read_bytes()
    lines = data.splitlines()
    n = len(lines)
    bs = a.batch_size
    blocks = [b"\n".join(lines[i : i + bs]) + b"\n" for i in range(0, n, bs)]
    conn = credit_connector(pred.name, out.name, base_dir=a.data)
    schema = credit_schema()
    mapping = conn.stream("predictions")
    explicit = Decoder(mapping, schema)
    explicit.decode_block(blocks[0], source="warm-up")  # learns the field types
    arrow_schema = explicit._parser._tree()

    def orjson_lines() -> int:
        for line in lines:
            orjson.loads(line)
        return n

    def arrow(schema: pa.Schema | None) -> Callable[[], int]:
        opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore") \
            if schema is not None else pj.ParseOptions()
        return lambda: pj.read_json(io.BytesIO(data), parse_options=opts).num_rows

    def decoder(block_parse: bool) -> Callable[[], int]:
        def run() -> int:
            dec = Decoder(mapping, schema, block_parse=block_parse)
            return sum(len(dec.decode_block(b, source="bench")[0]) for b in blocks)
        return run

    def file_source(inputs: list[Path]) -> Callable[[], int]:
        def run() -> int:
            src = FileSource.from_paths(conn, schema, inputs, batch_size=bs)
            total = 0
            while (polled := src.poll()) is not None:
                total += polled.n_events
            src.close()
            return total
        return run

    cases = [
        ("orjson.loads per line", orjson_lines),
        ("pyarrow.json.read_json (inferred)", arrow(None)),
        ("pyarrow.json.read_json (mapped paths)", arrow(arrow_schema)),
        ("Decoder.decode_block (block parser)", decoder(True)),
        ("Decoder.decode_block (orjson per line)", decoder(False)),
        ("FileSource predictions file", file_source([pred])),
        ("FileSource predictions + outcomes merged", file_source([pred, out])),
    ]
    results = {}
    for name, fn in cases:
        secs, events = best(fn, a.repeat)
        results[name] = {"events": events, "seconds": round(secs, 3),
                         "events_per_s": round(events / secs)}
        if not a.json:
            print(f"{name:44s} {events:>10,d} events {secs:7.2f} s {events / secs:>12,.0f} ev/s")
    info = {"events": n, "batch_size": bs, "bytes": len(data), "python": platform.python_version(),
            "pyarrow": pa.__version__, "orjson": orjson.__version__, "results": results}
    if a.json:
        print(json.dumps(info, indent=2))
    else:
        print(f"({n:,} lines, {len(data) / 1e6:.0f} MB, batch {bs:,}; python "
              f"{info['python']}, pyarrow {info['pyarrow']}, orjson {info['orjson']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
