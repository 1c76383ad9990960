"""Training data for actions, written to Parquet in the action's folder.

An action that learns fixes its data when it is recorded: the labelled rows in the buffer at
that moment go to ``window.parquet``, so a resumed action learns exactly what the first
attempt would have. A retraining job gets ``training.parquet``: the reference dataset and
the window, with an ``origin`` column saying which is which. Files are written to a
temporary name and renamed, so a reader never sees half a file.

>>> import tempfile, pathlib
>>> import numpy as np, pandas as pd
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> pd.DataFrame({"x": [1.0], "label": [1.0]}).to_parquet(d / "ref.parquet")
>>> window = pd.DataFrame({"x": [2.0, 3.0], "label": [0.0, 1.0], "seq": [1, 2]})
>>> write_parquet(window, d / "window.parquet")["rows"]
2
>>> info = export_training(d / "window.parquet", d / "ref.parquet", d / "training.parquet")
>>> pd.read_parquet(d / "training.parquet")["origin"].tolist()
['reference', 'window', 'window']
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from driftwatch.actions.context import ActionEnv
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.records import ActionRecord
from driftwatch.actions.steps import StepRunner
from driftwatch.errors import ActionError
from driftwatch.windows.profile import read_reference_table

__all__ = ["ensure_export", "export_training", "export_window", "read_window", "write_parquet"]

# the run loop exports at submit while the action thread may resume the same action: one
# export at a time, and the second finds the first's result
_EXPORTING = threading.Lock()


def write_parquet(df: pd.DataFrame, path: str | Path) -> dict[str, Any]:
    """Write ``df`` atomically (temporary file, fsync, rename); returns rows and path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    df.to_parquet(tmp, index=False)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    tmp.replace(p)
    return {"rows": len(df), "path": str(p)}


def export_window(buffer: LabelledBuffer, path: str | Path) -> dict[str, Any]:
    """The buffer's rows now, oldest first, with their ``seq`` range."""
    frame = buffer.frame()
    info = write_parquet(frame, path)
    info["seq_from"] = int(frame["seq"].min()) if len(frame) else 0
    info["seq_to"] = int(buffer.seq)
    return info


def ensure_export(action: ActionRecord, steps: StepRunner, env: ActionEnv) -> dict[str, Any] | None:
    """The action's exported window (step ``export``): the one written at submit, or, when
    the process died before that, the buffer as it is now. None without a buffer."""
    with _EXPORTING:
        done = steps.result("export")
        if done is not None or env.buffer is None:
            return done
        buffer = env.buffer
        path = env.action_dir(action.id) / "window.parquet"
        return steps.run("export", lambda: export_window(buffer, path))


def read_window(path: str | Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the exported window {path}: {exc}") from exc


def export_training(
    window: str | Path | None, reference: str | Path | None, path: str | Path
) -> dict[str, Any]:
    """Reference rows then window rows in one Parquet file, marked by ``origin``."""
    parts = []
    counts = {"reference_rows": 0, "window_rows": 0}
    if reference:
        ref = read_reference_table(reference)
        parts.append(ref.assign(origin="reference"))
        counts["reference_rows"] = len(ref)
    if window and Path(window).exists():
        win = read_window(window).drop(columns=["seq"], errors="ignore")
        if "decision" in win.columns and pd.api.types.is_numeric_dtype(win["decision"]):
            names = {1.0: "approve", 0.0: "decline"}
            win["decision"] = win["decision"].map(names).astype(object)
        parts.append(win.assign(origin="window"))
        counts["window_rows"] = len(win)
    if not parts:
        raise ActionError("no training data: neither a reference dataset nor a labelled window")
    frame = pd.concat(parts, ignore_index=True, sort=False)
    # one dtype per column: Parquet refuses a column mixing strings and numbers
    for col in frame.columns:
        if frame[col].dtype == object:
            frame[col] = frame[col].map(lambda v: v if v is None or v != v else str(v))
    return {**write_parquet(frame, path), **counts}
