"""``driftwatch pool status`` and ``driftwatch pool render``.

``status`` reads the pool's state folder without taking the pool's lock (a running daemon
holds it) and, when the configuration's backend is ray, asks Ray for its own view: the
cluster's resources, the reserved resource's total and use, and driftwatch's jobs there.
``render`` writes Kubernetes manifests (Kueue queue for the reserved share, and a Job
template for a policy's retrain action); driftwatch does not submit them.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="driftwatch")
>>> add_commands(parser.add_subparsers(dest="command"))
>>> args = parser.parse_args(["pool", "status", "--config", "driftwatch.yaml", "--json"])
>>> args.config, args.state_dir, args.json, args.func is run_pool_status
('driftwatch.yaml', None, True, True)
>>> parser.parse_args(["pool", "render", "--gpus", "10"]).func is run_pool_render
True
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from driftwatch.errors import PoolError
from driftwatch.gpupool.errors import PoolConfigError

__all__ = ["add_commands", "read_pool_status", "run_pool_render", "run_pool_status"]

DEFAULT_STATE = "./state"


def add_commands(subparsers: Any) -> None:
    """Add ``pool status`` and ``pool render`` to a CLI's subparsers."""
    pool = subparsers.add_parser("pool", help="the GPU pool for retraining jobs")
    psub = pool.add_subparsers(dest="pool_command", required=True)
    st = psub.add_parser(
        "status", help="capacity, reserved GPUs, queue and running jobs (and Ray's own view)")
    st.add_argument("--config", "-c", metavar="FILE",
                    help="service configuration: its state folder, GPUs and backend")
    st.add_argument("--state-dir", help="state folder (default: the config's, else ./state)")
    st.add_argument("--gpus", type=int, help="cluster GPUs (default: the config's, else "
                                             "ask nvidia-smi)")
    st.add_argument("--reserve-fraction", type=float,
                    help="share of the GPUs reserved for retraining (default: the config's, "
                         "else 0.2)")
    st.add_argument("--json", action="store_true", help="print JSON")
    st.set_defaults(func=run_pool_status)

    rd = psub.add_parser(
        "render", help="write Kubernetes manifests (Kueue quota, retraining Job); not applied",
        description="Write the Kueue ResourceFlavor, ClusterQueue (nvidia.com/gpu quota = "
                    "the reserved share), LocalQueue and priority classes, and with --policy "
                    "a Job template for its retrain action. driftwatch does not submit "
                    "anything to Kubernetes: apply them with your own tooling.")
    rd.add_argument("--config", "-c", metavar="FILE",
                    help="service configuration (for gpus and reserve_fraction)")
    rd.add_argument("--gpus", type=int, help="the Kubernetes cluster's GPUs")
    rd.add_argument("--reserve-fraction", type=float, help="reserved share (default 0.2)")
    rd.add_argument("--namespace", default="default", help="namespace of queue and Job")
    rd.add_argument("--policy", "-p", help="policy whose retrain action becomes a Job")
    rd.add_argument("--image", help="container image of the retraining job (with --policy)")
    rd.add_argument("--checkpoint-claim", metavar="PVC",
                    help="PersistentVolumeClaim mounted for checkpoints")
    rd.add_argument("--out", "-o", help="file to write (default: stdout)")
    rd.set_defaults(func=run_pool_render)


def _pool_db(state_dir: Path) -> Path | None:
    for folder in (state_dir / "pool", state_dir / "gpupool", state_dir):
        candidate = folder / "gpupool.sqlite3"
        if candidate.exists():
            return candidate
    return None


