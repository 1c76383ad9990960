"""Kubernetes manifests for retraining jobs: rendered as plain dicts (and YAML), never applied.

``driftwatch pool render`` writes them; driftwatch has no Kubernetes client and submits
nothing: applying them (``kubectl apply -f``) and creating Jobs is the user's tooling.

On Kubernetes the reserved share is a Kueue ``ClusterQueue`` whose ``nominalQuota`` for
``nvidia.com/gpu`` is the reserved count (same rule as the local pool), reached through a
namespaced ``LocalQueue``. Each retraining job is a suspended ``batch/v1`` Job that Kueue
admits when quota is free, ordered by a ``WorkloadPriorityClass`` per severity. Per-attempt
time limits become the pod's ``activeDeadlineSeconds``; the Job's own deadline covers all
attempts (limit × (retries + 1)); ``backoffLimit`` is the retry count; a preemptible job gets
a pod-failure policy that does not count preemptions (``DisruptionTarget``) as failures.
Off-peak deferral has no Kueue equivalent: a deferrable job carries an annotation only.

>>> docs = render_queue(cluster_gpus=10, reserve_fraction=0.2)
>>> cq = next(d for d in docs if d["kind"] == "ClusterQueue")
>>> cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
{'name': 'nvidia.com/gpu', 'nominalQuota': 2}
>>> from driftwatch.gpupool.base import JobSpec
>>> job = render_job(JobSpec("retrain-pd", ["python", "train.py"]), job_id="000001-retrain-pd",
...                  image="credit-pd-trainer:1")
>>> job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
{'nvidia.com/gpu': 1}
>>> check_manifests([*docs, job])
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from driftwatch.gpupool.base import CHECKPOINT_ENV, SEVERITY_RANK, JobSpec
from driftwatch.gpupool.capacity import DEFAULT_RESERVE_FRACTION, reserved_gpu_count
from driftwatch.gpupool.errors import ManifestError

__all__ = [
    "GPU_RESOURCE",
    "KUEUE_API",
    "check_manifest",
    "check_manifests",
    "k8s_name",
    "render_job",
    "render_queue",
    "to_yaml",
]

KUEUE_API = "kueue.x-k8s.io/v1beta1"
GPU_RESOURCE = "nvidia.com/gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
_MANAGED = {"app.kubernetes.io/managed-by": "driftwatch"}
_PRIORITY_VALUE = {name: rank * 100 for name, rank in SEVERITY_RANK.items()}


def k8s_name(text: str, prefix: str = "") -> str:
    """A DNS-1123 label (lowercase alphanumerics and '-', at most 63) from ``text``.

    >>> k8s_name("000001-Retrain_PD.v2", prefix="dw-")
    'dw-000001-retrain-pd-v2'
    """
    name = re.sub(r"[^a-z0-9-]+", "-", f"{prefix}{text}".lower()).strip("-")
    return name[:63].rstrip("-") or "driftwatch"


def render_job(
    spec: JobSpec,
    *,
    job_id: str,
    image: str,
    namespace: str = "default",
    local_queue: str = "driftwatch-retrain",
    checkpoint_claim: str | None = None,
    checkpoint_mount: str = "/checkpoints",
    requests: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A suspended ``batch/v1`` Job for ``spec``, queued on ``local_queue``.

    ``requests`` adds CPU/memory requests (cover them in the ClusterQueue too);
    ``checkpoint_claim`` mounts that PersistentVolumeClaim at ``checkpoint_mount``.
    """
    checkpoint_dir = f"{checkpoint_mount.rstrip('/')}/{job_id}"
    env = {**spec.env, CHECKPOINT_ENV: checkpoint_dir, "DRIFTWATCH_JOB_ID": job_id}
    container: dict[str, Any] = {
        "name": "retrain",
        "image": image,
        "command": list(spec.argv),
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "resources": {"limits": {GPU_RESOURCE: spec.gpus}},
    }
    if requests:
        container["resources"]["requests"] = dict(requests)
    if spec.working_dir is not None:
        container["workingDir"] = spec.working_dir
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": math.ceil(spec.time_limit_s),
        "containers": [container],
    }
    if checkpoint_claim is not None:
        container["volumeMounts"] = [{"name": "checkpoints", "mountPath": checkpoint_mount}]
        pod["volumes"] = [
            {"name": "checkpoints", "persistentVolumeClaim": {"claimName": checkpoint_claim}}
        ]
    labels = {
        **_MANAGED,
        QUEUE_LABEL: local_queue,
        PRIORITY_LABEL: f"driftwatch-{spec.severity}",
        "driftwatch/severity": spec.severity,
    }
    job_spec: dict[str, Any] = {
        "suspend": True,  # Kueue unsuspends the Job when it admits it
        "activeDeadlineSeconds": math.ceil(spec.time_limit_s * (spec.retries + 1)),
        "backoffLimit": spec.retries,
        "template": {"metadata": {"labels": dict(_MANAGED)}, "spec": pod},
    }
    if spec.preemptible:
        job_spec["podFailurePolicy"] = {
            "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
        }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": k8s_name(job_id, prefix="dw-"),
            "namespace": namespace,
            "labels": labels,
            "annotations": {
                "driftwatch/job-id": job_id,
                "driftwatch/deferrable": str(spec.deferrable).lower(),
            },
        },
        "spec": job_spec,
    }


