"""Online update (mild drift): the recent labelled window updates the champion.

Two methods (policy ``method``; ``auto`` picks by the champion). A champion that is not a
river model (a scikit-learn, XGBoost, LightGBM or custom pyfunc) gets a recalibration
layer on its score (:mod:`~driftwatch.actions.recalibrate`), registered as a version that
wraps it; ``method: learner`` is refused for it (:func:`foreign_learner`), since a river
learner would not update it but replace it. A river champion learns on: the learner
comes from the policy's allow-list (``StandardScaler|LogisticRegression`` by default).
When the champion is a river model with the same learner it is copied and goes on
learning (a warm start); otherwise a fresh learner first learns a sample of the reference
data. The window is learned in small chunks, each scored before it is learned
(progressive validation), which gives an honest AUC and log loss of the updated model on
data it had not seen, beside the champion's on the same rows.

The result is a new model version with lineage (parent version, data window, action key,
reference profile fingerprint, :func:`~driftwatch.actions.update_digest.update_digest`),
then alias ``challenger`` or, with ``promote: direct``, ``champion``. Steps: ``export`` (at
submit), ``train``, ``publish``, ``alias``.

An update whose digest a registered version already carries (the same parent, learner and
labelled rows: two mild windows before new labels came in) trains and registers nothing: it
ends ``unchanged`` and reuses that version: it gets the policy's alias (``promote: direct``
promotes a waiting challenger) unless it was judged already (one discarded, superseded or
rolled back is not proposed again). One whose digest a discarded update carries (a
recalibration that lost on its holdout) is not made again either: it ends ``discarded`` at
once, naming that action and its reason, without rescoring the window; the outbox holds the
discarded ones, across restarts.
"""

from __future__ import annotations

import logging
import math
import pickle
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.actions.context import ActionContext, ActionEnv, parse_settings
from driftwatch.actions.export import ensure_export, read_window
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.recalibrate import (
    HOLDOUT,
    recalibrated_candidate,
    recalibration_loses,
    river_champion,
)
from driftwatch.actions.records import ActionRecord, ActionState
from driftwatch.actions.scoring import auc_exact, log_loss_sum
from driftwatch.actions.steps import Done, Result, StepRunner
from driftwatch.actions.update_digest import update_digest
from driftwatch.errors import ActionError
from driftwatch.registry.learners import normalise_learner
from driftwatch.registry.promotion import make_challenger, promote
from driftwatch.registry.reading import scale_name
from driftwatch.registry.river_model import FeatureEncoder, RiverModel
from driftwatch.registry.versions import (
    CHALLENGER,
    CHAMPION,
    PROFILE_ARTIFACT,
    TAG_MADE_BY,
    TAG_RECALIBRATION_OF,
    TAG_UPDATE_DIGEST,
    TAG_VERDICT,
)
from driftwatch.windows.profile import ReferenceProfile

__all__ = [
    "build_candidate",
    "discarded_before",
    "foreign_learner",
    "learn_window",
    "learner_after_promotion",
    "learner_on_foreign",
    "run_online_update",
]

log = logging.getLogger("driftwatch.actions.online_update")

_WARM_ROWS = 5000


def learn_window(model: RiverModel, frame: pd.DataFrame, *, chunk: int = 16) -> dict[str, float]:
    """Predict-then-learn over ``frame`` (needs a ``label`` column) in chunks; returns the
    progressive AUC and log loss, and the champion's on the same rows when ``score`` is there.
    """
    y = frame["label"].to_numpy(np.float64)
    x = model.encoder.transform(frame)
    step = chunk if model.learns_many else 1
    preds = np.empty(len(frame))
    for start in range(0, len(frame), max(step, 1)):
        part = x.iloc[start : start + step]
        preds[start : start + len(part)] = model.predict_encoded(part)
        model.learn_encoded(part, y[start : start + len(part)])
    out = {
        "rows": float(len(frame)),
        "pv_auc": auc_exact(preds, y),
        "pv_log_loss": _log_loss(preds, y),
    }
    if "score" in frame.columns:
        logged = frame["score"].to_numpy(np.float64)
        ok = np.isfinite(logged)
        out["champion_auc"] = auc_exact(logged[ok], y[ok])
        out["champion_log_loss"] = _log_loss(logged[ok], y[ok])
    return out


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return log_loss_sum(p, y) / len(p) if len(p) else math.nan


