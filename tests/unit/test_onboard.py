"""``driftwatch init``, the policy's ``reference:`` block and the checks that tie the
reference, the connector and the policy together: every bad case ends in the message a
user sees, with a non-zero exit."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml

from driftwatch.batch import Batch
from driftwatch.cli import main
from driftwatch.labels.joiner import LabelJoiner
from driftwatch.onboard.infer import column_kind

from ._cli import run_cli as _cli

T0 = 1_700_000_000


def _data(tmp: Path, n: int = 400, **extra: object) -> None:
    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"income": rng.normal(50, 10, n).round(2),
                        "region": rng.choice(["n", "s"], n),
                        "score": rng.uniform(0, 1, n).round(4),
                        "label": rng.integers(0, 2, n)})
    for k, v in extra.items():
        ref[k] = v
    ref.to_csv(tmp / "ref.csv", index=False)
    live = ref.drop(columns=["label"]).copy()
    live.insert(0, "id", [f"e{i}" for i in range(n)])
    live.insert(1, "ts", T0 + np.arange(n))
    live.to_csv(tmp / "live.csv", index=False)


def _init(capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", "ref.csv", "--sample", "live.csv", "--model", "m",
                 "--connector-out", "c.yaml", "--policy-out", "p.yaml", *more], capsys)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- init ------------------------------------------------------------------------------------


def test_init_prints_one_line_per_decision_and_writes_checkable_files(work, capsys):
    _data(work)
    code, out, err = _init(capsys)
    assert code == 0, err
    assert "id: id" in out and "unique in the sample" in out
    assert "event time: ts" in out and "reads as event time (s)" in out
    assert "income: numeric" in out and "region: categorical" in out
    assert "outcomes: none" in out
    assert out.splitlines()[-2] == "wrote c.yaml and p.yaml"
    code, checked, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err


def test_the_written_psi_rule_offers_psi_without_missing_commented_out(work, capsys):
    _data(work)
    assert _init(capsys)[0] == 0
    text = Path("p.yaml").read_text()
    assert yaml.safe_load(text)["signals"][0].get("measure") is None  # PSI as banks report it
    Path("p.yaml").write_text(text.replace("# measure: psi_without_missing",
                                           "measure: psi_without_missing"))
    code, checked, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err
    rule = yaml.safe_load(Path("p.yaml").read_text())["signals"][0]
    assert (rule["detector"], rule["measure"]) == ("psi", "psi_without_missing")


def test_init_refuses_to_overwrite_unless_forced(work, capsys):
    _data(work)
    Path("p.yaml").write_text("mine\n")
    code, _, err = _init(capsys)
    assert code == 2
    assert err == "error: p.yaml: the file already exists\n  hint: pass --force to overwrite\n"
    assert Path("p.yaml").read_text() == "mine\n" and not Path("c.yaml").exists()
    assert _init(capsys, "--force")[0] == 0
    assert yaml.safe_load(Path("p.yaml").read_text())["kind"] == "DriftPolicy"


def test_an_ambiguous_score_lists_the_candidates_and_the_flag_settles_it(work, capsys):
    _data(work)
    ref = pd.read_csv("ref.csv").rename(columns={"score": "score_a"})
    ref["score_b"] = ref["score_a"] / 2
    ref.to_csv("ref.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert err.splitlines() == [
        "error: ref.csv: the score column is ambiguous: candidates score_a (numbers in "
        "[0, 1]), score_b (numbers in [0, 1])",
        "  hint: pass --score-field NAME to say which"]
    code, out, err = _init(capsys, "--score-field", "score_a", "--ignore", "score_b")
    assert code == 0, err
    assert "score: score (reference: score_a)" in out  # the stream's field keeps its name


def test_an_ambiguous_id_in_the_stream(work, capsys):
    _data(work)
    live = pd.read_csv("live.csv")
    live.insert(0, "request_id", live["id"] + "x")
    live.insert(0, "event_id", live["id"] + "y")
    live.drop(columns=["id"]).to_csv("live.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert "the id is ambiguous: candidates event_id (unique in the sample), request_id " \
           "(unique in the sample)" in err
    assert "hint: pass --id-field NAME to say which" in err
    assert _init(capsys, "--id-field", "event_id")[0] == 0


def test_a_reference_column_the_stream_lacks_is_named(work, capsys):
    _data(work)
    ref = pd.read_csv("ref.csv")
    ref["branch_code"] = "b1"
    ref.to_csv("ref.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert err.splitlines() == [
        "error: ref.csv: reference columns not found in the sample live.csv: branch_code",
        "  hint: map their fields by name, or pass --ignore COL for columns the live stream "
        "does not carry"]
    code, out, _ = _init(capsys, "--ignore", "branch_code")
    assert code == 0 and "ignore: branch_code" in out


def test_labels_that_do_not_say_which_is_bad_need_a_flag(work, capsys):
    _data(work)
    ref = pd.read_csv("ref.csv")
    ref["label"] = np.where(ref["label"] == 1, "X", "Z")
    ref.to_csv("ref.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert "cannot tell which label value is bad: values 'X', 'Z'" in err
    code, _, err = _init(capsys, "--label-bad", "X")
    assert code == 0, err
    label = yaml.safe_load(Path("p.yaml").read_text())["reference"]["label"]
    assert label == {"column": "label", "bad": ["X"], "good": ["Z"]}


def test_types_booleans_and_few_valued_integers_are_categorical():
    assert column_kind(pd.Series([True, False]))[0] == "categorical"
    assert column_kind(pd.Series(["true", "False", None]))[0] == "categorical"
    assert column_kind(pd.Series(np.arange(11)))[0] == "numeric"
    assert column_kind(pd.Series(np.arange(10)))[0] == "categorical"
    assert column_kind(pd.Series([1.0, 2.0, np.nan]))[0] == "categorical"


# -- policy check opens the reference --------------------------------------------------------


def _policy(tmp: Path, reference: str = "ref.csv", block: str = "", features: str = "") -> str:
    text = (f"apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {{name: m}}\n"
            f"model:\n  name: m\n  reference: {reference}\n{features}{block}"
            "window: {kind: count, pane: 100}\n"
            "signals:\n  - detector: psi\n    thresholds: {mild: 0.1}\n")
    (tmp / "p.yaml").write_text(text)
    return "p.yaml"


def test_policy_check_fails_when_the_reference_does_not_exist(work, capsys):
    _policy(work, "data/nope.csv")
    code, out, err = _cli(["policy", "check", "p.yaml"], capsys)
    assert (code, out) == (1, "")
    assert err.splitlines()[:3] == [
        "p.yaml:6:14: the reference 'data/nope.csv' does not exist",
        "  at model.reference",
        f"  hint: looked for {work / 'data/nope.csv'}; a relative path is read from the "
        "working directory"]
    assert _cli(["policy", "check", "--no-reference", "p.yaml"], capsys)[:2] == (
        0, "ok p.yaml\n")


def test_replay_with_a_missing_reference_is_the_same_located_error(work, capsys):
    _data(work)
    assert _init(capsys)[0] == 0
    Path("ref.csv").unlink()
    code, _, err = _cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", "live.csv",
                         "-o", "out"], capsys)
    assert code == 2
    assert err.startswith("error: p.yaml:")
    assert "the reference 'ref.csv' does not exist" in err


def test_unknown_score_is_is_located_with_a_suggestion(work, capsys):
    _data(work)
    _policy(work, block="reference:\n  score_is: p_godo\n")
    code, _, err = _cli(["policy", "check", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[:3] == [
        "p.yaml:8:13: expected 'p_bad' or 'p_good', found 'p_godo'",
        "  at reference.score_is", "  hint: did you mean 'p_good'?"]


def test_a_named_reference_column_the_table_lacks(work, capsys):
    _data(work)
    _policy(work, block="reference:\n  label: {column: defaulted, bad: [1], good: [0]}\n")
    code, _, err = _cli(["policy", "check", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[0] == \
        "p.yaml:8:10: the reference ref.csv has no column 'defaulted' (the label column)"
    assert "hint: columns: income, region, score, label" in err


def test_model_features_that_are_not_reference_features(work, capsys):
    _data(work)
    _policy(work, features="  features: [income, regoin, score]\n")
    code, _, err = _cli(["policy", "check", "p.yaml"], capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "p.yaml: 2 errors"
    assert "p.yaml:7:22: feature 'regoin' is not a feature column of the reference ref.csv" \
        in lines
    assert "  hint: did you mean 'region'?" in lines
    assert "p.yaml:7:30: feature 'score' is not a feature column of the reference ref.csv" \
        in lines


def _connector(tmp: Path, features: str) -> None:
    (tmp / "c.yaml").write_text(
        "apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: c}\nsource:\n"
        "  kind: file\n  streams:\n    predictions:\n      paths: [live.csv]\n"
        "      fields:\n        event_id: id\n        event_time: ts\n"
        f"        features:\n{features}        score: score\n")


def test_a_reference_column_the_connector_does_not_map(work, capsys):
    _data(work)
    _policy(work)
    _connector(work, "          income: {path: income, type: numeric}\n")
    code, _, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[:3] == [
        "c.yaml:12:9: reference columns not mapped in the connector: region",
        "  at source.streams.predictions.fields.features",
        "  hint: map each under features:, or list them under reference.ignore in the policy"]
    code, _, err2 = _cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", "live.csv",
                          "-o", "out"], capsys)
    assert code == 2 and err2 == "error: " + err
    _policy(work, block="reference:\n  ignore: [region]\n")
    assert _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)[0] == 0


def test_a_connector_feature_the_reference_lacks(work, capsys):
    _data(work)
    _policy(work)
    _connector(work, "          income: {path: income, type: numeric}\n"
                     "          regio: {path: region, type: categorical}\n"
                     "          region: {path: region, type: categorical}\n")
    code, _, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[:3] == [
        "c.yaml:14:11: feature 'regio' is not a feature column of the reference ref.csv",
        "  at source.streams.predictions.fields.features.regio",
        "  hint: did you mean 'region'?"]
    _connector(work, "          income: {path: income, type: numeric}\n"
                     "          region: {path: region, type: categorical}\n"
                     "          score: {path: score, type: numeric}\n")
    code, _, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 1
    assert "hint: it is the reference's score column; remove it from features" in err


def test_reference_labels_neither_bad_nor_good_stop_the_replay(work, capsys):
    _data(work)
    assert _init(capsys)[0] == 0
    ref = pd.read_csv("ref.csv")
    ref.loc[:5, "label"] = 7
    ref.to_csv("ref.csv", index=False)
    code, _, err = _cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", "live.csv",
                         "-o", "out"], capsys)
    assert code == 1
    assert err == ("error: reference label column 'label' has values that are neither bad "
                   "nor good: 7 (set reference.label bad/good, or pending for no outcome "
                   "yet, in the policy)\n")


# -- outcomes without a timestamp -----------------------------------------------------------


def test_arrival_time_is_only_for_outcomes(work, capsys):
    _data(work)
    _policy(work)
    (work / "c.yaml").write_text(
        "apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: c}\nsource:\n"
        "  kind: file\n  streams:\n    predictions:\n      paths: [live.csv]\n"
        "      fields:\n        event_id: id\n        event_time: {source: arrival}\n"
        "        features: infer\n")
    code, _, err = _cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[:2] == [
        "c.yaml:11:30: source: arrival is for an outcomes stream, found role 'predictions'",
        "  at source.streams.predictions.fields.event_time.source"]


def test_an_outcome_without_time_joins_at_its_predictions_time():
    j = LabelJoiner(ttl_seconds=86400.0, max_pending=100)
    early = j.add_outcomes(Batch.build("outcomes", n=1, ids=["a"], label=[1.0],
                                       event_time=[np.nan]))
    assert len(early) == 0 and j.orphans_held == 1
    j.expire(1e12)  # no time of its own: it does not expire by time
    assert j.orphans_held == 1
    got = j.add_predictions(Batch.build("predictions", n=1, ids=["a"], score=[0.3],
                                        event_time=[500.0], decision=[1]))
    assert got.outcome_time.tolist() == [500.0] and got.delay.tolist() == [0.0]


def test_init_example_writes_the_bundled_examples(work, capsys):
    try:
        import driftwatch.bundled  # noqa: F401  (package data, when this build has them)
    except ModuleNotFoundError:
        code, _, err = _cli(["init", "--example", "ex"], capsys)
        assert (code, err) == (2, "error: the bundled examples are not part of this build\n")
        return
    code, out, err = _cli(["init", "--example", "ex"], capsys)
    assert code == 0, err
    assert (work / "ex" / "policies" / "template.yaml").exists()
    assert f"wrote {Path('ex') / 'policies' / 'template.yaml'}" in out.splitlines()


def test_init_without_inputs_says_what_it_needs(work, capsys):
    code, _, err = _cli(["init"], capsys)
    assert (code, err) == (2, "error: driftwatch init needs --reference TABLE and --sample "
                              "FILE (or --kafka-topic TOPIC --bootstrap HOST:PORT)\n")
    code, _, err = _cli(["init", "--reference", "nope.csv", "--sample", "x.csv"], capsys)
    assert (code, err) == (2, "error: the reference nope.csv does not exist\n")


def test_an_empty_or_mislabelled_sample_is_one_line(work, capsys):
    _data(work)
    Path("empty.jsonl").write_text("")
    code, _, err = _cli(["init", "--reference", "ref.csv", "--sample", "empty.jsonl"], capsys)
    assert (code, err) == (1, "error: the sample empty.jsonl holds no records\n")
    Path("csv.jsonl").write_text(Path("live.csv").read_text())
    code, _, err = _cli(["init", "--reference", "ref.csv", "--sample", "csv.jsonl"], capsys)
    assert code == 1
    assert err.startswith("error: csv.jsonl:1: not a JSON line (") and "is it a CSV?" in err


def test_a_numeric_feature_sent_as_text_is_warned_about(work, capsys):
    _data(work)
    live = pd.read_csv("live.csv")
    live["income"] = live["income"].map(lambda v: f"{v:.2f} EUR")
    live.to_csv("live.csv", index=False)
    code, out, err = _init(capsys)
    assert code == 0, err
    assert "  warning: income" in out
    assert "numbers in the reference, text at income in the sample (" in out, out
    assert " EUR'" in out and "): replay counts those records as wrong_type" in out, out


def _monitor(policy_text: str | None = None):
    from driftwatch.pipeline import ModelMonitor
    from driftwatch.policy.loader import load_policy_text
    from driftwatch.windows.panes import WindowSpec
    from driftwatch.windows.profile import ReferenceProfile

    rng = np.random.default_rng(0)
    ref = pd.DataFrame({"x": rng.normal(0, 1, 200), "score": rng.uniform(0, 1, 200)})
    prof = ReferenceProfile.build(ref, numeric=["x"])
    pol = load_policy_text(policy_text) if policy_text else None
    return ModelMonitor("m", prof, WindowSpec(kind="count", pane_size=1000), policy=pol)


def test_outcomes_without_time_are_stamped_where_they_arrive_from_kafka():
    from driftwatch.connectors.base import Polled

    mon = _monitor()
    preds = Batch.build("predictions", n=2, ids=["a", "b"], score=[0.2, 0.7],
                        event_time=[100.0, 250.0], decision=[1, 1], numeric=[[0.0], [1.0]],
                        n_numeric=1)
    outs = Batch.build("outcomes", n=1, ids=["a"], label=[1.0], event_time=[np.nan])
    mon.process(Polled(batches=[preds, outs]))  # Kafka: no order across topics
    assert mon.joiner.stats()["joined"] == 1
    # after the poll's predictions: the watermark there is 250, so the delay is 150
    assert mon.joiner.delay_stats()["max"] == 150.0


def test_a_p_good_policy_turns_live_scores_into_p_bad():
    from driftwatch.connectors.base import Polled
    from driftwatch.policy.watcher import MINIMAL

    text = MINIMAL.replace("window:", "reference: {score_is: p_good}\nwindow:", 1)
    mon = _monitor(text)
    preds = Batch.build("predictions", n=2, ids=["a", "b"], score=[0.9, 0.6],
                        event_time=[1.0, 2.0], decision=[1, 1], numeric=[[0.0], [1.0]],
                        n_numeric=1)
    mon.process(Polled(batches=[preds]))
    outs = Batch.build("outcomes", n=2, ids=["a", "b"], label=[0.0, 1.0],
                       event_time=[3.0, 4.0])
    mon.process(Polled(batches=[outs]))
    scores = sorted(mon.labelled_buffer.frame()["score"].round(6).tolist())
    assert scores == [0.1, 0.4]


def test_the_python_api_reads_the_policys_reference_block(work):
    from driftwatch import Monitor
    from driftwatch.policy.loader import load_policy_text
    from driftwatch.policy.watcher import MINIMAL

    rng = np.random.default_rng(3)

    def frame(n: int) -> pd.DataFrame:
        x = rng.normal(0, 1, n)
        p_bad = 1 / (1 + np.exp(-(x - 1)))
        return pd.DataFrame({"x": x, "p_good": 1 - p_bad, "cust": [f"c{i}" for i in range(n)],
                             "y": np.where(rng.random(n) < p_bad, "bad", "good")})

    text = MINIMAL.replace("window:", "reference:\n  score: p_good\n  score_is: p_good\n"
                           "  label: {column: y, bad: [bad], good: [good]}\n"
                           "  decision: null\n  ignore: [cust]\nwindow:", 1)
    mon = Monitor.from_reference(frame(3000), policy=load_policy_text(text))
    assert mon.features == ("x",)
    res = mon.assess(frame(2000))
    sig = res.signals.set_index("signal")["value"]
    assert sig["score_psi"] < 0.05  # flipped on both sides alike
    assert sig["auc"] > 0.6  # P(bad) ranks the bad ones first
    with pytest.raises(Exception, match="not both"):
        Monitor.from_reference(frame(100), policy=load_policy_text(text), label="y")


def test_every_ignored_column_the_table_lacks_is_named(work, capsys):
    _data(work)
    _policy(work, block="reference:\n  ignore: [cust_id, opened_at]\n")
    code, _, err = _cli(["policy", "check", "p.yaml"], capsys)
    assert code == 1
    assert err.splitlines()[0] == "p.yaml: 2 errors"
    assert "p.yaml:8:12: the reference ref.csv has no column 'cust_id' (in ignore)" in err
    assert "p.yaml:8:21: the reference ref.csv has no column 'opened_at' (in ignore)" in err


def test_the_shipped_demo_policy_checks_against_its_reference_and_connectors(monkeypatch,
                                                                             capsys):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    for conn in ("connectors/demo-file.yaml", "connectors/demo-kafka.yaml"):
        code, out, err = _cli(["policy", "check", "--connector", conn,
                               "policies/credit-risk-demo.yaml"], capsys)
        assert (code, out) == (0, "ok policies/credit-risk-demo.yaml\n"), err
    code, _, err = _cli(["policy", "check", "policies/template.yaml"], capsys)
    assert code == 1 and "the reference 'data/reference.parquet' does not exist" in err


def test_policy_explain_says_how_the_reference_is_read(work, capsys):
    _policy(work, block="reference:\n  score: p\n  score_is: p_good\n  label: null\n"
                        "  ignore: [cust]\n")
    code, out, _ = _cli(["policy", "explain", "p.yaml"], capsys)
    assert code == 0
    assert out.splitlines()[-1] == (
        "#   reference: score column 'p' is P(good), read as P(bad) = 1 - it (here and "
        "live); no label column; decision column 'decision' (approve: 'approve', "
        "'approved', 1, true, 'accept'); ignored: 'cust'; every other column is a feature.")


# -- data init has never seen: names and shapes of public credit and fraud datasets -----------


def test_a_stream_score_named_otherwise_than_the_reference_column_is_found(work, capsys):
    _data(work)
    pd.read_csv("live.csv").rename(columns={"score": "p_bad"}).to_csv("live.csv", index=False)
    code, out, err = _init(capsys)
    assert code == 0, err
    assert "score: p_bad" in out and "score: none" not in out
    fields = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert fields["fields"]["score"] == "p_bad"
    # two stream candidates: --score-field names the stream's, the reference keeps its own
    live = pd.read_csv("live.csv")
    live["p_good"] = 1 - live["p_bad"]
    live.to_csv("live.csv", index=False)
    code, _, err = _init(capsys, "--force")
    assert code == 2 and "the score is ambiguous: candidates p_bad" in err
    code, out, err = _init(capsys, "--force", "--score-field", "p_bad")
    assert code == 0, err
    assert yaml.safe_load(Path("p.yaml").read_text())["reference"]["score"] == "score"


def test_init_says_the_score_once_with_the_reference_column_when_named_otherwise(
        work, capsys):
    _data(work)
    code, out, err = _init(capsys)
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("score:")]
    assert line.split()[:2] == ["score:", "score"] and "P(bad): mean " in line
    pd.read_csv("live.csv").rename(columns={"score": "p_bad"}).to_csv("live.csv", index=False)
    code, out, err = _init(capsys, "--force", "--score-is", "p_good")
    assert code == 0, err
    assert [x for x in out.splitlines() if x.startswith("score:")] == [
        f"{'score: p_bad (reference: score)':<34} P(good), as --score-is says"]
    pd.read_csv("live.csv").drop(columns=["p_bad"]).to_csv("live.csv", index=False)
    code, out, err = _init(capsys, "--force")
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("score:")]
    assert line.startswith("score: none (reference: score) ")
    assert "no field in [0, 1] named like a score in the sample; the reference column reads "\
        "as P(bad): mean " in line


def test_the_label_is_the_two_valued_reference_column_the_outcomes_carry(work, capsys):
    _data(work)
    ref = pd.read_csv("ref.csv").rename(columns={"label": "SeriousDlqin2yrs"})
    ref.to_csv("ref.csv", index=False)
    live = pd.read_csv("live.csv")
    live.assign(SeriousDlqin2yrs=ref["SeriousDlqin2yrs"])[["id", "SeriousDlqin2yrs"]].to_csv(
        "out.csv", index=False)
    code, out, err = _init(capsys, "--outcomes", "out.csv")
    assert code == 0, err
    assert "label: SeriousDlqin2yrs" in out and "in the outcomes sample" in out
    assert yaml.safe_load(Path("p.yaml").read_text())["reference"]["label"] == {
        "column": "SeriousDlqin2yrs", "bad": [1], "good": [0]}


def test_a_blank_headed_row_index_is_not_a_feature(work, capsys):
    _data(work)
    pd.read_csv("ref.csv").to_csv("ref.csv")  # pandas' default: the index, header blank
    code, out, err = _init(capsys)
    assert code == 0, err
    assert "ignore: Unnamed: 0" in out and "row numbers" in out


def test_no_id_or_time_says_what_was_looked_at_and_what_to_do(work, capsys):
    _data(work)
    live = pd.read_csv("live.csv")
    live.drop(columns=["id"]).to_csv("live.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert "cannot find the id field: no field named like an id (id, event_id, " in err
    assert "add a unique id to every record (outcomes join on it), or pass --id-field" in err
    live["Time"] = np.arange(len(live)) * 2.0  # seconds from the first event, as in ULB's
    live.drop(columns=["ts"]).to_csv("live.csv", index=False)
    code, _, err = _init(capsys)
    assert code == 2
    assert "cannot find the event time field: Time is named like one, but its values " \
           "(0.0, 2.0, 4.0, ...) are not epoch seconds, milliseconds or ISO-8601 times" in err
    assert "convert it to epoch time" in err
    code, out, err = _init(capsys, "--time-field", "Time")
    assert code == 0, err
    assert "  warning: Time" in out and "1970-01-01" in out


def test_the_written_policy_holds_a_unit_change_for_a_data_quality_fault(work, capsys):
    # a feed that starts sending income in thousands is a pipeline fault, not drift: it
    # must alert as one and block model changes (the written policy gated missing values only)
    _data(work)
    live = pd.read_csv("live.csv")
    live.loc[200:, "income"] = live.loc[200:, "income"] / 1000
    live.to_csv("live.csv", index=False)
    code, _, err = _init(capsys, "--pane", "200")
    assert code == 0, err
    quality = yaml.safe_load(Path("p.yaml").read_text())["data_quality"]["signals"]
    assert [s["detector"] for s in quality] == ["missing_rate", "out_of_range",
                                                "new_category_rate", "bad_record_rate"]
    assert quality[2]["features"] == ["region"]
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "live.csv", "--out", "o", "--no-levels-cache"], capsys)
    assert code == 0, err
    faults = [orjson.loads(line)["decision"]["data_quality_fault"]
              for line in Path("o/timeline.jsonl").read_text().splitlines()]
    assert faults == [False, True]


def test_output_piped_into_a_reader_that_stops_is_no_traceback(work, monkeypatch):
    # `driftwatch init ... | head -5`: head exits, the next print hits a closed pipe
    _data(work)
    r, w = os.pipe()
    os.close(r)
    out = os.fdopen(w, "w", buffering=1)
    monkeypatch.setattr("sys.stdout", out)
    code = main(["init", "--reference", "ref.csv", "--sample", "live.csv", "--model", "m",
                 "--connector-out", "c.yaml", "--policy-out", "p.yaml"])
    assert code == 141  # 128 + SIGPIPE, as a shell reports a reader that went away
    out.close()


def test_the_written_policy_watches_the_score_when_reference_and_stream_have_one(work, capsys):
    _data(work)
    assert _init(capsys)[0] == 0
    signals = yaml.safe_load(Path("p.yaml").read_text())["signals"]
    assert [s["detector"] for s in signals] == ["psi", "score_psi"]
    pd.read_csv("ref.csv").drop(columns=["score"]).to_csv("ref.csv", index=False)
    code, out, _ = _init(capsys, "--force")  # no reference score: nothing to compare with
    assert code == 0
    assert "the reference has no score column, so its stability is not watched" in out
    signals = yaml.safe_load(Path("p.yaml").read_text())["signals"]
    assert [s["detector"] for s in signals] == ["psi"]
