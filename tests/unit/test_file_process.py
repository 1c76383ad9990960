"""A replay read in a child process (the files decoded beside the loop) gives what a
replay read in the loop's own process gives: the same timeline, dead letters and
summary; and a reading error in the child is raised in the loop with its message."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource
from driftwatch.connectors.file_process import MIN_PROCESS_BYTES, ProcessSource, reads_in_process
from driftwatch.errors import DriftwatchError, SourceError
from driftwatch.replay import replay
from driftwatch.testing.credit import credit_schema
from driftwatch.testing.generator import CreditStream, write_scenario

from ._cli import run_cli
from ._forked_recording import CONNECTOR, POLICY, write_recording
from .test_file_read_ahead import _files, _polls, _same
from .test_file_read_ahead import stream as stream  # the fixture, shared

pytestmark = pytest.mark.skipif(not reads_in_process(total_bytes=0, wanted=True),
                                reason="needs the fork start method")


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_recording(tmp_path_factory.mktemp("rec"))


def _run(paths: dict[str, Path], out: Path, *, read_process: bool) -> dict[str, bytes]:
    replay(CONNECTOR, [paths["predictions"], paths["outcomes"]], out, policy=POLICY,
           reference=paths["reference"], progress=False, report=False, batch_size=700,
           read_process=read_process)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("elapsed_s", None)
    for key in [k for k in summary if "second" in k or k.endswith("_s")]:
        summary.pop(key)
    return {"timeline": (out / "timeline.jsonl").read_bytes(),
            "dead_letter": (out / "dead_letter.jsonl").read_bytes(),
            "summary": json.dumps(summary, sort_keys=True).encode()}


def test_a_child_process_reads_the_same_polls(recording: dict[str, Path],
                                              tmp_path: Path) -> None:
    here = _run(recording, tmp_path / "here", read_process=False)
    child = _run(recording, tmp_path / "child", read_process=True)
    assert here["timeline"].count(b"\n") >= 3
    assert here["dead_letter"].count(b"\n") == 4
    assert child == here


def test_a_reading_error_in_the_child_is_raised_with_its_message(tmp_path: Path) -> None:
    paths = write_scenario("demo", tmp_path / "rec", n_events=1_000, days=5,
                           reference_rows=1_000, compress=False)
    # a gzip file cut short: the error comes once the reader gets that far
    data = gzip.compress(paths["predictions"].read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    messages = []
    for read_process in (False, True):
        with pytest.raises(DriftwatchError) as err:
            replay(CONNECTOR, [cut, paths["outcomes"]], tmp_path / str(read_process),
                   policy=POLICY, reference=paths["reference"], progress=False,
                   report=False, batch_size=200, read_process=read_process)
        messages.append((type(err.value).__name__, str(err.value)))
    assert messages[0] == messages[1]


def test_small_recordings_are_read_in_the_loops_process() -> None:
    assert not reads_in_process(total_bytes=MIN_PROCESS_BYTES - 1, wanted=None)
    assert not reads_in_process(total_bytes=10 * MIN_PROCESS_BYTES, wanted=False)
    assert reads_in_process(total_bytes=0, wanted=True)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 700), size=st.integers(1, 900), cut=st.integers(0, 900),
       bad_every=st.integers(5, 400))
def test_the_child_hands_out_the_polls_of_the_loops_own_read(
    tmp_path_factory: pytest.TempPathFactory, stream: CreditStream, batch: int, size: int,
    cut: int, bad_every: int,
) -> None:
    c = _files(tmp_path_factory.mktemp("pr"), stream, cut, bad_every)
    plain = _polls(FileSource(c, credit_schema(), batch_size=batch, read_ahead=False), [size])
    child = ProcessSource(FileSource(c, credit_schema(), batch_size=batch))
    try:
        _same(plain, _polls(child, [size]))  # type: ignore[arg-type]
        assert child.positions == plain[-1].positions
    finally:
        child.close()


def test_closing_before_the_end_stops_the_child(tmp_path: Path, stream: CreditStream) -> None:
    child = ProcessSource(FileSource(_files(tmp_path, stream, 400, 50), credit_schema(),
                                     batch_size=20))
    assert child.poll(20) is not None
    assert [p.name for p in multiprocessing.active_children()] == ["driftwatch-read"]
    child.close()
    assert multiprocessing.active_children() == []
    assert child.poll(20) is None


def test_the_reader_option_picks_where_files_are_read(
        recording: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    start = ProcessSource._start
    monkeypatch.setattr(ProcessSource, "_start",
                        lambda self, limit: (started.append(limit), start(self, limit)))
    timelines = []
    for reader in ("thread", "process"):
        out = tmp_path / reader
        code, said, err = run_cli(
            ["replay", "-c", str(CONNECTOR), "-p", str(POLICY), "-i",
             str(recording["predictions"]), str(recording["outcomes"]), "--reference",
             str(recording["reference"]), "-o", str(out), "--no-report", "-q",
             "--reader", reader], capsys)
        assert code == 0, err
        assert "4 bad records" in said, said
        timelines.append((out / "timeline.jsonl").read_bytes())
        assert len(started) == (reader == "process")  # a small recording: only when asked
    assert timelines[0] == timelines[1]


def test_a_forked_reader_has_the_json_scanner_from_its_first_block(
        recording: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay loads the scanner's loops while it reads the reference, and the fork
    waits for them: forked without them, the child loaded them itself and decoded its
    first blocks on the slower path meanwhile (and a child forked mid-load would inherit
    the loader as a thread that no longer runs, never getting them)."""
    import driftwatch.connectors.file_process as fp
    import driftwatch.connectors.jsonscan as js
    from driftwatch.numba_setup import LoadedLater, numba_enabled

    if not numba_enabled():
        pytest.skip("no compiled loops to load: numba is off")
    monkeypatch.setattr(js, "_LOOPS", LoadedLater("JSON scanner", js._load))  # not loaded
    said = tmp_path / "child.txt"
    serve = fp._serve

    def noting(source: FileSource, out: object, limit: int) -> None:
        said.write_text(f"{js.scanner_settled()} {js._LOOPS.get() is not None}")
        serve(source, out, limit)

    monkeypatch.setattr(fp, "_serve", noting)
    _run(recording, tmp_path / "child", read_process=True)
    assert said.read_text() == "True True"


