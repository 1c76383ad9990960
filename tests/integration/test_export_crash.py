"""SIGKILL between recording an online update and exporting its window: after the restart
the export holds exactly the rows of the decision's window.

A first process records the action with 500 labelled rows in its buffer and dies at the
executor's ``recorded`` crash point (``DRIFTWATCH_CRASH_AT``), before the export. The
restarted process holds an older checkpoint's buffer (300 rows): its scheduler pass must
wait rather than export those; then the buffer reads past the window (900 rows) and the
same decision is made again, which writes the export: the decision's 500 rows.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]

DRIVER = r"""
import json, sys
from pathlib import Path
import numpy as np
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.clock import SystemClock
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.schema import FeatureSchema

state, phase = Path(sys.argv[1]), sys.argv[2]
buf = LabelledBuffer(FeatureSchema(numeric=("income",)), capacity=2000)

def feed(start, n):
    x = np.arange(start, start + n, dtype=float).reshape(n, 1)
    buf.add(numeric=x, categorical=np.zeros((n, 0), np.int32), label=np.ones(n),
            score=np.full(n, 0.5))

clock = SystemClock()
ex = ActionExecutor(Outbox(state, clock=clock), None, None, clock, buffer=buf)
decision = Decision("credit", 7, 0.0, Tier.MILD, Tier.MILD, action="online_update",
                    action_settings={"type": "online_update", "opt_in": True})
if phase == "decide":
    feed(1, 500)
    ex.submit(decision, {})  # dies at "recorded"
    raise SystemExit("the crash point was not reached")
feed(1, 300)  # restored from the checkpoint before the window
(rec,) = ex.run_pending()
waited = {"state": rec.state.value, "note": rec.note,
          "export": ex.outbox.step_result(rec.id, "export")}
feed(301, 600)  # read again past the window, and on
ex.submit(decision, {})
print(json.dumps({"waited": waited, "export": ex.outbox.step_result(rec.id, "export")}))
"""


def _run(state: Path, phase: str, crash_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DRIFTWATCH_CRASH_AT"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    if crash_at:
        env["DRIFTWATCH_CRASH_AT"] = crash_at
    return subprocess.run([sys.executable, "-c", DRIVER, str(state), phase], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_an_export_interrupted_by_sigkill_holds_its_windows_rows(tmp_path: Path):
    state = tmp_path / "state"
    first = _run(state, "decide", "recorded")
    assert first.returncode == -signal.SIGKILL, first.stderr[-3000:]

    second = _run(state, "resume", None)
    assert second.returncode == 0, second.stderr[-3000:]
    got = json.loads(second.stdout.strip().splitlines()[-1])
    assert got["waited"]["state"] == "pending" and got["waited"]["export"] is None
    assert "waiting" in got["waited"]["note"]
    export = got["export"]
    assert (export["rows"], export["seq_from"], export["seq_to"]) == (500, 1, 500)
    rows = pd.read_parquet(export["path"])
    assert rows["income"].tolist() == [float(i) for i in range(1, 501)]
    assert sorted(p.name for p in Path(export["path"]).parent.iterdir()) == ["window.parquet"]
