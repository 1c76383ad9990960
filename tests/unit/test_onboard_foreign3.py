"""``init`` and ``replay`` on the shapes of more public tables and streams: Give Me Some
Credit (a 0/1 ``SeriousDlqin2yrs`` in the reference, written as JSON booleans by the
service that sends the outcomes) and the Taiwan credit-card table (a label named
``default.payment.next.month``, which pandas writes to JSON as one flat key), and UCI
German credit with a service that sends its score as a percentage (0 to 100), as
log-odds or as scorecard points."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli as _cli


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], ref: str, live: str, out: str,
          *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / ref), "--sample", str(tmp / live),
                 "--outcomes", str(tmp / out), "--model", "m", "--connector-out",
                 str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _timeline(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "timeline.jsonl").read_text().splitlines()]


def _gmsc(tmp: Path, n: int = 600) -> np.ndarray:
    """Give Me Some Credit's reference (0/1 label, pandas' blank-headed index) and a JSON
    stream whose outcomes say the label as ``true``/``false``; returns the outcomes."""
    rng = np.random.default_rng(3)
    util = rng.beta(0.6, 1.4, n).round(6)
    age = rng.integers(21, 90, n)
    score = (1 / (1 + np.exp(-(-3 + 2.5 * util)))).round(4)
    bad = rng.uniform(size=n) < score * 2
    pd.DataFrame({"SeriousDlqin2yrs": bad.astype(int),
                  "RevolvingUtilizationOfUnsecuredLines": util, "age": age,
                  "score": score}).to_csv(tmp / "cs-training.csv")
    with (tmp / "live.jsonl").open("w") as f, (tmp / "out.jsonl").open("w") as g:
        for i in range(n):
            f.write(json.dumps({"request_id": f"r{i}", "created_at": 1.7e9 + 60 * i,
                                "applicant": {"RevolvingUtilizationOfUnsecuredLines":
                                              float(util[i]), "age": int(age[i])},
                                "score": float(score[i])}) + "\n")
            g.write(json.dumps({"request_id": f"r{i}", "SeriousDlqin2yrs": bool(bad[i])})
                    + "\n")
    return bad


def test_a_boolean_outcome_reads_the_reference_s_1_as_true(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: bad = [] and good = [False, True], so every default counted as repaid
    _gmsc(tmp_path)
    code, out, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == [True] and label["good"] == [False], label
    assert "outcomes label: SeriousDlqin2yrs   bad = [True], good = [False]" in out, out


def test_a_boolean_outcome_given_as_label_bad_1_reads_true_as_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gmsc(tmp_path)
    code, _, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl",
                         "--label-bad", "1")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == [True] and label["good"] == [False], label


def test_replay_counts_the_true_outcomes_as_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    bad = _gmsc(tmp_path)
    code, _, err = _init(tmp_path, capsys, "cs-training.csv", "live.jsonl", "out.jsonl")
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "predictions=live.jsonl", "outcomes=out.jsonl", "--out", "run"],
                        capsys)
    assert code == 0, err
    windows = _timeline(tmp_path / "run")
    assert sum(w["n_labelled"] for w in windows) == len(bad)
    assert sum(w["n_labelled_bad"] for w in windows) == int(bad.sum()) > 0


def _taiwan(tmp: Path, n: int = 500) -> np.ndarray:
    """The Taiwan table's reference; predictions as CSV; outcomes as pandas writes them to
    JSON lines (``to_json(orient="records", lines=True)``): one key with dots in it."""
    rng = np.random.default_rng(8)
    pay0 = rng.choice([-2, -1, 0, 1, 2], n)
    bill = rng.normal(40000, 15000, n).round()
    score = (1 / (1 + np.exp(-(-1.5 + 0.6 * pay0)))).round(4)
    bad = (rng.uniform(size=n) < score).astype(int)
    pd.DataFrame({"ID": np.arange(1, n + 1), "PAY_0": pay0, "BILL_AMT1": bill, "score": score,
                  "default.payment.next.month": bad}).to_csv(tmp / "ref.csv", index=False)
    live = pd.DataFrame({"ID": np.arange(10**5, 10**5 + n), "ts": 1.1e9 + 3600 * np.arange(n),
                         "PAY_0": pay0, "BILL_AMT1": bill, "score": score})
    live.to_csv(tmp / "live.csv", index=False)
    pd.DataFrame({"ID": live["ID"], "default.payment.next.month": bad}).to_json(
        tmp / "out.jsonl", orient="records", lines=True)
    return bad


def test_a_json_key_with_dots_is_read_as_that_key_not_as_nested_objects(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: init mapped it and policy check passed, then replay dead-lettered every
    # outcome as bad_label ("found null"): the decoder looked for {"default": {"payment": ...}}
    bad = _taiwan(tmp_path)
    code, out, err = _init(tmp_path, capsys, "ref.csv", "live.csv", "out.jsonl")
    assert code == 0, err
    assert "outcomes label: default.payment.next.month" in out, out
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "predictions=live.csv", "outcomes=out.jsonl", "--out", "run"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_records"] == 0, summary["bad_by_reason"]
    assert summary["labels"]["outcomes"] == len(bad)
    windows = _timeline(tmp_path / "run")
    assert sum(w["n_labelled_bad"] for w in windows) == int(bad.sum()) > 0


def test_the_probe_reads_a_dotted_path_as_one_key_only_where_records_hold_that_key() -> None:
    from driftwatch.connectors.mapping import FieldPath, LabelField, StreamMapping, TimeField
    from driftwatch.connectors.probe import flat_keys

    m = StreamMapping("outcomes", FieldPath.parse("ID"), TimeField(None, source="arrival"),
                      role="outcomes", score=FieldPath.parse("model.score"),
                      label=LabelField(FieldPath.parse("default.payment.next.month")))
    recs = [{"ID": 1, "default.payment.next.month": 0, "model": {"score": 0.2}}]
    assert flat_keys(m, recs) == {"default.payment.next.month"}
    flat = m.with_flat_keys(flat_keys(m, recs))
    assert flat.label is not None and flat.label.path.parts == ("default.payment.next.month",)
    assert flat.score == FieldPath(("model", "score"))  # a nested path stays nested


def _german(tmp: Path, stream_score: str, n: int = 400) -> None:
    """German credit's coded reference (label 1 good / 2 bad, score P(bad) in [0, 1]) and a
    stream whose score is written as ``stream_score`` says: probability, percent, logit."""
    rng = np.random.default_rng(9)
    chk = rng.choice(["A11", "A12", "A13", "A14"], n)
    dur = rng.integers(4, 72, n)
    p = (1 / (1 + np.exp(-(-1.0 + 0.9 * (chk == "A11") + 0.02 * dur)))).round(4)
    label = np.where(rng.uniform(size=n) < p, 2, 1)
    pd.DataFrame({"checking_status": chk, "duration": dur, "score": p,
                  "credit_risk": label}).to_csv(tmp / "ref.csv", index=False)
    written = {"probability": p, "percent": (p * 100).round(2),
               "logit": np.log(p / (1 - p)).round(4),
               "good_logit": np.log((1 - p) / p).round(4),  # the log-odds of good
               "points": (600 + 20 * np.log2((1 - p) / p / 50)).round()}[stream_score]
    live = pd.DataFrame({"application_id": [f"APP-{i:06d}" for i in range(n)],
                         "decision_time": pd.date_range("2024-03-01T08:00:00+02:00",
                                                        periods=n, freq="7min").astype(str),
                         "checking_status": chk, "duration": dur, "score": written})
    live.to_csv(tmp / "live.csv", index=False)
    live[["application_id"]].assign(credit_risk=label).to_csv(tmp / "out.csv", index=False)


def _scored_run(tmp: Path, kind: str, capsys: pytest.CaptureFixture[str],
                monkeypatch: pytest.MonkeyPatch) -> tuple[object, str, list[dict]]:
    """init then replay on :func:`_german` with the stream's score written as ``kind``:
    the connector's score field, init's output, and each non-empty window's score."""
    tmp.mkdir()
    _german(tmp, kind)
    code, out, err = _init(tmp, capsys, "ref.csv", "live.csv", "out.csv", "--label-bad", "2")
    assert code == 0, err
    score = yaml.safe_load((tmp / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["score"]
    monkeypatch.chdir(tmp)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                         "--input", "predictions=live.csv", "outcomes=out.csv", "--out",
                         "run", "--no-report"], capsys)
    assert code == 0, err
    summary = json.loads((tmp / "run" / "summary.json").read_text())
    assert summary["bad_records"] == 0, summary["bad_by_reason"]
    return score, out, [w["score"] for w in _timeline(tmp / "run") if w["n_events"]]


