"""Shadow deployment (moderate drift): a challenger scores beside the champion until the
outcomes say which is better.

Steps: ``challenger`` finds the model to test (the one named by the action's context, else
the registry's ``challenger`` alias, else a new online update of the champion on the
exported window, a recalibration layer for a champion that is not a river model,
registered and aliased ``challenger``). Every live prediction batch is scored by both
versions as it arrives (:func:`observe_live`, called by the pipeline's prediction hook),
and on every ``run_pending`` the labelled rows that joined since the last look are scored by
both (any flavour, see :mod:`~driftwatch.registry.scorer`) and added to the
:class:`ShadowEvaluation` stored with the action. Once it has a verdict: ``promote``
(alias swap, then the new
champion's reference profile goes to the monitor through the promote hook) after an
approval when the policy asks for one, or ``discard`` (challenger alias removed, version
tagged ``driftwatch.verdict=discarded``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from driftwatch.actions.context import ActionContext, ActionEnv, parse_settings
from driftwatch.actions.export import ensure_export, read_window
from driftwatch.actions.online_update import (
    adopt_profile,
    build_candidate,
    learn_window,
    learner_after_promotion,
)
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.recalibrate import recalibrated_candidate, river_champion
from driftwatch.actions.records import ActionRecord
from driftwatch.actions.shadow_eval import SHADOW_KEY, ShadowEvaluation, judged_on
from driftwatch.actions.steps import Done, NeedsApproval, Result, StepRunner, Waiting
from driftwatch.errors import ActionError
from driftwatch.policy.actions import ShadowAction
from driftwatch.registry.promotion import discard, make_challenger, promote
from driftwatch.registry.versions import (
    CHALLENGER,
    CHAMPION,
    TAG_MADE_BY,
    TAG_RECALIBRATION_OF,
)

__all__ = ["cancel_shadow", "observe_live", "run_shadow", "shadow_settings"]



def shadow_settings(settings: dict[str, Any], defaults: dict[str, Any]) -> ShadowAction:
    """The action's shadow settings over the executor's defaults over the policy schema's."""
    return parse_settings("shadow", settings, defaults)


def run_shadow(action: ActionRecord, steps: StepRunner, env: ActionEnv, outbox: Outbox) -> Result:
    """Run (or resume) one shadow deployment; see the module doc."""
    model = action.model
    context = ActionContext.from_dict(action.context)
    cfg = shadow_settings(action.settings, dict(env.shadow_defaults))
    ensure_export(action, steps, env)
    chosen = steps.run("challenger", lambda: _challenger(action, env, context))
    version = chosen["version"]

    ev = _evaluation(action, env, cfg, chosen)
    if ev.verdict is None:
        _consume(ev, env, model, version)
        ev.judge(env.clock.now())
        outbox.update(action.id, artifacts={SHADOW_KEY: ev.to_dict()})
    if ev.verdict is None:
        return Waiting(f"{ev.labelled} of {ev.min_labelled} labelled outcomes")
    steps.run(
        "verdict",
        lambda: {"verdict": ev.verdict, "reason": ev.reason, "metrics": ev.to_dict()["metrics"]},
    )
    if ev.verdict == "discard":
        steps.run(
            "discard",
            lambda: discard(env.registry, model, version, at=env.clock.now(), by=action.key) or {},
        )
        return Done(
            {
                "verdict": "discarded",
                "version": version,
                "reason": ev.reason,
                "metrics": ev.to_dict()["metrics"],
            }
        )
    if action.requires_approval and not action.approver:
        return NeedsApproval(f"challenger v{version} wins: {ev.reason}; approve to promote")

    def do_promote() -> dict[str, Any]:
        by = action.approver or action.key
        previous = promote(env.registry, model, version, at=env.clock.now(), by=by)
        return {"previous": previous}

    promoted = steps.run("promote", do_promote)
    adopted = steps.run("adopt_profile", lambda: adopt_profile(env, model, version))
    warned = steps.run("check_online_updates",
                       lambda: {"warning": learner_after_promotion(env, model, version)})
    return Done(
        {
            "verdict": "promoted",
            "version": version,
            "previous": promoted["previous"],
            **({"warning": warned["warning"]} if warned.get("warning") else {}),
            "approver": action.approver,
            "reason": ev.reason,
            "profile_fingerprint": adopted.get("profile_fingerprint"),
            "metrics": ev.to_dict()["metrics"],
        }
    )


