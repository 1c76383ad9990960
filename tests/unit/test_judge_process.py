"""A replay whose windows are judged in a process of their own (beside the loop's intake
and the file reader) writes the timeline and summary the loop's own judging writes, bit
for bit; a judge that stops ends the replay with a clear error, never a wait."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from driftwatch.connectors.file_process import reads_in_process
from driftwatch.errors import ReplayError
from driftwatch.pipeline import ModelMonitor
from driftwatch.replay import replay
from driftwatch.replay import run as replay_run
from driftwatch.replay.judge_process import JudgeProcess, judges_apart

from ._cli import run_cli
from ._forked_recording import CONNECTOR, POLICY, write_recording

pytestmark = pytest.mark.skipif(not reads_in_process(total_bytes=0, wanted=True),
                                reason="needs the fork start method")


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_recording(tmp_path_factory.mktemp("rec"))


def _time_policy(tmp: Path) -> Path:
    """The demo policy on time panes: the cohort book stages rows by pane and folds them
    as windows close (a :class:`~driftwatch.labels.landing.LandingBook`)."""
    text = POLICY.read_text().replace(
        "kind: count             # panes", "kind: time              # panes").replace(
        "pane: 1000              # events per pane", "pane: 1d")
    assert "kind: time" in text and "pane: 1d" in text
    path = tmp / "time-policy.yaml"
    path.write_text(text)
    return path


def _run(paths: dict[str, Path], out: Path, policy: Path, **kw: Any) -> dict[str, bytes]:
    replay(CONNECTOR, [paths["predictions"], paths["outcomes"]], out, policy=policy,
           reference=paths["reference"], progress=False, report=False, batch_size=700,
           read_process=True, **kw)
    return {name: (out / name).read_bytes()
            for name in ("timeline.jsonl", "summary.json", "dead_letter.jsonl")}


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many judge processes were started."""
    started: list[int] = []
    real = JudgeProcess.start

    def start(self: JudgeProcess, **kw: Any) -> None:
        started.append(1)
        real(self, **kw)

    monkeypatch.setattr(JudgeProcess, "start", start)
    return started


@pytest.mark.parametrize("window", ["count", "time"])
def test_a_judge_process_writes_the_loops_timeline(recording: dict[str, Path], tmp_path: Path,
                                                   starts: list[int], window: str) -> None:
    policy = POLICY if window == "count" else _time_policy(tmp_path)
    here = _run(recording, tmp_path / "here", policy, judge_process=False)
    assert not starts
    apart = _run(recording, tmp_path / "apart", policy, judge_process=True)
    assert starts == [1]
    assert here["timeline.jsonl"].count(b"\n") >= 5
    # the windows' label-free estimates read the cohort book at each one's close
    assert b'"expected_bad_rate"' in here["timeline.jsonl"]
    assert apart == here


