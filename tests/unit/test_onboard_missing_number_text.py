"""A JSON stream that writes a missing number as text (R's jsonlite and many exporters send
``"NA"``; others ``"null"``, ``"None"``, ``"NaN"``), beside a reference that holds numbers
there: ``init`` lists the text under ``missing_values_by_feature``. Before, it only warned,
and replay dead-lettered every such record as ``wrong_type`` while the feature's missing
share, gone from the records left, read as severe drift (Give Me Some Credit's
``MonthlyIncome``, missing on a fifth of the rows: PSI 1.7)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.csvnulls import CSV_MISSING

from ._cli import run_cli


def _tables(tmp: Path, text: str, ref_format: str, n: int = 900) -> None:
    rng = np.random.default_rng(5)

    def frame(m: int) -> pd.DataFrame:
        income = rng.lognormal(8.5, 0.6, m).round(0)
        income[rng.random(m) < 0.2] = np.nan
        return pd.DataFrame({"age": rng.integers(21, 90, m),
                             "DebtRatio": rng.lognormal(-1, 1, m).round(6),
                             "MonthlyIncome": income})

    ref = frame(2000)
    ref.insert(0, "SeriousDlqin2yrs", (rng.random(2000) < 0.1).astype(int))
    if ref_format == "csv":
        ref.to_csv(tmp / "ref.csv", index=False, na_rep="NA")
    else:
        ref.to_parquet(tmp / "ref.csv")  # a Parquet file is known by its bytes
    live = frame(n)
    with (tmp / "pred.jsonl").open("w") as f, (tmp / "out.jsonl").open("w") as g:
        for i, row in enumerate(live.itertuples(index=False)):
            inc = row.MonthlyIncome
            f.write(json.dumps({"id": f"L{i}", "ts": 1_735_689_600 + 60 * i,
                                "score": round(float(rng.random()), 4), "age": int(row.age),
                                "DebtRatio": row.DebtRatio,
                                "MonthlyIncome": text if np.isnan(inc) else inc}) + "\n")
            g.write(json.dumps({"id": f"L{i}", "SeriousDlqin2yrs": int(rng.random() < 0.1)})
                    + "\n")


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "pred.jsonl"), "--outcomes", str(tmp / "out.jsonl"), "--model",
                    "m", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml"), "--pane", "300"], capsys)


@pytest.mark.parametrize("text", sorted(t for t in CSV_MISSING if t))
def test_missing_number_text_is_written_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
) -> None:
    _tables(tmp_path, text, "csv", n=300)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["missing_values_by_feature"] == {"MonthlyIncome": [text]}, fields
    assert "wrong_type" not in out, out
    assert f"missing: [{text!r}]" in out and "where the reference has numbers" in out, out


@pytest.mark.parametrize("ref_format", ["csv", "parquet"])
def test_replay_reads_it_as_missing_not_as_a_bad_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    ref_format: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    _tables(tmp_path, "NA", ref_format)
    code, _, err = _init(tmp_path, capsys)
    assert code == 0, err
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                            "--input", "pred.jsonl", "out.jsonl", "--out", "run", "--quiet",
                            "--no-report"], capsys)
    assert code == 0, err
    summary = json.loads(Path("run/summary.json").read_text())
    assert (summary["events"], summary["bad_records"]) == (900, 0), summary
    sent = sum('"MonthlyIncome": "NA"' in line
               for line in Path("pred.jsonl").read_text().splitlines())
    windows = [json.loads(x) for x in Path("run/timeline.jsonl").read_text().splitlines()]
    assert sum(w["features"]["MonthlyIncome"]["missing"] for w in windows) == sent > 100
    for w in windows:
        assert w["tier"] == "none", w["decision"]["reasons"]


def test_numbers_as_text_and_missing_text_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A Java service that writes every number as text writes a missing one as "null"."""
    _tables(tmp_path, "null", "csv", n=300)
    lines = []
    for line in (tmp_path / "pred.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["MonthlyIncome"] != "null":
            rec["MonthlyIncome"] = str(rec["MonthlyIncome"])
        lines.append(json.dumps(rec))
    (tmp_path / "pred.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]
    assert fields["numbers_as_text"] is True, fields
    assert fields["fields"]["missing_values_by_feature"] == {"MonthlyIncome": ["null"]}
    assert "wrong_type" not in out, out