def build_candidate(
    champion: RiverModel | None,
    learner: str,
    *,
    window: pd.DataFrame,
    reference: pd.DataFrame | None,
    numeric: list[str],
    categorical: list[str],
) -> tuple[RiverModel, str]:
    """The model to update and how it was started (``warm`` or ``fresh``)."""
    spec = normalise_learner(learner)
    if champion is not None and champion.learner == spec:
        return champion.copy(), "warm"
    if champion is not None:
        encoder = champion.encoder
    else:
        fit_on = reference if reference is not None else window
        encoder = FeatureEncoder.fit(fit_on, numeric=numeric, categorical=categorical)
    model = RiverModel.fresh(encoder, spec)
    if reference is not None and "label" in reference.columns:
        sample = reference.dropna(subset=["label"]).head(_WARM_ROWS)
        learn_window(model, sample.drop(columns=["score"], errors="ignore"), chunk=64)
    return model, "fresh"


def run_online_update(action: ActionRecord, steps: StepRunner, env: ActionEnv) -> Result:
    """Run (or resume) one online update; see the module doc for its steps."""
    settings = parse_settings("online_update", action.settings)
    context = ActionContext.from_dict(action.context)
    model_name = action.model
    folder = env.action_dir(action.id)
    candidate_path = folder / "candidate.pkl"

    export = ensure_export(action, steps, env)

    def train() -> dict[str, Any]:
        if export is None:
            raise ActionError("no labelled window was exported for this action")
        window = read_window(export["path"])
        need = settings.min_labelled
        if len(window) < max(need, 1):  # not enough data yet: nothing is wrong, nothing made
            return {"start": "skipped", "labelled": len(window), "min_labelled": need,
                    "reason": f"only {len(window)} labelled rows in the window, "
                              f"the policy needs {need}"}
        info = env.registry.by_alias(model_name, CHAMPION)
        champion = river_champion(env, model_name, info.version if info else None)
        method = settings.method
        if method == "auto":
            method = "recalibrate" if info is not None and champion is None else "learner"
        elif method == "learner" and info is not None and champion is None:
            flavor = env.scorer(model_name, info.version).flavor
            raise ActionError(foreign_learner(f"{model_name} v{info.version}", flavor,
                                              settings.learner))
        parent = info.version if info else None
        if method == "recalibrate":
            learned_by = "LogitCalibrator"
            extra = {"holdout": HOLDOUT, "score_is": env.score_is}
            if not env.score_scale.is_probability:  # the champion read otherwise: new data
                extra["score_scale"] = scale_name(env.score_scale)
        else:
            learned_by = normalise_learner(settings.learner)
            extra = {"reference": env.reference_for(context)}  # a fresh start learns it
        digest = update_digest(window, parent=parent, learner=learned_by, settings=extra)
        earlier = discarded_before(steps.outbox, model_name, digest, action.id)
        if earlier is not None:
            return {"parent_version": parent, "start": "discarded", "learner": learned_by,
                    "digest": digest, "same_as_action": earlier[0], "earlier_reason": earlier[1]}
        same = env.registry.find_tagged(model_name, TAG_UPDATE_DIGEST, digest)
        if same is not None:
            return {"parent_version": parent, "start": "unchanged", "learner": learned_by,
                    "digest": digest, "same_as": same.version}
        if method == "recalibrate":
            if info is None:
                raise ActionError(f"model {model_name!r} has no champion to recalibrate")
            wrapped, metrics = recalibrated_candidate(env, model_name, info.version, window)
            _write(candidate_path, wrapped)
            return {
                "parent_version": info.version,
                "start": "recalibrate",
                "learner": "LogitCalibrator",
                "digest": digest,
                "metrics": _clean(metrics),
            }
        reference = _reference(env, context)
        numeric, categorical = _features(window, champion)
        model, start = build_candidate(
            champion,
            settings.learner,
            window=window,
            reference=reference,
            numeric=numeric,
            categorical=categorical,
        )
        metrics = learn_window(model, window)
        model.meta.update({"action_key": action.key, "start": start})
        _write(candidate_path, model)
        return {
            "parent_version": info.version if info else None,
            "start": start,
            "learner": model.learner,
            "digest": digest,
            "metrics": _clean(metrics),
        }

    trained = steps.run("train", train)
    if trained["start"] == "skipped":
        return Done({"verdict": "skipped", **trained})
    direct = settings.promote == "direct"
    if trained["start"] == "unchanged":
        return _unchanged(action, steps, env, trained, direct=direct)
    if trained["start"] == "discarded":  # made and discarded already: nothing recomputed
        return Done({"verdict": "discarded", "start": "discarded",
                     "reason": (f"same data and parent as action {trained['same_as_action']}, "
                                f"discarded then: {trained['earlier_reason']}"),
                     "same_as_action": trained["same_as_action"],
                     "parent_version": trained["parent_version"], "digest": trained["digest"]})
    if trained["start"] == "recalibrate":
        loses = recalibration_loses(trained["metrics"])
        if loses is not None:  # judged on the holdout: a worse layer never reaches the registry
            return Done({"verdict": "discarded", "reason": loses, "start": "recalibrate",
                         "parent_version": trained["parent_version"],
                         "digest": trained["digest"], "metrics": trained["metrics"]})

    def publish() -> dict[str, Any]:
        model = pickle.loads(candidate_path.read_bytes())
        parent = trained["parent_version"]
        profile = _profile(env, model_name, parent, context)
        metrics = {k: v for k, v in trained["metrics"].items() if v is not None}
        info = env.registry.publish(
            model_name,
            model,
            action_key=action.key,
            profile=profile,
            metrics=metrics,
            params={
                "learner": trained["learner"],
                "start": trained["start"],
                "tier": action.tier,
                "action": "online_update",
            },
            parent_version=parent,
            data_window=context.window_label,
            tags=_tags(trained),
        )
        return {"version": info.version, "run_id": info.run_id}

    published = steps.run("publish", publish)
    version = published["version"]
    aliased = steps.run("alias", lambda: _alias(action, env, version, direct=direct))
    if direct:
        steps.run("adopt_profile", lambda: adopt_profile(env, model_name, version))
    return Done(
        {
            "version": version,
            "run_id": published["run_id"],
            "alias": aliased["alias"],
            "parent_version": trained["parent_version"],
            "start": trained["start"],
            "metrics": trained["metrics"],
        }
    )