def _challenger(action: ActionRecord, env: ActionEnv, context: ActionContext) -> dict[str, Any]:
    model = action.model
    champion = env.registry.by_alias(model, CHAMPION)
    if champion is None:
        raise ActionError(f"model {model!r} has no champion to compare a challenger with")
    named = context.extra.get("challenger_version")
    if named is not None:  # a retraining's version
        return {"version": str(named), "champion_version": champion.version, "created": False}
    current = env.registry.by_alias(model, CHALLENGER)
    if current is not None and current.version != champion.version:
        # one made earlier (a replay left it undecided) is judged as when it was made
        return {"version": current.version, "champion_version": champion.version,
                "created": False, "recalibration": _recalibrates(current, champion.version)}
    # No challenger yet: make one from the champion and the labelled window.
    existing = env.registry.find_version(model, action.key)
    recalibration = _recalibrates(existing, champion.version)
    if existing is None:
        export = env.action_dir(action.id) / "window.parquet"
        if not export.exists():
            raise ActionError("no challenger in the registry and no labelled window to train one")
        window = read_window(export)
        base = river_champion(env, model, champion.version)
        candidate: Any
        tags: dict[str, str] = {TAG_MADE_BY: "shadow"}
        if base is None:  # any other model: a recalibration layer is the challenger
            candidate, metrics = recalibrated_candidate(env, model, champion.version, window)
            learner, start = "LogitCalibrator", "recalibrate"
            tags[TAG_RECALIBRATION_OF] = str(champion.version)
        else:
            candidate, start = build_candidate(
                base,
                action.settings.get("learner", env.default_learner),
                window=window,
                reference=None,
                numeric=list(base.encoder.numeric),
                categorical=list(base.encoder.categorical),
            )
            metrics = learn_window(candidate, window)
            learner = candidate.learner
        existing = env.registry.publish(
            model,
            candidate,
            action_key=action.key,
            profile=env.version_profile(model, champion.version),
            metrics={k: v for k, v in metrics.items() if v == v},
            params={"learner": learner, "start": start, "action": "shadow"},
            parent_version=champion.version,
            data_window=context.window_label,
            tags=tags,
        )
        recalibration = TAG_RECALIBRATION_OF in tags
    make_challenger(env.registry, model, existing.version, at=env.clock.now(), by=action.key)
    return {"version": existing.version, "champion_version": champion.version, "created": True,
            "recalibration": recalibration}


def _recalibrates(version: Any, champion_version: str) -> bool:
    """Whether a registered ``version`` (None: none) is a recalibration layer on the
    champion's version: it ranks rows as the champion does, so it is judged on log loss."""
    return version is not None and \
        version.tags.get(TAG_RECALIBRATION_OF) == str(champion_version)


def _evaluation(
    action: ActionRecord, env: ActionEnv, cfg: ShadowAction, chosen: dict[str, Any]
) -> ShadowEvaluation:
    stored = action.artifacts.get(SHADOW_KEY)
    if stored:
        return ShadowEvaluation.from_dict(stored)
    metric, instead = judged_on(str(cfg.metric), recalibration=bool(chosen.get("recalibration")))
    return ShadowEvaluation(
        model=action.model,
        champion_version=chosen.get("champion_version"),
        challenger_version=chosen["version"],
        metric=metric,
        metric_instead_of=instead,
        margin=float(cfg.margin),
        min_labelled=int(cfg.min_labelled),
        max_duration=float(cfg.max_duration),
        started_at=env.clock.now(),
        cutoff=env.cutoff,
        # only outcomes that joined after the challenger was made count: it never saw them
        last_seq=env.buffer.seq if env.buffer is not None else 0,
        # and live rows from the monitor's next prediction on (None: not known yet)
        live_through=env.live_position[1] if env.live_position else None,
        live_lineage=env.live_position[0] if env.live_position else None,
    )


