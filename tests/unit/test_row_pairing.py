"""Outcomes paired with their predictions by row (``event_id: {source: order}`` on both
streams): a bank's batch writes ``scored.csv`` (features and score) and ``outcomes.csv``
(the label alone), one row per application in the same order, with neither an id nor a
date. Outcome row k joins prediction row k, each row numbered by where it stands in its
file, so a header, an empty line or a bad line in either file moves no pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import load_connector, parse_connector
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError
from driftwatch.labels.joiner import Joined, LabelJoiner
from driftwatch.pipeline.intake import numbered
from driftwatch.schema import FeatureSchema

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
    for at, kind in sorted(spoiled, reverse=True):
        at = min(at, len(rows))
        if kind == "blank" and at == 0 and not header:
            at = 1  # a file's first line is its header, or its first row: never empty
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
