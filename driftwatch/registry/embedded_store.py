"""The embedded MLflow store (``<state>/mlflow.db``), created whole or not at all.

MLflow builds a new SQLite store in place, table by table and migration by migration; a
process killed in the middle leaves a file that MLflow can neither use nor build again.
:func:`ensure_store` builds it under a temporary name beside the final one and renames it
into place once it is complete (a rename is atomic), so ``mlflow.db`` is always either
absent or whole. Temporary files of a creation that was killed are removed on the next call.

A ``mlflow.db`` left incomplete by an older driftwatch (not at MLflow's schema head, or
missing tables) is rebuilt when it holds no data, the old file kept beside it as
``mlflow.db.incomplete``; one that holds runs, models or experiments is refused with a
:class:`~driftwatch.errors.StateError` that says what to do, never overwritten.

>>> import tempfile, pathlib
>>> db = pathlib.Path(tempfile.mkdtemp()) / "mlflow.db"
>>> _ = db.write_bytes(b"")            # what a kill before the first table leaves
>>> inspect_store(db)
StoreCheck(complete=False, rows=0, why='no MLflow tables')
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftwatch.durable import fsync_dir
from driftwatch.errors import StateError
from driftwatch.procs import pid_exists

__all__ = ["StoreCheck", "create_store", "ensure_store", "inspect_store"]

log = logging.getLogger(__name__)

_CREATING = ".creating-"
#: tables whose rows are a user's data (the default experiment 0 is not)
_DATA = {"runs": "", "registered_models": "", "model_versions": "",
         "experiments": " WHERE experiment_id != 0", "logged_models": ""}


@dataclass(frozen=True)
class StoreCheck:
    """What :func:`inspect_store` found: complete, and how many rows of data it holds."""

    complete: bool
    rows: int
    why: str = ""


@functools.cache  # alembic reads every migration script to find it
def _head_revision() -> str:
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())


@functools.cache
def _expected_tables() -> frozenset[str]:
    from mlflow.store.db.utils import Base  # importing utils registers every ORM table

    return frozenset(Base.metadata.tables)


def inspect_store(db: Path, *, head: str | None = None,
                  tables: set[str] | None = None) -> StoreCheck:
    """Read ``db`` (read-only) and say whether it is a complete store at MLflow's head."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return StoreCheck(False, 0, f"cannot open: {exc}")
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = 0
        for table, where in _DATA.items():
            if table in names:
                rows += int(con.execute(f"SELECT COUNT(*) FROM {table}{where}").fetchone()[0])
        if not names - {"alembic_version"}:
            return StoreCheck(False, rows, "no MLflow tables")
        version = None
        if "alembic_version" in names:
            found = con.execute("SELECT version_num FROM alembic_version").fetchone()
            version = found[0] if found else None
    except sqlite3.DatabaseError as exc:  # not a database at all (a torn first page)
        return StoreCheck(False, 0, f"unreadable: {exc}")
    finally:
        con.close()
    want = head if head is not None else _head_revision()
    if version != want:
        return StoreCheck(False, rows, f"schema version {version} (MLflow expects {want})")
    missing = (tables if tables is not None else _expected_tables()) - names
    if missing:
        return StoreCheck(False, rows, f"missing tables: {', '.join(sorted(missing))}")
    return StoreCheck(True, rows)


def create_store(path: Path, artifact_root: Path, *, durable: bool = True) -> None:
    """Build a complete MLflow store at ``path`` (MLflow's own tables and migrations).

    ``durable=False`` (for a temporary file that is fsynced whole and renamed afterwards)
    skips SQLite's fsync per migration and keeps its journal in memory: half the time, and
    a crash only loses a file that was going to be thrown away."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    target = str(path.absolute())

    def fast(dbapi_conn: Any, _record: Any) -> None:
        if not isinstance(dbapi_conn, sqlite3.Connection):
            return
        files = [row[2] for row in dbapi_conn.execute("PRAGMA database_list")]
        if target in files:
            dbapi_conn.execute("PRAGMA synchronous=OFF")
            dbapi_conn.execute("PRAGMA journal_mode=MEMORY")

    if not durable:
        event.listen(Engine, "connect", fast)
    try:
        store = SqlAlchemyStore(f"sqlite:///{path.as_posix()}", artifact_root.as_uri())
        store.engine.dispose()
    finally:
        if not durable:
            event.remove(Engine, "connect", fast)


def ensure_store(db: str | Path, *, artifact_root: str | Path | None = None) -> Path:
    """Make ``db`` a complete MLflow store (see module doc); returns its path."""
    db = Path(db).absolute()
    root = Path(artifact_root).absolute() if artifact_root else db.parent / "mlruns"
    db.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(db)
    if db.exists():
        _recover(db)
        check = inspect_store(db)
        if check.complete:
            return db
        if check.rows:
            raise StateError(
                f"{db}: the MLflow store is incomplete ({check.why}) but holds {check.rows} "
                "rows of runs, models or experiments; it is left as it is. Back it up, then "
                f"run `mlflow db upgrade sqlite:///{db}`, or move it away to start afresh")
        aside = db.with_name(db.name + ".incomplete")
        for suffix in ("", "-journal", "-wal", "-shm"):  # a journal left beside the new
            old = db.with_name(db.name + suffix)         # file would be "rolled back" into it
            if old.exists():
                os.replace(old, aside.with_name(aside.name + suffix))
        log.warning("%s was incomplete (%s) and held no data: rebuilt, the old file kept as "
                    "%s", db, check.why, aside.name)
    tmp = db.with_name(f"{db.name}{_CREATING}{os.getpid()}")
    _unlink(tmp)
    create_store(tmp, root, durable=False)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, db)
    fsync_dir(db.parent)
    return db


def _recover(db: Path) -> None:
    """SQLite's own crash recovery: opening the file read-write rolls back a hot journal
    that a killed writer left, so what is inspected is the last committed state."""
    try:
        con = sqlite3.connect(db, timeout=5.0)
    except sqlite3.Error:
        return
    try:
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        pass  # not a database (a torn first page): inspect_store says so
    finally:
        con.close()


def _remove_leftovers(db: Path) -> None:
    """Temporary stores (and their journals) of creations whose process is gone."""
    for p in db.parent.glob(f"{db.name}{_CREATING}*"):
        pid = p.name.removeprefix(f"{db.name}{_CREATING}").split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and pid_exists(int(pid)):
            continue  # another process is creating it right now
        _unlink(p)


def _unlink(p: Path) -> None:
    for q in (p, p.with_name(p.name + "-journal"), p.with_name(p.name + "-wal"),
              p.with_name(p.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            q.unlink()

