"""``proba: {path:, classes:, score:}`` (a ``predict_proba`` row per record) stands for the
score when a stream maps no ``score``: the probability at position ``score`` (the class the
reference's score is the probability of); ``init`` finds such a list and that position."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

from ._cli import run_cli


def _decoder(fields: str, **kw: bool) -> Decoder:
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\n"
            "source:\n  kind: file\n  streams:\n    predictions:\n      fields:\n"
            "        event_id: id\n        event_time: {path: ts, unit: s}\n" + fields)
    return Decoder(parse_connector(text, file="t.yaml").stream("predictions"),
                   FeatureSchema(), **kw)


def _block(rows: list[object]) -> bytes:
    return b"".join(json.dumps({"id": f"e{i}", "ts": 1.7e9 + i, "p": r, "s": 0.5}).encode()
                    + b"\n" for i, r in enumerate(rows))


@pytest.mark.parametrize("kw", [{}, {"scan": False}, {"block_parse": False}])
@pytest.mark.parametrize(("spec", "col"), [("{path: p}", 1), ("{path: p, score: 0}", 0),
                                           ("{path: p, classes: 2, score: 1}", 1)])
def test_the_probability_at_its_position_is_the_score(spec: str, col: int,
                                                kw: dict[str, bool]) -> None:
    rows = [[0.8, 0.2], [0.35, 0.65], None, [1, 0]]
    batch, bad = _decoder(f"        proba: {spec}\n", **kw).decode_block(_block(rows),
                                                                        source="s")
    assert not bad
    want = [np.nan if r is None else float(r[col]) for r in rows]
    np.testing.assert_array_equal(batch.score, want)


def test_a_mapped_score_wins_and_the_list_is_still_checked() -> None:
    dec = _decoder("        score: s\n        proba: p\n")
    batch, bad = dec.decode_block(_block([[0.8, 0.2], [0.5, 0.5, 0.0]]), source="s")
    assert batch.score.tolist() == [0.5]
    assert [(b.reason, b.position) for b in bad] == [("wrong_type", 2)]


def test_a_bad_position_outside_the_list_is_a_located_error() -> None:
    with pytest.raises(ConnectorError, match=r"t\.yaml:11:\d+: expected the position of the "
                                              r"score's class in the list, 0 to 1, found 2"):
        _decoder("        proba: {path: p, score: 2}\n")


@pytest.mark.parametrize(("label", "ref_is_class_1", "score_is", "at"), [
    ("defaulted", True, "p_bad", 1),    # P(class 1) = P(bad)
    ("defaulted", False, "p_good", 0),  # the reference's score is P(class 0) = P(good)
    ("repaid", True, "p_good", 1),      # P(class 1) = P(repaid) = P(good)
])
def test_init_takes_a_predict_proba_list_for_the_score(
        label: str, ref_is_class_1: bool, score_is: str, at: int, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(2)
    p = rng.uniform(size=1000)  # P(class 1)
    pd.DataFrame({"x": rng.normal(size=1000), "score": p if ref_is_class_1 else 1 - p,
                  label: (rng.random(1000) < p).astype(int)}).to_parquet(tmp_path / "r.pq")
    with open(tmp_path / "live.jsonl", "w") as f, open(tmp_path / "out.jsonl", "w") as g:
        for i in range(300):
            q = round(float(rng.uniform()), 4)
            # predict_proba's row: classes in order 0, 1
            f.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i, "x": 0.1,
                                "probs": [round(1 - q, 4), q]}) + "\n")
            g.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i + 9, label: i % 2}) + "\n")
    code, out, err = run_cli(
        ["init", "--reference", str(tmp_path / "r.pq"), "--sample", str(tmp_path / "live.jsonl"),
         "--outcomes", str(tmp_path / "out.jsonl"), "--model", "m", "--connector-out",
         str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert yaml.safe_load((tmp_path / "p.yaml").read_text())["reference"]["score_is"] == score_is
    assert fields["proba"] == {"path": "probs", "classes": 2, "score": at}, out
    assert "score" not in fields
    assert f"score: probs[{at}] (reference: score)" in out, out
