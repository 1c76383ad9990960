"""The daemon names a drift confined to one channel, as replay does (one code path)."""

from __future__ import annotations

import orjson
import pytest

from tests.unit.test_segments_replay import write_recording

pytestmark = pytest.mark.integration


def test_the_daemon_names_the_segment_in_its_timeline(tmp_path, driftwatch_daemon,
                                                       service_config_factory) -> None:
    rec = write_recording(tmp_path)
    conn = rec / "channels.yaml"  # a connector's globs start at the working directory
    conn.write_text(conn.read_text().replace("paths: [predictions.jsonl]",
                                             f"paths: [{rec / 'predictions.jsonl'}]"))
    cfg = service_config_factory(tmp_path / "svc.yaml", rec / "channels.yaml",
                                 rec / "policy.yaml", reference=rec / "reference.parquet",
                                 batch_size=1000)
    d = driftwatch_daemon(cfg, tmp_path / "state", "--exit-when-done")
    assert d.wait_exit(120) == 0, d.log()[-3000:]
    lines = (tmp_path / "state" / "out" / "credit" / "timeline.jsonl").read_bytes()
    quiet, moved = [orjson.loads(x) for x in lines.splitlines() if x.strip()]
    assert quiet["tier"] == "none" and moved["tier"] == "mild"
    named = {(r["feature"], r.get("segment")) for r in moved["decision"]["reasons"]}
    assert ("purpose", "web") in named
    assert {s.get("segment") for s in moved["signals"]} >= {None, "web", "branch"}