def read_pool_status(state_dir: str | Path, *, gpus: Any,
                     reserve_fraction: float | None) -> Any:
    """The pool's :class:`~driftwatch.gpupool.PoolStatus`, read without taking the pool's
    lock (a running daemon holds it). ``state_dir`` may be relative. Without ``gpus`` and
    ``reserve_fraction``, the GPUs are those the pool published when it started (a pool of
    logical GPUs has none nvidia-smi could see)."""
    from driftwatch.gpupool import JobRecord, PoolStatus, reserved_gpu_ids
    from driftwatch.gpupool.capacity import DEFAULT_RESERVE_FRACTION, resolve_gpu_ids
    from driftwatch.gpupool.published import read_capacity

    path = _pool_db(Path(state_dir).absolute())
    published = read_capacity(path.parent) if path is not None else None
    if published is not None and gpus is None and reserve_fraction is None:
        gpu_ids, reserved = published
    else:
        if gpus is None and published is not None:
            gpus = len(published[0])
        gpu_ids = resolve_gpu_ids(gpus)
        reserved = reserved_gpu_ids(gpu_ids, DEFAULT_RESERVE_FRACTION
                                    if reserve_fraction is None else reserve_fraction)
    if path is None:
        return PoolStatus.of(gpu_ids, reserved, [], [])
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT record FROM jobs ORDER BY seq").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise PoolError(f"cannot read the pool state {path}: {exc}") from exc
    records = [JobRecord.from_dict(json.loads(r[0])) for r in rows]
    active = [r for r in records if not r.state.is_final]
    recent = [r for r in reversed(records) if r.state.is_final][:20]
    return PoolStatus.of(gpu_ids, reserved, active, recent)


def _settings(args: argparse.Namespace) -> tuple[Path, Any, float | None, Any]:
    """State folder, GPUs, reserve fraction and pool config (None without --config)."""
    pool = None
    state = Path(args.state_dir or DEFAULT_STATE)
    if args.config:
        from driftwatch.service.config import load_service_config

        cfg = load_service_config(args.config)
        pool = cfg.pool
        state = Path(args.state_dir) if args.state_dir else cfg.state_dir
    gpus = args.gpus if args.gpus is not None else (pool.gpus if pool else None)
    fraction = args.reserve_fraction
    if fraction is None and pool is not None:
        fraction = pool.reserve_fraction
    return state, gpus, fraction, pool  # None, None: what the running pool published


def run_pool_status(args: argparse.Namespace) -> int:
    state, gpus, fraction, pool = _settings(args)
    status = read_pool_status(state, gpus=gpus, reserve_fraction=fraction)
    view, unreachable = None, None
    if pool is not None and pool.ray is not None:
        from driftwatch.gpupool.errors import BackendUnreachableError
        from driftwatch.gpupool.ray_status import RayView

        try:
            view = RayView.fetch(pool.ray.address, resource=pool.ray.resource,
                                 namespace=pool.ray.namespace)
        except BackendUnreachableError as exc:
            unreachable = str(exc)
        except (KeyError, TypeError) as exc:
            unreachable = f"Ray at {pool.ray.address} answered in an unexpected shape: {exc}"
    if args.json:
        doc = status.to_dict()
        if pool is not None and pool.ray is not None:
            doc["ray"] = (view.to_dict(status.reserved) if view is not None
                          else {"error": unreachable})
        print(json.dumps(doc, indent=2, sort_keys=True, default=str))
        return 1 if unreachable else 0
    _print_pool(status)
    if view is not None:
        _print_ray(view, status.reserved)
    if unreachable:
        print(f"error: {unreachable}", file=sys.stderr)
        return 1
    return 0


def _print_pool(status: Any) -> None:
    print(
        f"GPUs: {status.capacity} in the cluster, {status.reserved} reserved "
        f"({', '.join(status.reserved_ids) or 'none'}), {status.in_use} in use, "
        f"{status.free} free"
    )
    print(f"jobs: {status.running} running, {status.queued} queued, {status.deferred} deferred")
    for r in status.jobs:
        lease = ",".join(r.lease) or "-"
        print(
            f"  {r.job_id:<32} {r.state.value:<10} gpus={r.spec.gpus} lease={lease} "
            f"attempts={r.attempts} key={r.key or '-'}"
        )


