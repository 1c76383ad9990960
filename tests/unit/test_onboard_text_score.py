"""A score the stream writes as JSON text (``"score": "0.1234"``) is the score: ``init`` used
to say ``score: none — no field in [0, 1] named like a score`` of a field named ``score``
and leave it out of the connector (a Lending Club sample written so); where the reference
has a score column, it mapped the text without ``numbers_as_text``, so replay read every
record as ``wrong_type``. Now it is looked for as numbers, as numeric features are, and the
connector reads it as numbers (``numbers_as_text: true``), said on the score's line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.textscore import numbers_in_text

from ._cli import run_cli

N = 300


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=30))
def test_number_text_reads_as_its_number(values: list[float | None]) -> None:
    texts = [None if v is None else repr(v) for v in values]
    got = numbers_in_text(texts)
    if all(v is None for v in values):
        assert got is None  # no text at all: nothing to read
    else:
        assert got == values


@given(st.lists(st.floats(0, 1).map(repr), min_size=1, max_size=10),
       st.sampled_from(["high", "0.1.2", "[0.5]", "p=0.3"]))
def test_text_that_is_no_number_is_not_read(values: list[str], word: str) -> None:
    assert numbers_in_text([*values, word]) is None


def _files(tmp: Path, *, ref_score: bool) -> None:
    rng = np.random.default_rng(3)
    income = rng.lognormal(10, 0.5, 2 * N).round(0)
    p = 1 / (1 + np.exp((np.log(income) - 10) * 3))
    bad = (rng.random(2 * N) < p).astype(int)
    ref = pd.DataFrame({"income": income[:N], "label": bad[:N]})
    if ref_score:
        ref["score"] = p[:N].round(4)
    ref.to_parquet(tmp / "ref.parquet")
    with open(tmp / "live.jsonl", "w") as f, open(tmp / "out.jsonl", "w") as g:
        for i in range(N, 2 * N):
            f.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i, "income": income[i],
                                "score": f"{p[i]:.4f}"}) + "\n")
            g.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i + 9,
                                "label": int(bad[i])}) + "\n")


@pytest.mark.parametrize("ref_score", [False, True])
def test_a_score_written_as_text_is_found_and_replayed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], ref_score: bool) -> None:
    _files(tmp_path, ref_score=ref_score)
    code, out, err = run_cli(
        ["init", "--reference", str(tmp_path / "ref.parquet"), "--sample",
         str(tmp_path / "live.jsonl"), "--outcomes", str(tmp_path / "out.jsonl"), "--model",
         "m", "--connector-out", str(tmp_path / "c.yaml"), "--policy-out",
         str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("score:"))
    assert line.startswith("score: score") and "written as text in the sample" in line, out
    assert "numbers_as_text: true" in line, out
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert stream["numbers_as_text"] is True
    assert stream["fields"]["score"] == "score"
    code, out, err = run_cli(
        ["replay", "--connector", str(tmp_path / "c.yaml"), "--policy", str(tmp_path / "p.yaml"),
         "--input", str(tmp_path / "live.jsonl"), str(tmp_path / "out.jsonl"), "--out",
         str(tmp_path / "run")], capsys)
    assert code == 0 and f"{N} events, {N} outcomes, 0 bad records" in out, (out, err)
    windows = [json.loads(x) for x in (tmp_path / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    means = [w["score"]["mean"] for w in windows if w.get("score", {}).get("mean") is not None]
    assert means and all(0 < m < 1 for m in means)
