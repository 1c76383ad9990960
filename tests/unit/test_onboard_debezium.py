"""``init`` on Debezium change events (``before``/``after``/``source``/``op``/``ts_ms``):
the row is the ``after`` image. An update's ``before`` image held every column too, and
init stopped with "reference column 'score' matches several fields: after.score,
before.score" (``--score-field after.score`` did not settle it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.envelopes import change_events
from driftwatch.onboard.sample import flatten

from ._cli import replay_summary, run_cli

START_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _events(ops: list[str]) -> list[dict[str, object]]:
    """Change events of ``ops`` on rows A0, A1, ... (an update and a delete act on the
    row created before them)."""
    out: list[dict[str, object]] = []
    rows: list[dict[str, object]] = []
    for i, op in enumerate(ops):
        if op == "c" or not rows:
            row = {"application_id": f"A{i}", "income": 1000.0 + i, "score": 0.5}
            rows.append(row)
            out.append({"before": None, "after": row, "op": "c", "ts_ms": START_MS + i})
        elif op == "u":
            new = {**rows[-1], "score": 0.25}
            out.append({"before": rows[-1], "after": new, "op": "u", "ts_ms": START_MS + i})
        else:
            out.append({"before": rows[-1], "after": None, "op": "d", "ts_ms": START_MS + i})
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("cud"), min_size=1, max_size=40))
def test_only_the_after_image_of_creates_is_kept(ops: list[str]) -> None:
    events = _events(ops)
    kept, line = change_events([flatten(e) for e in events])
    assert line is not None and line[0] == "envelope: Debezium"
    assert kept == [flatten({"after": e["after"], "op": "c", "ts_ms": e["ts_ms"]})
                    for e in events if e["op"] == "c"]


def test_records_without_an_after_image_are_no_envelope() -> None:
    rows = [{"id": 1, "op": "c", "after_tax": 3.0}, {"id": 2, "op": "u"}]
    assert change_events(rows) == (rows, None)


def test_init_reads_the_row_from_after_and_replay_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    n = 400
    rng = np.random.default_rng(3)
    ref = pd.DataFrame({"income": rng.gamma(3, 15000, n).round(0),
                        "purpose": rng.choice(["car", "home", "edu"], n),
                        "score": rng.random(n).round(4), "label": rng.integers(0, 2, n)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    lines = []
    for i, r in enumerate(ref.drop(columns="label").to_dict("records")):
        row = {"application_id": f"A{i}", **r}
        src = {"connector": "postgresql", "table": "scores"}
        lines.append({"before": None, "after": row, "source": src, "op": "c",
                      "ts_ms": START_MS + 60_000 * i})
        if i % 40 == 0:  # an update, and a delete, of the row just written
            lines.append({"before": row, "after": {**row, "score": 0.5}, "source": src,
                          "op": "u", "ts_ms": START_MS + 60_000 * i + 1})
            lines.append({"before": row, "after": None, "source": src, "op": "d",
                          "ts_ms": START_MS + 60_000 * i + 2})
    (tmp_path / "live.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    pd.DataFrame({"application_id": [f"A{i}" for i in range(n)],
                  "label": ref["label"]}).to_csv(tmp_path / "out.csv", index=False)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                              str(tmp_path / "live.jsonl"), "--outcomes",
                              str(tmp_path / "out.csv"), "--model", "m", "--connector-out",
                              str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert "envelope: Debezium" in out and "(400 c, 10 u, 10 d)" in out, out
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert fields["event_id"] == "after.application_id"
    assert fields["event_time"] == {"path": "ts_ms", "unit": "ms"}
    assert fields["score"] == "after.score"
    assert fields["features"]["income"]["path"] == "after.income"
    summary = replay_summary(tmp_path, capsys, monkeypatch)
    assert summary["bad_by_reason"] == {"missing_id": 10}, summary
    assert summary["labels"]["duplicate_predictions"] == 10, summary["labels"]
    assert summary["first_event"] == "2024-01-01T00:00:00Z"


@pytest.mark.parametrize(("field", "shape"), [
    ("payload", "a JSON object written as text"), ("features", "a list of name/value pairs")])
def test_init_names_a_shape_replay_does_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, shape: str) -> None:
    """Before, init said only 'cannot find the id field' or 'reference columns not found'."""
    pd.DataFrame({"income": [1.0, 2.0, 3.0], "age": [30, 40, 50],
                  "label": [0, 1, 0]}).to_csv(tmp_path / "ref.csv", index=False)
    recs = []
    for i in range(5):
        row = {"income": 10.0 * i, "age": 30 + i}
        value: object = (json.dumps(row) if field == "payload" else
                         [{"name": k, "value": v} for k, v in row.items()])
        recs.append({"id": f"A{i}", field: value, "score": 0.1, "ts": 1_704_067_200 + i})
    (tmp_path / "live.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                            str(tmp_path / "live.jsonl"), "--connector-out",
                            str(tmp_path / "c.yaml"), "--policy-out",
                            str(tmp_path / "p.yaml")], capsys)
    assert code != 0
    assert f"{field} holds {shape}" in err and "income, age are inside it" in err, err
    assert "jq -c" in err and "Traceback" not in err, err
