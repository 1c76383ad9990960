"""The reference profiles a model was judged against, kept in the state folder by its checkpoint.

A checkpoint names the profile its sketches were cut on by fingerprint only. A start
builds the configured reference file's profile; after a promotion the monitor judged on
the champion's profile from MLflow instead, which the file does not give back. So every
profile the monitor adopts is written here, by fingerprint (``<fingerprint>.json``),
before a checkpoint can name it, and ``champion.json`` says which champion's profile the
daemon adopted from the registry (and which one it still waits for, when MLflow failed
to load it). A restart restores the checkpoint on the profile it names and then judges on
the adopted champion's profile, even while MLflow is down.

>>> import tempfile
>>> from pathlib import Path
>>> store = ProfileStore(Path(tempfile.mkdtemp()))
>>> store.champion() is None
True
>>> store.adopted("2", "ab12")
>>> store.pending("3", since=10.0, attempts=1, error="down")
>>> c = store.champion()
>>> (c.version, c.fingerprint, c.pending["version"])
('2', 'ab12', '3')
>>> store.adopted("3", "cd34")  # the wait is over
>>> store.champion().pending is None
True
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from driftwatch.durable import fsync_dir
from driftwatch.errors import DriftwatchError
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["AdoptedChampion", "ProfileStore"]

_CHAMPION = "champion.json"
#: profiles kept besides the ones a live checkpoint may name (the newest ones)
_KEEP = 8


@dataclass(frozen=True)
class AdoptedChampion:
    """What ``champion.json`` says: the champion ``version`` whose profile (``fingerprint``)
    the monitor judges on (None: none adopted yet, the reference file's profile), and the
    champion whose profile is still awaited (``pending``: version, since, attempts, error)."""

    version: str | None
    fingerprint: str | None
    pending: dict[str, Any] | None = None


class ProfileStore:
    """One model's folder of profiles and its ``champion.json`` (see the module doc).
    Writes are atomic and durable (file, then folder fsynced); callable from any thread."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()

    # -- profiles -----------------------------------------------------------------------------
    def save(self, profile: ReferenceProfile) -> None:
        """Keep ``profile`` (once: its name is its fingerprint)."""
        path = self.folder / f"{profile.fingerprint}.json"
        if path.exists():
            return
        self._write(path, profile.to_json())
        self._prune(keep=profile.fingerprint)

    def load(self, fingerprint: str) -> ReferenceProfile | None:
        """The kept profile of that fingerprint; None when none is (or it cannot be read)."""
        path = self.folder / f"{fingerprint}.json"
        try:
            profile = ReferenceProfile.load(path)
        except (DriftwatchError, ValueError, KeyError):
            return None
        return profile if profile.fingerprint == fingerprint else None

    # -- the adopted champion -----------------------------------------------------------------
    def champion(self) -> AdoptedChampion | None:
        """What ``champion.json`` says; None when the daemon never adopted a champion's
        profile from the registry (or the file cannot be read)."""
        try:
            d = orjson.loads((self.folder / _CHAMPION).read_bytes())
            return AdoptedChampion(d.get("version"), d.get("fingerprint"), d.get("pending"))
        except (OSError, orjson.JSONDecodeError, AttributeError):
            return None

    def adopted(self, version: str, fingerprint: str) -> None:
        """Champion ``version``'s profile reached the monitor (its wait, if any, is over)."""
        self._set_champion({"version": version, "fingerprint": fingerprint, "pending": None})

    def pending(self, version: str, *, since: float, attempts: int, error: str) -> None:
        """Champion ``version``'s profile could not be loaded yet: the monitor keeps the one
        it has, and a restart goes on waiting for this one."""
        before = self.champion()
        self._set_champion({
            "version": before.version if before else None,
            "fingerprint": before.fingerprint if before else None,
            "pending": {"version": version, "since": since, "attempts": attempts,
                        "error": error}})

    def settled(self) -> None:
        """No champion's profile is awaited any more."""
        before = self.champion()
        if before is not None and before.pending is not None:
            self._set_champion({"version": before.version, "fingerprint": before.fingerprint,
                                "pending": None})

    # -- files --------------------------------------------------------------------------------
    def _set_champion(self, d: dict[str, Any]) -> None:
        with self._lock:
            self._write(self.folder / _CHAMPION,
                        orjson.dumps(d, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))

    def _write(self, path: Path, data: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(self.folder)

    def _prune(self, keep: str) -> None:
        """Drop the oldest profiles past :data:`_KEEP`; never the adopted champion's nor
        ``keep`` (a checkpoint names one of the newest: the monitor's, or the one before)."""
        champion = self.champion()
        spared = {keep, champion.fingerprint if champion else None}
        kept = sorted((p for p in self.folder.glob("*.json") if p.name != _CHAMPION),
                      key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for p in kept[_KEEP:]:
            if p.stem not in spared:
                p.unlink(missing_ok=True)
