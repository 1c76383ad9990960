"""Retraining (severe drift): a job on the reserved GPU pool, whose model then goes to shadow.

Steps: ``export`` (the labelled window, at submit) and ``training_data`` (reference rows
plus the window in ``training.parquet``); ``submit_job`` (a :class:`JobSpec` from the
policy's argv, GPUs, time limit, retries, deferrable and preemptible flags, submitted under
the action key, so a resubmission finds the first job; while the policy's
``max_concurrent_retrains`` jobs of the same model are active in the pool, it waits); then,
on each ``run_pending``, the job's state. When it succeeds, ``find_version`` looks up the
version the job registered
with tag ``driftwatch.action_key``, ``made_by`` tags it ``driftwatch.made_by=retrain``
(trained on the export's coding, label 1 bad, it answers P(bad): what the champion declares
of the user's own model, ``score_is`` and ``score_scale``, is not applied to it),
``challenger`` aliases it, and ``shadow`` records a
follow-up shadow action (key ``<action key>:shadow``) that judges it on live outcomes:
a retrained model never goes straight to production.

The job learns where things are from its environment (see :data:`JOB_ENV`). ``python`` as
the first argv item means the daemon's own interpreter.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import driftwatch
from driftwatch.actions.context import ActionContext, ActionEnv, parse_settings
from driftwatch.actions.export import ensure_export, export_training
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionRecord
from driftwatch.actions.retrain_limits import DECIDED_AT_ENV, held_back, past_jobs
from driftwatch.actions.shadow import shadow_settings
from driftwatch.actions.steps import Done, HeldBack, Result, StepRunner, Waiting
from driftwatch.errors import ActionError
from driftwatch.policy.decision import Decision
from driftwatch.registry.promotion import make_challenger
from driftwatch.registry.versions import TAG_MADE_BY

__all__ = ["JOB_ENV", "build_job_spec", "cancel_retrain", "run_retrain"]

#: Variables every retraining job gets.
JOB_ENV = {
    "DRIFTWATCH_TRAINING_DATA": "Parquet file with the training rows (column origin; "
                                "label 1 bad / 0 good, score P(bad), as the policy codes them)",
    "DRIFTWATCH_WINDOW_DATA": "Parquet file with the recent labelled window alone",
    "DRIFTWATCH_MODEL_NAME": "registered model name to register the new version under",
    "DRIFTWATCH_ACTION_KEY": "tag driftwatch.action_key the new version must carry",
    "DRIFTWATCH_PARENT_VERSION": "the champion's version when the job was submitted",
    "DRIFTWATCH_DATA_WINDOW": "start/end of the window the decision was made on",
    "MLFLOW_TRACKING_URI": "where to log the run and register the version",
}
_NAME_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def _package_root() -> str:
    return str(Path(driftwatch.__file__).resolve().parent.parent)


def build_job_spec(action: ActionRecord, env: ActionEnv, training: str, window: str) -> Any:
    """The pool job for ``action`` (a :class:`driftwatch.gpupool.JobSpec`)."""
    from driftwatch.gpupool import JobSpec

    s = parse_settings("retrain", action.settings)
    argv = list(s.argv)
    if argv[0] in ("python", "python3"):
        argv[0] = env.python
    context = ActionContext.from_dict(action.context)
    champion = env.registry.by_alias(action.model, "champion")
    path = os.pathsep.join(p for p in (_package_root(), os.environ.get("PYTHONPATH")) if p)
    job_env = {
        "DRIFTWATCH_TRAINING_DATA": training,
        "DRIFTWATCH_WINDOW_DATA": window,
        "DRIFTWATCH_MODEL_NAME": action.model,
        "DRIFTWATCH_ACTION_KEY": action.key,
        "DRIFTWATCH_PARENT_VERSION": champion.version if champion else "",
        "DRIFTWATCH_DATA_WINDOW": context.window_label or "",
        "MLFLOW_TRACKING_URI": env.registry.tracking_uri,
        DECIDED_AT_ENV: repr(float(action.decided_at)),  # the pool's records keep the limits
        "PYTHONPATH": path,  # the job imports the daemon's driftwatch, installed or not
    }
    name = _NAME_BAD.sub("-", f"retrain-{action.model}-{action.window_id}")[:63].strip("-.")
    return JobSpec(
        name=name or "retrain",
        argv=argv,
        env=job_env,
        gpus=s.gpus,
        time_limit_s=float(s.time_limit),
        retries=s.retries,
        severity=action.tier if action.tier in ("mild", "moderate", "severe") else "severe",
        deferrable=s.deferrable,
        preemptible=s.preemptible,
    )


def run_retrain(action: ActionRecord, steps: StepRunner, env: ActionEnv, outbox: Outbox) -> Result:
    """Run (or resume) one retraining; see the module doc."""
    if env.pool is None:
        raise ActionError("retraining needs the GPU pool, and this executor has none")
    folder = env.action_dir(action.id)
    context = ActionContext.from_dict(action.context)
    ensure_export(action, steps, env)
    window = folder / "window.parquet"
    training = steps.run(
        "training_data",
        lambda: export_training(
            window if window.exists() else None,
            # coded as the window is: label 1 bad / 0 good, score P(bad), ignored columns out
            env.reference_rows(context),
            folder / "training.parquet",
        ),
    )

    if steps.result("submit_job") is None:
        busy = _busy_jobs(env, action)
        limit = env.max_concurrent_retrains
        if limit is not None and len(busy) >= limit:
            return Waiting(
                f"waits for a retraining slot: {len(busy)} of {limit} in use "
                f"(job {', '.join(busy)})"
            )
        if env.retrain_limits is not None:  # measured at decision times, as the engine does
            jobs = past_jobs(env.pool.status().jobs, action.model, exclude_key=action.key)
            held = held_back(env.retrain_limits, jobs, tier=action.tier, now=action.decided_at)
            if held is not None:
                return HeldBack(f"held back by the pool's job records: {held}")

    def submit() -> dict[str, Any]:
        spec = build_job_spec(action, env, training["path"], str(window))
        return {"job_id": env.pool.submit(spec, key=action.key), "gpus": spec.gpus}  # type: ignore[union-attr]

    job_id = steps.run("submit_job", submit)["job_id"]
    outbox.update(action.id, artifacts={"job_id": job_id})
    record = env.pool.get(job_id)
    if not record.state.is_final:
        return Waiting(f"job {job_id} {record.state.value}")
    if record.state.value != "succeeded":
        raise ActionError(
            f"retraining job {job_id} {record.state.value}"
            + (f": {record.message}" if record.message else "")
            + (f" (log {record.log_path})" if record.log_path else "")
        )
    steps.run(
        "job_finished",
        lambda: {"job_id": job_id, "state": record.state.value, "attempts": record.attempts},
    )

    def find_version() -> dict[str, Any]:
        info = env.registry.find_version(action.model, action.key)
        if info is None:
            elsewhere = ", ".join(f"{v.name!r} v{v.version}" for v in
                                  env.registry.tagged_elsewhere(action.model, action.key))
            raise ActionError(
                f"job {job_id} succeeded but registered no version of {action.model!r} "
                f"tagged driftwatch.action_key={action.key}"
                + (f"; it registered {elsewhere} with that tag: the job must register under "
                   f"$DRIFTWATCH_MODEL_NAME ({action.model!r}), not a model name of its own "
                   "(its argv's --model-name?)" if elsewhere else "")
            )
        return {"version": info.version, "run_id": info.run_id}

    found = steps.run("find_version", find_version)
    version = found["version"]
    outbox.update(action.id, artifacts={"version": version, "run_id": found["run_id"]})

    def made_by() -> dict[str, Any]:
        env.registry.set_version_tag(action.model, version, TAG_MADE_BY, "retrain")
        return {"tag": f"{TAG_MADE_BY}=retrain"}

    steps.run("made_by", made_by)
    steps.run(
        "challenger",
        lambda: {
            "replaced": make_challenger(
                env.registry, action.model, version, at=env.clock.now(), by=action.key
            )
        },
    )

    def follow_up() -> dict[str, Any]:
        approval = bool(shadow_settings({}, dict(env.shadow_defaults)).require_approval)
        decision = Decision.from_dict(
            {
                **action.decision,
                "action": "shadow",
                "action_settings": {},
                "requires_approval": approval,
            }
        )
        ctx = {
            **context.to_dict(),
            "extra": {**context.extra, "challenger_version": version, "after": action.key},
        }
        shadow_id, _ = outbox.record(
            decision, ctx, key=f"{action.key}:shadow", action="shadow", parent_id=action.id
        )
        return {"shadow_action_id": shadow_id}

    shadow = steps.run("shadow", follow_up)
    return Done(
        {
            "job_id": job_id,
            "version": version,
            "run_id": found["run_id"],
            "alias": "challenger",
            "shadow_action_id": shadow["shadow_action_id"],
        }
    )


def _busy_jobs(env: ActionEnv, action: ActionRecord) -> list[str]:
    """Active pool jobs of the same model that belong to other actions."""
    assert env.pool is not None
    prefix = f"{action.model}:"
    return [
        j.job_id
        for j in env.pool.status().jobs
        if not j.state.is_final and (j.key or "").startswith(prefix) and j.key != action.key
    ]


def cancel_retrain(action: ActionRecord, env: ActionEnv, outbox: Outbox) -> dict[str, Any]:
    """A cancelled retraining stops its pool job (if it was submitted)."""
    submitted = outbox.step_result(action.id, "submit_job")
    if not submitted or env.pool is None:
        return {"job_id": None}
    record = env.pool.cancel(submitted["job_id"])
    return {"job_id": submitted["job_id"], "job_state": record.state.value}
