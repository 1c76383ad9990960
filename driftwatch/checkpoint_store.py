"""The checkpoint folder: parts, segments and manifests (layout: :mod:`driftwatch.state`).

>>> import tempfile, pathlib, numpy as np
>>> from driftwatch.statetree import Appended
>>> store = CheckpointStore(pathlib.Path(tempfile.mkdtemp()))
>>> rows = {"v": np.arange(5.0)}
>>> _ = store.save({"m": {"t": Appended("t1", 0, 5, 0, rows)}}, now=1.0)
>>> store.capture("m").durable("t1")
5
>>> more = Appended("t1", 2, 7, 5, {"v": np.array([5.0, 6.0])})  # rows 0, 1 fell out
>>> info = store.save({"m": {"t": more}}, now=2.0)
>>> info.written_bytes < info.size_bytes
True
>>> store.load().models["m"]["t"].columns["v"].tolist()
[2.0, 3.0, 4.0, 5.0, 6.0]
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from driftwatch.arrayfile import file_crc, read_arrays, write_arrays
from driftwatch.durable import fsync_dir
from driftwatch.errors import StateError
from driftwatch.state_legacy import legacy_max_seq, load_legacy, remove_legacy
from driftwatch.statetree import Appended, Capture, pack, unpack

__all__ = ["FORMAT", "Checkpoint", "CheckpointInfo", "CheckpointStore", "Staged"]

FORMAT = 3
#: Segments per table before they are merged into one (bounded files, bounded opens).
MAX_SEGMENTS = 16
#: Files written at once: their fsyncs overlap on the device (3x the rate of one by one).
WRITERS = 8
_MANIFEST = re.compile(r"^cp-(\d{8,})\.json$")
_Jobs = list[tuple[dict[str, Any], "Future[int]"]]


@dataclass(frozen=True)
class Checkpoint:
    """A restored checkpoint: ``models`` maps each model name to its saved state (each
    decoded on access)."""

    seq: int
    created: float
    models: Mapping[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    size_bytes: int = 0


@dataclass(frozen=True)
class CheckpointInfo:
    """What one ``save`` wrote: sequence number, bytes a restore reads (``size_bytes``),
    bytes written by this save (``written_bytes``), seconds it took."""

    seq: int
    size_bytes: int
    seconds: float
    written_bytes: int = 0


@dataclass(frozen=True)
class Staged:
    """One model's part on disk (fsynced), not yet named by a manifest."""

    model: str
    entry: dict[str, Any]
    written_bytes: int


def _entry_files(entry: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    yield entry["part"]
    for segs in entry["tables"].values():
        yield from segs



class _Parts(Mapping[str, Any]):
    """Model name -> state, read from its files when asked for (and not kept): one
    model's rows in memory at a time, no file held open."""

    def __init__(self, root: Path, entries: dict[str, dict[str, Any]]) -> None:
        self._root, self._entries = root, entries

    def __getitem__(self, name: str) -> Any:
        entry = self._entries[name]
        meta, arrays = read_arrays(self._root / entry["part"]["file"], verify=False)
        tables = {tid: _assemble(self._root, tid, entry["tables"][tid], *span)
                  for tid, span in meta["tables"].items()}
        return unpack(meta["tree"], arrays, tables)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _read_rows(root: Path, segs: list[dict[str, Any]],
               start: int | None = None) -> dict[str, np.ndarray]:
    """The rows of ``segs`` from row ``start`` on (all by default): views of the one
    buffer read where one segment holds them, else one copy of just those rows."""
    parts = []
    for s in segs:
        cols = read_arrays(root / s["file"], verify=False)[1]
        skip = max(0, start - s["start"]) if start is not None else 0
        parts.append({k: v[skip:] for k, v in cols.items()} if skip else cols)
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts]) if len(parts) > 1 else parts[0][k]
            for k in parts[0]}


def _assemble(root: Path, tid: str, segs: list[dict[str, Any]], start: int,
              stop: int) -> Appended:
    if start == stop:
        cols = {k: v[:0] for k, v in _read_rows(root, segs[-1:]).items()}
        return Appended(tid, start, stop, start, cols)
    if not segs or segs[0]["start"] > start or segs[-1]["stop"] != stop:
        raise StateError(f"table {tid}: segments do not cover rows [{start}, {stop})")
    segs = [s for s in segs if s["stop"] > start]
    return Appended(tid, start, stop, start, _read_rows(root, segs, start))