def render_queue(
    cluster_gpus: int,
    reserve_fraction: float = DEFAULT_RESERVE_FRACTION,
    *,
    cluster_queue: str = "driftwatch-retrain",
    local_queue: str = "driftwatch-retrain",
    namespace: str = "default",
    flavor: str = "driftwatch-gpu",
    node_labels: Mapping[str, str] | None = None,
    quotas: Mapping[str, str | int] | None = None,
    preempt_lower_priority: bool = True,
) -> list[dict[str, Any]]:
    """ResourceFlavor, ClusterQueue (GPU quota = the reserved share), LocalQueue and one
    WorkloadPriorityClass per severity. ``quotas`` adds other covered resources
    (``{"cpu": 64, "memory": "512Gi"}``), needed when jobs request them."""
    reserved = reserved_gpu_count(cluster_gpus, reserve_fraction)
    resources = [{"name": GPU_RESOURCE, "nominalQuota": reserved}]
    resources += [{"name": k, "nominalQuota": v} for k, v in (quotas or {}).items()]
    flavor_doc: dict[str, Any] = {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": flavor, "labels": dict(_MANAGED)},
        "spec": {"nodeLabels": dict(node_labels)} if node_labels else {},
    }
    queue_spec: dict[str, Any] = {
        "namespaceSelector": {},
        "queueingStrategy": "StrictFIFO",  # the pool's strict priority order
        "resourceGroups": [
            {
                "coveredResources": [r["name"] for r in resources],
                "flavors": [{"name": flavor, "resources": resources}],
            }
        ],
    }
    if preempt_lower_priority:
        queue_spec["preemption"] = {"withinClusterQueue": "LowerPriority"}
    priority_classes = [
        {
            "apiVersion": KUEUE_API,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": f"driftwatch-{name}", "labels": dict(_MANAGED)},
            "value": value,
            "description": f"driftwatch retraining for {name} drift",
        }
        for name, value in _PRIORITY_VALUE.items()
    ]
    return [
        flavor_doc,
        {
            "apiVersion": KUEUE_API,
            "kind": "ClusterQueue",
            "metadata": {"name": cluster_queue, "labels": dict(_MANAGED)},
            "spec": queue_spec,
        },
        {
            "apiVersion": KUEUE_API,
            "kind": "LocalQueue",
            "metadata": {"name": local_queue, "namespace": namespace, "labels": dict(_MANAGED)},
            "spec": {"clusterQueue": cluster_queue},
        },
        *priority_classes,
    ]


def to_yaml(docs: Sequence[Mapping[str, Any]]) -> str:
    """The documents as one multi-document YAML stream, for ``kubectl apply -f -``."""
    return yaml.safe_dump_all([dict(d) for d in docs], sort_keys=False)


def check_manifest(doc: Mapping[str, Any]) -> list[str]:
    """Structural problems of one manifest, as ``Kind/name: what is wrong``; empty if none."""
    kind = doc.get("kind")
    name = _get(doc, "metadata", "name")
    where = f"{kind or '?'}/{name or '?'}"
    problems = [f"{where}: missing {f}" for f in ("apiVersion", "kind") if not doc.get(f)]
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: missing metadata.name")
    check = _CHECKS.get(str(kind))
    if check is None:
        return [*problems, f"{where}: unexpected kind {kind!r}"]
    return problems + [f"{where}: {p}" for p in check(doc)]


def check_manifests(docs: Sequence[Mapping[str, Any]]) -> None:
    """Check every manifest and the references between them (Job → LocalQueue →
    ClusterQueue → ResourceFlavor, Job resources covered); raise :class:`ManifestError`
    listing every problem."""
    problems = [p for d in docs for p in check_manifest(d)]
    names: dict[str, set[str]] = {}
    for d in docs:
        names.setdefault(str(d.get("kind")), set()).add(str(_get(d, "metadata", "name")))
    local_to_cluster = {
        str(_get(d, "metadata", "name")): _get(d, "spec", "clusterQueue")
        for d in docs
        if d.get("kind") == "LocalQueue"
    }
    covered: set[str] = set()
    for d in (d for d in docs if d.get("kind") == "ClusterQueue"):
        for group in _get(d, "spec", "resourceGroups") or []:
            covered.update(group.get("coveredResources") or [])
            for fl in group.get("flavors") or []:
                if fl.get("name") not in names.get("ResourceFlavor", set()):
                    problems.append(f"ClusterQueue: flavor {fl.get('name')!r} is not rendered")
    for lq, cq in local_to_cluster.items():
        if cq not in names.get("ClusterQueue", set()):
            problems.append(f"LocalQueue/{lq}: cluster queue {cq!r} is not rendered")
    for d in (d for d in docs if d.get("kind") == "Job"):
        queue = (_get(d, "metadata", "labels") or {}).get(QUEUE_LABEL)
        if local_to_cluster and queue not in local_to_cluster:
            problems.append(f"Job/{_get(d, 'metadata', 'name')}: local queue {queue!r} missing")
        if covered:
            for c in _get(d, "spec", "template", "spec", "containers") or []:
                res = c.get("resources") or {}
                wanted = set(res.get("limits") or {}) | set(res.get("requests") or {})
                for r in sorted(wanted - covered):
                    problems.append(f"Job/{_get(d, 'metadata', 'name')}: {r} not covered by Kueue")
    if problems:
        raise ManifestError("invalid Kubernetes manifests:\n  " + "\n  ".join(problems))