def _tags(trained: Mapping[str, Any]) -> dict[str, str]:
    """The new version's tags: driftwatch made it, its digest, and for a recalibration
    layer the champion version it wraps, so a shadow that finds it under the `challenger`
    alias judges it on log loss (it ranks rows as its parent does: a ranking metric could
    never promote it)."""
    tags = {TAG_MADE_BY: "online_update"}
    if trained.get("digest"):
        tags[TAG_UPDATE_DIGEST] = trained["digest"]
    if trained["start"] == "recalibrate":
        tags[TAG_RECALIBRATION_OF] = str(trained["parent_version"])
    return tags


def foreign_learner(champion: str, flavor: str, learner: str) -> str:
    """Why ``method: learner`` is refused for a champion that is no river model.

    >>> foreign_learner("pd v3", "sklearn", "LogisticRegression")  # doctest: +ELLIPSIS
    'online_update method: learner needs a river champion, and pd v3 is a sklearn model: ...'
    """
    return (f"online_update method: learner needs a river champion, and {champion} is a "
            f"{flavor} model: a fresh {learner} would be registered in its place instead of "
            "updating it; set method: recalibrate (or auto) to recalibrate its score")


def learner_on_foreign(actions: Any, champion: str, flavor: str) -> str | None:
    """:func:`foreign_learner` for the first tier of a policy's ``actions`` whose online
    update asks for ``method: learner`` when the champion (``flavor``) is no river model;
    None when there is none."""
    if flavor == "river":
        return None
    for tier in ("mild", "moderate", "severe"):
        act = getattr(actions, tier, None)
        if getattr(act, "type", None) == "online_update" and act.method == "learner":
            return f"{tier} tier: " + foreign_learner(champion, flavor, act.learner)
    return None


def learner_after_promotion(env: ActionEnv, model: str, version: str) -> str | None:
    """The warning when ``version`` of ``model``, just promoted, is no river model and the
    policy's online updates say ``method: learner``: each of them will now fail (the start
    checked only the champion of then). Logged, and returned for the action's outcome."""
    if env.policy_actions is None:
        return None
    flavor = env.scorer(model, version).flavor
    said = learner_on_foreign(env.policy_actions, f"{model} v{version}", flavor)
    if said is None:
        return None
    said = f"promoted {model} v{version}, a {flavor} model: {said}"
    log.warning("%s", said)
    return said


def discarded_before(outbox: Outbox, model: str, digest: str,
                     not_id: int) -> tuple[int, str] | None:
    """The first online update of ``model`` (other than action ``not_id``) discarded with
    ``digest``, as its action id and the reason it was discarded; None if there is none.
    The outbox is durable, so this holds across restarts; an outcome written before it
    carried its digest is read from its ``train`` step."""
    for rec in outbox.list(states=[ActionState.SUCCEEDED], model=model):
        out = rec.outcome
        if (rec.id == not_id or rec.action != "online_update"
                or out.get("verdict") != "discarded" or "same_as_action" in out):
            continue  # a repeat names the first discard, which this loop meets first
        seen = out.get("digest") or (outbox.step_result(rec.id, "train") or {}).get("digest")
        if seen == digest:
            return rec.id, str(out.get("reason") or "no reason recorded")
    return None