def test_start_forks_the_reader_before_the_first_poll(tmp_path: Path,
                                                      stream: CreditStream) -> None:
    c = _files(tmp_path, stream, 400, 50)
    plain = _polls(FileSource(c, credit_schema(), batch_size=20, read_ahead=False), [20])
    child = ProcessSource(FileSource(c, credit_schema(), batch_size=20))
    try:
        assert multiprocessing.active_children() == []
        child.start(20)
        first = multiprocessing.active_children()
        assert [p.name for p in first] == ["driftwatch-read"]
        child.start(20)  # started already: no second reader
        assert multiprocessing.active_children() == first
        _same(plain, _polls(child, [20]))  # type: ignore[arg-type]
    finally:
        child.close()


def test_a_child_stopped_by_a_signal_is_reported_by_name(tmp_path: Path,
                                                         stream: CreditStream) -> None:
    """The child's end of the pipe closes with it: the loop's read ends at once and says
    how the child ended, rather than wait for a poll that never comes."""
    child = ProcessSource(FileSource(_files(tmp_path, stream, 400, 50), credit_schema(),
                                     batch_size=2))
    try:
        assert child.poll(2) is not None
        os.kill(child._proc.pid, signal.SIGKILL)
        with pytest.raises(SourceError, match="stopped by SIGKILL before the end"):
            while child.poll(2) is not None:
                pass
    finally:
        child.close()


def test_a_child_whose_loop_is_gone_ends(tmp_path: Path, stream: CreditStream) -> None:
    """Nobody reads the pipe any more (the loop's process died): the child's next write
    fails and it ends, rather than wait on a full pipe for ever."""
    child = ProcessSource(FileSource(_files(tmp_path, stream, 400, 50), credit_schema(),
                                     batch_size=2))
    try:
        assert child.poll(2) is not None
        proc = child._proc
        os.close(child._fd)  # as the loop's death would close it
        child._fd = os.open(os.devnull, os.O_RDONLY)  # for close() to close
        proc.join(timeout=30)
        assert proc.exitcode == 1
    finally:
        child.close()
