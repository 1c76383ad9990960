"""The daemon's HTTP endpoints, on the standard library's threading server (loopback default).

============================  ============================================================
``GET /metrics``              Prometheus exposition of the injected registry
``GET /healthz``              200 while the process serves requests
``GET /readyz``               200 when sources are connected, the checkpoint is fresh, the
                              state folder takes writes and no critical dependency is down;
                              else 503; JSON per dependency and why
``GET /status``               JSON: models, current tiers, last decisions, GPU pool
``GET /reports/...``          report files from the reports folder; a folder serves its
                              ``index.html`` or ``report.html``, else a list, newest first
``POST /admin/<verb>/<arg>``  approve/cancel ``<id>``; retrain/promote/rollback ``<model>``
============================  ============================================================

Admin calls need ``Authorization: Bearer <token>``; the token comes from an environment
variable the config names. Without a configured token the admin API answers 403 (disabled);
with a wrong or missing token, 401. Every admin call, refused or not, goes to the audit
trail with who (client address, ``X-Driftwatch-Actor``), what, and the outcome.

A connection that sends nothing for :data:`IDLE_TIMEOUT_S` is closed; a client that hangs up
early is a debug line, not a traceback; a port already taken is a :class:`ServiceError`.
"""

from __future__ import annotations

import errno
import hmac
import html
import json
import logging
import mimetypes
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from driftwatch.errors import ServiceError

__all__ = ["ADMIN_ACTIONS", "IDLE_TIMEOUT_S", "AdminResult", "Endpoints", "HttpServer"]

log = logging.getLogger(__name__)

#: Admin verbs and what their argument names.
ADMIN_ACTIONS: Mapping[str, str] = {
    "approve": "action_id",
    "cancel": "action_id",
    "retrain": "model",
    "promote": "model",
    "rollback": "model",
}
_MAX_BODY = 64 * 1024
#: Seconds a connection may sit without sending a request before it is closed (each held
#: connection is a thread).
IDLE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class AdminResult:
    """What an admin handler answers: HTTP status and a JSON body."""

    status: int
    body: Mapping[str, Any]


@dataclass
class Endpoints:
    """What the server exposes; the service fills it in (callables are thread-safe reads).

    ``admin(verb, arg, body, actor)`` performs an admin call; ``audit(entry)`` records one
    in the audit trail; ``on_admin(verb, outcome)`` counts it.
    """

    registry: CollectorRegistry
    ready: Callable[[], tuple[bool, Mapping[str, Any]]]
    status: Callable[[], Mapping[str, Any]]
    reports_dir: Path | None = None
    admin: Callable[[str, str, Mapping[str, Any], str], AdminResult] | None = None
    admin_token: str | None = None
    admin_token_env: str | None = None
    audit: Callable[[Mapping[str, Any]], None] | None = None
    on_admin: Callable[[str, str], None] | None = None


def _json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, default=str, allow_nan=False,
                      indent=2).encode() + b"\n"


