"""The user's own model as champion, through a real ``mlflow server``: the demo replayed with
``--execute`` on a scikit-learn HistGradientBoostingClassifier trained on the demo reference.

Moderate drift: the challenger scores every live prediction of its shadow period beside
the champion, at the policy's approval cut-off. Severe drift: the example scikit-learn job
retrains on the pool, its version goes to shadow, is judged on the outcomes that follow,
waits for approval and is promoted by ``driftwatch approve``, its reference profile adopted.
Mild drift: a recalibration layer on the champion's score, registered as a version that
wraps it by URI.
"""

from __future__ import annotations

import gzip
import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import orjson
import pandas as pd
import pytest
from mlflow import MlflowClient

from driftwatch.actions.outbox import Outbox
from driftwatch.clock import ManualClock
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.scorers import ChampionRef, ScorerCache
from driftwatch.registry.versions import CHAMPION, TAG_MADE_BY, TAG_PARENT
from driftwatch.replay import replay

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MODEL = "credit-pd"
DRIFTWATCH = [sys.executable, "-c", "import sys; from driftwatch.cli import main; sys.exit(main())"]


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "sklearn_retrain_job", ROOT / "examples/sklearn_retrain_job.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _policy(tmp: Path, model: str = MODEL) -> Path:
    """The demo policy, retraining ``model`` with the scikit-learn job; a challenger must
    win by half a Gini point."""
    text = (ROOT / "policies/credit-risk-demo.yaml").read_text()
    ref = str(ROOT / "data/demo/reference.parquet")
    text = text.replace('argv: ["python", "examples/retrain_job.py",',
                        f'argv: ["python", "{ROOT / "examples/sklearn_retrain_job.py"}",')
    text = text.replace('"--reference", "data/demo/reference.parquet",', f'"--reference", "{ref}",')
    text = text.replace('"--model-name", "credit-risk"]', f'"--model-name", "{model}"]')
    text = text.replace("reference: data/demo/reference.parquet", f"reference: {ref}")
    text = text.replace("margin: 0.01 ", "margin: 0.005")
    assert "sklearn_retrain_job" in text and "margin: 0.005" in text
    path = tmp / "policy.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def executed(
    mlflow_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path | str]:
    url = mlflow_server[0]
    tmp = tmp_path_factory.mktemp("hgb")
    reference = pd.read_parquet(ROOT / "data/demo/reference.parquet")
    info = _example().register(reference, tracking_uri=url, model_name=MODEL,
                               action_key=f"{MODEL}:first:0")
    MlflowRegistry(url).set_alias(MODEL, CHAMPION, info.version, at=0.0, by="test")
    out = tmp / "out"
    replay(
        ROOT / "connectors/demo-file.yaml",
        [ROOT / "data/demo/predictions.jsonl.gz", ROOT / "data/demo/outcomes.jsonl.gz"],
        out,
        policy=_policy(tmp),
        reference=ROOT / "data/demo/reference.parquet",
        progress=False,
        execute=True,
        state_dir=tmp / "state",
        champion=ChampionRef(MODEL),
        tracking_uri=url,
    )
    return {"out": out, "state": tmp / "state", "url": url}


def _records(state: Path) -> list:
    box = Outbox(state, clock=ManualClock(0.0))
    try:
        return box.list()
    finally:
        box.close()


