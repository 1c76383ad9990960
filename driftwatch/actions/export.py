"""Training data for actions, written to Parquet in the action's folder.

An action that learns fixes its data when it is recorded: the labelled rows in the buffer at
that moment (their ``seq`` range is recorded with the action, :func:`window_rows`) go to
``window.parquet``, so a resumed action learns exactly what the first attempt would have.
Should the process die between recording the action and writing the file, the file is
written later from the same ``seq`` range: once the restored buffer has read that far
again (:class:`ExportPending` until then), and never from whatever the buffer holds at the
time. A retraining job gets ``training.parquet``: the reference dataset and the window,
with an ``origin`` column saying which is which.

Exports are idempotent: one lock per file in the process (two exports of one action never
run at once), a temporary name of its own for each writer, fsync and an atomic rename, so a
reader never sees half a file; a complete ``window.parquet`` of the same range already
there is reused, not written again.

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

import itertools
import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from driftwatch.actions.context import ActionEnv
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.records import ActionRecord
from driftwatch.actions.steps import StepRunner
from driftwatch.errors import ActionError
from driftwatch.windows.profile import read_reference_table

__all__ = [
    "ROWS_KEY",
    "ExportPending",
    "ensure_export",
    "export_training",
    "export_window",
    "read_window",
    "window_rows",
    "write_parquet",
]

#: The key of an action's context that records the labelled rows it learns from.
ROWS_KEY = "labelled_rows"
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
_TMP = itertools.count()

# the run loop exports at submit while the action thread may resume the same action: one
# export at a time, and the second finds the first's result
_EXPORTING = threading.Lock()


class ExportPending(ActionError):
    """The buffer has not read as far as the action's rows yet (after a restart): the
    action waits, it does not fail."""


def _lock_for(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(str(path.absolute()), threading.Lock())


def write_parquet(df: pd.DataFrame, path: str | Path,
                  metadata: dict[str, str] | None = None) -> dict[str, Any]:
    """Write ``df`` atomically (a temporary file of this writer's own, fsync, rename);
    returns rows and path. ``metadata`` goes into the file's key-value metadata."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f"{p.name}.{os.getpid()}-{threading.get_ident()}-{next(_TMP)}.tmp")
    try:
        if metadata:
            import pyarrow as pa

            table = pa.Table.from_pandas(df, preserve_index=False)
            meta = {**(table.schema.metadata or {}),
                    **{k.encode(): v.encode() for k, v in metadata.items()}}
            pq.write_table(table.replace_schema_metadata(meta), tmp)
        else:
            df.to_parquet(tmp, index=False)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)
    return {"rows": len(df), "path": str(p)}


def window_rows(buffer: LabelledBuffer) -> dict[str, int]:
    """The rows an action recorded now learns from: the buffer's, as a ``seq`` range.

    >>> import numpy as np
    >>> from driftwatch.schema import FeatureSchema
    >>> buf = LabelledBuffer(FeatureSchema(numeric=("x",)), capacity=3)
    >>> buf.add(numeric=np.ones((5, 1)), categorical=np.zeros((5, 0), np.int32),
    ...         label=np.ones(5), score=np.ones(5))
    >>> window_rows(buf)
    {'seq_from': 3, 'seq_to': 5}
    """
    return {"seq_from": int(buffer.seq) - len(buffer) + 1, "seq_to": int(buffer.seq)}


def _complete(path: Path, rows: dict[str, int]) -> dict[str, Any] | None:
    """The info of a finished export of ``rows`` at ``path``, or None."""
    try:
        meta = pq.read_metadata(path)
    except (OSError, ValueError):
        return None
    kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items()}
    if kv.get("driftwatch.seq_from") != str(rows["seq_from"]) \
            or kv.get("driftwatch.seq_to") != str(rows["seq_to"]):
        return None  # renamed into place only when complete: the range is all to check
    return {"rows": meta.num_rows, "path": str(path), **rows, "reused": True}


def export_window(buffer: LabelledBuffer, path: str | Path,
                  rows: dict[str, int] | None = None) -> dict[str, Any]:
    """The buffer's rows of ``rows`` (a :func:`window_rows` range; default: all it holds
    now), oldest first. A complete export of the same range at ``path`` is reused.

    Raises :class:`ExportPending` while the buffer has not reached the range's end; rows
    of the range it no longer holds are counted in ``missing_rows`` (never replaced by
    others)."""
    p = Path(path)
    with _lock_for(p):
        if rows is None:
            rows = window_rows(buffer)
        elif (found := _complete(p, rows)) is not None:
            return found
        if buffer.seq < rows["seq_to"]:
            raise ExportPending(
                f"the labelled buffer is at row {buffer.seq}, the action learns from rows "
                f"{rows['seq_from']}-{rows['seq_to']}: waiting for the daemon to read them "
                "again")
        frame = buffer.frame(after_seq=rows["seq_from"] - 1, last=None)
        frame = frame[frame["seq"] <= rows["seq_to"]].reset_index(drop=True)
        info = write_parquet(frame, p, {"driftwatch.seq_from": str(rows["seq_from"]),
                                        "driftwatch.seq_to": str(rows["seq_to"])})
        info.update(rows)
        missing = rows["seq_to"] - rows["seq_from"] + 1 - len(frame)
        if missing > 0:
            info["missing_rows"] = missing
        return info


def ensure_export(action: ActionRecord, steps: StepRunner, env: ActionEnv) -> dict[str, Any] | None:
    """The action's exported window (step ``export``): the one written at submit, or,
    when the process died before that, the rows recorded with the action, taken from
    the buffer once it holds them again. None without a buffer."""
    with _EXPORTING:
        done = steps.result("export")
        if done is not None or env.buffer is None:
            return done
        buffer = env.buffer
        rows = action.context.get(ROWS_KEY)
        if rows is not None and buffer.seq < rows["seq_to"]:  # not a step started for nothing
            raise ExportPending(f"the labelled buffer is at row {buffer.seq}, the action learns "
                                f"from rows {rows['seq_from']}-{rows['seq_to']}: waiting for the "
                                "daemon to read them again")
        path = env.action_dir(action.id) / "window.parquet"
        return steps.run("export", lambda: export_window(buffer, path, rows))


def read_window(path: str | Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the exported window {path}: {exc}") from exc


def export_training(
    window: str | Path | None, reference: str | Path | pd.DataFrame | None, path: str | Path
) -> dict[str, Any]:
    """Reference rows then window rows in one Parquet file, marked by ``origin``.

    ``reference`` is a table file, or its rows as the monitor reads them
    (:meth:`~driftwatch.actions.context.ActionEnv.reference_rows`: columns ``label``
    1 bad / 0 good, ``score`` P(bad), ``decision`` approve/decline, as the window's), which
    is what a retraining gets.
    """
    parts = []
    counts = {"reference_rows": 0, "window_rows": 0}
    if reference is not None and not (isinstance(reference, str) and not reference):
        ref = (reference if isinstance(reference, pd.DataFrame)
               else read_reference_table(reference))
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
