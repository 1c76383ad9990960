"""``driftwatch pool render``: Kubernetes manifests that a schema of the real APIs accepts.

The schema (``schemas/kubernetes-manifests.schema.json``) is the subset of ``batch/v1`` Job
and Kueue ``v1beta1`` that driftwatch writes, closed so that invented fields fail.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from driftwatch.cli import main
from driftwatch.gpupool import JobSpec
from driftwatch.gpupool.kubernetes import render_job, render_queue
from driftwatch.policy.loader import load_policy

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "policies" / "credit-risk-demo.yaml"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "kubernetes-manifests.schema.json")
                    .read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def problems(doc: Any) -> list[str]:
    out = [e.message for e in VALIDATOR.iter_errors(doc)]
    if doc.get("kind") == "ClusterQueue":  # Kueue's CEL rule, beyond JSON Schema
        for group in doc["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                if [r["name"] for r in flavor["resources"]] != group["coveredResources"]:
                    out.append(f"flavor {flavor['name']} must list {group['coveredResources']}")
    return out


def test_rendered_manifests_match_the_kubernetes_and_kueue_schemas(tmp_path: Path, capsys):
    out = tmp_path / "k8s.yaml"
    argv = ["pool", "render", "--gpus", "10", "--namespace", "risk", "--policy", str(POLICY),
            "--image", "registry.example/pd-trainer:3", "--checkpoint-claim", "ckpt", "-o",
            str(out)]
    assert main(argv) == 0
    assert "not applied" in capsys.readouterr().out
    docs = list(yaml.safe_load_all(out.read_text(encoding="utf-8")))
    assert sorted(d["kind"] for d in docs) == [
        "ClusterQueue", "Job", "LocalQueue", "ResourceFlavor",
        "WorkloadPriorityClass", "WorkloadPriorityClass", "WorkloadPriorityClass"]
    for doc in docs:
        assert problems(doc) == [], doc["kind"]
    (cq,) = [d for d in docs if d["kind"] == "ClusterQueue"]
    quota = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert quota == [{"name": "nvidia.com/gpu", "nominalQuota": 2}]  # 20 % of 10
    (job,) = [d for d in docs if d["kind"] == "Job"]
    retrain = load_policy(POLICY).actions.severe
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == list(retrain.argv)
    assert container["resources"]["limits"] == {"nvidia.com/gpu": max(1, retrain.gpus)}
    assert job["metadata"]["namespace"] == "risk" and job["spec"]["suspend"] is True


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("spec", "backoffLimit"), "1"),
        (("spec", "template", "spec", "restartPolicy"), "Always"),
        (("metadata", "name"), "Retrain_PD"),
        (("spec", "template", "spec", "containers", 0, "resources", "limit"), {}),
    ],
)
def test_the_schema_rejects_what_kubernetes_would(where: tuple[Any, ...], value: Any):
    job = render_job(JobSpec("retrain-pd", ["python", "train.py"]), job_id="000001-retrain-pd",
                     image="trainer:1")
    assert problems(job) == []
    broken = copy.deepcopy(job)
    target = broken
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    assert problems(broken) != []


def test_a_queue_for_more_resources_still_matches():
    docs = render_queue(64, 0.25, quotas={"cpu": 128, "memory": "512Gi"},
                        node_labels={"nvidia.com/gpu.product": "H100"})
    assert [problems(d) for d in docs] == [[]] * len(docs)


def test_render_says_what_it_needs(capsys):
    assert main(["pool", "render"]) == 1
    assert "needs the Kubernetes cluster's GPU count" in capsys.readouterr().err
    assert main(["pool", "render", "--gpus", "4", "--policy", str(POLICY)]) == 1
    assert "--policy needs --image" in capsys.readouterr().err
