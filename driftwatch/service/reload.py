"""Policy hot reload in the daemon: every refused edit is logged and counted.

:class:`~driftwatch.policy.watcher.PolicyWatcher` decides; this module reports. A refused
edit adds one to ``driftwatch_policy_reload_errors_total{model}`` and logs one error line
that names the file and the reason, whatever the edit held; a valid one adds to
``driftwatch_policy_reloads_total``. :func:`refresh_model` also reads the reference again
when the edit changed how it is read (the ``model.reference`` file, the ``reference:`` block,
the bins): the profile comes with the policy, and an edit the reference cannot be read with
is refused like a bad one.

>>> import logging, pathlib, tempfile
>>> from prometheus_client import CollectorRegistry
>>> from driftwatch.metrics import Metrics
>>> from driftwatch.policy.watcher import MINIMAL, PolicyWatcher
>>> f = pathlib.Path(tempfile.mkdtemp()) / "p.yaml"; _ = f.write_text(MINIMAL)
>>> w, m = PolicyWatcher(f), Metrics(CollectorRegistry())
>>> _ = f.write_bytes(b"\\xff\\xfe" + MINIMAL.encode("utf-16-le"))
>>> refresh_policy("credit", w, m) is None
True
>>> m["policy_reload_errors_total"].labels(model="credit")._value.get()
1.0
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from driftwatch.errors import DriftwatchError, PolicyError
from driftwatch.metrics import Metrics
from driftwatch.policy.schema import Policy
from driftwatch.policy.watcher import PolicyWatcher
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["ReferenceFor", "refresh_model", "refresh_policy"]

#: The reference profile an edited policy reads (None: the running one stays); raises a
#: :class:`~driftwatch.errors.DriftwatchError` when the reference cannot be read so.
ReferenceFor = Callable[[Policy], ReferenceProfile | None]

log = logging.getLogger("driftwatch.service")


def refresh_policy(model: str, watcher: PolicyWatcher, metrics: Metrics) -> Policy | None:
    """The edited policy of ``model`` when it is valid; None when unchanged or refused."""
    got = refresh_model(model, watcher, metrics)
    return got[0] if got is not None else None


def refresh_model(
    model: str, watcher: PolicyWatcher, metrics: Metrics, reference: ReferenceFor | None = None,
) -> tuple[Policy, ReferenceProfile | None] | None:
    """The edited policy of ``model`` and the reference profile it reads (None: the
    running profile stays) when the edit is valid; None when unchanged or refused."""
    errors = watcher.errors
    running = watcher.policy
    policy = watcher.check()
    profile = None
    if policy is not None and reference is not None:
        try:
            profile = reference(policy)
        except DriftwatchError as exc:  # the edit reads the reference otherwise, and cannot
            watcher.reject(PolicyError(
                f"the edited policy cannot read the reference: {exc}", file=str(watcher.path)),
                running)
            policy = None
    if watcher.errors > errors:
        metrics["policy_reload_errors_total"].labels(model=model).inc()
        log.error("%s: policy edit refused, the running policy is kept:\n%s",
                  model, watcher.last_error)
    if policy is not None:
        metrics["policy_reloads_total"].labels(model=model).inc()
        log.info("%s: policy %s reloaded; it applies from the next window", model,
                 watcher.path)
        if profile is not None:
            log.info("%s: the reloaded policy reads the reference otherwise (%s); adopting "
                     "it", model, profile.fingerprint)
    return (policy, profile) if policy is not None else None