def _num(x: float) -> str:
    return f"{x:g}"


def _print_ray(view: Any, reserved: int) -> None:
    doc = view.to_dict(reserved)
    res = doc["reserved"]
    print(f"Ray at {view.address}" + (f" (namespace {view.namespace})" if view.namespace else ""))
    if view.resource:
        nodes = ", ".join(n[:12] for n in res["nodes"]) or "no node"
        print(f"  reserved {view.resource}: {_num(res['used'])} of {_num(res['total'])} in use"
              f" (on {nodes})")
    shown = [k for k in ("CPU", "GPU", view.resource) if k and k in view.usage]
    print("  resources: " + ", ".join(
        f"{k} {_num(view.usage[k][0])}/{_num(view.usage[k][1])}" for k in shown))
    for n in doc["nodes"]:
        have = ", ".join(f"{k}={_num(v)}" for k, v in sorted(n["resources"].items())
                         if k in ("CPU", "GPU") or k == view.resource)
        print(f"  node {str(n['node_id'])[:12]} {n['state'].lower()}"
              f"{' head' if n['head'] else ''}: {have}")
    print(f"  jobs: {len(doc['jobs'])} of driftwatch, {doc['other_jobs']} others")
    for j in doc["jobs"]:
        print(f"    {j['submission_id']:<40} {str(j['status']).lower():<10} "
              f"node={str(j['node_id'] or '-')[:12]}")
    for problem in doc["problems"]:
        print(f"  warning: {problem}")


def run_pool_render(args: argparse.Namespace) -> int:
    from driftwatch.gpupool.capacity import DEFAULT_RESERVE_FRACTION
    from driftwatch.gpupool.kubernetes import check_manifests, render_job, render_queue, to_yaml

    _state, gpus, fraction, _pool = _settings(
        argparse.Namespace(config=args.config, state_dir=None, gpus=args.gpus,
                           reserve_fraction=args.reserve_fraction))
    if not isinstance(gpus, int):
        raise PoolConfigError("pool render needs the Kubernetes cluster's GPU count: --gpus N "
                          "(or a config whose pool.gpus is a count)")
    docs = render_queue(gpus, DEFAULT_RESERVE_FRACTION if fraction is None else fraction,
                        namespace=args.namespace)
    if args.policy:
        if not args.image:
            raise PoolConfigError("--policy needs --image: the container that runs the job")
        spec = _policy_job(args.policy)
        docs.append(render_job(spec, job_id=spec.name, image=args.image,
                               namespace=args.namespace, checkpoint_claim=args.checkpoint_claim))
    check_manifests(docs)
    text = to_yaml(docs)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {len(docs)} manifests to {args.out} (not applied: use kubectl apply)")
    else:
        sys.stdout.write(text)
    return 0


def _policy_job(path: str) -> Any:
    """The :class:`~driftwatch.gpupool.JobSpec` of the policy's retrain action."""
    from driftwatch.gpupool import JobSpec
    from driftwatch.policy.loader import load_policy

    policy = load_policy(path)
    for tier in ("severe", "moderate", "mild"):
        a = getattr(policy.actions, tier, None)
        if getattr(a, "type", None) == "retrain":
            name = _job_name(f"retrain-{policy.model.name}")
            return JobSpec(name=name, argv=list(a.argv), gpus=a.gpus,
                           time_limit_s=float(a.time_limit), retries=a.retries,
                           severity=tier, deferrable=a.deferrable, preemptible=a.preemptible)
    raise PoolConfigError(f"{path}: the policy has no retrain action to render as a Job")


def _job_name(text: str) -> str:
    """A job name both the pool and Kubernetes accept.

    >>> _job_name("retrain-Credit Risk_v2")
    'retrain-credit-risk-v2'
    """
    from driftwatch.gpupool.kubernetes import k8s_name

    return k8s_name(text)[:50].rstrip("-") or "retrain"
