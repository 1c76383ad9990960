"""A full or read-only state folder: how faults are told apart, backoff, logging, metrics."""

from __future__ import annotations

import errno
import logging
import sqlite3

import pytest
from prometheus_client import CollectorRegistry

from driftwatch.clock import ManualClock
from driftwatch.errors import SourceError, StateError
from driftwatch.metrics import Metrics
from driftwatch.service.disk import StateDisk
from driftwatch.state import write_fault


def _chained(outer: Exception, inner: BaseException) -> Exception:
    try:
        raise outer from inner
    except Exception as exc:  # the point is the chain
        return exc


@pytest.mark.parametrize(("exc", "kind"), [
    (OSError(errno.ENOSPC, "No space left on device"), "full"),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), "full"),
    (OSError(errno.EROFS, "Read-only file system"), "read_only"),
    (PermissionError(errno.EACCES, "Permission denied"), "read_only"),
    (sqlite3.OperationalError("database or disk is full"), "full"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "read_only"),
    (OSError("IOError: No space left on device"), "full"),  # Arrow keeps no errno
    (_chained(StateError("checkpoint 3 not written"),
              sqlite3.OperationalError("database or disk is full")), "full"),
    (_chained(SourceError("cannot write dead letters"),
              OSError(errno.EROFS, "Read-only file system")), "read_only"),
    (OSError(errno.ENOENT, "No such file or directory"), None),
    (OSError(errno.ECONNREFUSED, "Connection refused"), None),
    (sqlite3.OperationalError("no such table: parts"), None),
    (ValueError("No space left on device"), None),  # words alone, from no writer, are not
    (StateError("checkpoint parts do not match the models"), None),
])
def test_write_faults_are_told_from_other_errors(exc, kind):
    assert write_fault(exc) == kind


def _disk(tmp_path, **kw):
    clock = ManualClock(100.0)
    reg = CollectorRegistry()
    disk = StateDisk(tmp_path, clock=clock, metrics=Metrics(reg), **kw)
    return disk, clock, reg


def test_retries_back_off_doubling_up_to_the_cap(tmp_path):
    disk, clock, _ = _disk(tmp_path, first_retry_s=1.0, max_retry_s=5.0)
    full = OSError(errno.ENOSPC, "No space left on device")
    assert disk.failed(full, where="timeline")
    waits = []
    for _ in range(5):
        waits.append(disk.seconds_to_retry())
        assert not disk.retry_due()
        clock.advance(waits[-1])
        assert disk.retry_due()
        disk.failed(full, where="probe")  # the retry failed too
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_one_log_line_per_change_and_the_failures_counted(tmp_path, caplog):
    disk, clock, reg = _disk(tmp_path)
    assert reg.get_sample_value("driftwatch_state_writable") == 1.0
    caplog.set_level(logging.DEBUG, logger="driftwatch.service.disk")
    ro = OSError(errno.EROFS, "Read-only file system")
    for _ in range(4):
        disk.failed(ro, where="checkpoint")
    assert reg.get_sample_value("driftwatch_state_writable") == 0.0
    assert reg.get_sample_value("driftwatch_state_write_failures_total",
                                {"reason": "read_only"}) == 4.0
    assert reg.get_sample_value("driftwatch_state_write_failures_total",
                                {"reason": "full"}) == 0.0
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 1 and "consumption paused" in loud[0].getMessage()
    clock.advance(30.0)
    disk.recovered()
    disk.recovered()  # already writable: nothing more to say
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage().split(";")[0] for r in loud][1:] == [
        "state folder writable again after 30s"]
    assert reg.get_sample_value("driftwatch_state_writable") == 1.0
    assert disk.readiness() == (True, None)


def test_readiness_names_the_reason_and_the_innermost_error(tmp_path):
    disk, _, _ = _disk(tmp_path)
    exc = _chained(StateError("checkpoint 7 not written"),
                   sqlite3.OperationalError("database or disk is full"))
    disk.failed(exc, where="checkpoint")
    assert disk.readiness() == (False, "state folder full: checkpoint: database or disk is full")


def test_other_errors_are_not_taken_for_a_disk_fault(tmp_path):
    disk, _, reg = _disk(tmp_path)
    assert not disk.failed(ValueError("bad batch"), where="timeline")
    assert disk.writable
    assert reg.get_sample_value("driftwatch_state_write_failures_total",
                                {"reason": "full"}) == 0.0


def test_a_probe_writes_and_removes_its_file(tmp_path):
    disk, _, _ = _disk(tmp_path, probe_bytes=4096)
    assert disk.probe()
    assert list(tmp_path.iterdir()) == []


def test_a_probe_the_disk_refuses_counts_as_a_failed_retry(tmp_path, monkeypatch):
    disk, clock, reg = _disk(tmp_path, first_retry_s=1.0)
    disk.failed(OSError(errno.ENOSPC, "No space left on device"), where="timeline")
    clock.advance(1.0)

    def refuse(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("driftwatch.service.disk.os.write", refuse)
    assert not disk.probe()
    assert disk.seconds_to_retry() == 2.0
    assert reg.get_sample_value("driftwatch_state_write_failures_total",
                                {"reason": "full"}) == 2.0
    assert list(tmp_path.iterdir()) == []  # no probe file left behind


def test_an_action_the_disk_refuses_waits_instead_of_failing(tmp_path, monkeypatch):
    from driftwatch.actions import executor as executor_module
    from driftwatch.actions.executor import ActionExecutor
    from driftwatch.actions.outbox import Outbox
    from driftwatch.actions.records import ActionState
    from driftwatch.policy.decision import Decision
    from driftwatch.policy.tiers import Tier

    box = Outbox(tmp_path, clock=ManualClock(0.0))
    ex = ActionExecutor(box, None, None, ManualClock(0.0), lock=False)
    action_id = ex.submit(Decision("m", 1, 0.0, Tier.MILD, Tier.MILD, action="alert"), {})

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setitem(executor_module.ACTIONS, "alert", full)
    with pytest.raises(OSError):  # to the service, which pauses
        ex.run_pending()
    assert box.get(action_id).state is ActionState.PENDING  # not failed: it runs later
