"""A decision the scored stream carries, beside a training table that has none, is mapped:
``init`` used to look for the decision in the reference only, so the stream's was dropped
without a word, the approval rate went unreported, and every declined application (which
gets no outcome) waited in the label join's backlog until its TTL."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._cli import run_cli

N = 600


def _files(tmp: Path, approve: object, decline: object, name: str = "decision",
           seed: int = 3) -> int:
    """A reference without a decision, a stream with one, outcomes for the approved only;
    the number of declined records."""
    rng = np.random.default_rng(seed)

    def frame() -> pd.DataFrame:
        return pd.DataFrame({"income": rng.gamma(3, 15000, N).round(0),
                             "channel": rng.choice(["branch", "online", "broker"], N),
                             "defaulted": rng.integers(0, 2, N)})

    frame().to_csv(tmp / "ref.csv", index=False)
    live = frame()
    live.insert(0, "application_id", [f"A{i:05d}" for i in range(N)])
    live["p_default"] = rng.random(N).round(4)
    ok = rng.random(N) < 0.6
    live[name] = np.where(ok, approve, decline).astype(object)
    live.drop(columns=["defaulted"]).to_csv(tmp / "live.csv", index=False)
    live.loc[ok, ["application_id", "defaulted"]].to_csv(tmp / "out.csv", index=False)
    return int((~ok).sum())


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str
          ) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                    "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml"), "--force", *extra], capsys)


def _replay(tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    code, _, err = run_cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                            str(tmp / "p.yaml"), "--input", f"predictions={tmp / 'live.csv'}",
                            f"outcomes={tmp / 'out.csv'}", "--out", str(tmp / "o"),
                            "--quiet", "--no-report"], capsys)
    assert code == 0, err
    labels: dict[str, int] = json.loads((tmp / "o" / "summary.json").read_text())["labels"]
    return labels


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([("APPROVE", "DECLINE"), ("approved", "declined"), ("Y", "N"),
                        ("accept", "reject"), ("A", "D"), ("yes", "no")]),
       st.integers(0, 2**16))
def test_a_stream_decision_is_mapped_where_the_reference_has_none(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
        pair: tuple[str, str], seed: int) -> None:
    tmp = tmp_path_factory.mktemp("d")
    approve, decline = pair
    declined = _files(tmp, approve, decline, seed=seed)
    code, out, err = _init(tmp, capsys)
    assert code == 0, err
    assert "decision: decision" in out, out
    c = yaml.safe_load((tmp / "c.yaml").read_text())
    assert c["source"]["streams"]["predictions"]["fields"]["decision"] == {
        "path": "decision", "approve": [approve]}
    labels = _replay(tmp, capsys)
    assert labels["declined_skipped"] == declined
    assert labels["backlog"] == 0 and labels["joined"] == N - declined


def test_approve_and_decision_field_name_the_stream_s_decision(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Codes no name gives away: the user names the field and its approving value."""
    declined = _files(tmp_path, "C1", "C7", name="outcome_code_decided")
    code, out, err = _init(tmp_path, capsys, "--decision-field", "outcome_code_decided",
                           "--approve", "C1")
    assert code == 0, err
    assert "decision: outcome_code_decided" in out and "in the stream only" in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert c["source"]["streams"]["predictions"]["fields"]["decision"] == {
        "path": "outcome_code_decided", "approve": ["C1"]}
    assert _replay(tmp_path, capsys)["declined_skipped"] == declined
    code, _, err = _init(tmp_path, capsys, "--decision-field", "outcome_code_decided",
                         "--approve", "C9")
    assert code == 2 and "no value of the decision column outcome_code_decided" in err, err
