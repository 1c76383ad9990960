"""What a replay's state folder hands ``driftwatch approve``: the settings the replay
read its champion with, so an approval carried out there reads it the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from driftwatch.actions import commands
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.handoff import read_replay_state, write_replay_state
from driftwatch.actions.outbox import Outbox
from driftwatch.clock import ManualClock
from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.policy.decision import Decision, Tier


def _shadow(box: Outbox) -> int:
    decision = Decision(model="bank-pd", window_id=3, time=60.0, tier=Tier.MODERATE,
                        raw_tier=Tier.MODERATE, action="shadow", reasons=(), policy="p",
                        policy_digest="sha256:ab12", action_settings={"type": "shadow"})
    return box.record(decision)[0]


def _carried_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """The bad labels the executor ``approve`` builds on the replay's folder reads with."""
    seen: list[tuple[Any, ...]] = []

    def run_one(self: ActionExecutor, action_id: int) -> str:
        seen.append(self.env.bad_labels)
        return "carried out"

    monkeypatch.setattr(ActionExecutor, "run_one", run_one)
    box = Outbox(tmp_path, clock=ManualClock(100.0))
    try:
        assert commands._carry_out(box, _shadow(box), []) == "carried out"
    finally:
        box.close()
    return seen[0]


@pytest.mark.parametrize("bad", [("Charged Off", "Default"), (2,), (True,)])
def test_an_approval_reads_the_bad_class_with_the_replays_labels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: tuple[Any, ...]) -> None:
    write_replay_state(tmp_path, model="bank-pd", tracking_uri=None, columns={},
                       bad_labels=bad)
    assert read_replay_state(tmp_path)["bad_labels"] == list(bad)
    assert _carried_with(tmp_path, monkeypatch) == bad


def test_a_folder_from_before_the_labels_were_kept_reads_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_replay_state(tmp_path, model="bank-pd", tracking_uri=None, columns={})
    assert read_replay_state(tmp_path)["bad_labels"] is None
    assert _carried_with(tmp_path, monkeypatch) == DEFAULT_BAD


def test_a_replay_leaves_its_policys_bad_labels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo policy spells its bad class four ways; the replay's folder keeps them."""
    from driftwatch.cli import main

    from .test_champion_trial import ROOT, demo_replay_argv

    argv = demo_replay_argv(tmp_path, f"sqlite:///{tmp_path / 'mlflow.db'}", "unused")
    monkeypatch.chdir(ROOT)
    assert main(argv[: argv.index("--champion")]) == 0
    saved = read_replay_state(tmp_path / "out" / "state")
    assert saved is not None and saved["bad_labels"] == [1, True, "bad", "default"]
