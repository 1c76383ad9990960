"""A real local HTTP server that receives webhook POSTs, for alert tests.

>>> import json, urllib.request
>>> with WebhookReceiver() as hook:
...     req = urllib.request.Request(hook.url, data=b'{"tier": "severe"}', method="POST",
...                                  headers={"Content-Type": "application/json"})
...     urllib.request.urlopen(req, timeout=10).status, hook.bodies
(200, [{'tier': 'severe'}])
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["WebhookReceiver"]


class WebhookReceiver:
    """Records each POSTed JSON body with the monotonic time it came; answers 503 and
    records nothing while ``fail`` is set (a receiver that is down)."""

    def __init__(self) -> None:
        self.received: list[tuple[float, dict[str, Any]]] = []
        self.fail = False
        self.url = ""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [body for _, body in self.received]

    def __enter__(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not receiver.fail:
                    receiver.received.append((time.monotonic(), body))
                self.send_response(503 if receiver.fail else 200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_port}/hook"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