def _get(doc: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(key)
    return doc


def _is_count(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _check_job(doc: Mapping[str, Any]) -> list[str]:
    out = []
    if doc.get("apiVersion") != "batch/v1":
        out.append(f"apiVersion must be batch/v1, found {doc.get('apiVersion')!r}")
    if not _get(doc, "metadata", "namespace"):
        out.append("missing metadata.namespace")
    if not _is_count(_get(doc, "spec", "activeDeadlineSeconds"), 1):
        out.append("spec.activeDeadlineSeconds must be a whole number >= 1")
    if not _is_count(_get(doc, "spec", "backoffLimit"), 0):
        out.append("spec.backoffLimit must be a whole number >= 0")
    pod = _get(doc, "spec", "template", "spec") or {}
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        out.append("spec.template.spec.restartPolicy must be Never or OnFailure")
    containers = pod.get("containers")
    if not isinstance(containers, list) or not containers:
        return [*out, "spec.template.spec.containers must be a non-empty list"]
    for i, c in enumerate(containers):
        at = f"spec.template.spec.containers[{i}]"
        for key in ("name", "image"):
            if not isinstance(c.get(key), str) or not c.get(key):
                out.append(f"missing {at}.{key}")
        command = c.get("command")
        if not isinstance(command, list) or not all(isinstance(a, str) for a in command):
            out.append(f"{at}.command must be a list of strings")
        if not _is_count(_get(c, "resources", "limits", GPU_RESOURCE), 1):
            out.append(f"{at}.resources.limits[{GPU_RESOURCE!r}] must be a whole number >= 1")
    return out


def _check_cluster_queue(doc: Mapping[str, Any]) -> list[str]:
    out = [] if doc.get("apiVersion") == KUEUE_API else [f"apiVersion must be {KUEUE_API}"]
    groups = _get(doc, "spec", "resourceGroups")
    if not isinstance(groups, list) or not groups:
        return [*out, "spec.resourceGroups must be a non-empty list"]
    gpu_quota = None
    for i, group in enumerate(groups):
        covered = group.get("coveredResources")
        if not isinstance(covered, list) or not covered:
            out.append(f"spec.resourceGroups[{i}].coveredResources must be a non-empty list")
        for fl in group.get("flavors") or [{}]:
            if not fl.get("name"):
                out.append(f"spec.resourceGroups[{i}].flavors[].name missing")
            for r in fl.get("resources") or []:
                if "nominalQuota" not in r:
                    out.append(f"spec.resourceGroups[{i}]: {r.get('name')} has no nominalQuota")
                if r.get("name") == GPU_RESOURCE:
                    gpu_quota = r.get("nominalQuota")
    if not _is_count(gpu_quota, 0):
        out.append(f"no whole-number nominalQuota for {GPU_RESOURCE}")
    return out


def _check_local_queue(doc: Mapping[str, Any]) -> list[str]:
    out = [] if doc.get("apiVersion") == KUEUE_API else [f"apiVersion must be {KUEUE_API}"]
    if not _get(doc, "metadata", "namespace"):
        out.append("missing metadata.namespace")
    if not _get(doc, "spec", "clusterQueue"):
        out.append("missing spec.clusterQueue")
    return out


def _check_flavor(doc: Mapping[str, Any]) -> list[str]:
    return [] if doc.get("apiVersion") == KUEUE_API else [f"apiVersion must be {KUEUE_API}"]


def _check_priority_class(doc: Mapping[str, Any]) -> list[str]:
    out = _check_flavor(doc)
    if not isinstance(doc.get("value"), int):
        out.append("value must be a whole number")
    return out


_CHECKS = {
    "Job": _check_job,
    "ClusterQueue": _check_cluster_queue,
    "LocalQueue": _check_local_queue,
    "ResourceFlavor": _check_flavor,
    "WorkloadPriorityClass": _check_priority_class,
}
