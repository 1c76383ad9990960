"""Replaying into the same --out twice gives the same folder: old outputs are replaced."""

from __future__ import annotations

import gzip
from pathlib import Path

from driftwatch.replay import RUN_FILES, replay


def test_a_rerun_replaces_the_previous_run_whole(repo_root: Path, tmp_path: Path) -> None:
    demo = repo_root / "data" / "demo"
    preds = tmp_path / "predictions.jsonl"
    with gzip.open(demo / "predictions.jsonl.gz", "rb") as f:
        head = b"".join(next(f) for _ in range(6000))
    preds.write_bytes(head + b"{not json\n")  # one bad record: one dead letter
    out = tmp_path / "out"
    args = (repo_root / "connectors" / "demo-file.yaml", [preds], out)
    kw = {"policy": repo_root / "policies" / "credit-risk-demo.yaml", "progress": False,
          "reference": demo / "reference.parquet"}
    replay(*args, **kw)
    first = {n: (out / n).read_bytes() for n in RUN_FILES if (out / n).exists()}
    assert first["dead_letter.jsonl"].count(b"\n") == 1
    (out / "actions.jsonl").write_text("stale\n")  # left by an earlier --execute run
    replay(*args, **kw)
    again = {n: (out / n).read_bytes() for n in RUN_FILES if (out / n).exists()}
    assert again == first  # nothing appended, nothing stale left behind
