"""Policy hot reload in the daemon: every refused edit is logged and counted.

:class:`~driftwatch.policy.watcher.PolicyWatcher` decides; this module reports. A refused
edit adds one to ``driftwatch_policy_reload_errors_total{model}`` and logs one error line
that names the file and the reason, whatever the edit held; a valid one adds to
``driftwatch_policy_reloads_total``.

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

from driftwatch.metrics import Metrics
from driftwatch.policy.schema import Policy
from driftwatch.policy.watcher import PolicyWatcher

__all__ = ["refresh_policy"]

log = logging.getLogger("driftwatch.service")


def refresh_policy(model: str, watcher: PolicyWatcher, metrics: Metrics) -> Policy | None:
    """The edited policy of ``model`` when it is valid; None when unchanged or refused."""
    errors = watcher.errors
    policy = watcher.check()
    if watcher.errors > errors:
        metrics["policy_reload_errors_total"].labels(model=model).inc()
        log.error("%s: policy edit refused, the running policy is kept:\n%s",
                  model, watcher.last_error)
    if policy is not None:
        metrics["policy_reloads_total"].labels(model=model).inc()
        log.info("%s: policy %s reloaded; it applies from the next window", model,
                 watcher.path)
    return policy
