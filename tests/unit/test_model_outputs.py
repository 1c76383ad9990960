"""A champion's output read as P(bad) whatever shape its predict returns: a dict, a frame with
named columns in any order, records; and refused, with what came back, when it is no
probability (log-odds, a scorecard's points) or cannot be read at all. Before, a dict ended
the action in a TypeError traceback, a frame ``p_bad, p_good`` was read at P(good), and
log-odds or points were clipped into [0, 1] without a word."""

from __future__ import annotations

from pathlib import Path

import mlflow.pyfunc
import numpy as np
import pandas as pd
import pytest
from mlflow.models import infer_signature

from driftwatch.errors import ActionError
from driftwatch.registry.outputs import probabilities
from driftwatch.registry.scorer import load_scorer

P_BAD = np.array([0.1, 0.25, 0.7])


@pytest.mark.parametrize("raw", [
    {"p0": 1 - P_BAD, "p1": P_BAD},
    {"p1": P_BAD, "p0": 1 - P_BAD},
    {"score": P_BAD},
    pd.DataFrame({"p_bad": P_BAD, "p_good": 1 - P_BAD}),
    pd.DataFrame({"prob_default": P_BAD, "other": np.zeros(3)}),
    pd.DataFrame({"p_good": 1 - P_BAD, "risk": P_BAD}),
    pd.DataFrame({0: 1 - P_BAD, 1: P_BAD}),
    [{"good": 1 - g, "bad": g} for g in P_BAD],
    np.column_stack([1 - P_BAD, P_BAD]),
    list(P_BAD),
], ids=["dict", "dict-bad-first", "dict-one", "frame-bad-first", "frame-default",
        "frame-good-named", "frame-class-codes", "records", "proba-array", "list"])
def test_every_shape_reads_the_bad_probability(raw) -> None:
    np.testing.assert_array_equal(probabilities(raw, 3), P_BAD)


def test_the_policy_bad_label_names_the_column() -> None:
    raw = pd.DataFrame({"Charged Off": P_BAD, "Fully Paid": 1 - P_BAD})
    np.testing.assert_array_equal(probabilities(raw, 3, ["Charged Off"]), P_BAD)


@pytest.mark.parametrize("raw, seen", [
    (np.log(P_BAD / (1 - P_BAD)), "from -2.197 to 0.8473"),
    (np.array([612.0, 580.0, 701.5]), "from 580 to 701.5"),
])
def test_log_odds_and_points_are_refused_not_clipped(raw, seen) -> None:
    with pytest.raises(ActionError, match=rf"returned values {seen}, not probabilities"):
        probabilities(raw, 3)


@pytest.mark.parametrize("raw", [{"a": [0.1, 0.2], "b": [0.1]}, np.array(["x", "y", "z"]),
                                 object()])
def test_an_unreadable_output_is_an_action_error(raw) -> None:
    with pytest.raises(ActionError, match="returned"):
        probabilities(raw, 3)


class _Shaped(mlflow.pyfunc.PythonModel):
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        p = model_input["dti"].to_numpy() / 2
        if self.kind == "dict":
            return {"p0": 1 - p, "p1": p}
        if self.kind == "named":
            return pd.DataFrame({"p_bad": p, "p_good": 1 - p})
        return 600 - 28.85 * np.log(p / (1 - p))  # points


def _saved(tmp_path: Path, kind: str) -> Path:
    x = pd.DataFrame({"dti": [0.2, 0.5, 1.2]})
    path = tmp_path / kind
    mlflow.pyfunc.save_model(str(path), python_model=_Shaped(kind),
                             signature=infer_signature(x, np.zeros(3)))
    return path


def test_a_pyfunc_champion_of_each_shape(tmp_path: Path) -> None:
    frame = pd.DataFrame({"dti": [0.2, 0.5, 1.2]})
    expected = [0.1, 0.25, 0.6]
    s = load_scorer(_saved(tmp_path, "dict"), name="pd", version="1")
    np.testing.assert_allclose(s.score(frame), expected)
    named = _saved(tmp_path, "named")
    for score_is in ("p_bad", "p_good"):  # the column's name says P(bad): no flip
        s = load_scorer(named, name="pd", version="2", score_is=score_is)
        np.testing.assert_allclose(s.score(frame), expected)
    s = load_scorer(_saved(tmp_path, "points"), name="pd", version="3")
    with pytest.raises(ActionError, match=r"^model pd v3 \(pyfunc\) returned values from 5\d\d"
                                          r"\.\d+ to 6\d\d\.\d+, not probabilities"):
        s.score(frame)