class CheckpointStore:
    """Checkpoints in one directory; keeps the last ``keep`` of them.

    ``timer`` measures how long a save takes (``time.perf_counter`` by default; it is a
    measurement, never a decision). ``now`` is the checkpoint's timestamp, from the
    caller's clock. ``legacy`` is the earlier format's file, read when the directory holds
    no checkpoint. :meth:`capture` is called by the thread that captures states,
    :meth:`stage` and :meth:`save` by the one that writes them.
    """

    def __init__(self, path: str | Path, *, keep: int = 2, timer: Any = time.perf_counter,
                 legacy: str | Path | None = None) -> None:
        self.path = Path(path)
        self.keep = max(1, int(keep))
        self.legacy = Path(legacy) if legacy is not None else None
        self._timer = timer
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._token, self._count = secrets.token_hex(4), itertools.count()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(f"{self.path}: cannot create the checkpoint folder ({exc})") \
                from exc
        if not self.path.is_dir():
            raise StateError(f"{self.path}: not a checkpoint folder")
        self._tables: dict[str, dict[str, list[dict[str, Any]]]] = {}  # of the newest durable
        self._kept: dict[int, set[str]] = {}  # manifest seq -> files it names
        seqs = self.manifest_seqs(self.path)
        legacy_seq = legacy_max_seq(self.legacy) if self.legacy is not None else 0
        self._seq = max([*seqs, legacy_seq, 0])
        fsync_dir(self.path.parent)

    @staticmethod
    def manifest_seqs(path: str | Path) -> list[int]:
        """Sequence numbers of the manifests in a checkpoint folder, newest first (their
        contents unchecked): a cheap look from outside the daemon."""
        p = Path(path)
        if not p.is_dir():
            return []
        return sorted((int(m.group(1)) for f in os.listdir(p) if (m := _MANIFEST.match(f))),
                      reverse=True)

    @property
    def seq(self) -> int:
        return self._seq

    def capture(self, model: str) -> Capture:
        """What the newest durable checkpoint holds of ``model``'s tables."""
        with self._lock:
            tables = self._tables.get(model, {})
            return Capture({tid: segs[-1]["stop"] for tid, segs in tables.items() if segs})

    # -- writing -------------------------------------------------------------------------
    def _name(self, ext: str) -> str:
        # a random token per store (a dead process's stray file never shares a name) and
        # a counter: urandom costs a millisecond a call on some machines
        return f"{self._seq + 1:08d}-{self._token}{next(self._count):x}.{ext}"

    def _put(self, jobs: _Jobs, ext: str, meta: Any,
             arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """Start writing one file on the store's writer threads; its record gets its size
        once :meth:`_finish` has waited for it."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(WRITERS, thread_name_prefix="driftwatch-cp")
            pool = self._pool
        rec = {"file": self._name(ext), "bytes": 0}
        jobs.append((rec, pool.submit(write_arrays, self.path / rec["file"], meta, arrays)))
        return rec

    def _finish(self, jobs: _Jobs) -> None:
        """Wait for every file started (each fsynced); the first failure is raised once
        none is still being written."""
        first: BaseException | None = None
        for rec, fut in jobs:
            try:
                rec["bytes"] = fut.result()
            except OSError as exc:
                if first is None:
                    first = StateError(f"{self.path / rec['file']}: not written ({exc})")
                    first.__cause__ = exc  # what write_fault reads: a full disk pauses
            except (TypeError, ValueError) as exc:
                first = first or exc
        if first is not None:
            raise first

    def _segment(self, t: Appended, held: list[dict[str, Any]],
                 jobs: _Jobs) -> list[dict[str, Any]]:
        """The segments of table ``t`` after this save (new rows written as one more)."""
        keep = [s for s in held if s["stop"] > t.start]
        if t.base > t.start and not (keep and keep[0]["start"] <= t.start
                                     and keep[-1]["stop"] == t.base):
            raise StateError(f"table {t.table}: rows [{t.start}, {t.base}) are not held")
        if t.base == t.start:
            keep = []
        if t.base < t.stop or not keep:
            if len(keep) + 1 > MAX_SEGMENTS:  # merge: held rows back from disk, once
                old = _read_rows(self.path, keep, t.start)
                cols = {k: np.concatenate((old[k], t.columns[k])) for k in t.columns}
                start, keep = t.start, []
            else:
                cols, start = t.columns, t.base
            seg = self._put(jobs, "seg", {"table": t.table, "start": start, "stop": t.stop},
                            cols)
            keep = [*keep, seg]
            seg.update(start=start, stop=t.stop)
        return keep

    def stage(self, model: str, state: Any) -> Staged:
        """Write one model's part and its new segments, several files at once, each
        fsynced; the checkpoint that names them is written by :meth:`save`."""
        packed = pack(state)
        with self._lock:
            held = dict(self._tables.get(model, {}))
        jobs: _Jobs = []
        try:
            tables = {t.table: self._segment(t, held.get(t.table, []), jobs)
                      for t in packed.tables}
            part = self._put(jobs, "part", {
                "model": model, "tree": packed.skeleton,
                "tables": {t.table: [t.start, t.stop] for t in packed.tables}}, packed.arrays)
        except BaseException:
            for _, fut in jobs:  # none left writing; this error is the one raised
                fut.exception()
            raise
        self._finish(jobs)
        written = sum(rec["bytes"] for rec, _ in jobs)
        return Staged(model, {"part": part, "tables": tables}, written)

    def save(self, models: Mapping[str, Any], *, now: float,
             meta: Mapping[str, Any] | None = None) -> CheckpointInfo:
        """Write a new checkpoint durably; older ones beyond ``keep`` are dropped with it.

        ``models`` maps model names to states or to :class:`Staged` parts."""
        t0 = self._timer()
        try:
            staged = [v if isinstance(v, Staged) else self.stage(str(k), v)
                      for k, v in models.items()]
            seq = self._seq + 1
            body = json.dumps({
                "format": FORMAT, "seq": seq, "created": float(now), "meta": dict(meta or {}),
                "models": {s.model: s.entry for s in staged}}, separators=(",", ":")).encode()
            fsync_dir(self.path)  # the files it names are in the folder, durably
            name = self.path / f"cp-{seq:08d}.json"
            tmp = name.with_suffix(".tmp")
            with open(tmp, "wb") as fh:
                fh.write(body + f"\n{zlib.crc32(body):08x}\n".encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, name)
            fsync_dir(self.path)
        except OSError as exc:
            raise StateError(f"{self.path}: checkpoint {self._seq + 1} not written ({exc})") \
                from exc
        self._seq = seq
        entries = {s.model: s.entry for s in staged}
        self._commit(seq, entries)
        size = sum(f["bytes"] for e in entries.values() for f in _entry_files(e))
        return CheckpointInfo(seq=seq, size_bytes=size, seconds=self._timer() - t0,
                              written_bytes=sum(s.written_bytes for s in staged))

    def _commit(self, seq: int, entries: Mapping[str, dict[str, Any]]) -> None:
        """``seq`` is the newest durable checkpoint: remember its tables, drop the old."""
        with self._lock:
            self._tables = {m: {tid: list(segs) for tid, segs in e["tables"].items()}
                            for m, e in entries.items()}
        self._kept[seq] = {f["file"] for e in entries.values() for f in _entry_files(e)}
        if self.legacy is not None:
            remove_legacy(self.legacy)
        self._collect()

    def _collect(self) -> None:
        """Delete manifests beyond ``keep`` and every file no kept manifest names."""
        seqs = self.manifest_seqs(self.path)
        for s in seqs[self.keep:]:
            (self.path / f"cp-{s:08d}.json").unlink(missing_ok=True)
            self._kept.pop(s, None)
        for s in seqs[: self.keep]:
            if s not in self._kept:
                got = self._manifest(s)
                self._kept[s] = ({f["file"] for e in got["models"].values()
                                  for f in _entry_files(e)} if got else set())
        named = set().union(*self._kept.values()) if self._kept else set()
        for f in os.listdir(self.path):
            if f.endswith((".part", ".seg", ".tmp")) and f not in named:
                (self.path / f).unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------
    def _manifest(self, seq: int) -> dict[str, Any] | None:
        try:
            raw = (self.path / f"cp-{seq:08d}.json").read_bytes()
            body, crc = raw.rstrip(b"\n").rsplit(b"\n", 1)
            if int(crc, 16) != zlib.crc32(body):
                return None
            got = json.loads(body)
        except (OSError, ValueError):
            return None
        return got if isinstance(got, dict) else None

    def _check(self, seq: int) -> tuple[dict[str, Any] | None, str]:
        """The manifest of ``seq`` once every file it names is checked (length and
        checksum, on a map of the file: the bytes are read once, into the page cache)."""
        got = self._manifest(seq)
        if got is None:
            return None, f"checkpoint {seq}: manifest damaged"
        if got.get("format") != FORMAT:
            return None, f"checkpoint {seq}: format {got.get('format')}, expected {FORMAT}"
        checked: set[str] = set()
        for model, e in got["models"].items():
            for f in _entry_files(e):
                if f["file"] in checked:
                    continue
                p = self.path / f["file"]
                try:
                    if p.stat().st_size != f["bytes"]:
                        return None, f"checkpoint {seq}: {f['file']} of {model!r} is damaged"
                    file_crc(p)
                except (OSError, StateError):
                    return None, f"checkpoint {seq}: {f['file']} of {model!r} is damaged"
                checked.add(f["file"])
        return got, ""

    def load(self) -> Checkpoint | None:
        """The newest intact checkpoint, or None when there is none.

        A checkpoint with a damaged file (length or checksum) is skipped for the one
        before; if every one is damaged that is a :class:`StateError`, never a silent
        fresh start.
        """
        problems = []
        for seq in self.manifest_seqs(self.path):
            got, problem = self._check(seq)
            if got is None:
                problems.append(problem)
                continue
            entries = got["models"]
            with self._lock:
                self._tables = {m: {t: list(s) for t, s in e["tables"].items()}
                                for m, e in entries.items()}
            size = sum(f["bytes"] for e in entries.values() for f in _entry_files(e))
            return Checkpoint(seq=seq, created=float(got["created"]),
                              models=_Parts(self.path, entries), meta=dict(got["meta"]),
                              size_bytes=size)
        if problems:
            raise StateError(f"{self.path}: no intact checkpoint ({'; '.join(problems)})")
        old = load_legacy(self.legacy) if self.legacy is not None else None
        if old is None:
            return None
        seq, created, parts, meta, size = old
        return Checkpoint(seq=seq, created=created, models=parts, meta=meta, size_bytes=size)

    def close(self) -> None:
        """Stop the writer threads (no file is held open between saves)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