def _clean(obj: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(obj, float):
        return obj if obj == obj and abs(obj) != float("inf") else None
    if isinstance(obj, Mapping):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


class _Handler(BaseHTTPRequestHandler):
    server_version = "driftwatch"
    endpoints: Endpoints  # set on the subclass the server builds

    # -- plumbing -------------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.client_address[0], *args)

    def _send(self, status: int, body: bytes, ctype: str = "application/json",
              headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, _json(_clean(obj)), headers=headers)

    def _path(self) -> str:
        return unquote(urlsplit(self.path).path)

    # -- GET ------------------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        ep = self.endpoints
        path = self._path()
        try:
            if path == "/metrics":
                self._send(200, generate_latest(ep.registry), CONTENT_TYPE_LATEST)
            elif path == "/healthz":
                self._send_json(200, {"status": "ok"})
            elif path == "/readyz":
                ok, details = ep.ready()
                self._send_json(200 if ok else 503, {"ready": ok, **details})
            elif path == "/status":
                self._send_json(200, ep.status())
            elif path == "/reports" or path.startswith("/reports/"):
                self._report(path.removeprefix("/reports").lstrip("/"))
            elif path == "/":
                self._send_json(200, {"endpoints": ["/metrics", "/healthz", "/readyz", "/status",
                                                    "/reports/", "/admin/<verb>/<arg>"]})
            else:
                self._send_json(404, {"error": f"no such endpoint: {path}"})
        except ConnectionError:  # the client left before the answer: nothing to tell it
            self.close_connection = True
        except Exception:  # a broken page must not take the daemon down
            log.exception("GET %s failed", path)
            self._send_json(500, {"error": "internal error"})

    def _report(self, rel: str) -> None:
        root = self.endpoints.reports_dir
        if root is None or not root.is_dir():
            self._send_json(404, {"error": "no reports yet"})
            return
        if "\x00" in rel:
            self._send_json(400, {"error": "bad path"})
            return
        try:
            self._report_file(root.resolve(), rel)
        except OSError:  # a name too long, a loop of links: not a report either
            self._send_json(404, {"error": "not found"})

    def _report_file(self, root: Path, rel: str) -> None:
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            self._send_json(404, {"error": "not found"})
            return
        if target.is_dir():
            index = next((target / n for n in ("index.html", "report.html")
                          if (target / n).is_file()), None)
            if index is not None:
                target = index
            else:  # newest first, temporary files of atomic writes left out
                found = [p for p in target.iterdir() if not p.name.startswith(".")]
                found.sort(key=lambda p: (p.stat().st_mtime_ns, p.name), reverse=True)
                items = [html.escape(p.name + ("/" if p.is_dir() else ""), quote=True)
                         for p in found]
                links = "".join(f'<li><a href="{n}">{n}</a></li>' for n in items)
                page = f"<!doctype html><title>driftwatch reports</title><ul>{links}</ul>"
                self._send(200, page.encode(), "text/html; charset=utf-8")
                return
        if not target.is_file():
            self._send_json(404, {"error": "not found"})
            return
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype.startswith("text/"):
            ctype += "; charset=utf-8"
        self._send(200, target.read_bytes(), ctype)

    # -- POST (admin) ---------------------------------------------------------------------------
    def do_POST(self) -> None:
        path = self._path()
        parts = [p for p in path.split("/") if p]
        if len(parts) != 3 or parts[0] != "admin" or parts[1] not in ADMIN_ACTIONS:
            self._send_json(404, {"error": f"no such endpoint: POST {path}",
                                  "admin": [f"/admin/{v}/<{a}>" for v, a in ADMIN_ACTIONS.items()]})
            return
        verb, arg = parts[1], parts[2]
        ep = self.endpoints
        actor = self.headers.get("X-Driftwatch-Actor", "").strip()[:100] or "admin-token"
        entry: dict[str, Any] = {"verb": verb, ADMIN_ACTIONS[verb]: arg,
                                 "client": self.client_address[0], "actor": actor}
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= _MAX_BODY:
            self._finish_admin(verb, "error", 413, {"error": "request body too large"}, entry)
            return
        raw = self.rfile.read(length) if length else b""
        if not ep.admin_token or ep.admin is None:
            env = ep.admin_token_env or "the configured variable"
            self._finish_admin(verb, "disabled", 403,
                               {"error": f"admin API disabled: set {env} to enable it"}, entry)
            return
        given = self.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), ep.admin_token.encode()
        ):
            self._finish_admin(verb, "unauthorized", 401, {"error": "bearer token required"},
                               entry, {"WWW-Authenticate": 'Bearer realm="driftwatch"'})
            return
        try:
            body = json.loads(raw) if raw.strip() else {}
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            self._finish_admin(verb, "error", 400, {"error": f"bad JSON body: {exc}"}, entry)
            return
        if "note" in body:
            entry["note"] = str(body["note"])[:500]
        try:
            result = ep.admin(verb, arg, body, actor)
        except Exception as exc:
            log.exception("admin %s %s failed", verb, arg)
            self._finish_admin(verb, "error", 500, {"error": type(exc).__name__}, entry)
            return
        outcome = "ok" if result.status < 400 else ("not_found" if result.status == 404
                                                    else "error")
        self._finish_admin(verb, outcome, result.status, result.body, entry)

    def _finish_admin(self, verb: str, outcome: str, status: int, body: Mapping[str, Any],
                      entry: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
        ep = self.endpoints
        entry.update(outcome=outcome, status=status)
        if outcome not in ("ok",) and "error" in body:
            entry["error"] = str(body["error"])
        if ep.audit is not None:
            try:
                ep.audit(entry)
            except Exception:  # the call is answered; the failure to audit is loud
                log.exception("audit trail write failed for admin %s", verb)
                status, body = 500, {"error": "audit trail unavailable", **body}
        if ep.on_admin is not None:
            ep.on_admin(verb, outcome)
        self._send_json(status, body, headers)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up or stalls is routine: one debug line, no traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            log.debug("%s: connection dropped (%s)", client_address[0], type(exc).__name__)
            return
        log.error("%s: request failed (%s: %s)", client_address[0], type(exc).__name__, exc)


class HttpServer:
    """A threading HTTP server on ``host:port`` (port 0: any free port, see :attr:`port`)."""

    def __init__(self, endpoints: Endpoints, *, host: str = "127.0.0.1", port: int = 9108,
                 idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        handler = type("DriftwatchHandler", (_Handler,),
                       {"endpoints": endpoints, "timeout": idle_timeout_s})
        try:
            self._server = _Server((host, port), handler)
        except OSError as exc:  # a user's situation, not a bug: one line, no traceback
            why = exc.strerror or str(exc)
            hint = " (another driftwatch running? pass --port, or set http.port)" \
                if exc.errno == errno.EADDRINUSE else ""
            raise ServiceError(f"cannot listen on {host}:{port}: {why}{hint}") from None
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="driftwatch-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
