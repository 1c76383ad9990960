"""HMDA-shaped records: ``action_taken`` 1..8 is the decision, but only some codes decide (1
originated, 3 denied; 4 withdrawn, 5 incomplete, 6 purchased decide nothing). ``init
--decline`` writes the declining codes, so any other code is no decision rather than a
decline that pulls the approval rate down; ``property_value`` mixes ``Exempt`` and ``NA``
into its numbers and stays a numeric feature."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml

from ._cli import run_cli

T0 = 1_680_000_000
ACTIONS = [1, 2, 3, 4, 5, 6, 7, 8]
SHARES = [0.5, 0.03, 0.17, 0.08, 0.05, 0.13, 0.02, 0.02]


def hmda(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    value = (rng.lognormal(12.6, 0.5, n) // 10_000 * 10_000 + 5_000).astype(int).astype(str)
    u = rng.random(n)
    return pd.DataFrame({
        "loan_amount": (rng.lognormal(12.3, 0.5, n) // 10_000 * 10_000 + 5_000),
        "property_value": np.where(u < 0.05, "NA", np.where(u < 0.08, "Exempt", value)),
        "loan_purpose": rng.choice([1, 2, 31, 32, 4, 5], n),
        "score": rng.random(n).round(4),
        "action_taken": rng.choice(ACTIONS, n, p=SHARES),
        "defaulted": (rng.random(n) < 0.1).astype(int),
    })


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    ref = hmda(4000, 0)
    ref.to_csv("ref.csv", index=False)
    live = hmda(2000, 1)
    live.insert(0, "application_id", [f"HMDA{i:08d}" for i in range(len(live))])
    live.insert(1, "ts", T0 + 45 * np.arange(len(live)))
    live.drop(columns="defaulted").to_csv("pred.csv", index=False)
    live[["application_id", "ts", "defaulted"]].assign(ts=live["ts"] + 86_400 * 90).rename(
        columns={"ts": "outcome_ts"}).to_csv("out.csv", index=False)
    return tmp_path


def _init(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", "ref.csv", "--sample", "pred.csv", "--outcomes",
                    "out.csv", "--model", "hmda", "--connector-out", "c.yaml",
                    "--policy-out", "p.yaml", "--pane", "500", *extra], capsys)


def test_decline_leaves_codes_that_decide_nothing_out_of_the_approval_rate(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _init(capsys, "--decision-field", "action_taken", "--approve", "1",
                           "--decline", "3")
    assert code == 0, err
    assert "approve = [1], decline = [3], any other value no decision" in out
    stream = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert stream["fields"]["decision"] == {"path": "action_taken", "approve": [1],
                                            "decline": [3]}
    assert stream["fields"]["features"]["property_value"]["type"] == "numeric"
    assert stream["fields"]["missing_values_by_feature"]["property_value"] == ["Exempt"]
    policy = yaml.safe_load(Path("p.yaml").read_text())
    assert policy["reference"]["decision"] == {"column": "action_taken", "approve": [1],
                                               "decline": [3]}
    code, checked, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err
    code, _, err = run_cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "--out", "o",
                            "-i", "predictions=pred.csv", "outcomes=out.csv",
                            "--no-levels-cache"], capsys)
    assert code == 0, err
    windows = [w for x in Path("o/timeline.jsonl").read_text().splitlines()
               if (w := orjson.loads(x))["n_events"]]
    assert [w["n_bad"] for w in windows] == [0] * len(windows)  # no 'Exempt' dead-lettered
    assert {w["tier"] for w in windows} == {"none"}
    live = pd.read_csv("pred.csv")["action_taken"]
    for w in windows:
        acts = live.iloc[w["first_index"]:w["last_index"] + 1]
        want = (acts == 1).sum() / acts.isin([1, 3]).sum()
        assert w["score"]["approval_rate"] == pytest.approx(want, abs=1e-6)
    ref = pd.read_csv("ref.csv")["action_taken"]
    rate = next(s for s in windows[0]["signals"] if s["signal"] == "approval_rate")
    assert rate["details"]["reference"] == pytest.approx((ref == 1).sum()
                                                         / ref.isin([1, 3]).sum())


@pytest.mark.parametrize(("extra", "said"), [
    (("--decline", "3"), "--decline 3: no decision column found"),
    (("--decision-field", "action_taken", "--decline", "9"),
     "--decline 9: no value of the decision column action_taken is one"),
    (("--decision-field", "action_taken", "--approve", "1", "--decline", "1", "--decline",
      "3"), "--decline 1 --decline 3: 1 also approve"),
])
def test_a_decline_with_nothing_to_act_on_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], said: str
) -> None:
    code, out, err = _init(capsys, *extra)
    assert code == 2 and out == "" and said in err, err
    assert "Traceback" not in err and not Path("c.yaml").exists()
