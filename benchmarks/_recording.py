"""Where the benchmarks keep a generated recording of a given size.

The default size (1M predictions) lives in the data folder itself; any other size in its
own ``events-N`` folder beside it. A run of another size (``--events 200000``) then never
writes over the default recording, which another run may be reading at that moment (a
replay maps its files: one cut short under it stops with SIGBUS).

>>> from pathlib import Path
>>> sized(Path("d"), 1_000_000), sized(Path("d"), 200_000)
(PosixPath('d'), PosixPath('d/events-200000'))
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DEFAULT_EVENTS", "sized"]

#: The recording's size the benchmarks' figures are quoted on
DEFAULT_EVENTS = 1_000_000


def sized(folder: Path, events: int) -> Path:
    """The folder holding the recording of ``events`` predictions under ``folder``."""
    return folder if events == DEFAULT_EVENTS else folder / f"events-{events}"