def _alias(action: ActionRecord, env: ActionEnv, version: str, *, direct: bool) -> dict[str, Any]:
    now = env.clock.now()
    if direct:
        previous = promote(env.registry, action.model, version, at=now, by=action.key)
        return {"alias": CHAMPION, "previous": previous}
    replaced = make_challenger(env.registry, action.model, version, at=now, by=action.key)
    return {"alias": CHALLENGER, "replaced": replaced}


def _unchanged(
    action: ActionRecord, steps: StepRunner, env: ActionEnv, trained: dict[str, Any], *,
    direct: bool,
) -> Result:
    """The update was made already (see module doc): reuse its version, register nothing."""
    version = trained["same_as"]
    reason = f"unchanged: same data and parent as version {version}"
    # ``same_as``, not ``version``: the audit and report credit a version's making to the
    # action whose outcome names it as ``version``
    out = {"verdict": "unchanged", "reason": reason, "same_as": version,
           "parent_version": trained["parent_version"], "start": "unchanged",
           "digest": trained["digest"]}

    def alias() -> dict[str, Any]:
        info = env.registry.get_version(action.model, version)
        if CHAMPION in info.aliases or (CHALLENGER in info.aliases and not direct):
            return {"alias": CHAMPION if CHAMPION in info.aliases else CHALLENGER,
                    "held_already": True}
        if TAG_VERDICT in info.tags:  # judged already: the same model is not proposed again
            return {"alias": None, "earlier_verdict": info.tags[TAG_VERDICT]}
        return _alias(action, env, version, direct=direct)

    aliased = steps.run("alias", alias)
    if aliased["alias"] == CHAMPION and not aliased.get("held_already"):
        steps.run("adopt_profile", lambda: adopt_profile(env, action.model, version))
    return Done({**out, **aliased})


def _write(path: Any, model: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(model))
    tmp.replace(path)


def adopt_profile(env: ActionEnv, model: str, version: str) -> dict[str, Any]:
    """Hand the new champion's reference profile to the monitor (the promote hook). A
    version registered without a profile of its own (the user's model, rolled back to) is
    judged on the reference file's profile, as before driftwatch's first promotion, and
    the answer says so in ``profile_note``; without a reference file either, it raises."""
    profile = env.registered_profile(model, version)
    note = None
    if profile is None:
        profile = env.reference_profile()
        if profile is None:
            raise ActionError(f"{model} v{version} has no {PROFILE_ARTIFACT}, and no "
                              "reference file is configured to judge it on")
        note = (f"v{version} was registered without a {PROFILE_ARTIFACT}: drift is judged "
                "against the reference file's profile")
        log.info("%s: %s", model, note)
    if env.on_promote is not None:
        env.on_promote(model, version, profile)
    out: dict[str, Any] = {"profile_fingerprint": profile.fingerprint}
    if note is not None:
        out["profile_note"] = note
    return out


def _reference(env: ActionEnv, context: ActionContext) -> pd.DataFrame | None:
    """The reference rows a fresh learner first learns, as live rows hold them (its label
    coded 1 bad / 0 good in ``label``, ignored columns dropped, percent and money text read
    as numbers)."""
    rows: pd.DataFrame | None = env.reference_rows(context)
    return rows


def _features(window: pd.DataFrame, champion: RiverModel | None) -> tuple[list[str], list[str]]:
    if champion is not None:
        return list(champion.encoder.numeric), list(champion.encoder.categorical)
    special = {"label", "score", "event_time", "exposure", "decision", "seq", "origin"}
    cols = [c for c in window.columns if c not in special]
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(window[c])]
    return numeric, [c for c in cols if c not in numeric]


def _profile(
    env: ActionEnv, model: str, parent: str | None, context: ActionContext
) -> ReferenceProfile | None:
    """An online update keeps its parent's reference: it learned a small window on top
    (a parent registered without one: the reference, as the monitor built it)."""
    if parent is not None:
        return env.version_profile(model, parent, context)
    return env.reference_profile(context)  # as the monitor built it: it adopts this one


def _clean(metrics: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if v != v else float(v)) for k, v in metrics.items()}
