"""A real ``mlflow server`` on loopback for integration tests, as a fixture factory.

The server keeps runs and registry in SQLite and serves artifacts itself
(``--serve-artifacts``), as a team's shared tracking server would. Its whole process group
is stopped when the fixture's scope ends.

In a ``conftest.py``::

    mlflow_server = mlflow_server_fixture(scope="module")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from driftwatch.testing.net import free_port

__all__ = ["STARTUP_TIMEOUT_S", "mlflow_server_fixture", "start_mlflow_server", "stop"]

STARTUP_TIMEOUT_S = 90.0



def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def start_mlflow_server(root: Path, port: int | None = None
                        ) -> tuple[str, subprocess.Popen[bytes], Any]:
    """Start a server keeping its state in ``root`` (on ``port``, default a free one: pass
    the first one's to restart it where clients look); returns its URL, process and log."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [
        sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
        "--workers", "1", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--serve-artifacts", "--artifacts-destination", str(root / "artifacts"),
    ]
    log = open(root / "server.log", "ab")  # noqa: SIM115 - closed after the server stops
    proc = subprocess.Popen(
        argv, stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            log.close()
            tail = (root / "server.log").read_text(errors="replace")[-3000:]
            pytest.fail(f"mlflow server did not come up on {url}:\n{tail}")
        time.sleep(0.3)
    return url, proc, log


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def mlflow_server_fixture(*, scope: str = "module", name: str = "mlflow_server") -> Any:
    """A fixture yielding ``(url, artifacts_folder)`` of a real tracking server."""

    @pytest.fixture(scope=scope, name=name)  # type: ignore[call-overload]
    def _server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
        root = tmp_path_factory.mktemp("mlflow-server")
        url, proc, log = start_mlflow_server(root)
        try:
            yield url, root / "artifacts"
        finally:
            stop(proc)
            log.close()

    return _server
