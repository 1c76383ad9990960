"""The HTTP listener under routine trouble: a busy port, idle and vanishing clients, odd paths."""

from __future__ import annotations

import http.client
import logging
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from driftwatch.errors import DriftwatchError, ServiceError
from driftwatch.service.http import Endpoints, HttpServer


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    (tmp_path / "credit").mkdir()
    (tmp_path / "credit" / "report.html").write_text("<html>ok</html>")
    return tmp_path


@pytest.fixture
def server(reports: Path) -> Iterator[HttpServer]:
    ep = Endpoints(registry=CollectorRegistry(), ready=lambda: (True, {}),
                   status=lambda: {"ok": True}, reports_dir=reports)
    srv = HttpServer(ep, port=0, idle_timeout_s=0.5)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _get(srv: HttpServer, path: str) -> int:
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_busy_port_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ep = Endpoints(registry=CollectorRegistry(), ready=lambda: (True, {}),
                       status=lambda: {})
        with pytest.raises(ServiceError) as info:
            HttpServer(ep, port=port)
    message = str(info.value)
    assert message.startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert "another driftwatch running? pass --port, or set http.port" in message
    assert "\n" not in message and isinstance(info.value, DriftwatchError)


@pytest.mark.parametrize(("path", "status"), [
    ("/reports/credit/", 200),
    ("/reports/%00", 400),
    ("/reports/credit/%00report.html", 400),
    ("/reports/" + "a" * 5000, 404),
    ("/reports/../../etc/passwd", 404),
    ("/reports/%2e%2e/%2e%2e/etc/passwd", 404),
])
def test_report_paths_never_answer_500(server: HttpServer, path: str, status: int) -> None:
    assert _get(server, path) == status


def test_an_idle_connection_is_closed_by_the_server(server: HttpServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as s:
        # nothing sent: the server hangs up after its idle timeout (0.5 s here); recv
        # returns b"" then, and would raise TimeoutError after 10 s if it never did
        assert s.recv(1024) == b""
    assert _get(server, "/healthz") == 200  # and still serves


def test_a_client_that_hangs_up_early_logs_no_traceback(
        server: HttpServer, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    with caplog.at_level(logging.DEBUG, logger="driftwatch.service.http"):
        for _ in range(20):
            s = socket.create_connection((server.host, server.port), timeout=10)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()  # a reset, before the answer is read
        assert _get(server, "/healthz") == 200
    assert "Traceback" not in capsys.readouterr().err
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
