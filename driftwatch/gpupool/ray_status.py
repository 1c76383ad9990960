"""Ray's own view of the cluster, for ``driftwatch pool status`` next to the pool's leases.

Read over HTTP from the dashboard that also serves the Job API (no Ray import, no driver
connection): nodes and their resources (``/api/v0/nodes``), what is in use
(``/api/cluster_status``) and the jobs (``/api/jobs/``). The reserved resource is shown
with its total, what Ray has handed out, and the nodes that advertise it; jobs are those
driftwatch submitted (in ``namespace`` when one is set).

>>> pages = {
...     "/api/v0/nodes?detail=1&limit=10000": {"data": {"result": {"result": [
...         {"node_id": "n1", "state": "ALIVE", "is_head_node": True,
...          "resources_total": {"CPU": 1.0, "GPU": 8.0}},
...         {"node_id": "n2", "state": "ALIVE", "is_head_node": False,
...          "resources_total": {"CPU": 1.0, "driftwatch_reserved_gpu": 2.0}}]}}},
...     "/api/cluster_status": {"data": {"clusterStatus": {"loadMetricsReport": {"usage": {
...         "CPU": [0.0, 2.0], "GPU": [1.0, 8.0], "driftwatchReservedGpu": [1.0, 2.0]}}}}},
...     "/api/jobs/": [{"submission_id": "driftwatch-000001-r-a1", "status": "RUNNING",
...                     "driver_node_id": "n2", "metadata": {"driftwatch_job_id": "000001-r"}},
...                    {"submission_id": "raysubmit_x", "status": "RUNNING", "metadata": {}}],
... }
>>> view = RayView.fetch("http://ray:8265", resource="driftwatch_reserved_gpu",
...                      get_json=lambda url: pages[url.removeprefix("http://ray:8265")])
>>> view.reserved_total, view.reserved_used, view.reserved_nodes
(2.0, 1.0, ('n2',))
>>> view.jobs[0]["submission_id"], view.other_jobs
('driftwatch-000001-r-a1', 1)
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftwatch.gpupool.errors import BackendUnreachableError

__all__ = ["RayView", "http_get_json"]

_NODES = "/api/v0/nodes?detail=1&limit=10000"
_USAGE = "/api/cluster_status"
_JOBS = "/api/jobs/"


def http_get_json(url: str, timeout: float = 10.0) -> Any:
    """GET ``url`` and decode its JSON body; unreachable or not JSON: BackendUnreachableError."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except (OSError, ValueError) as exc:  # URLError is an OSError
        raise BackendUnreachableError(f"Ray dashboard at {url}: {exc}") from exc


def _key(name: str) -> str:
    # the dashboard camel-cases resource names in /api/cluster_status
    return name.replace("_", "").lower()


@dataclass(frozen=True)
class RayView:
    """A snapshot of Ray's resources (``{name: (used, total)}``), nodes and jobs."""

    address: str
    resource: str | None
    namespace: str | None
    usage: Mapping[str, tuple[float, float]]
    nodes: Sequence[Mapping[str, Any]]
    jobs: Sequence[Mapping[str, Any]] = field(default=())
    other_jobs: int = 0  # jobs on the cluster that driftwatch (this namespace) did not submit

    @classmethod
    def fetch(
        cls,
        address: str,
        *,
        resource: str | None,
        namespace: str | None = None,
        get_json: Callable[[str], Any] = http_get_json,
    ) -> RayView:
        base = address.rstrip("/")
        nodes = get_json(base + _NODES)["data"]["result"]["result"]
        report = get_json(base + _USAGE)["data"]["clusterStatus"]["loadMetricsReport"]
        camel = {_key(k): (float(v[0]), float(v[1])) for k, v in report["usage"].items()}
        names = {k for n in nodes for k in (n.get("resources_total") or {})}
        usage = {n: camel.get(_key(n), (0.0, 0.0)) for n in sorted(names)}
        ours, others = [], 0
        for job in get_json(base + _JOBS):
            meta = job.get("metadata") or {}
            mine = "driftwatch_job_id" in meta and meta.get("driftwatch_namespace") == namespace
            if mine:
                ours.append(job)
            else:
                others += 1
        return cls(
            address=address,
            resource=resource,
            namespace=namespace,
            usage=usage,
            nodes=tuple(nodes),
            jobs=tuple(ours),
            other_jobs=others,
        )

    @property
    def reserved_total(self) -> float:
        return self.usage.get(self.resource or "", (0.0, 0.0))[1]

    @property
    def reserved_used(self) -> float:
        return self.usage.get(self.resource or "", (0.0, 0.0))[0]

    @property
    def reserved_nodes(self) -> tuple[str, ...]:
        """Alive nodes that advertise the reserved resource."""
        return tuple(
            str(n["node_id"])
            for n in self.nodes
            if n.get("state") == "ALIVE" and (n.get("resources_total") or {}).get(self.resource)
        )

    def problems(self, reserved: int | None = None) -> list[str]:
        """What keeps Ray from enforcing the reservation, in words; empty when nothing.
        ``reserved`` is the pool's own count, compared with what Ray advertises."""
        if self.resource is None:
            return ["no reserved resource configured: jobs ask Ray for GPU, nothing is reserved"]
        out = []
        if reserved is not None and self.reserved_nodes and reserved != self.reserved_total:
            out.append(
                f"the pool reserves {reserved} GPUs, Ray advertises {self.reserved_total:g} "
                f"{self.resource}: "
                + ("jobs beyond that wait inside Ray" if reserved > self.reserved_total
                   else "the rest stays idle")
            )
        if not self.reserved_nodes:
            out.append(
                f"no alive node advertises {self.resource}: retraining jobs cannot be placed "
                f"(start the reserved node with --num-gpus 0 --resources "
                f"'{{\"{self.resource}\": N}}')"
            )
        for n in self.nodes:
            res = n.get("resources_total") or {}
            if n.get("state") == "ALIVE" and res.get(self.resource) and res.get("GPU"):
                out.append(
                    f"node {n['node_id']} advertises both GPU and {self.resource}: "
                    "other users' GPU tasks can take GPUs meant for retraining"
                )
        return out

    def to_dict(self, reserved: int | None = None) -> dict[str, Any]:
        return {
            "address": self.address,
            "resource": self.resource,
            "namespace": self.namespace,
            "reserved": {
                "total": self.reserved_total,
                "used": self.reserved_used,
                "nodes": list(self.reserved_nodes),
            },
            "resources": {k: {"used": u, "total": t} for k, (u, t) in self.usage.items()},
            "nodes": [
                {
                    "node_id": n.get("node_id"),
                    "state": n.get("state"),
                    "head": bool(n.get("is_head_node")),
                    "resources": dict(n.get("resources_total") or {}),
                }
                for n in self.nodes
            ],
            "jobs": [
                {
                    "submission_id": j.get("submission_id"),
                    "status": j.get("status"),
                    "node_id": j.get("driver_node_id"),
                    "driftwatch_job_id": (j.get("metadata") or {}).get("driftwatch_job_id"),
                }
                for j in self.jobs
            ],
            "other_jobs": self.other_jobs,
            "problems": self.problems(reserved),
        }
