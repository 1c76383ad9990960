"""Outcomes paired with their predictions by row (``event_id: {source: order}`` on both
streams): a bank's batch writes ``scored.csv`` (features and score) and ``outcomes.csv``
(the label alone), one row per application in the same order, with neither an id nor a
date. Outcome row k joins prediction row k, each row numbered by where it stands in its
file, so a header, an empty line or a bad line in either file moves no pair."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import load_connector, parse_connector
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError
from driftwatch.labels.joiner import Joined, LabelJoiner
from driftwatch.pipeline.intake import numbered
from driftwatch.replay.timeline import read_timeline
from driftwatch.schema import FeatureSchema

from ._cli import run_cli

_CONNECTOR = """apiVersion: driftwatch/v1
kind: Connector
metadata: {name: c}
source:
  kind: file
  streams:
    predictions:
      paths: [scored.csv]PNAMES
      fields:
        event_id: PID
        event_time: {source: order}
        score: score
        features: {x: {path: x, type: numeric}}
    outcomes:
      paths: [outcomes.csv]ONAMES
      fields:
        event_id: OID
        event_time: OTIME
        label: {path: default, bad: [1], good: [0]}
"""
ORDER = "{source: order}"


def _conn(pid: str = ORDER, oid: str = ORDER, otime: str = "{source: arrival}",
          p_names: bool = False, o_names: bool = False) -> str:
    return (_CONNECTOR.replace("PID", pid).replace("OID", oid).replace("OTIME", otime)
            .replace("PNAMES", "\n      csv: {names: [x, score]}" if p_names else "")
            .replace("ONAMES", "\n      csv: {names: [default]}" if o_names else ""))


def test_both_streams_numbered_is_a_pairing_by_row() -> None:
    c = parse_connector(_conn())
    assert c.stream("predictions").event_id is None
    assert c.stream("outcomes").event_id is None
    assert c.stream("outcomes").event_time.source == "arrival"


def test_only_one_stream_numbered_is_refused_at_its_line() -> None:
    with pytest.raises(ConnectorError) as exc:  # numbered outcomes, predictions with ids
        parse_connector(_conn(pid="app_id"), file="c.yaml")
    text = exc.value.render()
    assert text.startswith("c.yaml:17:28: outcomes numbered by their row join predictions "
                           "numbered the same way: expected event_id: {source: order} on "
                           "stream 'predictions', found stream 'predictions' with event_id "
                           "path 'app_id'"), text
    assert "hint: map the id field both streams hold, or number both" in text
    with pytest.raises(ConnectorError) as exc:  # numbered predictions, outcomes with ids
        parse_connector(_conn(oid="app_id"), file="c.yaml")
    text = exc.value.render()
    assert text.startswith("c.yaml:17:19: stream 'predictions' numbers its records "
                           "(event_id: {source: order}): expected event_id: {source: "
                           "order} here too"), text
    assert "found event_id path 'app_id'" in text
    assert "hint: outcomes written in the predictions' order" in text


def test_numbered_outcomes_with_times_of_their_own_are_refused() -> None:
    # the predictions' times are their numbers: an outcome's own date is on another axis
    with pytest.raises(ConnectorError) as exc:
        parse_connector(_conn(otime="out_ts"), file="c.yaml")
    text = exc.value.render()
    assert text.startswith("c.yaml:17:28: source: order ids are for outcomes read in file "
                           "order: expected event_time: {source: arrival}, found "
                           "event_time path 'out_ts'"), text


# -- the pairing, file by file --------------------------------------------------------------

def _label(k: int) -> int:
    """The label the test writes in outcome row ``k`` (not periodic in 2: a shift by one
    row changes many)."""
    return int((k * 7) % 5 < 2)


_SPOILED = st.lists(st.tuples(st.integers(0, 80), st.sampled_from(["blank", "ragged",
                                                                     "wrong"])), max_size=8)


def _rows(n: int, spoiled: list[tuple[int, str]], good: list[str], header: bool,
          ragged: str, wrong: str) -> tuple[str, list[int]]:
    """A CSV body of ``good`` rows with lines spoiled at ``spoiled`` places, and the row
    numbers (1 = the first line after any header) of the good rows."""
    rows = list(good)
    if not header:  # names are given: a file of more ragged lines than rows has wrong names,
        ragged_at = [i for i, (_, k) in enumerate(spoiled) if k == "ragged"]  # refused
        spoiled = [x for i, x in enumerate(spoiled) if i not in ragged_at[len(good):]]
    for at, kind in sorted(spoiled, reverse=True):
        at = min(at, len(rows))
        if kind in ("blank", "ragged") and at == 0 and not header:
            # a headerless file's first line is its first row, never empty, and a ragged
            # one is refused outright: its count of fields is checked against the names
            at = 1
        rows.insert(at, {"blank": "", "ragged": ragged, "wrong": wrong}[kind])
    kept = [i for i, r in enumerate(rows, 1) if r in good]
    return "".join(r + "\n" for r in rows), kept


def _pairs(folder: Path, batch: int) -> list[tuple[int, int]]:
    """(prediction row, label) of every pair the joiner makes, reading ``folder``'s files
    as a replay does (predictions numbered where they arrive)."""
    conn = load_connector(folder / "c.yaml", base_dir=folder)
    source = FileSource(conn, FeatureSchema(numeric=("x",)), batch_size=batch,
                        read_ahead=False)
    joiner = LabelJoiner(ttl_seconds=1e9, max_pending=10_000, max_orphans=10_000)
    joined: list[Joined] = []
    seen = 0
    while (polled := source.poll()) is not None:
        for b in polled.batches:
            if b.stream == "outcomes":
                joined.append(joiner.add_outcomes(b))
            else:
                b = numbered(b, seen)
                seen += len(b)
                joined.append(joiner.add_predictions(b))
    source.close()
    got = Joined.concat(joined)
    # each prediction's score is its row number over 1000
    return sorted(zip(np.rint(got.score * 1000).astype(int).tolist(),
                      got.label.astype(int).tolist(), strict=True))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_pred=st.integers(1, 60), n_out=st.integers(1, 70), p_spoiled=_SPOILED,
       o_spoiled=_SPOILED, p_header=st.booleans(), o_header=st.booleans(),
       batch=st.integers(1, 25))
def test_outcome_row_k_joins_prediction_row_k_whatever_lines_are_spoiled(
        tmp_path_factory: pytest.TempPathFactory, n_pred: int, n_out: int,
        p_spoiled: list[tuple[int, str]], o_spoiled: list[tuple[int, str]],
        p_header: bool, o_header: bool, batch: int) -> None:
    folder = tmp_path_factory.mktemp("pairs")
    # the good rows are written first: a spoiled line takes a row number of its own
    p_body, p_rows = _rows(n_pred, p_spoiled, [f"{i},0.{i:03d}" for i in range(n_pred)],
                           p_header, ragged="1,2,3", wrong="1,oops")
    o_good = [f"{i}" for i in range(n_out)]  # placeholders, replaced below by row
    o_body, o_rows = _rows(n_out, o_spoiled, o_good, o_header, ragged="0,1", wrong="maybe")
    # the score of prediction row k is k / 1000, the label of outcome row k is _label(k)
    p_lines = p_body.split("\n")
    for k in p_rows:
        p_lines[k - 1] = f"{k % 7},{k / 1000:.3f}"
    o_lines = o_body.split("\n")
    for k in o_rows:
        o_lines[k - 1] = str(_label(k))
    (folder / "scored.csv").write_text(("x,score\n" if p_header else "") + "\n".join(p_lines))
    (folder / "outcomes.csv").write_text(("default\n" if o_header else "")
                                         + "\n".join(o_lines))
    (folder / "c.yaml").write_text(_conn(p_names=not p_header, o_names=not o_header))
    want = sorted((k, _label(k)) for k in set(p_rows) & set(o_rows))
    assert _pairs(folder, batch) == want


# -- the command line, end to end ------------------------------------------------------------

def _german(n: int, rng: np.random.Generator, drift: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """German-credit-shaped applications (codes and numbers, no id, no date), their model
    score, and labels drawn from that score (so AUC means something)."""
    d = pd.DataFrame({
        "checking_status": rng.choice(["A11", "A12", "A13", "A14"], n,
                                      p=[.55, .2, .05, .2] if drift else [.27, .27, .06, .4]),
        "duration": rng.gamma(3.0, 11.0 if drift else 7.0, n).round() + 4,
        "credit_history": rng.choice(["A30", "A31", "A32", "A33", "A34"], n),
        "purpose": rng.choice(["A40", "A41", "A42", "A43", "A49"], n),
        "credit_amount": rng.lognormal(8.3 if drift else 7.9, 0.75, n).round(),
        "age": rng.integers(19, 75, n),
        "utilisation": rng.beta(2, 5, n).round(3),
        "late_payments": rng.poisson(0.4, n),
    })
    z = (-1.4 + 1.0 * (d.checking_status == "A11") - 0.8 * (d.checking_status == "A14")
         + 0.03 * (d.duration - 20) - 0.02 * (d.age - 35) + 2.5 * (d.utilisation - 0.3)
         + 0.6 * d.late_payments)
    p = 1 / (1 + np.exp(-z))
    d["score"] = p.round(4)
    return d, (rng.random(n) < p).astype(int)


def test_init_check_and_replay_pair_a_scored_file_with_its_outcomes_file_by_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    train, y_train = _german(2000, rng, drift=False)
    train.assign(default=y_train).to_csv("train.csv", index=False)
    parts = [_german(500, rng, drift=False), _german(500, rng, drift=True)]
    scored = pd.concat([p[0] for p in parts], ignore_index=True)
    labels = np.concatenate([p[1] for p in parts]).astype(object)
    scored.to_csv("scored.csv", index=False)
    # row 10 has no outcome yet (an empty line: a one-column export's missing value),
    # row 20's is no label at all; 30 rows past the predictions' last
    labels[9], labels[19] = "", "maybe"
    extra = rng.integers(0, 2, 30)
    Path("outcomes.csv").write_text("default\n" + "".join(f"{v}\n" for v in [*labels, *extra]))
    code, out, err = run_cli(["init", "--reference", "train.csv", "--sample", "scored.csv",
                              "--outcomes", "outcomes.csv", "--model", "g", "--pane", "250",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    said = out.splitlines()
    assert any(x.startswith("outcomes paired by row") and "row k of outcomes.csv is the "
               "outcome of row k of scored.csv" in x and "must be written in the same order"
               in x for x in said), out
    streams = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]
    assert streams["predictions"]["fields"]["event_id"] == {"source": "order"}
    assert streams["outcomes"]["fields"]["event_id"] == {"source": "order"}
    assert streams["outcomes"]["fields"]["event_time"] == {"source": "arrival"}
    code, out, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["policy", "explain", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    assert "#   outcomes: the connector pairs them with the predictions by row" in out
    code, out, err = run_cli(["policy", "explain", "p.yaml"], capsys)  # no connector read
    assert code == 0 and "by row" not in out, err
    # label signals need as many outcomes as a window of 250 holds
    policy = yaml.safe_load(Path("p.yaml").read_text())
    policy["detectors"] = {**policy.get("detectors", {}), "min_labelled": 200}
    Path("p.yaml").write_text(yaml.safe_dump(policy))
    code, out, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                              "-i", "scored.csv", "-i", "outcomes.csv", "--out", "o",
                              "--quiet", "--no-report"], capsys)
    assert code == 0, err
    assert "outcomes unmatched: 30 of 1029 found no prediction" in out, out
    summary = json.loads(Path("o/summary.json").read_text())
    assert summary["labels"]["joined"] == 998 and summary["labels"]["orphans_held"] == 30
    assert summary["labels"]["backlog"] == 2  # rows 10 and 20: no outcome
    recs = read_timeline(Path("o/timeline.jsonl"))
    assert len(recs) == 4
    known = np.array([v in (0, 1) for v in labels])
    for w, r in enumerate(recs):  # each window's outcomes are the rows the test wrote
        rows = slice(250 * w, 250 * (w + 1))
        assert r["n_labelled"] == int(known[rows].sum())
        assert r["n_labelled_bad"] == int(sum(v == 1 for v in labels[rows]))
        auc = next(s["value"] for s in r["signals"] if s["signal"] == "auc")
        assert auc > 0.65  # the labels follow the score: rows are not shifted
    assert [r["tier"] for r in recs[:2]] == ["none", "none"]  # the clean half is quiet
    assert recs[-1]["tier"] != "none"
