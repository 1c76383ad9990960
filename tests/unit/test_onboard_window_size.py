"""A scored file shorter than the windows ``init`` writes: German credit's 1,000 rows, 600
to train and 400 scored, replayed at the default window of 1,000 records, closed one
window and reported tier ``none`` for a drift of PSI 0.25 in half its rows, without a
word. ``init`` now warns and names a window that shows it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.windowsize import (
    PERSISTENCE,
    fitting_min_labelled,
    fitting_pane,
    short_file_warning,
)

from ._cli import run_cli

N_SCORED = 400


def _german_like(tmp: Path) -> None:
    """Train and scored rows without id or time but a row number, the scored rows'
    second half drifting (longer loans, more overdrawn accounts)."""
    rng = np.random.default_rng(8)

    def rows(n: int) -> pd.DataFrame:
        return pd.DataFrame({
            "checking_status": rng.choice(["A11", "A12", "A13", "A14"], n,
                                          p=[0.27, 0.27, 0.06, 0.40]),
            "duration": rng.integers(4, 48, n),
            "credit_amount": rng.integers(250, 9000, n),
        })

    train = rows(600)
    train["class"] = rng.choice([1, 2], 600, p=[0.7, 0.3])
    train.to_csv(tmp / "train.csv", index=False)
    scored = rows(N_SCORED)
    late = np.arange(N_SCORED) >= N_SCORED // 2
    scored.loc[late, "duration"] = scored.loc[late, "duration"] * 2
    scored.loc[late, "checking_status"] = "A11"
    scored.insert(0, "row", np.arange(1, N_SCORED + 1))
    scored.to_csv(tmp / "scored.csv", index=False)
    pd.DataFrame({"row": scored["row"], "class": rng.choice([1, 2], N_SCORED)}).to_csv(
        tmp / "outcomes.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, out, err = run_cli(
        ["init", "--reference", str(tmp / "train.csv"), "--sample", str(tmp / "scored.csv"),
         "--outcomes", str(tmp / "outcomes.csv"), "--label-bad", "2", "--force",
         "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
         *extra], capsys)
    assert code == 0, err
    return out


def _windows(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """The timeline's window records of a replay of the scored and outcomes files."""
    out = tmp / "o"
    code, _, err = run_cli(
        ["replay", "--connector", str(tmp / "c.yaml"), "--policy", str(tmp / "p.yaml"),
         "--input", str(tmp / "scored.csv"), str(tmp / "outcomes.csv"), "--out", str(out),
         "--no-report", "-q"], capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in (out / "timeline.jsonl").read_text().splitlines()]
    return [x for x in lines if "decision" in x]


def _tiers(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [x["decision"]["tier"] for x in _windows(tmp, capsys)]


def test_a_scored_file_shorter_than_two_windows_is_warned_with_a_window_that_fits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _german_like(tmp_path)
    said = _init(tmp_path, capsys)
    warning = [x for x in said.splitlines() if x.startswith("warning: ")]
    assert len(warning) == 1, said
    assert f"holds {N_SCORED} records, fewer than 2 windows of 1000" in warning[0]
    assert "reports no drift" in warning[0]
    assert _tiers(tmp_path, capsys) == ["none"]  # what the warning says: drift unseen
    pane = int(warning[0].split("--pane ")[1].split()[0])
    assert pane == 100
    said = _init(tmp_path, capsys, "--pane", str(pane))
    assert "warning: " not in said
    tiers = _tiers(tmp_path, capsys)
    assert len(tiers) == 4 and tiers[-1] != "none", tiers  # the second half's drift shows


def test_a_sample_read_in_part_is_not_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file longer than ``--rows``: its length is unknown to init, so nothing is said."""
    _german_like(tmp_path)
    assert "warning: " not in _init(tmp_path, capsys, "--rows", "300")


@given(n=st.integers(0, 10_000), pane=st.integers(1, 5_000), limit=st.integers(1, 10_000))
def test_warned_exactly_when_a_whole_file_gives_fewer_than_persistence_windows(
        n: int, pane: int, limit: int) -> None:
    """A replay closes ``ceil(n / pane)`` windows, the last one partial where it ends."""
    said = short_file_warning("f.csv", n=n, pane=pane, limit=limit)
    assert (said is not None) == (n < limit and math.ceil(n / pane) < PERSISTENCE)


@given(n=st.integers(2 * PERSISTENCE, 1_000_000))
def test_the_suggested_window_lets_the_files_second_half_persist(n: int) -> None:
    pane = fitting_pane(n)
    half = n - n // 2  # the records of the file's second half
    assert half // pane >= PERSISTENCE  # whole windows of it, enough to count a tier


def _label_signals(tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[bool]:
    return [any(s["signal"] == "bad_rate" for s in x["signals"])
            for x in _windows(tmp, capsys)]


def test_the_window_init_suggests_reports_its_label_signals(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """At the suggested 100-record window, the default 500 outcomes a window needs was
    more than a window holds: no bad rate, AUC or calibration was ever reported, however
    many outcomes joined. init now asks half a window of them."""
    _german_like(tmp_path)
    _init(tmp_path, capsys, "--pane", "100")
    policy = (tmp_path / "p.yaml").read_text()
    assert "detectors:\n  min_labelled: 50 " in policy, policy
    assert _label_signals(tmp_path, capsys) == [True] * 4
    # the same policy with the default: the label signals go unreported
    (tmp_path / "p.yaml").write_text(policy.replace("  min_labelled: 50 ", "  min_labelled: 500 "))
    assert _label_signals(tmp_path, capsys) == [False] * 4


@given(pane=st.integers(1, 100_000))
def test_init_asks_no_more_outcomes_than_half_a_window_holds(pane: int) -> None:
    need = fitting_min_labelled(pane)
    if need is None:
        assert pane >= 1000  # the default, 500, is half a window or less
    else:
        assert 50 <= need <= max(50, pane // 2) and need < 500
