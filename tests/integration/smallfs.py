"""A small tmpfs to put a daemon's state folder on, to fill up and free again.

Tried in order: a plain ``mount -t tmpfs`` (root), then an unprivileged user and mount
namespace (``unshare --user --map-root-user --mount``) held open by a sleeping process,
which the daemon and every file operation of the test then enter with ``nsenter``. If
neither works the test fails and says why: it never skips.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["SmallFs", "small_fs"]

FILLER = "filler.bin"
_FILL = """
import errno, os, sys
path = sys.argv[1]
with open(path, "ab", buffering=0) as fh:
    block = bytes(1 << 16)
    while True:
        try:
            fh.write(block)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            break
    while True:  # the last few bytes
        try:
            fh.write(b"\\0" * 512)
        except OSError:
            break
"""


class SmallFs:
    """``root`` is the mounted folder; ``prefix`` runs a command where it is mounted."""

    def __init__(self, root: Path, prefix: tuple[str, ...], holder: subprocess.Popen | None):
        self.root = root
        self.prefix = prefix
        self._holder = holder

    @property
    def mode(self) -> str:
        return "mount" if not self.prefix else "user namespace"

    def run(self, *argv: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*self.prefix, *argv], capture_output=True, timeout=60)

    def read_bytes(self, path: Path) -> bytes:
        if not self.prefix:
            return Path(path).read_bytes()
        done = self.run("cat", str(path))
        if done.returncode != 0:
            raise FileNotFoundError(errno.ENOENT, done.stderr.decode(errors="replace"), str(path))
        return done.stdout

    def fill(self) -> None:
        """Write a file until the folder has no room left."""
        done = self.run(sys.executable, "-c", _FILL, str(self.root / FILLER))
        assert done.returncode == 0, done.stderr.decode(errors="replace")

    def free(self) -> None:
        done = self.run("rm", "-f", str(self.root / FILLER))
        assert done.returncode == 0, done.stderr.decode(errors="replace")

    def close(self) -> None:
        if self._holder is not None:
            self._holder.kill()
            self._holder.wait(30)
        else:
            subprocess.run(["umount", "-l", str(self.root)], capture_output=True, timeout=60)


def _plain(root: Path, size: str) -> SmallFs | str:
    if shutil.which("mount") is None:
        return "no mount command"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(root)],
                          capture_output=True, timeout=60)
    if done.returncode != 0:
        return f"mount: {done.stderr.decode(errors='replace').strip()}"
    return SmallFs(root, (), None)


def _namespace(root: Path, size: str) -> SmallFs | str:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return "no unshare or nsenter command"
    script = (f"mount -t tmpfs -o size={size} tmpfs '{root}' && echo mounted && "
              "exec sleep 3600")
    holder = subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                               script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert holder.stdout is not None
    line = holder.stdout.readline()
    if line.strip() != b"mounted":
        holder.kill()
        _, err = holder.communicate(timeout=30)
        return f"unshare: {err.decode(errors='replace').strip()}"
    prefix = ("nsenter", f"--target={holder.pid}", "--user", "--mount")
    return SmallFs(root, prefix, holder)


@contextlib.contextmanager
def small_fs(root: Path, size: str = "48m") -> Iterator[SmallFs]:
    """A tmpfs of ``size`` at ``root`` (see the module doc); ``DRIFTWATCH_TEST_SMALLFS=
    namespace`` skips the plain mount, to try the unprivileged way as root."""
    root.mkdir(parents=True, exist_ok=True)
    tries = [_namespace] if os.environ.get("DRIFTWATCH_TEST_SMALLFS") == "namespace" \
        else [_plain, _namespace]
    why = []
    for make in tries:
        got = make(root, size)
        if isinstance(got, SmallFs):
            try:
                yield got
            finally:
                got.close()
            return
        why.append(got)
    pytest.fail("cannot mount a small tmpfs for the state folder, neither as root nor in an "
                "unprivileged user namespace (allow user namespaces, e.g. sysctl "
                "kernel.unprivileged_userns_clone=1, or run as root): " + "; ".join(why))
