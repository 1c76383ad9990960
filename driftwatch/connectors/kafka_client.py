"""Glue around kafka-python clients that the library does not offer itself."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from typing import Any

from driftwatch.errors import SourceError

__all__ = ["build_client", "connect_client", "is_connected", "topic_hint"]

log = logging.getLogger(__name__)

#: kafka-python's errors for brokers that never answered (its class names: the module is
#: imported only where the ``kafka`` extra is installed)
_UNREACHABLE = frozenset({"KafkaTimeoutError", "NoBrokersAvailable", "KafkaConnectionError"})


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


def connect_client(cls: Any, **config: Any) -> Any:
    """:func:`build_client` for a one-shot command (``record``, ``produce``): a client that
    cannot reach the brokers, or that refuses its settings, is one :class:`SourceError`
    line naming the brokers, not kafka-python's traceback.

    >>> class Down:
    ...     def __init__(self, **config):
    ...         raise type("KafkaTimeoutError", (Exception,), {"__module__": "kafka.errors"})(
    ...             "Unable to bootstrap from ['127.0.0.1:1']")
    >>> try:
    ...     connect_client(Down, bootstrap_servers=["127.0.0.1:1"])
    ... except SourceError as exc:
    ...     print(str(exc).split(": is")[0])
    cannot reach Kafka at 127.0.0.1:1 (KafkaTimeoutError: Unable to bootstrap from ['127.0.0.1:1'])
    """
    try:
        return build_client(cls, **config)
    except Exception as exc:
        if not type(exc).__module__.startswith("kafka"):
            raise  # not the client's own refusal: a bug of ours keeps its traceback
        servers = config.get("bootstrap_servers")
        where = ",".join(servers) if isinstance(servers, list | tuple) else str(servers)
        name = type(exc).__name__
        what = str(exc) if str(exc).startswith(name) else f"{name}: {exc}"
        if name in _UNREACHABLE:
            raise SourceError(f"cannot reach Kafka at {where} ({what}): is the broker up, and "
                              "is this its address (host:port of a listener, as clients see "
                              "it)?") from None
        raise SourceError(f"the Kafka client for {where} refused its settings ({what})"
                          ) from None


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
