"""Writer schemas fetched from a schema registry by id, cached, asked again with backoff.

A Confluent-framed Kafka value names its writer schema by a 4-byte id; the registry serves
it at ``GET {registry}/schemas/ids/{id}`` as JSON with the schema as a string under
``schema``. Each id is fetched once and kept (a registry never changes the schema of an
id).

A registry that cannot be reached (refused, timed out, a 5xx answer) is an outage:
:meth:`RegistrySchemas.schema` raises :class:`RegistryUnavailable`, and until
:attr:`RegistryOutage.retry_at` every id not yet cached fails at once with the same error,
without a call (a down registry costs one timeout per try, not one per message). The wait
between tries starts at :data:`RETRY_MIN_S` and doubles up to :data:`RETRY_MAX_S`; the
first answer ends the outage. What waits on it is the caller's choice: the Kafka source
holds the partition at that message (:mod:`~driftwatch.connectors.kafka_hold`), a replay
stops. An id the registry does not hold (404) or an answer that holds no schema is
:class:`UnknownSchema`: that message cannot be read, whenever it is retried.

Time comes from ``monotonic`` (an argument: tests pass their own).

>>> now = [0.0]
>>> schemas = RegistrySchemas("http://127.0.0.1:9", monotonic=lambda: now[0], timeout_s=0.5)
>>> try:
...     schemas.schema(7)
... except RegistryUnavailable as exc:
...     print(str(exc).split(":")[0])
schema registry http
>>> schemas.outage.since, schemas.outage.retry_at, schemas.due()
(0.0, 1.0, False)
>>> now[0] = 1.0
>>> schemas.due()
True
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from driftwatch.errors import SourceError

__all__ = ["RETRY_MAX_S", "RETRY_MIN_S", "TIMEOUT_S", "RegistryOutage", "RegistrySchemas",
           "RegistryUnavailable", "UnknownSchema"]

#: Seconds one request to the registry may take.
TIMEOUT_S = 5.0
#: Seconds after the first failed request before the registry is asked again; each failure
#: in a row doubles the wait, up to :data:`RETRY_MAX_S`.
RETRY_MIN_S = 1.0
RETRY_MAX_S = 30.0
_MAX_ANSWER = 1 << 20  # a schema is a few kB; a bigger answer is not a registry's


class RegistryUnavailable(SourceError):
    """The registry could not be asked now (it may answer later)."""


class UnknownSchema(SourceError):
    """The registry answered, without a schema for that id."""


@dataclass(frozen=True)
class RegistryOutage:
    """The registry unreachable: since when and until when no call is made (monotonic
    seconds of the registry's clock), why (the last failure), and the failures in a row."""

    since: float
    retry_at: float
    reason: str
    failures: int


class RegistrySchemas:
    """Writer schemas (parsed JSON) by id from the registry at ``url``."""

    def __init__(self, url: str, *, timeout_s: float = TIMEOUT_S,
                 retry_min_s: float = RETRY_MIN_S, retry_max_s: float = RETRY_MAX_S,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.retry_min_s = retry_min_s
        self.retry_max_s = max(retry_min_s, retry_max_s)
        self._monotonic = monotonic
        self._schemas: dict[int, Any] = {}
        self._unknown: dict[int, str] = {}
        #: the current outage; None while the registry answers (or was never asked)
        self.outage: RegistryOutage | None = None
        #: the registry answered at least once (a schema or a 404)
        self.answered = False
        self.requests = 0

    def now(self) -> float:
        """The registry's clock (monotonic seconds)."""
        return self._monotonic()

    def due(self) -> bool:
        """True unless an outage's wait is still running: the next id not cached would be
        asked now."""
        return self.outage is None or self._monotonic() >= self.outage.retry_at

    def schema(self, schema_id: int) -> Any:
        """The writer schema of ``schema_id`` as parsed JSON (a dict, list or name)."""
        if schema_id in self._schemas:
            return self._schemas[schema_id]
        if schema_id in self._unknown:
            raise UnknownSchema(self._unknown[schema_id])
        down = self.outage
        if down is not None and self._monotonic() < down.retry_at:
            raise RegistryUnavailable(down.reason)
        try:
            schema = self._fetch(schema_id)
        except RegistryUnavailable as exc:
            now = self._monotonic()
            n = 1 if down is None else down.failures + 1
            wait = min(self.retry_max_s, self.retry_min_s * 2 ** (n - 1))
            self.outage = RegistryOutage(since=now if down is None else down.since,
                                         retry_at=now + wait, reason=str(exc), failures=n)
            raise
        except UnknownSchema as exc:
            self._answered()
            self._unknown[schema_id] = str(exc)
            raise
        self._answered()
        self._schemas[schema_id] = schema
        return schema

    def _answered(self) -> None:
        self.outage = None
        self.answered = True

    def _fetch(self, schema_id: int) -> Any:
        where = f"{self.url}/schemas/ids/{schema_id}"
        self.requests += 1
        try:
            req = urllib.request.Request(where, headers={
                "Accept": "application/vnd.schemaregistry.v1+json, application/json"})
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                body = resp.read(_MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise UnknownSchema(f"schema registry {self.url} holds no schema id "
                                    f"{schema_id} (HTTP 404)") from None
            raise RegistryUnavailable(self._down_text(schema_id, f"HTTP {exc.code}")) from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise RegistryUnavailable(self._down_text(schema_id, str(why))) from None
        try:
            answer = json.loads(body) if len(body) <= _MAX_ANSWER else None
            kind = answer.get("schemaType", "AVRO")  # absent: Avro, the registry's default
            text = answer["schema"]
            if kind == "AVRO":
                return json.loads(text)
        except (ValueError, TypeError, KeyError, AttributeError):
            raise UnknownSchema(f"schema registry {self.url}: the answer for schema id "
                                f"{schema_id} is not JSON with a 'schema' string") from None
        raise UnknownSchema(f"schema registry {self.url}: schema id {schema_id} is a {kind} "
                            "schema; only Avro is read")

    def _down_text(self, schema_id: int, why: str) -> str:
        return f"schema registry {self.url}: cannot fetch schema id {schema_id} ({why})"
