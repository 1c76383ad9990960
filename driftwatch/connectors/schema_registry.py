"""Writer schemas fetched from a schema registry by id, cached, with a pause after a failure.

A Confluent-framed Kafka value names its writer schema by a 4-byte id; the registry serves
it at ``GET {registry}/schemas/ids/{id}`` as JSON with the schema as a string under
``schema``. Each id is fetched once and kept (a registry never changes the schema of an
id).

A registry that cannot be reached (refused, timed out, a 5xx answer) must not stop the
source: :meth:`RegistrySchemas.schema` raises :class:`RegistryUnavailable`, and for
:data:`RETRY_AFTER_S` seconds after that every id not yet cached fails at once with the same
error, without a call (a down registry costs one timeout per pause, not one per message).
An id the registry does not hold (404) or an answer that holds no schema is
:class:`UnknownSchema`: that message cannot be read, whenever it is retried.

Time comes from ``monotonic`` (an argument: tests pass their own).

>>> schemas = RegistrySchemas("http://127.0.0.1:9", monotonic=lambda: 0.0, timeout_s=0.5)
>>> try:
...     schemas.schema(7)
... except RegistryUnavailable as exc:
...     print(str(exc).split(":")[0])
schema registry http
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from driftwatch.errors import SourceError

__all__ = ["RETRY_AFTER_S", "TIMEOUT_S", "RegistrySchemas", "RegistryUnavailable",
           "UnknownSchema"]

#: Seconds one request to the registry may take.
TIMEOUT_S = 5.0
#: Seconds after a failed request before the registry is asked again.
RETRY_AFTER_S = 30.0
_MAX_ANSWER = 1 << 20  # a schema is a few kB; a bigger answer is not a registry's


class RegistryUnavailable(SourceError):
    """The registry could not be asked now (it may answer later)."""


class UnknownSchema(SourceError):
    """The registry answered, without a schema for that id."""


class RegistrySchemas:
    """Writer schemas (parsed JSON) by id from the registry at ``url``."""

    def __init__(self, url: str, *, timeout_s: float = TIMEOUT_S,
                 retry_after_s: float = RETRY_AFTER_S,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self._monotonic = monotonic
        self._schemas: dict[int, Any] = {}
        self._unknown: dict[int, str] = {}
        self._down: tuple[float, str] | None = None  # (since, why)
        self.requests = 0

    def schema(self, schema_id: int) -> Any:
        """The writer schema of ``schema_id`` as parsed JSON (a dict, list or name)."""
        if schema_id in self._schemas:
            return self._schemas[schema_id]
        if schema_id in self._unknown:
            raise UnknownSchema(self._unknown[schema_id])
        now = self._monotonic()
        if self._down is not None:
            since, why = self._down
            if now - since < self.retry_after_s:
                raise RegistryUnavailable(why)
            self._down = None
        try:
            schema = self._fetch(schema_id)
        except RegistryUnavailable as exc:
            self._down = (now, str(exc))
            raise
        except UnknownSchema as exc:
            self._unknown[schema_id] = str(exc)
            raise
        self._schemas[schema_id] = schema
        return schema

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
        return (f"schema registry {self.url}: cannot fetch schema id {schema_id} ({why}); "
                f"asked again after {self.retry_after_s:g} s")