def test_the_judges_error_counts_reach_the_summary(recording: dict[str, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector that fails is counted in the judge; the summary counts it all the same."""
    from driftwatch.pipeline import judging as judging_module

    def broken(*a: Any, **kw: Any) -> Any:
        raise RuntimeError("detector broke")

    monkeypatch.setattr(judging_module, "assess", broken)
    here = json.loads(_run(recording, tmp_path / "here", POLICY,
                           judge_process=False)["summary.json"])
    apart = json.loads(_run(recording, tmp_path / "apart", POLICY,
                            judge_process=True)["summary.json"])
    assert here["errors_by_stage"]["detectors"] == here["windows"] > 0
    assert apart == here


def _replay_in_thread(paths: dict[str, Path], out: Path) -> BaseException | None:
    """The replay's error (None: it ended well), failing the test where it waits."""
    got: list[BaseException | None] = []

    def go() -> None:
        try:
            _run(paths, out, POLICY, judge_process=True)
            got.append(None)
        except BaseException as exc:
            got.append(exc)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(timeout=120)
    assert not t.is_alive(), "the replay waits for a judge that is gone"
    return got[0]


def test_a_killed_judge_ends_the_replay_with_an_error(recording: dict[str, Path],
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    real = ModelMonitor.judge_held
    calls: list[int] = []

    def dies(self: ModelMonitor, closed: Any, held: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:  # in the judge: its second hand-over
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, closed, held)

    monkeypatch.setattr(ModelMonitor, "judge_held", dies)
    err = _replay_in_thread(recording, tmp_path / "out")
    assert isinstance(err, ReplayError)
    assert "judging process was stopped by SIGKILL" in str(err)


def test_an_error_in_the_judge_is_raised_with_its_message(recording: dict[str, Path],
                                                          tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(res: Any, numbered: bool = False) -> Any:
        raise RuntimeError("the timeline broke")

    monkeypatch.setattr(replay_run, "timeline_record", broken)
    err = _replay_in_thread(recording, tmp_path / "out")
    assert isinstance(err, ReplayError)
    assert "judging the windows failed: RuntimeError: the timeline broke" in str(err)


def test_only_a_plain_replay_without_cohort_rules_judges_apart(recording: dict[str, Path],
                                                              tmp_path: Path) -> None:
    from driftwatch.policy.loader import load_policy
    from driftwatch.replay.run import build_monitor

    m = build_monitor(load_policy(POLICY), reference=recording["reference"])
    plain = {"reader_process": True, "executes": False, "hooked": False}
    assert judges_apart(m, wanted=True, **plain)
    assert not judges_apart(m, wanted=False, **plain)
    notes: list[str] = []
    for why, flag in (("--execute", "executes"), ("caller reads", "hooked")):
        assert not judges_apart(m, wanted=True, note=notes.append, **{**plain, flag: True})
        assert why in notes[-1]
    assert not judges_apart(m, wanted=True, note=notes.append,
                            **{**plain, "reader_process": False})
    assert "--reader thread" in notes[-1]
    assert not judges_apart(m, wanted=None, note=notes.append,  # auto: quietly in the loop
                            **{**plain, "executes": True})
    assert len(notes) == 3
    text = POLICY.read_text().replace(
        "  - detector: approval_rate\n",
        "  - detector: cohort_bad_rate_gap\n    thresholds: {mild: 0.03}\n"
        "  - detector: approval_rate\n", 1)
    path = tmp_path / "cohorts.yaml"
    path.write_text(text)
    with_cohorts = build_monitor(load_policy(path), reference=recording["reference"])
    assert with_cohorts.judges_cohorts
    assert not judges_apart(with_cohorts, wanted=True, note=notes.append, **plain)
    assert "cohort_* rules" in notes[-1]


def test_the_judge_option_picks_where_windows_are_judged(
        recording: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        starts: list[int]) -> None:
    def cli(out: Path, *extra: str) -> tuple[int, str, str]:
        return run_cli(["replay", "-c", str(CONNECTOR), "-p", str(POLICY), "-i",
                        str(recording["predictions"]), str(recording["outcomes"]),
                        "--reference", str(recording["reference"]), "-o", str(out),
                        "--no-report", "-q", *extra], capsys)

    timelines = []
    for judge, n in (("loop", 0), ("process", 1)):
        code, _, err = cli(tmp_path / judge, "--reader", "process", "--judge", judge)
        assert code == 0, err
        assert len(starts) == n
        timelines.append((tmp_path / judge / "timeline.jsonl").read_bytes())
    assert timelines[0] == timelines[1]
    # asked for where it cannot be: judged in the loop, and the user is told why
    code, _, err = cli(tmp_path / "thread", "--reader", "thread", "--judge", "process")
    assert code == 0, err
    assert len(starts) == 1
    assert "judged in the loop's process" in err and "--reader thread" in err
    assert (tmp_path / "thread" / "timeline.jsonl").read_bytes() == timelines[0]


def test_a_judge_whose_loop_is_gone_ends_on_its_own(recording: dict[str, Path]) -> None:
    """The loop's end of the pipe closing (its process gone, or stopped) ends the judge:
    it says why where the loop can still read it and exits, rather than wait."""
    from driftwatch.connectors.handover import receive
    from driftwatch.policy.loader import load_policy
    from driftwatch.replay.run import build_monitor

    m = build_monitor(load_policy(POLICY), reference=recording["reference"])
    judge = JudgeProcess(m, lambda results: None, lambda: [])
    judge.start()
    os.close(judge._to)  # what the loop's process ending does to its end
    kind, why = receive(judge._back)
    assert kind == "error" and why.startswith("EOFError"), why
    judge._proc.join(timeout=30)
    assert judge._proc.exitcode == 0
    judge._to = os.open(os.devnull, os.O_WRONLY)  # for close(), which lets go of both ends
    judge.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auto judges apart on Linux")
def test_auto_judges_apart_where_windows_are_dense(recording: dict[str, Path], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge process pays where windows close every thousand events or so; with sparser
    windows (or time panes, whose rate is unknown ahead) auto judges in the loop, and a
    caller may still ask for the process."""
    import driftwatch.replay.judge_process as jp
    from driftwatch.policy.loader import load_policy
    from driftwatch.replay.run import build_monitor

    monkeypatch.setattr(jp, "usable_cores", lambda: 2)
    plain = {"reader_process": True, "executes": False, "hooked": False}

    def monitor(policy: Path) -> ModelMonitor:
        return build_monitor(load_policy(policy), reference=recording["reference"])

    dense = monitor(POLICY)  # panes of 1,000 events
    assert dense.spec.kind == "count" and dense.spec.pane_size == 1000
    assert judges_apart(dense, wanted=None, **plain)
    sparse_path = tmp_path / "sparse.yaml"
    sparse_path.write_text(POLICY.read_text().replace(
        "pane: 1000              # events per pane", f"pane: {jp.DENSE_PANE + 1}"))
    sparse = monitor(sparse_path)
    assert sparse.spec.pane_size == jp.DENSE_PANE + 1
    timed = monitor(_time_policy(tmp_path))
    for m in (sparse, timed):
        assert not judges_apart(m, wanted=None, **plain)
        assert judges_apart(m, wanted=True, **plain)
    monkeypatch.setattr(jp, "usable_cores", lambda: 1)  # one core: nothing to gain
    assert not judges_apart(dense, wanted=None, **plain)
