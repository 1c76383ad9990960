"""A bad record is charged to the pane where it sits in the stream, whatever the batch size.

Before, a poll's bad records all went to the pane being filled at the end of the poll: with
the default 10,000-record polls and panes of 1,000 events, every bad record of ten panes
landed in one, whose bad-record share read ten times the stream's and tripped the
data-quality gate, while ``--batch-size 500`` spread them and judged other windows. The
expected count of each window comes from where the bad lines were written (the good
predictions before each one), not from driftwatch.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
PANE = 250
N_PRED = 1000
BAD_LINE = '{"application_id": "broken", "ts": "not a time"}'


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's first predictions and their outcomes, and a policy of tumbling count
    windows of ``PANE`` events."""
    d = tmp_path_factory.mktemp("bad-placed")
    with gzip.open(ROOT / "data/demo/predictions.jsonl.gz", "rt") as f:
        preds = [next(f).rstrip("\n") for _ in range(N_PRED)]
    ids = {json.loads(p)["application_id"] for p in preds}
    with gzip.open(ROOT / "data/demo/outcomes.jsonl.gz", "rt") as f:
        outs = [ln for ln in f if json.loads(ln)["application_id"] in ids]
    (d / "preds.json").write_text(json.dumps(preds))
    (d / "outcomes.jsonl").write_text("".join(outs))
    policy = yaml.safe_load((ROOT / "policies/credit-risk-demo.yaml").read_text())
    policy["window"] = {"kind": "count", "pane": PANE, "panes": 1, "mode": "tumbling"}
    policy["model"]["reference"] = str(ROOT / "data/demo/reference.parquet")
    (d / "policy.yaml").write_text(yaml.safe_dump(policy))
    return d


def _replay(d: Path, run: str, bad_after: list[int], batch: int,
            capsys: pytest.CaptureFixture[str]) -> list[tuple[int, int]]:
    """Replay with a bad line written after each of ``bad_after`` good predictions;
    (window id, bad records) per window."""
    preds = json.loads((d / "preds.json").read_text())
    lines = []
    for k in range(N_PRED + 1):
        lines += [BAD_LINE] * bad_after.count(k)
        if k < N_PRED:
            lines.append(preds[k])
    (d / f"{run}.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(
        ["replay", "-c", str(ROOT / "connectors/demo-file.yaml"), "-p", str(d / "policy.yaml"),
         "-i", f"predictions={d / run}.jsonl", f"outcomes={d / 'outcomes.jsonl'}",
         "-o", str(d / run), "--batch-size", str(batch), "--no-report", "--quiet",
         "--levels-cache", str(d / "levels")], capsys)
    assert code == 0, err
    timeline = (d / run / "timeline.jsonl").read_text().splitlines()
    return [(w["window_id"], w["n_bad"]) for w in map(json.loads, timeline)]


def _expected(bad_after: list[int], n_windows: int) -> list[tuple[int, int]]:
    """A bad line after k good predictions belongs to the pane the next one fills; the
    windows after the last prediction (outcomes joined there) hold none."""
    return [(w, sum(1 for k in bad_after if k // PANE == w)) for w in range(n_windows)]


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad_after=st.lists(st.integers(0, N_PRED - 1), min_size=1, max_size=12),
       batch=st.sampled_from([10_000, 333, 97]))
def test_each_bad_record_is_charged_to_its_own_window(
        demo: Path, capsys: pytest.CaptureFixture[str], bad_after: list[int],
        batch: int) -> None:
    got = _replay(demo, "run", bad_after, batch, capsys)
    assert got == _expected(bad_after, len(got))
    assert len(got) >= N_PRED // PANE


def test_the_bad_record_share_of_a_window_does_not_depend_on_the_batch_size(
        demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad_after = [10, 20, 30, 300, 301, 610, 999]
    big = _replay(demo, "big", bad_after, 10_000, capsys)
    small = _replay(demo, "small", bad_after, 50, capsys)
    assert big == small
    assert big[:4] == [(0, 3), (1, 2), (2, 1), (3, 1)]
    assert all(n == 0 for _, n in big[4:])
