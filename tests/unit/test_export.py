"""Exports of an action's window: its own rows, once, whatever the buffer does meanwhile."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.export import ROWS_KEY, ExportPending, export_window, window_rows
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.actions.steps import StepRunner
from driftwatch.clock import ManualClock
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("income",))


def _feed(buf: LabelledBuffer, start: int, n: int) -> None:
    x = np.arange(start, start + n, dtype=float).reshape(n, 1)
    buf.add(numeric=x, categorical=np.zeros((n, 0), np.int32), label=np.ones(n),
            score=np.full(n, 0.5))


def _buffer(n: int, capacity: int = 1000) -> LabelledBuffer:
    buf = LabelledBuffer(SCHEMA, capacity=capacity)
    _feed(buf, 1, n)
    return buf


def _executor(tmp_path, buf):
    box = Outbox(tmp_path / "state", clock=ManualClock(0.0))
    # no registry: these tests stop at the export, before anything asks MLflow
    return ActionExecutor(box, None, None, ManualClock(0.0), buffer=buf, lock=False)


DECISION = Decision("credit", 7, 0.0, Tier.MILD, Tier.MILD, action="online_update",
                    action_settings={"type": "online_update", "opt_in": True})


def test_an_export_after_a_crash_holds_the_rows_of_its_own_window(tmp_path):
    """Recorded with 500 rows in the buffer; the process dies before the export; the
    restart's buffer is an older checkpoint's (300 rows), then reads on past the window
    (900 rows): the export is the 500 rows of the decision, not 300, not 900."""
    decided = _buffer(500)
    expected = decided.frame()
    box = Outbox(tmp_path / "state", clock=ManualClock(0.0))
    ex = ActionExecutor(box, None, None, ManualClock(0.0), buffer=decided, lock=False)
    ctx = {ROWS_KEY: window_rows(decided)}
    action_id, _ = box.record(DECISION, ctx)  # ... and the process died here

    restored = _buffer(300)  # the checkpoint before the window
    ex.set_buffer(restored)
    rec = box.get(action_id)
    with pytest.raises(ExportPending):
        _ensure(ex, rec)
    touched = ex.run_pending()  # waits, never exports the older buffer, never fails
    assert touched[0].state is ActionState.PENDING and "waiting" in touched[0].note
    assert box.step_result(action_id, "export") is None
    assert not (tmp_path / "state" / "actions" / f"{action_id:06d}" / "window.parquet").exists()

    _feed(restored, 301, 600)  # the replay passes the window and goes on
    ex.submit(DECISION, ctx)  # the same decision, made again: a no-op that exports
    done = box.step_result(action_id, "export")
    got = pd.read_parquet(done["path"])
    assert len(got) == 500 == done["rows"]
    pd.testing.assert_frame_equal(got, expected)
    assert (done["seq_from"], done["seq_to"]) == (1, 500)


def _ensure(ex, rec):
    from driftwatch.actions.export import ensure_export

    return ensure_export(rec, StepRunner(ex.outbox, rec.id), ex.env)


def test_submit_writes_the_window_at_once(tmp_path):
    buf = _buffer(120)
    ex = _executor(tmp_path, buf)
    action_id = ex.submit(DECISION, {})
    _feed(buf, 121, 50)  # later rows are not the action's
    done = ex.outbox.step_result(action_id, "export")
    assert pd.read_parquet(done["path"])["income"].tolist() == [float(i) for i in range(1, 121)]
    assert ex.outbox.get(action_id).context[ROWS_KEY] == {"seq_from": 1, "seq_to": 120}


def test_rows_the_ring_lost_are_counted_never_replaced(tmp_path):
    buf = _buffer(100, capacity=100)
    rows = window_rows(buf)
    _feed(buf, 101, 30)  # 30 of the action's oldest rows are gone
    info = export_window(buf, tmp_path / "window.parquet", rows)
    got = pd.read_parquet(tmp_path / "window.parquet")
    assert got["seq"].tolist() == list(range(31, 101))
    assert info["missing_rows"] == 30


def test_a_complete_export_of_the_same_rows_is_reused(tmp_path):
    buf = _buffer(50)
    rows = window_rows(buf)
    path = tmp_path / "window.parquet"
    first = export_window(buf, path, rows)
    stamp = path.stat().st_mtime_ns
    again = export_window(buf, path, rows)
    assert again["reused"] is True and "reused" not in first
    assert path.stat().st_mtime_ns == stamp
    # another range at the same path is written, not taken for the first one
    _feed(buf, 51, 10)
    other = export_window(buf, path, window_rows(buf))
    assert "reused" not in other and other["rows"] == 60


def test_two_exports_of_one_action_at_once_write_one_file_one_at_a_time(tmp_path, monkeypatch):
    import driftwatch.actions.export as export

    buf = _buffer(200)
    rows = window_rows(buf)
    path = tmp_path / "window.parquet"
    inside, most, temps = [0], [0], []
    real = export.write_parquet
    guard = threading.Lock()

    def watched(df, p, metadata=None):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            return real(df, p, metadata)
        finally:
            with guard:
                inside[0] -= 1

    real_replace = type(path).replace

    def seen_replace(self, target):
        temps.append(self.name)
        return real_replace(self, target)

    monkeypatch.setattr(export, "write_parquet", watched)
    monkeypatch.setattr(type(path), "replace", seen_replace)
    start = threading.Barrier(4)
    results = []

    def run():
        start.wait()
        results.append(export_window(buf, path, rows))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1  # never two writers at once
    assert len(temps) == 1  # written once; the other three reused it
    assert sum(1 for r in results if r.get("reused")) == 3
    assert len(pd.read_parquet(path)) == 200
    assert sorted(p.name for p in tmp_path.iterdir()) == ["window.parquet"]  # no temp left


def test_each_writer_has_a_temporary_name_of_its_own(tmp_path, monkeypatch):
    import driftwatch.actions.export as export

    names = []
    real = pd.DataFrame.to_parquet

    def spy(self, path, *a, **kw):
        names.append(str(path))
        return real(self, path, *a, **kw)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", spy)
    df = pd.DataFrame({"x": [1.0]})
    export.write_parquet(df, tmp_path / "w.parquet")
    export.write_parquet(df, tmp_path / "w.parquet")
    assert len(set(names)) == 2 and all(n.endswith(".tmp") for n in names)