def _champion_scores(
    ev: ShadowEvaluation, env: ActionEnv, model: str, rows: pd.DataFrame,
    logged: np.ndarray | None,
) -> np.ndarray:
    """The champion version's scores of ``rows`` (both models are scored alike); the
    production scores logged with the rows when the version is unknown."""
    if ev.champion_version is None:
        if logged is None:
            raise ActionError("the shadow has no champion version and no logged scores")
        return np.asarray(logged, np.float64)
    return env.scorer(model, ev.champion_version).score(rows)


def _consume(ev: ShadowEvaluation, env: ActionEnv, model: str, version: str) -> None:
    """Score the labelled rows that joined since the last look."""
    buf = env.buffer
    if buf is None or buf.seq <= ev.last_seq:
        return
    oldest = buf.seq - len(buf) + 1
    if oldest > ev.last_seq + 1:
        ev.missed += oldest - ev.last_seq - 1
    rows = buf.frame(after_seq=ev.last_seq)
    if len(rows):
        champion = _champion_scores(ev, env, model, rows, rows["score"].to_numpy())
        challenger = env.scorer(model, version).score(rows)
        ev.observe_labelled(champion, challenger, rows["label"].to_numpy())
    ev.last_seq = buf.seq


def observe_live(
    action: ActionRecord,
    env: ActionEnv,
    outbox: Outbox,
    frame: pd.DataFrame,
    champion_score: np.ndarray | None = None,
    exposure: np.ndarray | None = None,
    event_time: np.ndarray | None = None,
    first_index: int | None = None,
    lineage: str | None = None,
) -> None:
    """Score one batch of live predictions with both versions: approval rate and expected
    loss at the cut-off, and the score distributions (for their PSI).

    ``first_index`` is the index of the batch's first prediction in monitor ``lineage``:
    rows the shadow counted before a restart (the monitor re-reads what its checkpoint had
    not covered) are skipped, and the counts and that mark are written in one update.
    """
    stored = action.artifacts.get(SHADOW_KEY)
    if not stored or not len(frame):
        return
    ev = ShadowEvaluation.from_dict(stored)
    if ev.verdict is not None:
        return
    skip = ev.unseen(first_index, len(frame), lineage)
    if skip == len(frame):
        return
    if skip:
        frame = frame.iloc[skip:].reset_index(drop=True)
        champion_score, exposure, event_time = (
            None if a is None else np.asarray(a)[skip:]
            for a in (champion_score, exposure, event_time))
        first_index = None if first_index is None else first_index + skip
    champion = _champion_scores(ev, env, action.model, frame, champion_score)
    challenger = env.scorer(action.model, ev.challenger_version).score(frame)
    ev.observe_live(champion, challenger, exposure, event_time)
    ev.mark_live(first_index, len(frame), lineage)
    outbox.update(action.id, artifacts={SHADOW_KEY: ev.to_dict()})


def cancel_shadow(action: ActionRecord, env: ActionEnv, outbox: Outbox) -> dict[str, Any]:
    """A cancelled shadow takes its challenger out of shadow (tag ``cancelled``)."""
    chosen = outbox.step_result(action.id, "challenger")
    if not chosen:
        return {"challenger": None}
    version = str(chosen["version"])
    discard(
        env.registry, action.model, version, at=env.clock.now(), by="cancel", verdict="cancelled"
    )
    return {"challenger": version}
