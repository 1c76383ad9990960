#!/usr/bin/env python
"""How fast records become batches: raw JSON parsing against the decoder and the file source.

On a generated JSONL stream (scenario ``large``, 1M predictions by default, written once under
``.cache/bench/``) it measures, in the same run, events per second of:

* ``orjson.loads`` per line (lines already split, in memory): the floor of per-line parsing;
* ``pyarrow.json.read_json`` on the whole file, inferring types, and with an explicit schema
  of the mapped paths (what the decoder's block parser does with the lines its compiled
  scanner hands back, and with every line where numba does not run);
* ``Decoder.decode_block`` on in-memory blocks of ``--batch-size`` lines, block parser on
  and off (``block_parse=False`` reads every line with orjson); the block parser starts
  with the compiled scanner where numba runs (``DRIFTWATCH_KERNEL=numpy`` to compare
  without it);
* ``FileSource`` end to end on the predictions file alone, and merged with its outcomes;
* with ``--candidates``, other ways to get the mapped paths' values out of the same blocks
  (the measurement behind the decoder's choice of parser): orjson per line and on a joined
  ``[a,b,c]`` array, msgspec into typed structs of the mapped paths then columns, pysimdjson
  per line, pyarrow with the explicit schema on one thread. msgspec and pysimdjson come
  with ``pip install 'driftwatch[bench]'``; a missing one is skipped.

The decoder's share is the decoder's time over the file source's, in the same run.

    python benchmarks/parse_rate.py                # 1M events
    python benchmarks/parse_rate.py --events 200000 --json --candidates

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
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.json as pj
from _recording import sized  # beside this script

from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.file import FileSource
from driftwatch.connectors.mapping import FieldPath
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


def _lookup(objs: list[Any], paths: dict[str, tuple[str, ...]]) -> dict[str, list[Any]]:
    out = {}
    for key, parts in paths.items():
        vals = objs
        for p in parts:
            vals = [v.get(p) if type(v) is dict else None for v in vals]
        out[key] = vals
    return out


def candidates(blocks: list[list[bytes]], fields: dict[str, FieldPath],
               arrow_schema: pa.Schema) -> list[tuple[str, Callable[[], int]]]:
    """Ways to get the mapped paths' values (as columns) out of blocks of lines."""
    paths = {k: p.parts for k, p in fields.items()}
    joined = [b"\n".join(b) + b"\n" for b in blocks]
    out: list[tuple[str, Callable[[], int]]] = [
        ("candidate: orjson per line + lookups",
         lambda: sum(len(_lookup([orjson.loads(x) for x in b], paths)["event_id"])
                     for b in blocks)),
        ("candidate: orjson on [a,b,c] + lookups",
         lambda: sum(len(_lookup(orjson.loads(b"[" + b",".join(b) + b"]"), paths)["event_id"])
                     for b in blocks)),
        ("candidate: pyarrow explicit schema, 1 thread",
         lambda: sum(pj.read_json(io.BytesIO(j), read_options=pj.ReadOptions(
             use_threads=False, block_size=len(j) + 1), parse_options=pj.ParseOptions(
             explicit_schema=arrow_schema, unexpected_field_behavior="ignore")).num_rows
             for j in joined)),
    ]
    try:
        import msgspec
    except ImportError:
        print("msgspec not installed: skipped", file=sys.stderr)
    else:
        out.append(("candidate: msgspec typed structs + columns", _msgspec(msgspec, blocks, paths)))
    try:
        import simdjson
    except ImportError:
        print("pysimdjson not installed: skipped", file=sys.stderr)
    else:
        def simd() -> int:
            parser, total = simdjson.Parser(), 0
            for b in blocks:
                cols: dict[str, list[Any]] = {k: [] for k in paths}
                for x in b:
                    doc = parser.parse(x)
                    for key, parts in paths.items():
                        v = doc
                        try:
                            for p in parts:
                                v = v[p]
                        except (KeyError, TypeError):
                            v = None
                        cols[key].append(v if not isinstance(v, simdjson.Object | simdjson.Array)
                                         else None)
                    del doc, v
                total += len(cols["event_id"])
            return total
        out.append(("candidate: pysimdjson per line + lookups", simd))
    return out


def _msgspec(msgspec: Any, blocks: list[list[bytes]],
             paths: dict[str, tuple[str, ...]]) -> Callable[[], int]:
    """Structs holding only the mapped paths (msgspec skips the rest in C), then columns."""
    tree: dict[str, Any] = {}
    for key, parts in paths.items():
        node = tree
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node.setdefault(parts[-1], []).append(key)

    def build(node: dict[str, Any], n: list[int]) -> Any:
        n[0] += 1
        fields = [(k, build(v, n) | None if isinstance(v, dict) else Any, None)
                  for k, v in node.items()]
        return msgspec.defstruct(f"L{n[0]}", fields, gc=False)

    decode = msgspec.json.Decoder(build(tree, [0])).decode

    def columns(rows: list[Any], node: dict[str, Any], out: dict[str, list[Any]]) -> None:
        for name, sub in node.items():
            col = [getattr(r, name) if r is not None else None for r in rows]
            if isinstance(sub, dict):
                columns(col, sub, out)
            else:
                out.update(dict.fromkeys(sub, col))

    def run() -> int:
        total = 0
        for b in blocks:
            cols: dict[str, list[Any]] = {}
            columns(list(map(decode, b)), tree, cols)
            total += len(cols["event_id"])
        return total
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--batch-size", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--data", type=Path, default=Path(".cache/bench"))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--candidates", action="store_true",
                   help="also time other parsers on the same blocks")
    a = p.parse_args(argv)

    data = sized(a.data, a.events)  # another size beside the default one, never over it
    pred, out = ensure_data(data, a.events)
    data = pred.read_bytes()
    lines = data.splitlines()
    n = len(lines)
    bs = a.batch_size
    blocks = [b"\n".join(lines[i : i + bs]) + b"\n" for i in range(0, n, bs)]
    conn = credit_connector(pred.name, out.name, base_dir=data)
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
    if a.candidates:
        fields = {k: path for k, (path, _) in explicit.fields.items()}
        cases += candidates([lines[i : i + bs] for i in range(0, n, bs)], fields, arrow_schema)
    results = {}
    for name, fn in cases:
        secs, events = best(fn, a.repeat)
        results[name] = {"events": events, "seconds": round(secs, 3),
                         "events_per_s": round(events / secs)}
        if not a.json:
            print(f"{name:44s} {events:>10,d} events {secs:7.2f} s {events / secs:>12,.0f} ev/s")
    share = (results["Decoder.decode_block (block parser)"]["seconds"]
             / results["FileSource predictions file"]["seconds"])
    info = {"events": n, "decoder_share_of_file_source": round(share, 3), "batch_size": bs,
            "bytes": len(data), "python": platform.python_version(),
            "pyarrow": pa.__version__, "orjson": orjson.__version__, "results": results}
    if a.json:
        print(json.dumps(info, indent=2))
    else:
        print(f"decoder share of the file source: {share:.0%}")
        print(f"({n:,} lines, {len(data) / 1e6:.0f} MB, batch {bs:,}; python "
              f"{info['python']}, pyarrow {info['pyarrow']}, orjson {info['orjson']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
