"""The README tour's "Repair for real" commands, run as written, on the embedded defaults.

The commands come from the tour's step 4 ``sh`` block (continuation lines joined, split like
a shell would) and run in a scratch folder holding the checkout's connectors, policies,
data and examples, with a ``.venv/bin/driftwatch`` that runs this checkout's command line.
Mild drift makes online-updated model versions, moderate a challenger judged on outcomes,
severe a retraining job on the local GPU pool whose model goes to shadow, wins on the
outcomes that follow, waits for approval and is promoted by the tour's ``approve``; the
MLflow registry and the audit trail show it all.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import orjson
import pytest

from driftwatch.actions.outbox import Outbox
from driftwatch.clock import ManualClock
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.testing.readme import cli_shim, sh_commands

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def tour_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    step = text.split("**4. Repair for real.**", 1)[1].split("\n**5.", 1)[0]
    return sh_commands(step)


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("tour")
    for name in ("connectors", "policies", "data", "examples"):
        (work / name).symlink_to(ROOT / name)
    cli_shim(work)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for cmd in tour_commands():
        res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                             timeout=900, check=False)
        runs.append((cmd, res))
    return {"out": work / "out" / "exec", "runs": runs}


@pytest.fixture(scope="module")
def executed(tour: dict) -> Path:
    (cmd, res) = tour["runs"][0]
    assert cmd[1:3] == ["replay", "--execute"] and res.returncode == 0, res.stderr[-3000:]
    return tour["out"]


def _actions(out: Path) -> list[dict]:
    return [orjson.loads(line) for line in (out / "actions.jsonl").read_bytes().splitlines()]


def _records(state: Path) -> list:
    box = Outbox(state, clock=ManualClock(0.0))
    try:
        return box.list()
    finally:
        box.close()


def test_the_tour_is_replay_list_list_approve() -> None:
    cmds = tour_commands()
    assert [c[1:3] for c in cmds] == [["replay", "--execute"], ["actions", "list"],
                                      ["actions", "list"], ["approve", cmds[3][2]]]


def test_the_tours_approve_promotes_the_retrained_model(tour: dict, executed: Path) -> None:
    """The id the README approves is the retrained model's shadow, listed as awaiting
    approval; approving it promotes that version and adopts its reference profile."""
    (_, listed), (_, waiting), (approve_cmd, approved) = tour["runs"][1:]
    assert listed.returncode == waiting.returncode == 0
    action_id = int(approve_cmd[2])
    acts = {a["id"]: a for a in _actions(executed)}
    follow = acts[action_id]
    assert follow["action"] == "shadow" and acts[follow["parent_id"]]["action"] == "retrain"
    assert follow["state"] == "awaiting_approval"
    assert re.search(rf"^\s+{action_id}\s+awaiting_approval\s+shadow", waiting.stdout, re.M)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    version = follow["mlflow"]["version"]
    assert f"champion is now v{version}" in approved.stdout
    reg = MlflowRegistry.from_uri(None, executed / "state")
    champion = reg.by_alias("credit-risk", "champion")
    assert champion is not None and champion.version == version
    promoted = next(r for r in _records(executed / "state") if r.id == action_id)
    assert promoted.state.value == "succeeded" and promoted.approver == "alice"
    assert promoted.outcome["verdict"] == "promoted"
    profile = reg.load_profile("credit-risk", version)
    assert promoted.outcome["profile_fingerprint"] == profile.fingerprint
    # judged on enough outcomes that followed it, and better on the policy's metric
    ev = promoted.artifacts["shadow"]
    assert ev["metrics"]["challenger"]["labelled"] >= ev["min_labelled"]
    assert ev["metrics"]["challenger"]["gini"] >= ev["metrics"]["champion"]["gini"] + ev["margin"]


def test_a_shadow_open_at_the_end_is_reported_undecided(tour: dict, executed: Path) -> None:
    replay_out = tour["runs"][0][1].stdout
    still = [a for a in _actions(executed) if a["state"] in ("running", "pending")]
    assert still  # the demo's last moderate shadow starts days before the recording ends
    for a in still:
        assert re.search(rf"undecided: {a['action']} {a['id']} \({re.escape(a['key'])}\): .+",
                         replay_out), replay_out


def test_each_tier_ran_its_action_once_per_episode(executed: Path) -> None:
    acts = _actions(executed)
    by_kind: dict[str, list[dict]] = {}
    for a in acts:
        by_kind.setdefault(a["action"], []).append(a)
    online = by_kind["online_update"]
    assert online and all(a["state"] == "succeeded" for a in online)
    assert all(a["mlflow"]["parent_version"] == "1" and a["mlflow"]["version"] for a in online)
    # moderate: a challenger judged on outcomes, with a verdict by the policy's rule
    # (the first one, made before the new regime's outcomes matured, loses)
    moderate = [a for a in by_kind["shadow"] if a["tier"] == "moderate"]
    assert moderate[0]["state"] == "succeeded"
    assert moderate[0]["outcome"]["verdict"] == "discarded"
    # severe: a real job on the pool registered a model, which went to shadow
    (retrain,) = by_kind["retrain"]
    assert retrain["state"] == "succeeded" and retrain["job_id"]
    follow = [a for a in by_kind["shadow"] if a["parent_id"] == retrain["id"]]
    assert len(follow) == 1 and follow[0]["mlflow"]["version"] == retrain["mlflow"]["version"]
    # nothing ran twice: one action per decision key
    keys = [a["key"] for a in acts]
    assert len(keys) == len(set(keys))


def test_registry_shows_every_version_with_lineage(executed: Path) -> None:
    reg = MlflowRegistry.from_uri(None, executed / "state")
    versions = {v.version: v for v in reg.versions("credit-risk")}
    champion = reg.by_alias("credit-risk", "champion")
    assert champion is not None
    acts = _actions(executed)
    made = [a["mlflow"]["version"] for a in acts if a["action"] in ("online_update", "retrain")]
    assert set(made) <= set(versions)
    assert len(made) == len(set(made))  # no duplicate versions
    retrained = next(a for a in acts if a["action"] == "retrain")["mlflow"]["version"]
    # the retrained model carries its own reference profile, ready to be adopted
    profile = reg.load_profile("credit-risk", retrained)
    assert profile.schema.numeric and profile.sketch.n > 0


def test_audit_trail_names_policy_reasons_and_window(executed: Path) -> None:
    for a in _actions(executed):
        assert a["policy_digest"] and a["window"][0] is not None
        assert a["steps"][0]["step"] == "recorded"
        if a["action"] != "alert" and a["parent_id"] is None:
            assert a["reasons"], a["key"]
            assert all(":" in r["source"] for r in a["reasons"])
