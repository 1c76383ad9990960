"""JSON lines as Python's ``json.dumps`` writes a float NaN or infinity (the bare tokens
``NaN``, ``Infinity``, ``-Infinity``) are read: NaN as missing, an infinity as that number.

Before: orjson refuses those tokens, so every such record was dead-lettered as
``invalid_json`` ("unexpected character") and ``init`` stopped on the first with "not a
JSON line ... is it a CSV?"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.file import FileSource
from driftwatch.schema import FeatureSchema

from ._cli import run_cli
from ._csvconn import one_stream

SCHEMA = FeatureSchema(numeric=("income", "age"))


def _read(tmp: Path) -> tuple[list[list[float]], list[float], list[tuple[str, int]]]:
    text = one_stream("p.jsonl", ("event_id: id", "event_time: {path: ts, unit: s}",
                                  "features:", "  income: {path: income, type: numeric}",
                                  "  age: {path: age, type: numeric}", "score: score"))
    src = FileSource(parse_connector(text, file="c.yaml", base_dir=tmp), SCHEMA,
                     batch_size=7, read_ahead=False)
    rows, scores, bad = [], [], []
    while (polled := src.poll()) is not None:
        for b in polled.batches:
            rows += b.numeric.tolist()
            scores += b.score.tolist()
        bad += [(r.reason, r.position) for r in polled.bad]
    src.close()
    return rows, scores, bad


_VALUE = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.just(math.nan),
                   st.just(math.inf), st.just(-math.inf), st.none())


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.tuples(_VALUE, _VALUE), min_size=1, max_size=30))
def test_python_json_lines_read_as_the_numbers_they_write(
    tmp_path: Path, values: list[tuple[float | None, float | None]],
) -> None:
    with (tmp_path / "p.jsonl").open("w") as fh:
        for i, (income, age) in enumerate(values):
            fh.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + i, "income": income,
                                 "age": age, "score": 0.5}) + "\n")
    rows, scores, bad = _read(tmp_path)
    assert bad == [] and scores == [0.5] * len(values)
    want = [[math.nan if v is None else v for v in pair] for pair in values]
    np.testing.assert_array_equal(np.array(rows), np.array(want))  # NaN matches NaN


def test_a_line_with_other_bad_json_is_still_dead_lettered(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text(
        '{"id": "a", "ts": 1.7e9, "income": NaN, "age": 3, "score": 0.5}\n'
        '{"id": "b", "ts": 1.7e9, "income": nan, "age": 3, "score": 0.5}\n'
        '{"id": "c", "ts": 1.7e9, "income": 1, "age": 3, "score": NaN,}\n')
    rows, _, bad = _read(tmp_path)
    assert len(rows) == 1 and [r for r, _ in bad] == ["invalid_json", "invalid_json"], bad


def test_init_and_replay_take_a_python_services_nan_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    pd.DataFrame({"income": rng.normal(3000, 500, 2000), "score": rng.uniform(size=2000)}
                 ).to_csv("ref.csv", index=False)
    with open("live.jsonl", "w") as fh:
        for i in range(2000):
            income = float("nan") if i % 10 == 0 else float(rng.normal(3000, 500))
            fh.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i, "income": income,
                                 "score": float(rng.uniform())}) + "\n")
    code, out, err = run_cli(["init", "-r", "ref.csv", "-s", "live.jsonl",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "income: numeric" in out
    code, _, err = run_cli(["replay", "-q", "--no-report", "-c", "c.yaml", "-p", "p.yaml",
                            "-i", "live.jsonl", "-o", "o"], capsys)
    assert code == 0, err
    summary = json.loads(Path("o/summary.json").read_text())
    assert summary["bad_records"] == 0 and summary["events"] == 2000, summary
    # the NaNs are missing values: a tenth of the feed, said as a data-quality fault
    assert any("missing_rate[income]" in " ".join(f.get("signals", []))
               for f in summary["data_quality_faults"]), summary["data_quality_faults"]
