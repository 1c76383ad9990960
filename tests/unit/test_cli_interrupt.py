"""Ctrl-C during a replay: it ended with exit code 130 and not a word, leaving a partial
timeline and no summary, with nothing to tell the user the output was cut short."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from driftwatch.replay import run as replay_run

from ._cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _head(tmp: Path, stream: str, lines: int) -> Path:
    with gzip.open(ROOT / f"data/demo/{stream}.jsonl.gz", "rt") as fh:
        head = [next(fh) for _ in range(lines)]
    path = tmp / f"{stream}.jsonl"
    path.write_text("".join(head))
    return path


def test_an_interrupted_replay_says_its_timeline_is_partial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    written = []
    record = replay_run.timeline_record

    def then_ctrl_c(*args: Any, **kw: Any) -> dict[str, Any]:
        if written:  # the second window: the user presses Ctrl-C
            raise KeyboardInterrupt
        written.append(1)
        return record(*args, **kw)

    monkeypatch.setattr(replay_run, "timeline_record", then_ctrl_c)
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    code, _, err = run_cli(
        ["replay", "-q", "--connector", "connectors/demo-file.yaml",
         "--policy", "policies/credit-risk-demo.yaml",
         "--input", str(_head(tmp_path, "predictions", 7000)),
         str(_head(tmp_path, "outcomes", 100)), "--out", str(out)], capsys)
    assert code == 130
    assert err.strip().splitlines()[-1] == (
        f"interrupted: the replay stopped before the end of its input; {out}/timeline.jsonl "
        "holds the windows closed so far, and no summary or report was written")
    assert "Traceback" not in err
    assert len((out / "timeline.jsonl").read_text().splitlines()) == 1
    assert not (out / "summary.json").exists() and not (out / "report.html").exists()
