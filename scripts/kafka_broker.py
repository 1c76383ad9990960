#!/usr/bin/env python3
"""A real single-node Apache Kafka broker (KRaft, no ZooKeeper, no Docker) on 127.0.0.1.

Used by the integration tests and the benchmarks; standard library only, so it runs from any
Python 3.11+. Needs ``java`` (17+) and, for the first fetch only, ``mvn``.

* ``fetch``: Maven copies ``org.apache.kafka:kafka_2.13`` and its runtime dependencies, plus
  the log4j2 binding for SLF4J, into a cache folder (``.cache/kafka/<version>/jars`` in the
  repository, or ``$DRIFTWATCH_KAFKA_CACHE``). Done once; later calls reuse the jars.
* ``start``: writes ``server.properties`` (broker and controller in one process, listeners on
  free ports), formats the storage as a standalone dynamic quorum, starts ``kafka.Kafka`` and
  waits, with a bound, until a Metadata request lists the broker. A start that fails is tried
  again on fresh ports.
* ``stop``: SIGTERM (controlled shutdown), a bounded wait, then SIGKILL.

Command line::

    python scripts/kafka_broker.py fetch
    python scripts/kafka_broker.py start [--partitions 3] [--fresh]   # prints host:port
    python scripts/kafka_broker.py status
    python scripts/kafka_broker.py stop

As a module (what the tests do)::

    with KafkaBroker() as broker:          # temporary data folder, removed on exit
        use(broker.bootstrap)              # "127.0.0.1:NNNNN"
        broker.stop(); broker.start()      # same data and port: a broker restart

Environment: ``DRIFTWATCH_KAFKA_CACHE`` (jar cache), ``DRIFTWATCH_KAFKA_VERSION`` (4.x),
``JAVA`` (java binary), ``MVN`` (maven binary).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType

__all__ = [
    "DEFAULT_VERSION",
    "BrokerError",
    "KafkaBroker",
    "broker_ready",
    "cache_dir",
    "cluster_id",
    "fetch",
    "free_port",
    "pid_alive",
]

DEFAULT_VERSION = "4.1.1"
LOG4J_VERSION = "2.24.3"  # the log4j2 line kafka 4.1 is built against
REPO_ROOT = Path(__file__).resolve().parents[1]
_MARKER = ".complete"

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>driftwatch.testing</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>{version}</version>
    </dependency>
    <dependency>
      <!-- kafka 4 logs through slf4j 1.7 into log4j2; this is the binding -->
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>{log4j}</version>
    </dependency>
  </dependencies>
</project>
"""

_LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
"""


def cluster_id() -> str:
    """A random KRaft cluster id: 16 bytes, URL-safe base64 without padding, like Kafka's
    own ``random-uuid``, and never starting with ``-`` (the storage tool would read one that
    does as an option: one start in 64 failed that way).

    >>> all(not cluster_id().startswith("-") and len(cluster_id()) == 22 for _ in range(500))
    True
    """
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


class BrokerError(RuntimeError):
    """The broker could not be fetched, started or stopped."""


def cache_dir() -> Path:
    """Where jars are cached: ``$DRIFTWATCH_KAFKA_CACHE`` or ``.cache/kafka`` in the repo."""
    env = os.environ.get("DRIFTWATCH_KAFKA_CACHE")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".cache" / "kafka"


def _version(version: str | None) -> str:
    v = version or os.environ.get("DRIFTWATCH_KAFKA_VERSION") or DEFAULT_VERSION
    if not v.startswith("4."):
        raise BrokerError(f"a Kafka 4.x version is needed (KRaft only), got {v!r}")
    return v


def fetch(version: str | None = None, cache: Path | None = None, *, quiet: bool = True) -> Path:
    """Download the broker's jars once with Maven; return the folder holding them."""
    v = _version(version)
    root = (cache or cache_dir()) / v
    jars = root / "jars"
    if (jars / _MARKER).exists():
        return jars
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:  # two test sessions may fetch at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (jars / _MARKER).exists():
            return jars
        mvn = os.environ.get("MVN") or shutil.which("mvn")
        if not mvn:
            raise BrokerError("Maven (mvn) is needed once to fetch the Kafka jars; install it")
        (root / "pom.xml").write_text(_POM.format(version=v, log4j=LOG4J_VERSION))
        shutil.rmtree(jars, ignore_errors=True)
        cmd = [
            mvn, "-B", "-f", str(root / "pom.xml"), "dependency:copy-dependencies",
            f"-DoutputDirectory={jars}", "-DincludeScope=runtime",
        ]  # fmt: skip
        if quiet:
            cmd.insert(1, "-q")
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not any(jars.glob("kafka_2.13-*.jar")):
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-20:]
            raise BrokerError(f"fetching kafka {v} with Maven failed:\n" + "\n".join(tail))
        (jars / _MARKER).write_text(v + "\n")
    return jars


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (a start on it may still lose a race: we retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _metadata_brokers(host: str, port: int, timeout_s: float) -> int:
    """Number of live brokers in a Metadata (v4) response, or -1 if no answer."""
    client = b"driftwatch-probe"
    # request header v1 (api_key 3 = Metadata, version 4), then all topics (-1), no auto-create
    body = struct.pack(">hhih", 3, 4, 7, len(client)) + client + struct.pack(">ib", -1, 0)
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exact(s, 4)
            data = _recv_exact(s, min(struct.unpack(">i", head)[0], 1 << 20))
    except OSError:
        return -1
    if len(data) < 12:
        return -1
    correlation, _throttle, n_brokers = struct.unpack_from(">iii", data, 0)
    return n_brokers if correlation == 7 else -1


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return bytes(buf)


def broker_ready(bootstrap: str, timeout_s: float = 2.0) -> bool:
    """True when the broker at ``host:port`` answers Metadata and lists itself."""
    host, _, port = bootstrap.rpartition(":")
    return _metadata_brokers(host, int(port), timeout_s) >= 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # PR_SET_PDEATHSIG: a test run killed hard must not leave a broker behind
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


class KafkaBroker:
    """One broker+controller JVM with its data under ``state_dir``.

    ``state_dir`` defaults to a fresh temporary folder that :meth:`close` removes. Ports are
    picked on the first start and kept, so ``stop()`` then ``start()`` is a restart of the
    same broker on the same address with the same data.
    """

    def __init__(
        self,
        state_dir: str | Path | None = None,
        *,
        num_partitions: int = 1,
        version: str | None = None,
        cache: Path | None = None,
        host: str = "127.0.0.1",
        start_timeout_s: float = 120.0,
        attempts: int = 3,
        heap: str = "768m",
        extra_config: dict[str, str] | None = None,
        die_with_parent: bool = True,
    ) -> None:
        self._owns_dir = state_dir is None
        self.state_dir = Path(state_dir or tempfile.mkdtemp(prefix="dw-kafka-")).resolve()
        self.num_partitions = num_partitions
        self.version = _version(version)
        self.cache = cache
        self.host = host
        self.start_timeout_s = start_timeout_s
        self.attempts = max(1, attempts)
        self.heap = heap
        self.extra_config = dict(extra_config or {})
        self.die_with_parent = die_with_parent
        self.port: int | None = None
        self.controller_port: int | None = None
        self.cluster_id: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._load_ports()

    # -- paths ---------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self.state_dir / "data"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def properties_path(self) -> Path:
        return self.state_dir / "server.properties"

    @property
    def bootstrap(self) -> str:
        if self.port is None:
            raise BrokerError("the broker has not been started")
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # -- life cycle ----------------------------------------------------------------------------
    def start(self) -> str:
        """Start (or restart) the broker; return its bootstrap address once clients can use it."""
        if self.running:
            return self.bootstrap
        jars = fetch(self.version, self.cache)
        errors: list[str] = []
        for attempt in range(1, self.attempts + 1):
            restart = self._formatted()
            if not restart:
                self.port, self.controller_port = free_port(self.host), free_port(self.host)
                self._write_config()
                self._format(jars)
            try:
                self._launch(jars)
                self._wait_ready()
                return self.bootstrap
            except BrokerError as exc:
                errors.append(f"attempt {attempt}: {exc}")
                self._kill()
                if not restart:  # a fresh broker: start over on new ports
                    shutil.rmtree(self.data_dir, ignore_errors=True)
        raise BrokerError(
            f"Kafka broker did not start in {self.attempts} attempts "
            f"(logs in {self.log_dir}):\n" + "\n".join(errors)
        )

    def stop(self, timeout_s: float = 30.0) -> None:
        """Controlled shutdown (SIGTERM), then SIGKILL after ``timeout_s``; keeps the data."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def restart(self) -> str:
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop the broker and remove its folder if this object created it."""
        self.stop()
        if self._owns_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def state(self) -> dict[str, object]:
        """What the CLI writes to its state file."""
        return {
            "pid": self.pid,
            "bootstrap": self.bootstrap if self.port else None,
            "port": self.port,
            "controller_port": self.controller_port,
            "state_dir": str(self.state_dir),
            "data_dir": str(self.data_dir),
            "log_dir": str(self.log_dir),
            "version": self.version,
        }

    # -- internals -----------------------------------------------------------------------------
    def _formatted(self) -> bool:
        return (self.data_dir / "meta.properties").exists() and self.port is not None

    def _load_ports(self) -> None:
        ports = self.state_dir / "ports.json"
        if ports.exists():
            d = json.loads(ports.read_text())
            self.port, self.controller_port = int(d["port"]), int(d["controller_port"])

    def _write_config(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        h, p, c = self.host, self.port, self.controller_port
        one = "1"
        conf = {
            "process.roles": "broker,controller",
            "node.id": one,
            "controller.quorum.bootstrap.servers": f"{h}:{c}",
            "listeners": f"PLAINTEXT://{h}:{p},CONTROLLER://{h}:{c}",
            "advertised.listeners": f"PLAINTEXT://{h}:{p},CONTROLLER://{h}:{c}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.partitions": str(self.num_partitions),
            "default.replication.factor": one,
            "min.insync.replicas": one,
            "offsets.topic.replication.factor": one,
            "offsets.topic.num.partitions": one,  # 50 by default: slow to create on 2 cores
            "transaction.state.log.replication.factor": one,
            "transaction.state.log.min.isr": one,
            "transaction.state.log.num.partitions": one,
            "share.coordinator.state.topic.replication.factor": one,
            "share.coordinator.state.topic.min.isr": one,
            "share.coordinator.state.topic.num.partitions": one,
            "group.initial.rebalance.delay.ms": "0",
            "auto.create.topics.enable": "true",
            "delete.topic.enable": "true",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "log.cleaner.threads": "1",
            "num.recovery.threads.per.data.dir": "1",
        }
        conf.update(self.extra_config)
        lines = [f"{k}={v}" for k, v in conf.items()]
        self.properties_path.write_text("\n".join(lines) + "\n")
        log4j = _LOG4J2.format(log=self.log_dir / "server.log")
        (self.state_dir / "log4j2.properties").write_text(log4j)
        (self.state_dir / "ports.json").write_text(json.dumps({"port": p, "controller_port": c}))

    def _java(self, jars: Path, main: str, *args: str) -> list[str]:
        java = shutil.which(os.environ.get("JAVA") or "java")
        if not java:
            raise BrokerError("java (17 or newer) is needed to run the Kafka broker")
        return [
            java,
            "-Xms128m",
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",  # two cores shared with the tests: no parallel GC threads
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.state_dir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.log_dir}",
            "-cp",
            f"{jars}/*",
            main,
            *args,
        ]

    def _format(self, jars: Path) -> None:
        self.cluster_id = cluster_id()
        cmd = self._java(
            jars, "kafka.tools.StorageTool", "format", "--standalone",
            "--cluster-id", self.cluster_id, "--config", str(self.properties_path),
        )  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BrokerError(f"kafka storage format failed:\n{proc.stdout}{proc.stderr}")

    def _launch(self, jars: Path) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        out = open(self.log_dir / "stdout.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            self._proc = subprocess.Popen(
                self._java(jars, "kafka.Kafka", str(self.properties_path)),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a test run reaches us, not the broker
                preexec_fn=_die_with_parent if self.die_with_parent else None,
            )
        finally:
            out.close()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        delay = 0.1
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = None if self._proc is None else self._proc.returncode
                raise BrokerError(f"broker exited with {code}; {self._log_tail()}")
            if _metadata_brokers(self.host, int(self.port or 0), 2.0) >= 1:
                return
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)
        raise BrokerError(f"not ready after {self.start_timeout_s:.0f}s; {self._log_tail()}")

    def _log_tail(self, n: int = 15) -> str:
        for name in ("stdout.log", "server.log"):
            path = self.log_dir / name
            if path.exists():
                text = path.read_text(errors="replace").strip()
                if text:
                    return f"last lines of {path}:\n" + "\n".join(text.splitlines()[-n:])
        return "no log output"

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


