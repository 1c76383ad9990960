"""Run one job attempt and record how it ended: ``python jobrunner.py EXIT_FILE -- ARGV...``.

The local backend starts this script (standard library only) as the leader of a new process
group. It starts ARGV as its child in the same group, with the same environment, working
directory and output, waits for it and writes the child's exit status to EXIT_FILE
atomically, so that a pool restarted in the meantime still learns the outcome. A negative
status means the child was killed by that signal; 127 (126) that ARGV[0] could not be found
(run). The runner catches SIGTERM, SIGINT and SIGHUP without acting on them: sent to the
group they reach the child, which decides; SIGKILL to the group ends both.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from types import FrameType

__all__ = ["main"]


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: jobrunner.py EXIT_FILE -- ARGV...", file=sys.stderr)
        return 2
    exit_file, argv = args[0], args[2:]
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        # A Python handler (not SIG_IGN) so that the child starts with default handling.
        signal.signal(sig, _let_child_decide)
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        print(f"driftwatch: cannot start {argv[0]!r}: {exc}", file=sys.stderr, flush=True)
        code = 126 if isinstance(exc, PermissionError) else 127
    else:
        code = child.wait()
    _record(exit_file, code)
    return 0


def _let_child_decide(signum: int, frame: FrameType | None) -> None:
    """The signal went to the whole group; the child's own handling decides the outcome."""


def _record(path: str, code: int) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="ascii") as out:
        out.write(f"{code}\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
