"""The daemon's timeline rotates into numbered segments, crash-safely, and is read back in
order: by a restart (cut back to its checkpoint), the gauges' view, the live reports and
``driftwatch report``."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from driftwatch.errors import ConfigError, StateError
from driftwatch.outputlog import OutputLog, iter_lines, segment_path, timeline_files
from driftwatch.report.inputs import load_run
from driftwatch.service.config import DEFAULT_CONFIG, parse_service_config
from driftwatch.service.live_reports import timeline_tail
from driftwatch.service.view import last_record


def _line(i: int, **extra) -> bytes:
    return orjson.dumps({"window_id": i, "tier": "none", **extra}) + b"\n"


def _names(path: Path) -> list[str]:
    return [p.name for p in timeline_files(path)]


def _ids(path: Path) -> list[int]:
    return [orjson.loads(x)["window_id"] for x in iter_lines(path)]


@pytest.fixture
def tl(tmp_path: Path) -> Path:
    return tmp_path / "timeline.jsonl"


def test_the_active_file_rotates_only_once_it_has_reached_its_size(tl) -> None:
    log = OutputLog(tl, max_bytes=3 * len(_line(0)))
    for i in range(2):
        log.write(_line(i))
    assert not log.rotate() and _names(tl) == ["timeline.jsonl"]
    log.write(_line(2))
    assert log.rotate()
    assert _names(tl) == ["timeline.1.jsonl", "timeline.jsonl"]
    assert segment_path(tl, 1).read_bytes() == b"".join(_line(i) for i in range(3))
    assert tl.stat().st_size == 0 and log.position() == (2, 0)
    log.write(_line(3))
    assert _ids(tl) == [0, 1, 2, 3]


def test_never_rotates_without_a_size(tl) -> None:
    log = OutputLog(tl, max_bytes=None)
    log.write(_line(0) * 1000)
    assert not log.rotate() and log.generation == 1


def test_a_crash_between_the_rename_and_the_new_file_loses_and_repeats_nothing(tl) -> None:
    # the checkpoint covered windows 0 and 1; window 2 was written, then the log was
    # renamed to its segment and the daemon died before it opened a new active file
    segment_path(tl, 1).write_bytes(_line(0) + _line(1) + _line(2))
    durable = (1, len(_line(0) + _line(1)))
    log = OutputLog(tl, max_bytes=10)
    assert log.generation == 2 and tl.exists()  # opening made the new active file
    log.restore(*durable)
    log.write(_line(2))  # read and written again after the restart
    assert _ids(tl) == [0, 1, 2]


def test_a_checkpoint_taken_at_the_rotation_keeps_the_whole_segment(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    log.write(_line(0) + _line(1))
    log.rotate()  # a capture rotates, then syncs: its checkpoint covers the segment
    durable = (log.generation, log.sync())
    log.write(_line(2))  # after the checkpoint, lost in the crash
    log.close()
    again = OutputLog(tl, max_bytes=1)
    again.restore(*durable)
    assert durable == (2, 0) and _ids(tl) == [0, 1]


def test_a_restart_cuts_back_across_rotations_and_a_crash_during_it_is_redone(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    log.write(_line(0))
    durable = (log.generation, log.sync())  # the checkpoint: window 0, generation 1
    log.write(_line(1))
    log.rotate()  # a later capture rotated; its checkpoint never became durable
    log.write(_line(2))
    log.rotate()
    log.write(_line(3) + b'{"window_id": 4')  # and a torn line at the crash
    log.close()
    assert _names(tl) == ["timeline.1.jsonl", "timeline.2.jsonl", "timeline.jsonl"]
    # a first restore dies after cutting the segment back (the later files still there)
    with segment_path(tl, 1).open("r+b") as fh:
        fh.truncate(durable[1])
    again = OutputLog(tl, max_bytes=1)
    again.restore(*durable)
    assert _ids(tl) == [0] and again.position() == (2, 0)
    again.write(_line(1))  # the events after the checkpoint are read again
    again.close()
    # and restoring the same checkpoint once more gives the same files
    third = OutputLog(tl, max_bytes=1)
    third.restore(*durable)
    third.write(_line(1))
    assert _ids(tl) == [0, 1]
    assert _names(tl) == ["timeline.1.jsonl", "timeline.jsonl"]


def test_a_checkpoint_whose_segment_is_gone_is_a_state_error(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    log.write(_line(0))
    log.rotate()
    log.write(_line(1))
    log.rotate()
    segment_path(tl, 1).unlink()
    with pytest.raises(StateError, match=r"generation 1 of the timeline.*segments \[2\]"):
        OutputLog(tl).restore(1, 5)
    with pytest.raises(StateError, match="generation 9"):
        OutputLog(tl).restore(9, 0)


def test_segments_past_the_cap_go_but_never_the_durable_checkpoint_s(tl) -> None:
    log = OutputLog(tl, max_bytes=1, keep=2)
    for i in range(5):
        log.write(_line(i))
        log.rotate()
    # no checkpoint became durable since the start (generation 1): all are kept, as a
    # restart may have to cut back into the oldest
    assert [p.name for p in timeline_files(tl)][:5] == [
        f"timeline.{n}.jsonl" for n in range(1, 6)]
    log.settle(4)  # a checkpoint ending in generation 4 is durable
    assert _names(tl) == ["timeline.4.jsonl", "timeline.5.jsonl", "timeline.jsonl"]
    log.write(_line(5))
    log.rotate()
    log.settle(7)
    assert _names(tl) == ["timeline.5.jsonl", "timeline.6.jsonl", "timeline.jsonl"]
    assert _ids(tl) == [4, 5]


def test_a_fresh_start_removes_every_segment(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    log.write(_line(0))
    log.rotate()
    log.write(_line(1))
    log.clear()
    assert _names(tl) == ["timeline.jsonl"] and log.position() == (1, 0)


def test_keep_below_one_is_refused(tl) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        OutputLog(tl, keep=0)


def test_the_last_record_is_found_across_a_rotation(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    log.write(_line(0) + _line(1))
    log.rotate()  # the active file is empty now: the last window is in the segment
    assert last_record(tl)["window_id"] == 1
    log.write(_line(0, cohort={"of": 0}))  # a cohort verdict is not a window
    assert last_record(tl)["window_id"] == 1
    log.write(_line(2))
    assert last_record(tl)["window_id"] == 2


def test_the_live_report_tail_reads_back_into_the_segments(tl) -> None:
    log = OutputLog(tl, max_bytes=2 * len(_line(0)))
    for i in range(7):
        log.write(_line(i))
        log.rotate()
    gen, end = log.generation, log.sync()
    assert gen == 4 and end == len(_line(6))
    got = [orjson.loads(x)["window_id"] for x in timeline_tail(tl, gen, end, 5)]
    assert got == [2, 3, 4, 5, 6]
    # a job taken before a rotation reads the file its generation became
    log.write(_line(7))
    log.write(_line(8))
    log.rotate()
    got = [orjson.loads(x)["window_id"] for x in timeline_tail(tl, gen, end, 3)]
    assert got == [4, 5, 6]


def test_report_reads_segments_then_the_active_file_and_may_keep_the_last(tl) -> None:
    log = OutputLog(tl, max_bytes=1)
    for i in range(4):
        log.write(_line(i, end_time=float(i), start_time=float(i), end=None))
        log.rotate() if i < 3 else None
    log.close()
    assert [r["window_id"] for r in load_run(tl.parent).records] == [0, 1, 2, 3]
    run = load_run(tl.parent, windows=2)
    assert [r["window_id"] for r in run.records] == [2, 3]
    assert any("the 2 before them" in w for w in run.warnings)
    tl.unlink()  # crashed right after a rename: the segments still make a run
    assert [r["window_id"] for r in load_run(tl.parent).records] == [0, 1, 2]


def test_the_rotation_settings_are_validated_like_the_others() -> None:
    cfg = parse_service_config(DEFAULT_CONFIG)
    assert (cfg.timeline.max_bytes, cfg.timeline.segments) == (256 << 20, 8)
    text = DEFAULT_CONFIG.replace("max_mib: 256", "max_mib: 0")
    with pytest.raises(ConfigError, match=r"d\.yaml:\d+:\d+: .*greater than or equal to 1"):
        parse_service_config(text, file="d.yaml")
    small = parse_service_config(DEFAULT_CONFIG.replace("max_mib: 256", "max_mib: 1")
                                 .replace("segments: 8 ", "segments: 3 "))
    assert (small.timeline.max_bytes, small.timeline.segments) == (1 << 20, 3)


class _Logged:
    """A runtime as a checkpoint round sees it, whose state rotates and syncs its log the
    way the daemon's models do."""

    def __init__(self, log: OutputLog) -> None:
        self.name, self.source, self.timeline = "m", None, log

    def state(self, capture):
        self.timeline.rotate()
        return {"positions": {"m:0": 1}, "timeline_bytes": self.timeline.sync(),
                "timeline_generation": self.timeline.generation}

    def commit(self, positions):
        return "ok", 1


def test_a_durable_checkpoint_lets_the_segments_before_it_go(tl) -> None:
    import threading

    from prometheus_client import CollectorRegistry

    from driftwatch.clock import ManualClock
    from driftwatch.metrics import Metrics
    from driftwatch.service.checkpoint import Checkpoints
    from driftwatch.state import CheckpointStore

    log = OutputLog(tl, max_bytes=1, keep=1)
    cps = Checkpoints(CheckpointStore(tl.parent / "cp"), [_Logged(log)], threading.RLock(),
                      Metrics(CollectorRegistry()), ManualClock())
    for i in range(3):
        log.write(_line(i))
        cps.due = True
        for _ in range(20):  # until this round's checkpoint is durable and committed
            cps.tick()
            cps.writer.wait(10)
            if cps.seq == i + 1:
                break
        cps.commit_durable()
    # each checkpoint rotated the log and, once durable, let the older segments go
    assert cps.seq == 3 and log.settled == 4
    assert _names(tl) == ["timeline.3.jsonl", "timeline.jsonl"]
    cps.close()
