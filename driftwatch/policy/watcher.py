"""Hot reload: pick up an edited policy file, keep the running one if the edit is bad.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); f = d / "p.yaml"
>>> _ = f.write_text(MINIMAL)
>>> w = PolicyWatcher(f)
>>> w.check() is None                      # nothing changed
True
>>> _ = f.write_text(MINIMAL.replace("pane: 500", "pane: [oops"))
>>> w.check() is None, w.errors, w.policy.window.pane   # bad edit: old policy kept
(True, 1, 500)
>>> _ = f.write_text(MINIMAL.replace("pane: 500", "pane: 800"))
>>> w.check().window.pane, w.reloads
(800, 1)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from driftwatch.errors import ConfigError, PolicyError
from driftwatch.policy.loader import load_policy_bytes
from driftwatch.policy.schema import Policy
from driftwatch.yamlio import read_capped

__all__ = ["MINIMAL", "PolicyWatcher"]

#: The smallest valid policy (used in examples and tests).
MINIMAL = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: minimal}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 500}
signals:
  - detector: psi
    thresholds: {mild: 0.1, moderate: 0.25, severe: 0.5}
"""


class PolicyWatcher:
    """Reloads ``path`` when its modification time, size or content hash changes.

    The first load happens in the constructor and raises if the file is invalid (a
    daemon must not start without a policy). Later, :meth:`check` returns the new
    policy after a valid edit, or None; a bad edit keeps the running policy, counts
    ``errors`` and keeps the message in ``last_error``. Whatever the edit holds (bytes
    that are not text, a file too large, an alias bomb, an unreadable or vanished file)
    :meth:`check` never raises. The file is read once per change, under the size cap.
    The scheduler calls :meth:`check` on its own timer; nothing here reads the clock.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.errors = 0
        self.reloads = 0
        self.last_error: PolicyError | None = None
        self._stamp = self._stat()
        try:
            data = read_capped(self.path)
        except ConfigError as exc:
            raise exc.recast(PolicyError) from None
        self._digest: str | None = hashlib.sha256(data).hexdigest()
        self.policy: Policy = load_policy_bytes(data, file=str(self.path))

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def check(self) -> Policy | None:
        """The new policy if the file changed and is valid; otherwise None."""
        stamp = self._stat()
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        try:
            data = read_capped(self.path)
        except ConfigError as exc:  # vanished, unreadable, too large
            self._digest = None
            return self._refuse(exc.recast(PolicyError))
        digest = hashlib.sha256(data).hexdigest()
        if digest == self._digest:
            return None  # touched, not changed
        self._digest = digest
        try:
            policy = load_policy_bytes(data, file=str(self.path))
        except PolicyError as exc:
            return self._refuse(exc)
        except Exception as exc:  # a bug in a check must not stop the daemon
            return self._refuse(PolicyError(
                f"internal error while checking the policy ({type(exc).__name__}: {exc}); "
                "the edit is refused", file=str(self.path)))
        self.policy = policy
        self.last_error = None
        self.reloads += 1
        return policy

    def reject(self, exc: PolicyError, running: Policy) -> None:
        """Refuse an edit :meth:`check` took but its user cannot apply (the daemon cannot
        read its reference with it): ``running`` stays the policy, as for a bad edit, and
        the same content is not tried again until the file changes."""
        self.policy = running
        self.reloads -= 1
        self._refuse(exc)

    def _refuse(self, exc: PolicyError) -> None:
        self.errors += 1
        self.last_error = exc
        return None
