"""Reference profiles kept between replays of the same reference.

A data scientist replays a recording again and again while tuning a policy's thresholds;
each replay read the reference table and binned it anew (about 0.15 s for 30,000 rows,
seconds for millions). :func:`cached_profile` keeps the profile it builds in the replay's
cache folder (where the calibrated levels are kept: ``--levels-cache``), and reads it
back on the next replay that would build the very same one.

"The very same one" is decided by a key over everything a profile is built from: the
reference file's bytes (a SHA-256 of them, not its name or time), the policy's
``reference:`` columns and bin settings, the connector's feature types, missing values,
text formats and score scale, and the source of this package (a driftwatch that bins
otherwise builds its own). Anything else in the policy (thresholds, windows, actions)
leaves the key alone. A saved profile (``.json``, ``.json.gz``) is read as it is, never
cached. The cache is a convenience: a file it cannot read is built again, one it cannot
write is not kept, and neither stops the replay.

>>> import tempfile, pandas as pd
>>> from driftwatch.actions.reference import ReferenceReader
>>> with tempfile.TemporaryDirectory() as d:
...     table = Path(d, "ref.csv")
...     pd.DataFrame({"x": range(100), "score": 0.5, "label": 0}).to_csv(table, index=False)
...     first = cached_profile(ReferenceReader(), table, Path(d, "cache"))
...     again = cached_profile(ReferenceReader(), table, Path(d, "cache"))
...     (first.fingerprint == again.fingerprint, len(list(Path(d, "cache").iterdir())))
(True, 1)
"""

from __future__ import annotations

import functools
import hashlib
import logging
from pathlib import Path
from typing import Any

import orjson

from driftwatch.actions.reference import ReferenceReader, is_saved_profile
from driftwatch.policy.levels import reference_settings
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["cached_profile", "profile_key"]

log = logging.getLogger(__name__)

#: Bumped when what the key covers changes.
_FORMAT = 1


@functools.cache
def _code() -> str:
    """A hash of this package's source: a changed driftwatch keys its own profiles."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _missing(missing: Any) -> Any:
    if missing is None:
        return None
    return {"default": [repr(v) for v in missing.default],
            "by_feature": {k: [repr(v) for v in vs]
                           for k, vs in sorted(missing.by_feature.items())}}


def profile_key(reader: ReferenceReader, path: Path) -> str:
    """The key of the profile ``reader`` builds from the table at ``path`` (see the
    module docstring); reading the file may raise :class:`OSError`."""
    spec = {
        "format": _FORMAT,
        "code": _code(),
        "file": _file(path),
        "suffix": "".join(path.suffixes).lower(),  # how the bytes are read
        "settings": reference_settings(reader.policy),
        "kinds": sorted((reader.kinds or {}).items()),
        "missing": _missing(reader.missing),
        "formats": sorted(reader.formats.items()),
        "score_scale": repr(reader.score_scale),
    }
    return hashlib.sha256(orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def cached_profile(reader: ReferenceReader, path: Path, folder: Path | None
                   ) -> ReferenceProfile:
    """The profile ``reader`` builds from ``path``: read back from ``folder`` where a
    replay built it before, else built and kept there (``folder`` None: built)."""
    if folder is None or is_saved_profile(path):
        return reader.profile(path)
    try:
        key = profile_key(reader, path)
    except OSError:  # the build says what is wrong with the file
        return reader.profile(path)
    kept = folder / f"profile-{key}.json.gz"
    if kept.is_file():
        try:
            return ReferenceProfile.load(kept)
        except Exception as exc:  # a damaged or foreign file: built again, replaced
            log.debug("reference profile %s unreadable (%s): built again", kept, exc)
    profile = reader.profile(path)
    _keep(profile, kept)
    return profile


def _keep(profile: ReferenceProfile, kept: Path) -> None:
    """Write ``profile`` to ``kept`` (atomically, as :meth:`ReferenceProfile.save`
    writes), or not at all where the folder refuses."""
    try:
        profile.save(kept)
    except OSError as exc:
        log.debug("reference profile not kept in %s (%s)", kept.parent, exc)
