"""Durable renames: after ``os.replace`` the new name is on disk only once its folder is
fsynced too (POSIX; a crash may otherwise bring back the old name).

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as d:
...     (Path(d) / "x.tmp").write_text("1")
...     os.replace(Path(d) / "x.tmp", Path(d) / "x")
...     fsync_dir(Path(d))
...     (Path(d) / "x").read_text()
1
'1'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_dir"]


def fsync_dir(path: Path) -> None:
    """Flush ``path``'s entries (the names a rename or a create wrote) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