def _job(state: Path, job_id: str) -> dict:
    db = sqlite3.connect(f"file:{state / 'pool' / 'gpupool.sqlite3'}?mode=ro", uri=True)
    try:
        (record,) = db.execute("SELECT record FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
    finally:
        db.close()
    return orjson.loads(record)


def _predictions() -> pd.DataFrame:
    with gzip.open(ROOT / "data/demo/predictions.jsonl.gz") as fh:
        return pd.DataFrame({"ts": [orjson.loads(line)["ts"] for line in fh]})


def test_the_champion_is_the_registered_hgb_and_repairs_wrap_it(executed) -> None:
    reg = MlflowRegistry(str(executed["url"]))
    cache = ScorerCache(reg, Path(executed["state"]) / "check-cache")
    assert cache.get(MODEL, "1").flavor == "sklearn"
    updates = [r for r in _records(Path(executed["state"])) if r.action == "online_update"]
    assert updates and all(r.state.value == "succeeded" for r in updates)
    for r in updates:
        if r.outcome.get("verdict") == "discarded":  # lost on its holdout: not registered
            assert "does not beat the champion" in r.outcome["reason"]
            continue
        version = r.outcome["version"]
        scorer = cache.get(MODEL, version)
        assert scorer.flavor == "recalibrated" and scorer.meta["base_version"] == "1"
        assert reg.get_version(MODEL, version).tags[TAG_PARENT] == "1"


def test_moderate_shadow_scores_every_live_prediction_of_its_period(executed) -> None:
    # the first moderate episode's shadow (a later one judges the retrained challenger)
    shadow = next(r for r in _records(Path(executed["state"]))
                  if r.action == "shadow" and r.tier == "moderate")
    ev = shadow.artifacts["shadow"]
    ts = _predictions()["ts"]
    in_period = int(((ts >= ev["first_live"]) & (ts <= ev["last_live"])).sum())
    assert ev["challenger"]["live"] == ev["champion"]["live"] == in_period > 1000
    m = ev["metrics"]
    assert ev["cutoff"] == 0.25
    for who in ("champion", "challenger"):
        assert 0.5 < m[who]["approval_rate"] < 1.0 and m[who]["expected_loss"] > 0
    assert m["champion"]["approval_rate"] != m["challenger"]["approval_rate"]
    assert ev["score_psi"] is not None and ev["score_psi"] >= 0
    assert shadow.outcome["verdict"] in ("discarded", "promoted")


# What the browser shows of the report's deployments: every shadow block's status and its
# champion-vs-challenger table (recorded numbers from data-exact), retraining facts, versions.
_READ_DEPLOYMENTS = """() => ({
  shadows: [...document.querySelectorAll('#shadow div.shadow')].map(b => ({
    window: Number(b.dataset.window), status: b.dataset.status,
    tag: b.querySelector('h3 .tag').textContent,
    head: [...b.querySelectorAll('table.champion-challenger th')].map(th => th.textContent),
    rows: Object.fromEntries([...b.querySelectorAll('table.champion-challenger tbody tr')]
      .map(tr => [tr.querySelector('[data-metric]').dataset.metric,
                  [...tr.querySelectorAll('[data-exact]')].map(s => Number(s.dataset.exact))]))
  })),
  retrains: [...document.querySelectorAll('#retraining div.retrain')].map(b => ({
    window: Number(b.dataset.window), status: b.dataset.status,
    facts: Object.fromEntries([...b.querySelectorAll('table.retrain-run tr')].map(
      tr => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]))})),
  versions: [...document.querySelectorAll('#versions [data-version]')].map(
    s => s.dataset.version),
})"""


def test_the_executed_report_in_a_browser_holds_the_outbox_numbers(executed, browser) -> None:
    """The report of the ``--execute`` run, opened in headless Chromium: each executed action
    reads as executed, and each champion-vs-challenger table holds the numbers stored in the
    outbox (read here straight from its tables, not from the report's export). Runs before
    the approval test below changes the outbox."""
    from driftwatch.report.deployments import human_duration
    from driftwatch.testing.chromium import open_page

    recs = _records(Path(executed["state"]))
    path = Path(executed["out"]) / "report.html"
    page, problems, fetched = open_page(browser, path.as_uri())
    shown = page.evaluate(_READ_DEPLOYMENTS)
    page.close()
    assert problems == [] and fetched == [path.as_uri()]

    shadows = [r for r in recs if r.action == "shadow" and r.artifacts.get("shadow")]
    assert {s["window"] for s in shown["shadows"]} == {r.window_id for r in shadows}
    for r in shadows:
        (block,) = [s for s in shown["shadows"] if s["window"] == r.window_id]
        ev = r.artifacts["shadow"]
        assert block["status"] == "executed" and block["tag"].startswith("executed · ")
        verdict = r.outcome.get("verdict") or r.state.value.replace("_", " ")
        assert verdict.replace("_", " ") in block["tag"], (block["tag"], verdict)
        assert block["head"][1:3] == [f"champion v{ev['champion_version']}",
                                      f"challenger v{ev['challenger_version']}"]
        champ, chall = ev["metrics"]["champion"], ev["metrics"]["challenger"]
        want = {k: [champ[k], chall[k], chall[k] - champ[k]] for k in champ
                if k in chall and champ[k] is not None and chall[k] is not None}
        assert block["rows"] == want
        assert block["rows"]["live"][0] == ev["champion"]["live"]
        if r.outcome.get("verdict"):  # judged: it scored the live traffic of its period
            assert ev["champion"]["live"] > 0, (r.window_id, r.outcome)
    # a shadow opened in the recording's last window has no traffic left; the others do
    assert sum(r.artifacts["shadow"]["champion"]["live"] > 0 for r in shadows) >= 2

    (retrain,) = [r for r in recs if r.action == "retrain"]
    (block,) = shown["retrains"]
    assert block["window"] == retrain.window_id and block["status"] == "executed"
    facts = block["facts"]
    assert facts["state"] == "succeeded" and facts["model version"] == \
        f"v{retrain.outcome['version']}"
    assert facts["GPU lease"] == "1 GPU, released"
    job = _job(Path(executed["state"]), retrain.artifacts["job_id"])  # the pool's own record
    assert facts["ran for (lease held)"] == human_duration(job["ended_at"] - job["started_at"])
    assert facts["waited in the queue"] == \
        human_duration(job["started_at"] - job["submitted_at"])

    made = {str(r.outcome["version"]) for r in recs
            if r.action in ("online_update", "retrain") and r.state.value == "succeeded"
            and "version" in r.outcome}  # a recalibration that lost registered nothing
    judged = {str(r.artifacts["shadow"][k]) for r in shadows
              for k in ("champion_version", "challenger_version")}
    assert sorted(shown["versions"], key=int) == sorted(made | judged, key=int)


def test_severe_retrain_is_judged_awaits_approval_and_is_promoted(executed) -> None:
    state = Path(executed["state"])
    recs = _records(state)
    (retrain,) = [r for r in recs if r.action == "retrain"]
    assert retrain.state.value == "succeeded"
    version = retrain.outcome["version"]
    (follow,) = [r for r in recs if r.parent_id == retrain.id]
    ev = follow.artifacts["shadow"]
    assert ev["challenger_version"] == version
    assert ev["challenger"]["live"] > 0
    assert int(ev["metrics"]["challenger"]["labelled"]) >= ev["min_labelled"]
    assert follow.state.value == "awaiting_approval", follow.note

    done = subprocess.run(
        [*DRIFTWATCH, "approve", str(follow.id), "--by", "ana", "--state-dir", str(state)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"champion is now v{version}" in done.stdout
    client = MlflowClient(tracking_uri=str(executed["url"]))
    assert client.get_model_version_by_alias(MODEL, CHAMPION).version == version
    promoted = next(r for r in _records(state) if r.id == follow.id)
    assert promoted.state.value == "succeeded" and promoted.approver == "ana"
    profile = MlflowRegistry(str(executed["url"])).load_profile(MODEL, version)
    assert promoted.outcome["profile_fingerprint"] == profile.fingerprint


def test_the_report_shows_what_ran(executed) -> None:
    html = (Path(executed["out"]) / "report.html").read_text()
    assert "not executed (dry run)" not in html
    assert "champion-challenger" in html and "approval_rate" in html


def test_a_missing_champion_column_is_a_clear_error(executed, tmp_path: Path) -> None:
    done = subprocess.run(
        [*DRIFTWATCH, "replay", "--execute", "-q", "--no-report",
         "--connector", str(ROOT / "connectors/demo-file.yaml"),
         "--policy", str(ROOT / "policies/credit-risk-demo.yaml"),
         "--input", str(ROOT / "data/demo/predictions.jsonl.gz"),
         "--out", str(tmp_path / "out"), "--state-dir", str(tmp_path / "state"),
         "--tracking-uri", str(executed["url"]),
         "--champion", f"models:/{MODEL}@champion", "--champion-column", "income=salary"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1
    assert "needs input column 'income' (read from connector feature 'salary')" in done.stderr
    assert "Traceback" not in done.stderr


def test_recalibration_beats_the_champion_on_the_following_window(
    mlflow_server: tuple[str, Path], tmp_path: Path
) -> None:
    """Concept drift (the same applicants default 1.8 times as often): the recalibrated
    version is better calibrated than the champion on the next window."""
    from driftwatch.actions.context import ActionContext
    from driftwatch.actions.executor import ActionExecutor
    from driftwatch.actions.labelled_buffer import LabelledBuffer
    from driftwatch.policy.decision import Decision
    from driftwatch.policy.tiers import Tier
    from driftwatch.windows.profile import ReferenceProfile

    url = mlflow_server[0]
    name = "credit-pd-recal"
    reference = pd.read_parquet(ROOT / "data/demo/reference.parquet")
    info = _example().register(reference, tracking_uri=url, model_name=name,
                               action_key=f"{name}:first:0")
    reg = MlflowRegistry(url)
    reg.set_alias(name, CHAMPION, info.version, at=0.0, by="test")
    cache = ScorerCache(reg, tmp_path / "cache")
    champion = cache.get(name, info.version)
    rng = np.random.default_rng(7)

    def drifted(n: int, seed: int) -> pd.DataFrame:
        rows = reference.sample(n, replace=True, random_state=seed).reset_index(drop=True)
        p = champion.score(rows)
        rows["label"] = (rng.random(n) < np.clip(1.8 * p, 0, 1)).astype(float)
        rows["score"] = p
        return rows

    window, following = drifted(4000, 1), drifted(4000, 2)
    profile = ReferenceProfile.build(reference)
    buffer = LabelledBuffer(profile.schema, capacity=5000)
    buffer.add_frame(window)
    clock = ManualClock(1_700_000_000.0)
    ex = ActionExecutor(Outbox(tmp_path / "state", clock=clock), reg, None, clock,
                        buffer=buffer)
    settings = {"type": "online_update", "opt_in": True, "min_labelled": 500}
    decision = Decision(name, 5, clock.now(), Tier.MILD, Tier.MILD, action="online_update",
                        action_settings=settings)
    ex.submit(decision, ActionContext(window_start=0.0, window_end=clock.now()))
    [rec] = ex.run_pending()
    ex.close()
    assert rec.state.value == "succeeded", rec.error
    assert rec.outcome["start"] == "recalibrate"
    recal = cache.get(name, rec.outcome["version"])
    y = following["label"].to_numpy()

    def miscalibration(p: np.ndarray) -> float:  # |log(observed / expected bad rate)|
        return abs(float(np.log(y.mean() / p.mean())))

    before = miscalibration(champion.score(following))
    after = miscalibration(recal.score(following))
    assert after < before / 3, (before, after)


def test_a_champion_trained_on_repaid_is_declared_and_its_retraining_is_read_as_trained(
    mlflow_server: tuple[str, Path], tmp_path: Path
) -> None:
    """The bank's HGB learnt a repaid flag (True = good) while the demo's labels say 1 =
    default: declared score_is: p_good, it is read at its False class. The severe tier's
    retraining learns the export (label 1 = bad): its version, tagged
    driftwatch.made_by=retrain, is read at its True class, so the shadow compares two
    P(bad)s on the same outcomes; the online updates recalibrate P(bad) of the champion."""
    url, name = mlflow_server[0], "credit-pd-repaid"
    reference = pd.read_parquet(ROOT / "data/demo/reference.parquet")
    info = _example().register(reference.assign(label=1 - reference["label"]),
                               tracking_uri=url, model_name=name,
                               action_key=f"{name}:first:0")
    reg = MlflowRegistry(url)
    reg.set_alias(name, CHAMPION, info.version, at=0.0, by="test")
    state = tmp_path / "state"
    replay(
        ROOT / "connectors/demo-file.yaml",
        [ROOT / "data/demo/predictions.jsonl.gz", ROOT / "data/demo/outcomes.jsonl.gz"],
        tmp_path / "out", policy=_policy(tmp_path, name),
        reference=ROOT / "data/demo/reference.parquet", progress=False, report=False,
        execute=True, state_dir=state,
        champion=ChampionRef.parse(f"models:/{name}@champion", score_is="p_good"),
        tracking_uri=url,
    )
    recs = _records(state)
    (retrain,) = [r for r in recs if r.action == "retrain"]
    assert retrain.state.value == "succeeded", retrain.error
    version = str(retrain.outcome["version"])
    assert reg.get_version(name, version).tags[TAG_MADE_BY] == "retrain"
    assert TAG_MADE_BY not in reg.get_version(name, info.version).tags
    (follow,) = [r for r in recs if r.parent_id == retrain.id]
    metrics = follow.artifacts["shadow"]["metrics"]
    assert metrics["champion"]["auc"] > 0.6 and metrics["challenger"]["auc"] > 0.6, metrics
    cache = ScorerCache(reg, tmp_path / "check", score_is="p_good")
    assert cache.get(name, info.version).meta["bad_class"] is False
    assert cache.get(name, version).meta["bad_class"] is True
    updates = [r for r in recs if r.action == "online_update" and "version" in r.outcome]
    for r in updates:  # a recalibration reads its base as declared, served outside too
        wrapped = cache.get(name, r.outcome["version"])
        assert wrapped.flavor == "recalibrated" and wrapped.meta["base_version"] == "1"
        assert reg.get_version(name, r.outcome["version"]).tags[TAG_MADE_BY] == \
            "online_update"


def _booster(flavour: str) -> tuple[object, object]:
    """A gradient-boosting classifier of ``flavour`` and the MLflow module that logs it."""
    pytest.importorskip(flavour)
    if flavour == "xgboost":
        import mlflow.xgboost
        import xgboost

        return (xgboost.XGBClassifier(n_estimators=60, max_depth=3, learning_rate=0.1),
                mlflow.xgboost)
    import lightgbm
    import mlflow.lightgbm

    return (lightgbm.LGBMClassifier(n_estimators=60, max_depth=3, learning_rate=0.1,
                                    verbose=-1), mlflow.lightgbm)


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
def test_a_boosted_champion_is_shadowed_on_live_traffic_and_labels(
    mlflow_server: tuple[str, Path], tmp_path: Path, flavour: str
) -> None:
    """Flavours beside scikit-learn through the same server (optional extras): an XGBoost or
    LightGBM champion, a recalibrated challenger made from it, both scoring live rows and
    joined outcomes."""
    from mlflow.models import infer_signature

    from driftwatch.actions.context import ActionContext
    from driftwatch.actions.executor import ActionExecutor
    from driftwatch.actions.labelled_buffer import LabelledBuffer
    from driftwatch.policy.decision import Decision
    from driftwatch.policy.tiers import Tier
    from driftwatch.registry.publish import publish_flavour
    from driftwatch.windows.profile import ReferenceProfile

    model, module = _booster(flavour)
    url, name = mlflow_server[0], f"credit-pd-{flavour}"
    reference = pd.read_parquet(ROOT / "data/demo/reference.parquet")
    numeric = ["income", "loan_amount", "debt_to_income", "credit_history_months", "age",
               "num_open_accounts", "utilization"]
    x = reference[numeric].astype("float64")
    model.fit(x, reference["label"])  # type: ignore[attr-defined]
    proba = model.predict_proba(x)[:, 1]  # type: ignore[attr-defined]
    reg = MlflowRegistry(url)
    info = publish_flavour(
        reg, name,
        lambda: module.log_model(  # type: ignore[attr-defined]
            model, name="model", signature=infer_signature(x, proba)),
        action_key=f"{name}:first:0", profile=ReferenceProfile.build(reference))
    reg.set_alias(name, CHAMPION, info.version, at=0.0, by="test")

    profile = ReferenceProfile.build(reference)
    buffer = LabelledBuffer(profile.schema, capacity=5000)
    buffer.add_frame(reference.sample(3000, random_state=1))
    clock = ManualClock(1_700_000_000.0)
    ex = ActionExecutor(Outbox(tmp_path / "state", clock=clock), reg, None, clock,
                        buffer=buffer, cutoff=0.25)
    assert ex.env.scorer(name, info.version).flavor == flavour
    shadow = Decision(name, 7, clock.now(), Tier.MODERATE, Tier.MODERATE, action="shadow",
                      action_settings={"type": "shadow", "min_labelled": 1000,
                                       "metric": "log_loss", "margin": 0.0},
                      requires_approval=True)
    action_id = ex.submit(shadow, ActionContext(window_start=0.0, window_end=clock.now()))
    [rec] = ex.run_pending()
    assert rec.state.value == "running", rec.error
    challenger = rec.artifacts["shadow"]["challenger_version"]
    assert ex.env.scorer(name, challenger).flavor == "recalibrated"
    live = reference.sample(2500, random_state=2).reset_index(drop=True)
    assert ex.observe_predictions(name, live) == 1
    buffer.add_frame(reference.sample(1500, random_state=3))
    [rec] = ex.run_pending()
    ev = ex.outbox.get(action_id).artifacts["shadow"]  # type: ignore[arg-type]
    ex.close()
    assert ev["champion"]["live"] == ev["challenger"]["live"] == 2500
    assert ev["metrics"]["champion"]["labelled"] == 1500
    assert ev["metrics"]["champion"]["approval_rate"] > 0.5
    assert rec.state.value in ("awaiting_approval", "succeeded")