# -- command line -----------------------------------------------------------------------------
def _state_file(args: argparse.Namespace) -> Path:
    return Path(args.state_file) if args.state_file else cache_dir() / "broker.json"


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def _pid_is_our_broker(pid: int, properties: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"kafka.Kafka" in cmdline and properties.encode() in cmdline


def _read_state(path: Path) -> dict[str, object] | None:
    if not path.exists():
        return None
    state = json.loads(path.read_text())
    props = str(Path(str(state["state_dir"])) / "server.properties")
    if not pid_alive(int(state["pid"])) or not _pid_is_our_broker(int(state["pid"]), props):  # type: ignore[call-overload]
        return None
    return state


def _cmd_start(args: argparse.Namespace) -> int:
    sf = _state_file(args)
    state = _read_state(sf)
    if state is not None:
        print(state["bootstrap"])
        return 0
    state_dir = Path(args.state_dir) if args.state_dir else cache_dir() / "broker"
    if args.fresh:
        shutil.rmtree(state_dir, ignore_errors=True)
    broker = KafkaBroker(
        state_dir,
        num_partitions=args.partitions,
        version=args.version,
        start_timeout_s=args.timeout,
        die_with_parent=False,  # outlives this command; `stop` ends it
    )
    broker.start()
    sf.parent.mkdir(parents=True, exist_ok=True)
    sf.write_text(json.dumps(broker.state(), indent=2) + "\n")
    print(broker.bootstrap)
    return 0


def _cmd_stop(args: argparse.Namespace) -> int:
    sf = _state_file(args)
    state = _read_state(sf)
    if state is None:
        sf.unlink(missing_ok=True)
        print("no broker running", file=sys.stderr)
        return 0
    pid = int(state["pid"])  # type: ignore[call-overload]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
    sf.unlink(missing_ok=True)
    print(f"stopped broker {state['bootstrap']} (pid {pid})")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    state = _read_state(_state_file(args))
    if state is None:
        print(json.dumps({"running": False}))
        return 1
    ready = broker_ready(str(state["bootstrap"]))
    print(json.dumps({"running": True, "ready": ready, **state}, indent=2))
    return 0 if ready else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="A local Kafka 4 broker (KRaft) for tests.")
    p.add_argument("--state-file", help="JSON state file (default: <cache>/broker.json)")
    sub = p.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download the broker's jars once")
    f.add_argument("--version")
    s = sub.add_parser("start", help="start a broker and print its bootstrap address")
    s.add_argument("--state-dir", help="data and config folder (default: <cache>/broker)")
    s.add_argument("--partitions", type=int, default=1, help="num.partitions")
    s.add_argument("--version")
    s.add_argument("--fresh", action="store_true", help="wipe the data folder first")
    s.add_argument("--timeout", type=float, default=120.0)
    t = sub.add_parser("stop", help="stop the broker started by `start`")
    t.add_argument("--timeout", type=float, default=30.0)
    sub.add_parser("status", help="print the state; exit 0 when the broker is ready")
    args = p.parse_args(argv)
    try:
        if args.command == "fetch":
            print(fetch(args.version, quiet=False))
            return 0
        return {"start": _cmd_start, "stop": _cmd_stop, "status": _cmd_status}[args.command](args)
    except BrokerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
