"""Outcomes that come later than the default wait (120 days): ``init`` measures the delay on
the samples' pairs and writes ``labels.ttl`` to cover it. Lending Club's outcomes, dated by
their last payment months or years after ``issue_d``, otherwise all expired unlabelled: a
replay of 30,000 loans joined none (every cohort ``expired``, no bad rate or AUC at all)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.labelwait import MAX_TTL_DAYS, wait_for
from driftwatch.policy.settings import LabelSettings

from ._cli import init_then_replay, run_cli

DAY = 86400.0


@given(st.lists(st.floats(0, 5000), min_size=1, max_size=30))
def test_the_wait_covers_every_delay_seen_or_is_the_default(delays_days: list[float]) -> None:
    made = np.arange(len(delays_days)) * DAY + 1.6e9
    wait = wait_for(made, made + np.array(delays_days) * DAY)
    longest = max(delays_days) * DAY
    if longest <= LabelSettings().ttl:
        assert wait is None
    else:
        assert wait is not None and wait.pairs == len(delays_days)
        days = int(wait.ttl.removesuffix("d"))
        assert days == MAX_TTL_DAYS or days * DAY >= 2 * longest


def _loans(tmp: Path, n: int, delay_days: int) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, n)
    bad = rng.random(n) < 1 / (1 + np.exp(-(x - 1.5)))
    issue = 1_500_000_000 + np.arange(n) * 43200  # two loans a day
    (tmp / "ref.csv").write_text("x,bad\n" + "".join(
        f"{a:.4f},{int(b)}\n" for a, b in zip(x, bad, strict=True)))
    (tmp / "live.csv").write_text("loan_id,issue_ts,x,score\n" + "".join(
        f"L{i},{t},{a:.4f},{1 / (1 + np.exp(-(a - 1.5))):.4f}\n"
        for i, (t, a) in enumerate(zip(issue, x, strict=True))))
    (tmp / "out.csv").write_text("loan_id,closed_ts,bad\n" + "".join(
        f"L{i},{t + delay_days * 86400 + i % 7 * 86400},{int(b)}\n"
        for i, (t, b) in enumerate(zip(issue, bad, strict=True))))


def test_init_writes_a_wait_that_joins_late_outcomes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _loans(tmp_path, 3000, 400)
    said, _ = init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                               outcomes="out.csv")
    assert "label wait: 812d" in said, said
    policy = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert policy["labels"] == {"ttl": "812d"}
    labels = json.loads((tmp_path / "o" / "summary.json").read_text())["labels"]
    assert labels["joined"] == 3000 and labels["expired"] == 0, labels


def test_outcomes_within_the_default_wait_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _loans(tmp_path, 1500, 30)
    said, _ = init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                               outcomes="out.csv")
    assert "label wait" not in said
    assert "labels" not in yaml.safe_load((tmp_path / "p.yaml").read_text())
    labels = json.loads((tmp_path / "o" / "summary.json").read_text())["labels"]
    assert labels["joined"] == 1500, labels


def test_replay_says_when_predictions_expired_before_their_outcomes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _loans(tmp_path, 1500, 400)
    init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                     outcomes="out.csv")
    policy = yaml.safe_load((tmp_path / "p.yaml").read_text())
    del policy["labels"]  # the default wait: every outcome comes after it
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(policy))
    # polls of 100 records: a wait runs out where a poll ends (so, for now, the batch size
    # matters here): a whole file in one poll would join its outcomes first
    code, out, err = run_cli(["replay", "-q", "--no-report", "--batch-size", "100",
                              "-c", str(tmp_path / "c.yaml"), "-p", str(tmp_path / "p.yaml"), "-i",
                              f"predictions={tmp_path / 'live.csv'}",
                              f"outcomes={tmp_path / 'out.csv'}", "-o",
                              str(tmp_path / "o2")], capsys)
    assert code == 0, err
    labels = json.loads((tmp_path / "o2" / "summary.json").read_text())["labels"]
    assert labels["expired"] > 1000, labels
    said = {ln.strip().split(":")[0]: ln.strip() for ln in out.splitlines()}
    assert said["predictions expired"].startswith(
        f"predictions expired: {labels['expired']} of 1500 waited labels.ttl"), out
    for key in ("outcomes lost", "outcomes unmatched"):
        if key in said:
            assert "expired unlabelled (labels.ttl)" in said[key], said[key]
