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


# -- three classes or more: read off the reference's label values, or --proba-at

_CLASSES = ["default", "good", "late"]  # predict_proba's order: the labels sorted


def _three_classes(tmp: Path, statuses: list[str]) -> None:
    """A reference whose label takes ``statuses`` and a stream whose records carry a
    model's three class probabilities (in :data:`_CLASSES` order) and no score."""
    rng = np.random.default_rng(4)
    p = rng.dirichlet([1, 3, 1], 1000)
    pd.DataFrame({"x": rng.normal(size=1000), "score": p[:, 0].round(4),
                  "status": [statuses[rng.choice(3, p=r)] for r in p]}
                 ).to_parquet(tmp / "r.pq")
    with open(tmp / "live.jsonl", "w") as f, open(tmp / "out.jsonl", "w") as g:
        for i in range(300):
            q = [round(float(v), 4) for v in rng.dirichlet([1, 3, 1])]
            q[1] = round(1 - q[0] - q[2], 4)
            f.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i, "x": 0.1,
                                "probs": q}) + "\n")
            g.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i + 9,
                                "status": statuses[i % 3]}) + "\n")


def _init3(tmp: Path, capsys: pytest.CaptureFixture[str], *flags: str
           ) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "r.pq"), "--sample",
                    str(tmp / "live.jsonl"), "--outcomes", str(tmp / "out.jsonl"), "--model",
                    "m", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml"), *flags], capsys)


def test_three_class_probabilities_give_the_bad_classs_and_replay_reads_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one bad class (default), one good, one no outcome yet (late): P(default) is P(bad)
    _three_classes(tmp_path, _CLASSES)
    code, out, err = _init3(tmp_path, capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["proba"] == {"path": "probs", "classes": 3, "score": 0}, out
    line = next(ln for ln in out.splitlines() if ln.startswith("score: probs[0]"))
    assert "the first of 3 class probabilities" in line and "'default'" in line, line
    code, _, err = run_cli(["replay", "-q", "--no-report", "-c", str(tmp_path / "c.yaml"),
                            "-p", str(tmp_path / "p.yaml"), "-i",
                            f"predictions={tmp_path / 'live.jsonl'}",
                            f"outcomes={tmp_path / 'out.jsonl'}", "-o", str(tmp_path / "run")],
                           capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_records"] == 0, summary["bad_by_reason"]


def test_three_classes_the_label_cannot_settle_stop_with_the_flag_to_pick_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # two bad classes: the score is one position, which init does not guess
    _three_classes(tmp_path, ["charged off", "default", "fully paid"])
    code, _, err = _init3(tmp_path, capsys)
    assert code == 2, err
    assert "probs holds 3 class probabilities" in err and "2 bad values" in err, err
    assert "--proba-at N, the position (0 to 2)" in err and "Traceback" not in err, err
    code, out, err = _init3(tmp_path, capsys, "--proba-at", "1")
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["proba"] == {"path": "probs", "classes": 3, "score": 1}, out
    assert "score: probs[1]" in out and "(from --proba-at)" in out, out


@pytest.mark.parametrize(("flag", "said"), [("3", "--proba-at 3 is outside probs's lists "
                                                   "of 3 class probabilities"),
                                            ("-1", "--proba-at -1 is outside")])
def test_a_proba_position_outside_the_list_is_refused(
        flag: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _three_classes(tmp_path, _CLASSES)
    code, _, err = _init3(tmp_path, capsys, "--proba-at", flag)
    assert code == 2 and said in err and "0 to 2" in err, err


def test_proba_at_without_a_list_of_probabilities_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _three_classes(tmp_path, _CLASSES)
    rows = [json.loads(x) for x in (tmp_path / "live.jsonl").read_text().splitlines()]
    (tmp_path / "live.jsonl").write_text("".join(
        json.dumps({**r, "probs": r["probs"][0]}) + "\n" for r in rows))  # one number
    code, _, err = _init3(tmp_path, capsys, "--proba-at", "0")
    assert code == 2 and "--proba-at 0 needs a list of class probabilities" in err, err
