#!/usr/bin/env python3
"""Report size and opening time: how big the demo report is, where its bytes go, and how
long headless Chromium takes to load and lay it out.

Replays the demo recording (``data/demo``, or the same seeded scenario generated into a
temporary folder) unless ``--input`` names a replay output folder, builds ``report.html``
and one per-decision report, then prints:

- bytes in total and per section (the size bound is ``driftwatch.report.MAX_BYTES``);
- build time in Python;
- Chromium's load time (``loadEventEnd`` after navigation start, median of ``--loads``).

    python benchmarks/report_size.py
    python benchmarks/report_size.py --input out/demo --reference data/demo/reference.parquet
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.report import MAX_BYTES, build_report, load_run  # noqa: E402
from driftwatch.windows.profile import ReferenceProfile  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _demo(tmp: Path) -> tuple[Path, Path]:
    from driftwatch.replay import replay

    demo = ROOT / "data" / "demo"
    if (demo / "predictions.jsonl.gz").exists():
        inputs = [demo / "predictions.jsonl.gz", demo / "outcomes.jsonl.gz"]
        ref = demo / "reference.parquet"
    else:
        from driftwatch.testing.generator import write_scenario

        p = write_scenario("demo", tmp / "demo", seed=0)
        inputs, ref = [p["predictions"], p["outcomes"]], p["reference"]
    out = tmp / "out"
    replay(ROOT / "connectors" / "demo-file.yaml", inputs, out,
           policy=ROOT / "policies" / "credit-risk-demo.yaml", reference=ref, progress=False)
    return out, ref


def _load_ms(path: Path, loads: int, chromium: str) -> float:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for _ in range(loads):
            page = b.new_page(viewport={"width": 1280, "height": 900})
            page.goto(path.as_uri(), wait_until="load")
            times.append(page.evaluate(
                "() => { const t = performance.getEntriesByType('navigation')[0];"
                " return t.loadEventEnd - t.startTime; }"))
            page.close()
        b.close()
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", type=Path, help="replay output folder (default: replay the demo)")
    ap.add_argument("--reference", type=Path, help="reference profile or dataset of that run")
    ap.add_argument("--loads", type=int, default=5, help="Chromium loads to take the median of")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, ref = (args.input, args.reference) if args.input else _demo(Path(tmp))
        profile = ReferenceProfile.from_file(ref) if ref else None
        run = load_run(out, reference=profile)
        t0 = time.perf_counter()
        html = build_report(run)
        build_s = time.perf_counter() - t0
        path = Path(tmp) / "report.html"
        path.write_text(html, encoding="utf-8")
        size = len(html.encode())
        print(f"report.html: {size:,} bytes ({100 * size / MAX_BYTES:.0f}% of the "
              f"{MAX_BYTES:,} bound), {len(run.records)} windows, built in {build_s:.2f} s")
        for m in re.finditer(r'<section id="([^"]+)".*?</section>', html, re.S):
            print(f"  {m.group(1):<14} {len(m.group(0).encode()):>10,} bytes")
        acting = [r["window_id"] for r in run.decisions() if r["decision"].get("action")]
        if acting:
            one = build_report(run, decision=acting[0])
            print(f"report-window-{acting[0]}.html: {len(one.encode()):,} bytes")
        if Path(args.chromium).exists():
            ms = _load_ms(path, args.loads, args.chromium)
            print(f"Chromium load (median of {args.loads}): {ms:.0f} ms")
        else:
            print(f"{args.chromium} not found: load time not measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
