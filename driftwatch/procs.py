"""Whether a process id names a running process (signal 0: nothing is sent).

>>> pid_exists(os.getpid())
True
"""

from __future__ import annotations

import os

__all__ = ["pid_exists"]


def pid_exists(pid: int) -> bool:
    """True while ``pid`` runs (also when it is another user's: we may not signal it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
