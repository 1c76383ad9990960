"""Fixtures for integration tests: real services, started once per session.

Each service's fixtures come from a factory in ``driftwatch.testing``; add other services
(MLflow, Prometheus, ...) the same way, one block each. Mark test modules with
``pytestmark = pytest.mark.integration``.
"""

from __future__ import annotations

from driftwatch.testing import chromium as chromium_testing
from driftwatch.testing import kafka as kafka_testing
from driftwatch.testing import mlflow_server as mlflow_testing

# -- Kafka: a real KRaft broker, or the one named by $DRIFTWATCH_KAFKA_BOOTSTRAP -------------
kafka_endpoint = kafka_testing.endpoint_fixture(num_partitions=1)
kafka_topic = kafka_testing.topic_fixture()
kafka_group = kafka_testing.group_fixture()
kafka_broker_factory = kafka_testing.broker_factory_fixture()

# -- MLflow: a real tracking server per test module --------------------------------------------
mlflow_server = mlflow_testing.mlflow_server_fixture(scope="module")

# -- Chromium: one headless browser per session (Playwright, the system browser) ---------------
browser = chromium_testing.browser_fixture(scope="session")

# -- driftwatch run: a demo recording and daemons started as real processes ---------------------
import os  # noqa: E402 - this block is self-contained
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import orjson  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO_EVENTS = 24_000  # the demo scenario's shape (140 days, four episodes), fewer events
#: ``driftwatch`` as the console script runs it (without depending on the script's path)
DRIFTWATCH = [sys.executable, "-c",
              "import sys; from driftwatch.cli import main; sys.exit(main())"]


@pytest.fixture(scope="session")
def demo_recording(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo scenario written once per session, with a file connector that reads it."""
    from driftwatch.testing.generator import write_scenario

    out = tmp_path_factory.mktemp("demo")
    paths = write_scenario("demo", out, seed=3, n_events=DEMO_EVENTS, reference_rows=8_000)
    text = (ROOT / "connectors" / "demo-file.yaml").read_text(encoding="utf-8")
    connector = out / "connector.yaml"
    connector.write_text(text.replace("data/demo/", f"{out}/"), encoding="utf-8")
    return {**paths, "connector": connector, "policy": ROOT / "policies" / "credit-risk-demo.yaml"}



def http_get(url: str, *, timeout: float = 30.0, headers: dict[str, str] | None = None,
             method: str = "GET", body: bytes | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers=headers or {}, method=method, data=body)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


class Daemon:
    """One ``driftwatch run`` process writing its log next to its state directory."""

    def __init__(self, config: Path, state_dir: Path, args: list[str], env: dict[str, str],
                 prefix: tuple[str, ...] = (), reader: Callable[[Path], bytes] = Path.read_bytes,
                 log_dir: Path | None = None):
        self.state_dir = state_dir
        self.read_bytes = reader  # how the test reads the daemon's files (a mount namespace)
        where = log_dir or state_dir.parent
        self.log_path = where / f"{state_dir.name}-{time.monotonic_ns()}.log"
        self._log = self.log_path.open("wb")
        cmd = [*prefix, *DRIFTWATCH, "run", "--config", str(config), "--state-dir",
               str(state_dir), *args]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        self.url = ""

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
        """Poll ``check`` until it returns something truthy; fail with the log if not."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = check()
            if got:
                return got
            if self.proc.poll() is not None and not got:
                got = check()  # one last look after the process ended
                if got:
                    return got
                pytest.fail(f"daemon exited ({self.proc.returncode}) before {what}:\n"
                            f"{self.log()[-4000:]}")
            time.sleep(0.05)
        pytest.fail(f"timed out waiting for {what}:\n{self.log()[-4000:]}")

    def wait_ready(self, timeout: float = 60.0) -> str:
        info = self.state_dir / "service.json"

        def up() -> str | None:
            try:
                d = orjson.loads(self.read_bytes(info))
            except (OSError, orjson.JSONDecodeError):
                return None
            return d["url"] if d.get("pid") == self.proc.pid else None

        self.url = self.wait_for("service.json", up, timeout)
        return self.url

    def get(self, path: str, **kw: Any) -> tuple[int, bytes]:
        return http_get(self.url + path, **kw)

    def status(self) -> dict[str, Any]:
        code, body = self.get("/status")
        assert code == 200, body
        return orjson.loads(body)

    def wait_exit(self, timeout: float = 60.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"daemon did not exit within {timeout}s:\n{self.log()[-4000:]}")

    def terminate(self, timeout: float = 60.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit(timeout)

    def assert_stops_within(self, bound_s: float) -> None:
        """SIGTERM: the daemon exits 0 in under ``bound_s`` (issue 15's shutdown bound)."""
        start = time.monotonic()
        rc = self.terminate()
        wall = time.monotonic() - start
        assert rc == 0, self.log()[-3000:]
        assert wall < bound_s, (wall, self.log()[-3000:])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._log.close()


def _daemons() -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(config: Path, state_dir: Path, *args: str, env: dict[str, str] | None = None,
              **kw: Any) -> Daemon:
        full = {k: v for k, v in os.environ.items() if k != "DRIFTWATCH_ADMIN_TOKEN"}
        full.update(env or {})
        d = Daemon(Path(config), Path(state_dir), list(args), full, **kw)
        started.append(d)
        return d

    try:
        yield start
    finally:
        for d in started:
            d.close()


@pytest.fixture
def driftwatch_daemon() -> Iterator[Callable[..., Daemon]]:
    """``start(config_path, state_dir, *args, env={...}) -> Daemon``; all killed at the end."""
    yield from _daemons()


@pytest.fixture(scope="module")
def driftwatch_daemon_module() -> Iterator[Callable[..., Daemon]]:
    """:func:`driftwatch_daemon` for module-scoped fixtures."""
    yield from _daemons()


def service_config(path: Path, connector: Path, policy: Path, *, reference: Path | None = None,
                   speed: float = 0.0, port: int = 0, extra: str = "", batch_size: int = 500,
                   execute: bool = False, gpus: int = 0) -> Path:
    """Write a one-model service config for tests (short intervals; by default actions
    are recorded, not run)."""
    ref = f"    reference: {reference}\n" if reference else ""
    path.write_text(
        f"models:\n  - connector: {connector}\n    policy: {policy}\n{ref}"
        f"    live: {{speed: {speed}}}\n    batch_size: {batch_size}\n"
        f"http: {{port: {port}}}\n"
        "checkpoint: {interval: 1s, max_age: 1m}\n"
        "scheduler: {actions: 1s, policy_reload: 1s, staleness_check: 1s}\n"
        f"actions: {{execute: {str(execute).lower()}}}\n"
        f"pool: {{gpus: {gpus}}}\n" + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def service_config_factory() -> Callable[..., Path]:
    """:func:`service_config`: a one-model config with test-sized intervals."""
    return service_config
