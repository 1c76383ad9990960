"""A tiny schema registry for tests: ``GET /schemas/ids/{id}`` served from a dict.

It runs ``http.server`` in a thread on a loopback port. :meth:`LocalRegistry.stop` closes
the port (a registry that is down: connection refused) and :meth:`LocalRegistry.start`
opens it again on the same port; ``failing`` set to a status (503) answers every request
with it (a registry that is up but broken). An id it does not hold answers 404, as a
registry does. ``hits`` lists the paths asked.

>>> reg = LocalRegistry({1: {"type": "record", "name": "R", "fields": []}})
>>> reg.start()
>>> import urllib.request, json
>>> json.loads(urllib.request.urlopen(f"{reg.url}/schemas/ids/1").read())["schema"]
'{"type": "record", "name": "R", "fields": []}'
>>> reg.stop()
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LocalRegistry"]

_PREFIX = "/schemas/ids/"


class LocalRegistry:
    """Schemas by id (a schema as parsed JSON, or a whole answer with a ``schema`` key)."""

    def __init__(self, schemas: dict[int, Any], *, port: int = 0) -> None:
        self.schemas = schemas
        self.hits: list[str] = []
        self.failing: int | None = None  # an HTTP status every request gets (e.g. 503)
        self.fail_next = 0  # this many requests get ``failing`` (503 if unset), then it serves
        self.server: ThreadingHTTPServer | None = None
        self.port = port

    def start(self) -> None:
        """Listen (again: on the same port as before)."""
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.hits.append(self.path)
                if registry.fail_next > 0:
                    registry.fail_next -= 1
                    self._answer(registry.failing or 503, b'{"error_code": 50003}')
                    return
                if registry.failing is not None:
                    self._answer(registry.failing, b'{"error_code": 50003}')
                    return
                sid = self.path[len(_PREFIX):]
                if not self.path.startswith(_PREFIX) or not sid.isdigit() or (
                        int(sid) not in registry.schemas):
                    self._answer(404, b'{"error_code": 40403, "message": "Schema not found"}')
                    return
                answer = registry.schemas[int(sid)]
                self._answer(200, json.dumps(answer if "schema" in answer else
                                             {"schema": json.dumps(answer)}).encode())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Close the port: requests are refused until :meth:`start`."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
