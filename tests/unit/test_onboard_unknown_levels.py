"""UCI Bank Marketing writes a missing job, education or loan as the level ``unknown``:
``init`` kept it as a category without a word, so a job lookup that started failing (35%
``unknown``) read as severe drift in ``job``, never as the data-quality fault it is. It
now says so, with the connector line that makes it one."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.unknownlevels import missing_word_level

from ._cli import run_cli

JOBS = ["admin.", "blue-collar", "technician", "services", "unknown"]


def _bank_like(tmp: Path) -> None:
    rng = np.random.default_rng(4)

    def rows(n: int, p_unknown: float) -> pd.DataFrame:
        p = np.array([0.3, 0.3, 0.2, 0.2, 0.0]) * (1 - p_unknown) + np.eye(5)[4] * p_unknown
        return pd.DataFrame({"age": rng.integers(18, 90, n), "job": rng.choice(JOBS, n, p=p),
                             "campaign": rng.integers(1, 10, n)})

    q = {"sep": ";", "index": False, "quoting": csv.QUOTE_NONNUMERIC}
    train = rows(3000, 0.01)
    train["y"] = rng.choice(["no", "yes"], 3000, p=[0.88, 0.12])
    train.to_csv(tmp / "train.csv", **q)
    scored = pd.concat([rows(2000, 0.01), rows(2000, 0.4)], ignore_index=True)
    scored.insert(0, "client_id", np.arange(1, 4001))
    scored.to_csv(tmp / "scored.csv", **q)
    pd.DataFrame({"client_id": scored["client_id"],
                  "y": rng.choice(["no", "yes"], 4000)}).to_csv(tmp / "outcomes.csv", **q)


def test_a_level_named_unknown_is_said_and_its_fix_makes_a_rise_a_data_quality_fault(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _bank_like(tmp_path)
    code, said, err = run_cli(
        ["init", "--reference", str(tmp_path / "train.csv"), "--sample",
         str(tmp_path / "scored.csv"), "--outcomes", str(tmp_path / "outcomes.csv"),
         "--pane", "500", "--connector-out", str(tmp_path / "c.yaml"),
         "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    kept = [x for x in said.splitlines() if x.strip().startswith("kept: 'unknown'")]
    assert len(kept) == 1 and "(job: ['unknown'])" in kept[0], said
    # what the line tells the user to do, done: the failing lookup is now a fault
    conn = tmp_path / "c.yaml"
    text = conn.read_text()
    at = "        features:\n"
    conn.write_text(text.replace(at, "        missing_values_by_feature: {job: ['unknown']}\n"
                                 + at, 1))
    out = tmp_path / "o"
    code, _, err = run_cli(
        ["replay", "--connector", str(conn), "--policy", str(tmp_path / "p.yaml"), "--input",
         str(tmp_path / "scored.csv"), str(tmp_path / "outcomes.csv"), "--out", str(out),
         "--no-report", "-q"], capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in (out / "timeline.jsonl").read_text().splitlines()]
    faults = [x["decision"]["data_quality_fault"] for x in lines if "decision" in x]
    assert faults == [False] * 4 + [True] * 4, faults


_SEPARATORS = st.sampled_from([" ", "_", "-", "."])


@st.composite
def _spelled(draw: st.DrawFn) -> str:
    """A missing word as a table might write it: any case, any separator, padded."""
    word = draw(st.sampled_from(["unknown", "missing", "not known", "not available"]))
    sep = draw(_SEPARATORS)
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in word.replace(" ", sep))
    return draw(st.sampled_from(["", " "])) + cased


_LEVELS = st.lists(st.text(alphabet="abcdefxyz.-", min_size=1, max_size=8), min_size=1,
                   max_size=6)


@given(levels=_LEVELS, spelled=_spelled(), n=st.integers(1, 5))
def test_a_missing_word_is_found_however_spelled(levels: list[str], spelled: str,
                                                 n: int) -> None:
    col = pd.Series(levels + [spelled] * n)
    found = missing_word_level(col)
    assert found is not None and found[0] == spelled
    assert found[1] == pytest.approx(n / len(col))


@given(levels=_LEVELS)
def test_levels_of_other_words_are_none(levels: list[str]) -> None:
    """The alphabet spells none of the missing words (no 'u', 'n', 'm', 'o', 't')."""
    assert missing_word_level(pd.Series(levels)) is None
