"""The champion's trial at start: it scores a sample of the reference, and a champion whose
output cannot be P(bad) (P(good) read as P(bad), class labels, points) stops the start with
what to do. Before, such a champion started, and every recalibration and shadow judged it
upside down or on clipped values, or failed weeks later, one action at a time."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from driftwatch.cli import main
from driftwatch.errors import ActionError
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.publish import pointed_at
from driftwatch.registry.scorer import Scorer
from driftwatch.registry.trial import reference_rows, reference_sample, trial_score
from driftwatch.scorescale import ScoreScale
from driftwatch.windows.conventions import TableConventions

ROOT = Path(__file__).resolve().parents[2]
URI = "models:/pd@champion"


def _reference(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return pd.DataFrame({"x": x, "label": (rng.random(n) < 0.05 + 0.5 * x).astype(float)})


def _scorer(fn, flavor: str = "pyfunc", **meta: str) -> Scorer:  # type: ignore[no-untyped-def]
    return Scorer("pd", "1", flavor, ("x",), lambda f: fn(f["x"].to_numpy()), meta=dict(meta))


def test_a_p_bad_champion_passes_and_its_auc_is_returned() -> None:
    ref = _reference()
    auc = trial_score(_scorer(lambda x: 0.05 + 0.5 * x), ref, URI)
    assert auc == pytest.approx(roc_auc_score(ref["label"], ref["x"]), abs=1e-12)


def test_p_good_read_as_p_bad_stops_the_start() -> None:
    with pytest.raises(ActionError, match=r"^models:/pd@champion: its scores rank the "
                       r"reference's bad rows below its good ones \(AUC 0\.[0-3]\d on 1000 "
                       r"labelled rows\): it returns P\(good\)\? declare score_is: p_good"):
        trial_score(_scorer(lambda x: 0.95 - 0.5 * x), _reference(), URI)


def test_p_bad_declared_p_good_is_named_the_other_way() -> None:
    with pytest.raises(ActionError, match=r"read as P\(good\) \(score_is: p_good\).*it returns "
                                          r"P\(bad\)\? drop score_is: p_good"):
        trial_score(_scorer(lambda x: 0.95 - 0.5 * x, score_is="p_good"), _reference(), URI)


def test_an_inverted_predict_proba_flavour_points_at_the_label_coding() -> None:
    with pytest.raises(ActionError, match=r"predict_proba column of the bad class.*another "
                                          r"coding of the label"):
        trial_score(_scorer(lambda x: 1 - x, flavor="sklearn"), _reference(), URI)


def test_scores_that_do_not_separate_pass() -> None:
    ref = _reference()
    noise = np.random.default_rng(5).uniform(0, 1, len(ref))
    assert trial_score(Scorer("pd", "1", "pyfunc", ("x",), lambda f: noise), ref, URI) \
        == pytest.approx(roc_auc_score(ref["label"], noise), abs=1e-12)


def test_class_labels_are_refused() -> None:
    with pytest.raises(ActionError, match=r"returned only 0 and 1 on 1000 reference rows: "
                                          "class labels, not probabilities"):
        trial_score(_scorer(lambda x: (x > 0.5).astype(float)), _reference(), URI)


def test_points_are_refused_at_start() -> None:
    with pytest.raises(ActionError, match=r"^models:/pd@champion: cannot score the reference "
                                          r"sample: model pd v1 \(pyfunc\) returned values from "
                                          r"500 to 600, not probabilities"):
        trial_score(_scorer(lambda x: 500 + 100 * (x - x.min()) / np.ptp(x)), _reference(), URI)


def test_unscored_rows_of_the_trial_are_not_counted_as_live_ones() -> None:
    s = Scorer("pd", "1", "pyfunc", ("x",), lambda f: np.full(len(f), 0.2),
               types={"x": "long"}, strict=True)
    trial_score(s, pd.DataFrame({"x": [1.0, np.nan, 2.0]}), URI)
    assert s.unscored == 0


def test_the_sample_reads_the_label_through_the_policy(tmp_path: Path) -> None:
    path = tmp_path / "ref.csv"
    pd.DataFrame({"x": [0.1, 0.9, 0.5], "status": ["Fully Paid", "Charged Off", "Current"]}) \
        .to_csv(path, index=False)
    table = TableConventions(score=None, label="status", bad=("Charged Off",),
                             good=("Fully Paid",))
    sample = reference_sample(path, table)
    assert sample is not None
    assert sample["label"].tolist()[:2] == [0.0, 1.0] and np.isnan(sample["label"].iloc[2])
    assert reference_sample(tmp_path / "profile.json.gz", table) is None


def test_the_sample_reads_percent_and_money_text_as_the_connector_does(tmp_path: Path) -> None:
    """A champion trained on the numbers was given the reference's "13.56%" text: its
    trial refused it (text for a numeric input) though live it sees the numbers."""
    path = tmp_path / "ref.csv"
    rates = [13.56, 7.0, 21.5]
    pd.DataFrame({"x": [f"{r}%" for r in rates], "amount": ["$60,000.00 ", "$1,234.50", "$7"],
                  "label": [0, 1, 0]}).to_csv(path, index=False)
    raw = reference_sample(path, None)
    assert raw is not None and raw["x"].tolist() == ["13.56%", "7.0%", "21.5%"]
    read = reference_sample(path, None, formats={"x": "percent", "amount": "money"})
    assert read is not None
    assert read["x"].tolist() == rates and read["amount"].tolist() == [60000.0, 1234.5, 7.0]
    # a model of the numbers scores them (too few rows to judge its AUC)
    assert trial_score(_scorer(lambda x: np.clip(x / 100, 0, 1)), read, URI) is None


CARD = ScoreScale.points(base=600, odds=50, pdo=20)


def test_the_sample_reads_a_points_score_as_the_connector_does(tmp_path: Path) -> None:
    """With a scorecard's points in the stream and the reference, the champion's trial and
    the stand-in read the reference's score column raw: points where the monitor reads
    probabilities (the trial said the champion's scores disagree with it)."""
    path = tmp_path / "ref.csv"
    p_bad = np.array([1 / 51, 1 / 101, 1 / 26])  # 600, 620 and 580 points at 50:1, pdo 20
    pd.DataFrame({"x": [1.0, 2.0, 3.0], "score": [600, 620, 580],
                  "label": [0, 1, 0]}).to_csv(path, index=False)
    table = TableConventions()
    raw = reference_sample(path, table)
    assert raw is not None and raw["score"].tolist() == [600, 620, 580]
    read = reference_sample(path, table, score_scale=CARD)
    assert read is not None and np.allclose(read["score"], p_bad, rtol=1e-12)
    rows = reference_rows(path, table, score_scale=CARD)
    assert np.allclose(rows["score"], p_bad, rtol=1e-12)


def demo_replay_argv(tmp_path: Path, store: str, champion: str) -> list[str]:
    """``driftwatch replay --execute --champion`` argv on the demo's first records (a
    window's worth is not needed: the champion is checked at start), run from the
    repository's root; the state folder is ``tmp_path/out/state``."""
    streams = {}
    for stream, lines in (("predictions", 300), ("outcomes", 50)):
        with gzip.open(ROOT / f"data/demo/{stream}.jsonl.gz", "rt") as fh:
            head = [next(fh) for _ in range(lines)]
        streams[stream] = tmp_path / f"{stream}.jsonl"
        streams[stream].write_text("".join(head))
    return ["replay", "-q", "--connector", "connectors/demo-file.yaml",
            "--policy", "policies/credit-risk-demo.yaml",
            "--input", *(f"{k}={v}" for k, v in streams.items()),
            "--out", str(tmp_path / "out"), "--execute", "--tracking-uri", store,
            "--champion", champion]


def test_replay_execute_checks_the_champion_at_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import mlflow
    from mlflow.models import infer_signature

    class GoodScore(mlflow.pyfunc.PythonModel):
        def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
            z = 4 * model_input["debt_to_income"] + 2 * model_input["utilization"].fillna(0.3)
            return 1 / (1 + np.exp(z.to_numpy(np.float64) - 3))

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    x = pd.DataFrame({"debt_to_income": [0.2, 0.4], "utilization": [0.1, 0.9]})
    with pointed_at(MlflowRegistry(store)), mlflow.start_run():  # as a bank registers it
        info = mlflow.pyfunc.log_model(name="model", python_model=GoodScore(),
                                       signature=infer_signature(x, np.zeros(2)),
                                       registered_model_name="bank-pd")
    mlflow.MlflowClient(store).set_registered_model_alias(
        "bank-pd", "champion", info.registered_model_version)
    monkeypatch.chdir(ROOT)
    argv = demo_replay_argv(tmp_path, store, "models:/bank-pd@champion")
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "models:/bank-pd@champion: its scores rank the reference's bad rows below" in err
    assert "declare score_is: p_good" in err
    assert main([*argv, "--champion-score-is", "p_good"]) == 0
    # its two columns are not the model that scored the demo's reference: said, not refused
    assert ("note: models:/bank-pd@champion: its scores disagree with the reference's score "
            "column on 2000 rows (rank correlation 0.50") in capsys.readouterr().err
    # a misspelt mapping was ignored, and the column read under its own name
    assert main([*argv, "--champion-score-is", "p_good",
                 "--champion-column", "debt_to_incme=debt_to_income"]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "error: models:/bank-pd@champion: the champion's columns map 'debt_to_incme', which is "
        "no input column of bank-pd v1 (did you mean 'debt_to_income'?); its inputs: "
        "debt_to_income, utilization")
    # a river learner would replace the bank's model, not update it: refused at start
    text = (ROOT / "policies/credit-risk-demo.yaml").read_text()
    assert text.count("    type: online_update") == 1
    learner = tmp_path / "learner.yaml"
    learner.write_text(text.replace("    type: online_update",
                                    "    type: online_update\n    method: learner"))
    policy = argv.index("policies/credit-risk-demo.yaml")
    assert main([*argv[:policy], str(learner), *argv[policy + 1:],
                 "--champion-score-is", "p_good"]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "error: mild tier: online_update method: learner needs a river champion, and "
        "models:/bank-pd@champion is a pyfunc model: a fresh StandardScaler|LogisticRegression "
        "would be registered in its place instead of updating it; set method: recalibrate (or "
        "auto) to recalibrate its score")


def test_the_daemon_reads_the_trial_rows_once_across_retries(monkeypatch) -> None:
    """A champion that fails its check is retried every actions tick: the reference (which
    may be large) is read for its trial once, not on every retry."""
    from types import SimpleNamespace

    from driftwatch.registry import bootstrap, trial
    from driftwatch.service.action_champion import ChampionCheck
    from driftwatch.service.actions import ModelActions

    reads: list[object] = []
    monkeypatch.setattr(trial, "reference_sample",
                        lambda path, table, formats=None, score_scale=None:
                        reads.append((path, formats, score_scale))
                        or pd.DataFrame({"x": [1.0]}))

    def refuse(registry, ref, features, scorers, rows, note, profile=None):  # type: ignore[no-untyped-def]
        assert rows is not None and list(rows.columns) == ["x"]
        raise ActionError("models:/pd@champion: its scores rank ...")

    monkeypatch.setattr(bootstrap, "require_champion", refuse)
    check = ChampionCheck()
    check.registry = None  # type: ignore[attr-defined]
    ma = ModelActions("pd", outbox=None, reference="ref.parquet",  # type: ignore[arg-type]
                      executor=SimpleNamespace(env=SimpleNamespace(scorers=lambda: None)),
                      champion=SimpleNamespace(uri=URI), text_formats={"x": "percent"},
                      score_scale=CARD)
    for _ in range(3):
        with pytest.raises(ActionError, match="its scores rank"):
            check._ensure_champion(ma)
    # once, and read as the connector reads its percent feature
    assert reads == [("ref.parquet", {"x": "percent"}, CARD)] and not ma.has_champion


def test_a_fresh_learner_reads_the_reference_as_the_connector_does(tmp_path: Path) -> None:
    """An online update whose learner starts fresh learns the reference's rows first; a
    ``format: percent`` column reached it as text."""
    from driftwatch.actions import online_update
    from driftwatch.actions.context import ActionContext, ActionEnv
    from driftwatch.actions.reference import ReferenceReader
    from driftwatch.clock import ManualClock

    path = tmp_path / "ref.csv"
    pd.DataFrame({"x": ["13.56%", "7%"], "y": [1.0, 2.0]}).to_csv(path, index=False)
    env = ActionEnv(registry=None, clock=ManualClock(0.0), state_dir=tmp_path,  # type: ignore[arg-type]
                    reference_path=str(path), reader=ReferenceReader(formats={"x": "percent"}))
    rows = online_update._reference(env, ActionContext())
    assert rows is not None and rows["x"].tolist() == [13.56, 7.0]
    assert rows["y"].tolist() == [1.0, 2.0]
