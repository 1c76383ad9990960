"""``python -m driftwatch``: the ``driftwatch`` command, where the environment's scripts
folder is not on ``PATH`` (or to pick the interpreter that runs it)."""

from __future__ import annotations

import sys

from driftwatch.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
