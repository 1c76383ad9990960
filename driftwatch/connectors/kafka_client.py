"""Glue around kafka-python clients that the library does not offer itself."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["build_client", "is_connected", "topic_hint"]

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
    if config.get("allow_auto_create_topics") is False:
        _no_auto_create(client)
    return client


def _no_auto_create(client: Any) -> None:
    """Make ``allow_auto_create_topics=False`` hold: kafka-python 3.0 keeps it in the client's
    config but builds the cluster metadata, which sends the metadata requests, with its own
    default (True), so subscribing to a misspelt topic creates it on a broker that allows
    auto-creation (Kafka's default)."""
    cluster = getattr(getattr(getattr(client, "_client", None), "_manager", None),
                      "cluster", None)  # fmt: skip
    conf = getattr(cluster, "config", None)
    if isinstance(conf, dict):
        conf["allow_auto_create_topics"] = False


def is_connected(client: Any) -> bool:
    """True when the client holds at least one live broker connection (its own metric)."""
    try:
        metrics = client.metrics()
    except Exception:  # a closed or broken client is simply not connected
        return False
    return float(metrics.get("consumer-metrics", {}).get("connection-count", 0)) > 0


def topic_hint(topic: str, on_cluster: Iterable[str]) -> str:
    """``topic`` followed by the nearest name the cluster has, for an error message.

    >>> topic_hint("gmsc.prediction", ["gmsc.predictions", "gmsc.outcomes"])
    'gmsc.prediction (did you mean gmsc.predictions?)'
    """
    near = difflib.get_close_matches(topic, sorted(on_cluster), n=1)
    return f"{topic} (did you mean {near[0]}?)" if near else topic
