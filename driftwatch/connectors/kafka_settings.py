"""Where a Kafka source connects and what it reads: plain settings, no I/O.

Secrets never sit in a connector file: a password (SASL or TLS key) must be a ``${ENV_VAR}``
reference, expanded only when the client is built, and hidden from ``repr``. Any other string
setting may use ``${ENV_VAR}`` too.

>>> conn = KafkaConnection(
...     bootstrap_servers=("${DW_DOC_BROKER}",), security_protocol="SASL_SSL",
...     sasl_mechanism="SCRAM-SHA-512", sasl_username="monitor",
...     sasl_password="${DW_DOC_PASSWORD}")
>>> "s3cret" in repr(conn), "DW_DOC_PASSWORD" in repr(conn)
(False, False)
>>> env = {"DW_DOC_BROKER": "kafka-1:9093", "DW_DOC_PASSWORD": "s3cret"}
>>> cfg = conn.client_config(env)
>>> cfg["bootstrap_servers"], cfg["sasl_plain_password"]
(['kafka-1:9093'], 's3cret')
>>> KafkaConnection(bootstrap_servers=("b:9092",), sasl_password="hunter2")
Traceback (most recent call last):
...
driftwatch.errors.ConnectorError: sasl_password must be an ${ENV_VAR} reference, \
found a literal value
  at sasl_password
  hint: put the secret in an environment variable and write sasl_password: ${KAFKA_PASSWORD}
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from driftwatch.connectors.kafka_tuning import PAIRED, check_tuning
from driftwatch.errors import ConnectorError

__all__ = [
    "SECURITY_PROTOCOLS",
    "KafkaConnection",
    "KafkaSourceSettings",
    "KafkaTopic",
    "expand_env",
]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRETS = ("sasl_password", "ssl_password")


def expand_env(value: str, environ: Mapping[str, str] | None = None, *, key: str = "") -> str:
    """Replace each ``${NAME}`` with the environment variable's value.

    >>> expand_env("${A}:9092", {"A": "kafka"})
    'kafka:9092'
    >>> expand_env("${NOPE}", {}, key="bootstrap_servers")
    Traceback (most recent call last):
    ...
    driftwatch.errors.ConnectorError: environment variable NOPE is not set
      at bootstrap_servers
    """
    env = os.environ if environ is None else environ

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in env:
            raise ConnectorError(f"environment variable {name} is not set", path=key or None)
        return env[name]

    return _REF.sub(sub, value)


def _is_reference(value: str) -> bool:
    return _REF.fullmatch(value.strip()) is not None


@dataclass(frozen=True, repr=False)
class KafkaConnection:
    """How to reach the cluster: servers, group, identity and security."""

    bootstrap_servers: tuple[str, ...]
    group_id: str = "driftwatch"
    client_id: str = "driftwatch"
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)  # "${ENV}" only
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = field(default=None, repr=False)  # "${ENV}" only

    def __post_init__(self) -> None:
        servers = self.bootstrap_servers
        if isinstance(servers, str):
            servers = tuple(s.strip() for s in servers.split(",") if s.strip())
            object.__setattr__(self, "bootstrap_servers", servers)
        if not servers:
            raise ConnectorError(
                "bootstrap_servers needs at least one host:port", path="bootstrap_servers"
            )
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ConnectorError(
                f"security_protocol must be one of {', '.join(SECURITY_PROTOCOLS)}",
                found=repr(self.security_protocol),
                path="security_protocol",
            )
        if self.sasl_mechanism is not None and self.sasl_mechanism not in SASL_MECHANISMS:
            raise ConnectorError(
                f"sasl_mechanism must be one of {', '.join(SASL_MECHANISMS)}",
                found=repr(self.sasl_mechanism),
                path="sasl_mechanism",
            )
        if self.security_protocol.startswith("SASL") and self.sasl_mechanism is None:
            raise ConnectorError(
                f"security_protocol {self.security_protocol} needs sasl_mechanism",
                path="security_protocol",
            )
        for name in _SECRETS:
            value = getattr(self, name)
            if value is not None and not _is_reference(value):
                raise ConnectorError(
                    f"{name} must be an ${{ENV_VAR}} reference",
                    found="a literal value",  # never echo the secret itself
                    path=name,
                    hint=f"put the secret in an environment variable and write "
                    f"{name}: ${{KAFKA_PASSWORD}}",
                )

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            shown.append(f"{f.name}='***'" if f.name in _SECRETS else f"{f.name}={value!r}")
        return f"KafkaConnection({', '.join(shown)})"

    def address(self, environ: Mapping[str, str] | None = None) -> str:
        """The bootstrap servers as the client is given them, for a person to read: each
        ``${ENV}`` expanded (an unset one left as written; it is no secret).

        >>> KafkaConnection(("${KAFKA}", "b:9092")).address({"KAFKA": "kafka-1:9092"})
        'kafka-1:9092,b:9092'
        >>> KafkaConnection(("${KAFKA}",)).address({})
        '${KAFKA}'
        """
        env = os.environ if environ is None else environ
        return ",".join(_REF.sub(lambda m: env.get(m.group(1), m.group(0)), s)
                        for s in self.bootstrap_servers)

    def client_config(self, environ: Mapping[str, str] | None = None) -> dict[str, object]:
        """kafka-python keyword arguments, with every ``${ENV}`` expanded (do not log them)."""

        def x(key: str, value: str | None) -> str | None:
            return None if value is None else expand_env(value, environ, key=key)

        cfg: dict[str, object] = {
            "bootstrap_servers": [
                expand_env(s, environ, key="bootstrap_servers") for s in self.bootstrap_servers
            ],
            "client_id": x("client_id", self.client_id),
            "security_protocol": self.security_protocol,
        }
        optional = {
            "sasl_mechanism": self.sasl_mechanism,
            "sasl_plain_username": x("sasl_username", self.sasl_username),
            "sasl_plain_password": x("sasl_password", self.sasl_password),
            "ssl_cafile": x("ssl_cafile", self.ssl_cafile),
            "ssl_certfile": x("ssl_certfile", self.ssl_certfile),
            "ssl_keyfile": x("ssl_keyfile", self.ssl_keyfile),
            "ssl_password": x("ssl_password", self.ssl_password),
        }
        cfg.update({k: v for k, v in optional.items() if v is not None})
        return cfg


@dataclass(frozen=True)
class KafkaTopic:
    """A topic and the stream (``predictions`` or ``outcomes``) its messages feed."""

    name: str
    stream: str


@dataclass(frozen=True)
class KafkaSourceSettings:
    """Everything a :class:`~driftwatch.connectors.kafka.KafkaSource` needs besides decoders.

    ``dead_letter_topic`` receives each bad message (raw bytes, ``dw-*`` headers); without it,
    bad messages are appended to ``dead_letter_path`` (JSON lines). When both are set, the file
    also takes the dead letters the topic could not accept.
    """

    connection: KafkaConnection
    topics: tuple[KafkaTopic, ...]
    dead_letter_topic: str | None = None
    dead_letter_path: str | None = None
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    fetch_max_wait_ms: int = 500
    max_partition_fetch_bytes: int = 1 << 20
    session_timeout_ms: int = 45_000
    reconnect_backoff_max_ms: int = 5_000  # kafka-python's own bounded reconnect backoff
    retry_backoff_s: float = 0.5  # first wait after the cluster cannot be reached at start
    retry_backoff_max_s: float = 30.0
    give_up_after_s: float | None = None  # None: keep retrying, reporting ready=False
    commit_timeout_s: float = 30.0
    dead_letter_timeout_s: float = 30.0
    #: merge the partitions (and the two topics) in event time, as a replay merges files,
    #: holding records a partition still behind could come before (kafka_align.py)
    align_event_time: bool = True
    #: a partition behind that fetches nothing this long no longer holds the others back
    align_stall_s: float = 30.0
    #: ``read_committed``: messages of aborted transactions never reach the windows (a
    #: transactional producer's retries, an exactly-once pipeline's failed attempts), and
    #: a partition is read up to its last stable offset; ``read_uncommitted`` reads them
    isolation_level: Literal["read_committed", "read_uncommitted"] = "read_committed"

    def __post_init__(self) -> None:
        if not self.topics:
            raise ConnectorError("a Kafka source needs at least one topic")
        names = [t.name for t in self.topics]
        if len(set(names)) != len(names):
            raise ConnectorError("each topic may be bound to one stream only", found=str(names))
        if self.dead_letter_topic is not None and self.dead_letter_topic in names:
            raise ConnectorError("dead_letter_topic must differ from the topics read")
        check_tuning({f.name: getattr(self, f.name) for f in fields(self)})
        if not isinstance(self.align_event_time, bool):
            raise ConnectorError("align_event_time must be true or false",
                                 found=repr(self.align_event_time), path="align_event_time")
        if (isinstance(self.align_stall_s, bool) or not isinstance(self.align_stall_s, int | float)
                or self.align_stall_s <= 0):
            raise ConnectorError("align_stall_s must be a number of seconds above 0",
                                 found=repr(self.align_stall_s), path="align_stall_s")
        if self.isolation_level not in ("read_committed", "read_uncommitted"):
            raise ConnectorError("isolation_level must be read_committed or read_uncommitted",
                                 found=repr(self.isolation_level), path="isolation_level")

    @property
    def streams(self) -> dict[str, str]:
        """Topic name -> stream name."""
        return {t.name: t.stream for t in self.topics}

    @classmethod
    def from_connector(cls, connector: Any, *, out_dir: str | Path = ".") -> KafkaSourceSettings:
        """Settings from a ``kind: kafka`` connector (:mod:`driftwatch.connectors.config`).

        ``source.connection`` holds :class:`KafkaConnection` keys and this class's tuning keys
        side by side; each stream's ``topic`` is bound to the stream's name (the key of its
        decoder). Unknown keys fail with the connector's ``file:line:col``.
        """
        raw = dict(connector.connection or {})
        conn_keys = {f.name for f in fields(KafkaConnection)}
        own_keys = {f.name for f in fields(cls)} - {"connection", "topics", "dead_letter_topic",
                                                   "dead_letter_path"}  # fmt: skip

        def fail(at: tuple[str, ...], msg: str, **kw: Any) -> ConnectorError:
            where = ("source", "connection", *at)
            if hasattr(connector, "error"):
                return connector.error(where, msg, **kw)  # type: ignore[no-any-return]
            return ConnectorError(msg, path=".".join(where), **kw)

        for key in raw:
            if key not in conn_keys | own_keys:
                near = difflib.get_close_matches(key, sorted(conn_keys | own_keys), n=1)
                raise fail((key,), f"unknown key {key!r}", key=True,
                           hint=f"did you mean {near[0]!r}?" if near else None)  # fmt: skip
        try:
            conn = KafkaConnection(**{k: v for k, v in raw.items() if k in conn_keys})
        except ConnectorError as exc:
            at = (exc.path,) if exc.path in raw else ()
            raise fail(at, exc.message, found=exc.found, hint=exc.hint) from None
        except TypeError:
            raise fail(("bootstrap_servers",), "missing required key 'bootstrap_servers'") from None
        topics = tuple(KafkaTopic(str(s.topic_name), s.name) for s in connector.streams)
        dl_path = connector.dead_letter_path(out_dir) if connector.dead_letter else None
        try:
            return cls(
                connection=conn,
                topics=topics,
                dead_letter_topic=connector.dead_letter_topic,
                dead_letter_path=str(dl_path) if dl_path is not None else None,
                **{k: v for k, v in raw.items() if k in own_keys},
            )
        except ConnectorError as exc:  # a tuning key's value: point at it in the file
            at = exc.path if exc.path in raw else PAIRED.get(exc.path or "")
            if at not in raw:
                raise
            raise fail((at,), exc.message, found=exc.found, hint=exc.hint) from None
