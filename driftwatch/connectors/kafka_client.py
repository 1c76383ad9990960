"""Glue around kafka-python clients that the library does not offer itself."""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["build_client", "is_connected"]

log = logging.getLogger(__name__)


def build_client(cls: Any, **config: Any) -> Any:
    """Construct a kafka-python client; if it cannot bootstrap, stop its IO thread first.

    kafka-python 3.0 starts a background IO thread before it bootstraps in ``__init__``;
    a failed constructor would leak that thread on every retry.
    """
    client = cls.__new__(cls)
    try:
        client.__init__(**config)
    except BaseException:
        inner = getattr(client, "_client", None)
        if inner is not None:
            try:
                inner.close()
            except Exception:  # best effort: the original error matters more
                log.debug("closing a half-built kafka client failed", exc_info=True)
        raise
    return client


def is_connected(client: Any) -> bool:
    """True when the client holds at least one live broker connection (its own metric)."""
    try:
        metrics = client.metrics()
    except Exception:  # a closed or broken client is simply not connected
        return False
    return float(metrics.get("consumer-metrics", {}).get("connection-count", 0)) > 0