def test_a_percent_score_is_mapped_with_percent_and_replays_as_the_probability(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: init mapped `score: score` and replay rejected every record as
    # score_out_of_range ("expected a probability in [0, 1], found '61.99'")
    score, _, plain = _scored_run(tmp_path / "probability", "probability", capsys, monkeypatch)
    assert score == "score", score
    score, out, percent = _scored_run(tmp_path / "percent", "percent", capsys, monkeypatch)
    assert score == {"path": "score", "percent": True}, score
    assert "a percentage in the sample" in out, out
    # the same probabilities, written two ways: the same score bins and mean
    assert [w["bins"] for w in percent] == [w["bins"] for w in plain]
    assert [w["mean"] for w in percent] == pytest.approx([w["mean"] for w in plain])


def test_a_log_odds_score_the_labels_confirm_is_mapped_and_replays_as_the_probability(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: init left it out ("not the score: score ... (log-odds? points?)")
    _, _, plain = _scored_run(tmp_path / "probability", "probability", capsys, monkeypatch)
    score, out, logit = _scored_run(tmp_path / "logit", "logit", capsys, monkeypatch)
    assert score == {"path": "score", "log_odds": True}, score
    line = next(ln for ln in out.splitlines() if ln.startswith("score: score"))
    assert "log-odds in the sample" in line and "higher values go with bad" in line
    # log-odds rounded to 4 places: the mean within that rounding (not the bins: the
    # reference's few distinct scores put bin edges on values the rounding moves across)
    assert [sum(w["bins"]) for w in logit] == [sum(w["bins"]) for w in plain]
    assert [w["mean"] for w in logit] == pytest.approx([w["mean"] for w in plain], abs=1e-4)


def _left_out(tmp: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> str:
    """init on :func:`_german` with the score written as ``kind``: the score is not mapped;
    the line that says why."""
    _german(tmp, kind)
    code, out, err = _init(tmp, capsys, "ref.csv", "live.csv", "out.csv", "--label-bad", "2")
    assert code == 0, err
    fields = yaml.safe_load((tmp / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert "score" not in fields, fields
    return next(ln for ln in out.splitlines() if "not the score: score" in ln)


def test_log_odds_the_labels_contradict_are_left_out_with_the_line_to_add(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _left_out(tmp_path, "good_logit", capsys)
    assert "do not show higher values going with bad outcomes" in line, line
    assert "`score: {path: score, log_odds: true}`" in line, line


def test_a_points_score_is_left_out_with_the_connector_line_to_add(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _left_out(tmp_path, "points", capsys)
    assert "scorecard points by the look" in line, line
    want = "`score: {path: score, points: {base: ..., odds: ..., pdo: ...}}`"
    assert want in line and "`base: 600, odds: 50, pdo: 20`" in line, line


def test_the_decoder_reads_a_percent_score_divided_by_100() -> None:
    from driftwatch.connectors.config import parse_connector
    from driftwatch.connectors.decode import Decoder
    from driftwatch.schema import FeatureSchema

    conn = parse_connector("""
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: m}
source:
  kind: file
  streams:
    predictions:
      paths: [p.jsonl]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        score: {path: risk, percent: true}
""")
    stream = conn.stream("predictions")
    assert stream.score_scale.kind == "percent"
    dec = Decoder(stream, FeatureSchema(numeric=(), categorical=(), levels=()))
    batch, bad = dec.decode_block(
        b'{"id": "a", "ts": 1704067200, "risk": 61.99}\n'
        b'{"id": "b", "ts": 1704067260, "risk": 0.5}\n'
        b'{"id": "c", "ts": 1704067320, "risk": 140}\n', source="p.jsonl")
    assert batch.ids.tolist() == ["a", "b"]
    assert batch.score.tolist() == pytest.approx([0.6199, 0.005])
    assert [(b.reason, b.position) for b in bad] == [("score_out_of_range", 3)]
    assert "a percentage in [0, 100]" in bad[0].detail


def test_a_label_in_the_prediction_records_is_mapped_and_joined_at_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: init said "outcomes: none ... label-based metrics stay off", and a label put
    # on the predictions stream by hand passed policy check and was ignored by replay
    _german(tmp_path, "probability", n=900)
    live = pd.read_csv(tmp_path / "live.csv")
    live["credit_risk"] = pd.read_csv(tmp_path / "out.csv")["credit_risk"]
    live.to_csv(tmp_path / "live.csv", index=False)
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--model", "m", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml"),
                           "--label-field", "credit_risk", "--label-bad", "2", "--pane", "300"],
                          capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["label"] == {"path": "credit_risk", "bad": [2], "good": [1]}, fields
    assert "credit_risk" not in fields["features"]
    assert "label in the predictions: credit_risk" in out, out
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "live.csv", "--out", "run", "--no-report"], capsys)
    assert code == 0, err
    windows = [w for w in _timeline(tmp_path / "run") if w["n_events"]]
    bad_per_pane = [int((live["credit_risk"].iloc[i:i + 300] == 2).sum())
                    for i in range(0, 900, 300)]
    assert [w["n_labelled"] for w in windows] == [300, 300, 300]
    assert [w["n_labelled_bad"] for w in windows] == bad_per_pane


@pytest.mark.parametrize("kind", ["logit", "points", "percent"])
def test_a_scaled_score_is_read_by_its_name_without_a_reference_score(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """A reference without a score column (a training table rarely has one): the stream's
    `score` in points or log-odds was passed over ("no field in [0, 1] named like a
    score"), with no word of the scale or the line to add."""
    _german(tmp_path, kind)
    ref = pd.read_csv(tmp_path / "ref.csv").drop(columns=["score"])
    ref.to_csv(tmp_path / "ref.csv", index=False)
    code, out, err = _init(tmp_path, capsys, "ref.csv", "live.csv", "out.csv",
                           "--label-bad", "2")
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    if kind == "logit":
        assert fields["score"] == {"path": "score", "log_odds": True}, fields
    elif kind == "percent":
        assert fields["score"] == {"path": "score", "percent": True}, fields
    else:
        assert "score" not in fields, fields
        line = next(ln for ln in out.splitlines() if "not the score: score" in ln)
        assert "scorecard points by the look" in line and "`base: 600" in line, line
