"""The demo recording with ``--execute`` on the embedded defaults: every tier repairs.

Mild drift makes an online-updated model version, moderate a challenger that is judged
on outcomes (promoted or discarded by the rule), severe a retraining job on the local
GPU pool whose model goes to shadow; the MLflow registry and the audit trail show it all.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.replay import replay

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("execute")
    replay(
        ROOT / "connectors/demo-file.yaml",
        [ROOT / "data/demo/predictions.jsonl.gz", ROOT / "data/demo/outcomes.jsonl.gz"],
        out,
        policy=ROOT / "policies/credit-risk-demo.yaml",
        reference=ROOT / "data/demo/reference.parquet",
        progress=False,
        execute=True,
    )
    return out


def _actions(out: Path) -> list[dict]:
    return [orjson.loads(line) for line in (out / "actions.jsonl").read_bytes().splitlines()]


def test_each_tier_ran_its_action_once_per_episode(executed: Path) -> None:
    acts = _actions(executed)
    by_kind: dict[str, list[dict]] = {}
    for a in acts:
        by_kind.setdefault(a["action"], []).append(a)
    online = by_kind["online_update"]
    assert online and all(a["state"] == "succeeded" for a in online)
    assert all(a["mlflow"]["parent_version"] == "1" and a["mlflow"]["version"] for a in online)
    # moderate: a challenger judged on outcomes, with a verdict by the policy's rule
    moderate = [a for a in by_kind["shadow"] if a["tier"] == "moderate"]
    assert len(moderate) == 1 and moderate[0]["state"] == "succeeded"
    assert moderate[0]["outcome"]["verdict"] in ("promoted", "discarded", "awaiting_approval")
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
