"""A stream score named like none (``pred``, ``y_hat``) beside a reference without one: the
one field of probabilities the reference lacks is the score where the sample's outcomes
confirm it; the reference's own [0, 1] columns (Home Credit's EXT_SOURCE_*, bureau scores
that are features) never are. Before, such a score was dropped without a word: no AUC, no
calibration, no score drift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.unnamedscore import MIN_DISTINCT, lacking, unnamed_score

from ._cli import run_cli


def _files(tmp: Path, score: dict[str, str], n: int = 600, outcomes: bool = True) -> None:
    """A reference with a label and a bureau score in [0, 1] that predicts it (a feature),
    a scored stream with ``score`` fields (name -> "bad" rising with bad outcomes, "good"
    falling, "noise" unrelated) and its outcomes."""
    rng = np.random.default_rng(11)
    y = (rng.random(n) < 0.2).astype(int)
    ext = np.clip(rng.beta(3, 2, n) - 0.25 * y, 0, 1).round(4)  # lower for bad: a feature
    ref = pd.DataFrame({"SK_ID_CURR": np.arange(n), "TARGET": y, "EXT_SOURCE_1": ext,
                        "AMT_CREDIT": rng.lognormal(12, 0.5, n).round()})
    ref.to_csv(tmp / "train.csv", index=False)
    live = ref.drop(columns="TARGET").assign(SK_ID_CURR=np.arange(n) + 10_000)
    p = np.clip(0.1 + 0.3 * y + rng.normal(0, 0.08, n), 0.001, 0.999).round(4)
    kinds = {"bad": p, "good": (1 - p).round(4), "noise": rng.uniform(size=n).round(4)}
    for name, kind in score.items():
        live[name] = kinds[kind]
    live.to_csv(tmp / "scored.csv", index=False)
    if outcomes:
        pd.DataFrame({"SK_ID_CURR": live["SK_ID_CURR"], "TARGET": y}).to_csv(
            tmp / "outcomes.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str,
          outcomes: bool = True) -> tuple[str, dict, dict]:
    args = ["init", "--reference", str(tmp / "train.csv"), "--sample", str(tmp / "scored.csv"),
            "--model", "hc", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
            str(tmp / "p.yaml"), "--force", *extra]
    if outcomes:
        args += ["--outcomes", str(tmp / "outcomes.csv")]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    conn = yaml.safe_load((tmp / "c.yaml").read_text())
    fields = conn["source"]["streams"]["predictions"]["fields"]
    return (next(ln for ln in out.splitlines() if ln.startswith("score:")), fields,
            yaml.safe_load((tmp / "p.yaml").read_text()))


@pytest.mark.parametrize("name", ["pred", "y_hat", "model_output"])
def test_the_one_field_of_probabilities_the_outcomes_confirm_is_the_score(tmp_path, capsys,
                                                                         name):
    _files(tmp_path, {name: "bad"})
    line, fields, pol = _init(tmp_path, capsys)
    assert line.split()[1] == name
    assert fields["score"] == name
    assert pol["reference"]["score_is"] == "p_bad"
    assert "EXT_SOURCE_1" in fields["features"]  # the bureau score stays a feature


def test_lower_for_bad_reads_as_p_good(tmp_path, capsys):
    _files(tmp_path, {"pred": "good"})
    line, fields, pol = _init(tmp_path, capsys)
    assert fields["score"] == "pred" and pol["reference"]["score_is"] == "p_good"
    assert "P(good)" in line


def test_unconfirmed_or_ambiguous_fields_are_named_not_taken(tmp_path, capsys):
    _files(tmp_path, {"pred": "noise"})
    line, fields, _ = _init(tmp_path, capsys)
    assert "score" not in fields and "do not separate" in line
    assert "--score-field pred" in line
    _files(tmp_path, {"pred": "bad"}, outcomes=False)
    line, fields, _ = _init(tmp_path, capsys, outcomes=False)
    assert "score" not in fields and "no outcomes to confirm" in line
    _files(tmp_path, {"pred_a": "bad", "pred_b": "bad"})
    line, fields, _ = _init(tmp_path, capsys)
    assert "score" not in fields and "pred_a, pred_b" in line


def test_score_field_none_leaves_it_out(tmp_path, capsys):
    _files(tmp_path, {"pred": "bad"})
    line, fields, _ = _init(tmp_path, capsys, "--score-field", "none")
    assert "score" not in fields and line.split()[1] == "none"


# -- the rule on any data -------------------------------------------------------------------

values = st.lists(st.integers(0, 1000).map(lambda k: k / 1000), min_size=MIN_DISTINCT,
                  max_size=60, unique=True)


@settings(max_examples=60, deadline=None)
@given(values, st.integers(3, 8), st.booleans())
def test_a_field_that_orders_the_outcomes_is_taken_in_its_direction(xs, reps, rising):
    """Bad rows hold the top half of the values, good rows the bottom half, each value
    ``reps`` times: the field separates them perfectly."""
    xs = sorted(xs)
    half = len(xs) // 2
    col = [v for v in xs for _ in range(reps)]
    labels = [(i // reps >= half) == rising for i in range(len(col))]
    got = unnamed_score(["pred"], {"pred": col}.get, labels)
    assert got.path == "pred"
    assert got.score_is == ("p_bad" if rising else "p_good")


@settings(max_examples=60, deadline=None)
@given(values)
def test_a_field_that_orders_nothing_is_never_taken(xs):
    """Each value once on a bad row and once on a good one: AUC exactly 0.5."""
    col = [v for v in xs for _ in range(2)]
    labels = [i % 2 == 0 for i in range(len(col))]
    assert unnamed_score(["pred"], {"pred": col}.get, labels).path is None


@given(st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True), min_size=1,
                max_size=8, unique=True), st.sampled_from(["", "applicant.", "x.y."]))
def test_a_reference_column_is_never_a_candidate(columns, prefix):
    """Whatever its values: the reference's [0, 1] columns are features, at any path."""
    paths = [prefix + c for c in columns] + ["zz_only_in_stream"]
    assert lacking(columns, paths, set()) == (
        [] if "zz_only_in_stream" in columns else ["zz_only_in_stream"])
