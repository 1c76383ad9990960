"""A real two-node Ray cluster on loopback, for tests: a head and one reserved node.

Both are ``ray start --block`` processes, so the cluster is exactly the topology the
``ray`` pool backend documents: the head advertises ``head_gpus`` logical GPUs as ``GPU``
(the GPUs anyone may use), the second node advertises its ``reserved_gpus`` only as the
custom ``resource`` (``--num-gpus 0``). Each node has one CPU and a small object store; the
dashboard (Job API) listens on 127.0.0.1. Teardown kills both ``ray start`` processes and
every process of this cluster (found by the cluster's own temporary folder in its command
line), so nothing outlives the test.

>>> ray_start_argv("ray", head=True, gcs_port=6380, ports=[1, 2, 3], temp_dir="/tmp/r",
...                gpus=8, resources={})[:6]
['ray', 'start', '--block', '--disable-usage-stats', '--node-ip-address', '127.0.0.1']
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftwatch.testing.net import free_port

__all__ = ["RayCluster", "ray_cluster", "ray_start_argv"]

_STARTUP_S = 120.0


@dataclass(frozen=True)
class RayCluster:
    address: str  # the dashboard's URL (Job API)
    gcs_address: str
    head_node_id: str
    reserved_node_id: str
    resource: str
    reserved_gpus: int
    head_gpus: int



def ray_start_argv(
    ray: str,
    *,
    head: bool,
    gcs_port: int,
    ports: Sequence[int],
    temp_dir: str,
    gpus: int,
    resources: Mapping[str, float],
) -> list[str]:
    """``ray start`` for one small node; ``ports`` are free ports it may listen on."""
    argv = [ray, "start", "--block", "--disable-usage-stats", "--node-ip-address", "127.0.0.1",
            "--num-cpus", "1", "--num-gpus", str(gpus), "--object-store-memory", "78643200",
            "--dashboard-agent-listen-port", str(ports[0])]
    if resources:
        argv += ["--resources", json.dumps(dict(resources))]
    if head:
        argv += ["--head", "--port", str(gcs_port), "--temp-dir", temp_dir,
                 "--include-dashboard", "true", "--dashboard-host", "127.0.0.1",
                 "--dashboard-port", str(ports[1]), "--ray-client-server-port", str(ports[2])]
    else:
        argv += ["--address", f"127.0.0.1:{gcs_port}"]
    return argv


def _nodes(address: str) -> list[dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"{address}/api/v0/nodes?detail=1", timeout=5) as r:
            nodes = json.loads(r.read())["data"]["result"]["result"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in nodes if n.get("state") == "ALIVE"]


def _wait_nodes(address: str, count: int, procs: Sequence[subprocess.Popen[bytes]],
                log: Path) -> list[dict[str, Any]]:
    give_up = time.monotonic() + _STARTUP_S
    while time.monotonic() < give_up:
        nodes = _nodes(address)
        if len(nodes) >= count:
            return nodes
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"ray start exited ({p.returncode}):\n{_tail(log)}")
        time.sleep(0.5)
    raise RuntimeError(f"the Ray cluster did not reach {count} nodes:\n{_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


def _stop(procs: Sequence[subprocess.Popen[bytes]], temp_dir: str) -> None:
    """Kill the cluster: the ``ray start`` processes, their groups, and every process that
    names this cluster's temporary folder (Ray daemonises some out of the group)."""
    import psutil

    found: dict[int, psutil.Process] = {}
    for p in procs:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(p.pid)
            found.update({c.pid: c for c in [root, *root.children(recursive=True)]})
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if any(temp_dir in part for part in proc.info["cmdline"] or ()):
                found.update({c.pid: c for c in [proc, *proc.children(recursive=True)]})
    for p in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
    for proc in found.values():
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(list(found.values()), timeout=15)
    for p in procs:
        p.wait(timeout=15)


@contextlib.contextmanager
def ray_cluster(
    *, reserved_gpus: int = 2, head_gpus: int = 8, resource: str = "driftwatch_reserved_gpu"
) -> Iterator[RayCluster]:
    """Start the head and the reserved node; stop both (and all their processes) after."""
    ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    if ray is None:
        raise RuntimeError("the `ray` command is not installed: pip install 'driftwatch[ray]'")
    temp_dir = tempfile.mkdtemp(prefix="dwray")  # short: Ray puts unix sockets in it
    log = Path(temp_dir) / "ray-start.log"
    gcs_port = free_port()
    head_ports = [free_port() for _ in range(3)]
    address = f"http://127.0.0.1:{head_ports[1]}"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(log, "ab") as out:
            procs.append(subprocess.Popen(
                ray_start_argv(ray, head=True, gcs_port=gcs_port, ports=head_ports,
                               temp_dir=temp_dir, gpus=head_gpus, resources={}),
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True))
            (head,) = _wait_nodes(address, 1, procs, log)
            procs.append(subprocess.Popen(
                ray_start_argv(ray, head=False, gcs_port=gcs_port, ports=[free_port()],
                               temp_dir=temp_dir, gpus=0,
                               resources={resource: float(reserved_gpus)}),
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True))
            nodes = _wait_nodes(address, 2, procs, log)
        reserved = next(n for n in nodes if n["node_id"] != head["node_id"])
        yield RayCluster(address=address, gcs_address=f"127.0.0.1:{gcs_port}",
                         head_node_id=head["node_id"], reserved_node_id=reserved["node_id"],
                         resource=resource, reserved_gpus=reserved_gpus, head_gpus=head_gpus)
    finally:
        _stop(procs, temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
