"""``format: percent`` reads a feature written as percent text (Lending Club's ``int_rate``,
``"13.56%"``) as the number before the sign, on every decoding path and in the reference
table alike, so a rate shift is seen and an unchanged rate is no drift; ``init`` maps such a
column instead of ignoring it. (The decoding paths: ``test_text_number_decode.py``.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from ._cli import run_cli as _cli
from .test_text_number_decode import connector_text

CONNECTOR = connector_text("percent", "int_rate", "int_rate")


# -- through replay: the reference is read the same way ---------------------------------------

N = 2000


def _rates(seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).uniform(5, 25, N).round(2)


def _write_stream(tmp: Path, name: str, rates: list[Any]) -> Path:
    live = pd.DataFrame({"id": [f"a{i}" for i in range(N)],
                         "ts": 1_700_000_000 + 60 * np.arange(N), "int_rate": rates,
                         "score": 0.5})
    path = tmp / name
    if name.endswith(".csv"):
        live.to_csv(path, index=False)
    elif name.endswith(".parquet"):
        live.to_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in live.to_dict("records")))
    return path


def _setup(tmp: Path) -> None:
    rates = _rates()
    pd.DataFrame({"int_rate": [f"{r:.2f}%" for r in rates],
                  "score": 0.5}).to_csv(tmp / "ref_text.csv", index=False)
    pd.DataFrame({"int_rate": rates, "score": 0.5}).to_parquet(tmp / "ref_numbers.parquet")
    (tmp / "c.yaml").write_text(CONNECTOR)
    (tmp / "p.yaml").write_text(
        "apiVersion: driftwatch/v1\nkind: DriftPolicy\nmetadata: {name: m}\n"
        "model: {name: m, reference: ref_text.csv}\nwindow: {kind: count, pane: 500}\n"
        "signals:\n  - detector: psi\n    thresholds: {mild: 0.1}\n")


def _bins(tmp: Path, capsys: pytest.CaptureFixture[str], stream: Path,
          reference: str) -> tuple[list[list[int]], dict[str, Any]]:
    out = tmp / f"run-{stream.name}-{reference}"
    code, _, err = _cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                         str(tmp / "p.yaml"), "--reference", str(tmp / reference), "--input",
                         f"predictions={stream}", "--out", str(out), "--no-report", "-q"],
                        capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (out / "timeline.jsonl").read_text().splitlines()]
    assert not any(r["decision"]["tier"] != "none" for r in records)  # no false drift
    summary = json.loads((out / "summary.json").read_text())
    return [r["features"]["int_rate"]["bins"] for r in records], summary


def test_percent_text_bins_as_the_numbers_do_against_either_reference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stream of "13.56%" lands in the bins a stream of 13.56 does, whether the reference
    writes the rates as the same text (read by the same rule) or as numbers."""
    _setup(tmp_path)
    rates = _rates()
    text = [f"{r:.2f}%" for r in rates]
    numbers = _write_stream(tmp_path, "numbers.jsonl", rates.tolist())
    want, _ = _bins(tmp_path, capsys, numbers, "ref_numbers.parquet")
    assert sum(map(sum, want)) == N  # every rate in a value bin: none missing or bad
    for stream in ("text.jsonl", "text.csv", "text.parquet"):
        path = _write_stream(tmp_path, stream, text)
        for reference in ("ref_text.csv", "ref_numbers.parquet"):
            got, summary = _bins(tmp_path, capsys, path, reference)
            assert got == want, (stream, reference)
            assert summary["bad_by_reason"] == {}


@pytest.mark.parametrize("word", ["abc%", "nan%", "NaN %"])  # nan% read as a NaN rate
def test_a_malformed_rate_is_dead_lettered_with_its_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], word: str) -> None:
    _setup(tmp_path)
    text = [f"{r:.2f}%" for r in _rates()]
    text[7] = word
    for stream in ("bad.jsonl", "bad.csv", "bad.parquet"):
        path = _write_stream(tmp_path, stream, text)
        _, summary = _bins(tmp_path, capsys, path, "ref_text.csv")
        assert summary["bad_by_reason"] == {"wrong_type": 1}, stream
        out = tmp_path / f"run-{stream}-ref_text.csv"
        (letter,) = [json.loads(x) for x in
                     (out / "dead_letter.jsonl").read_text().splitlines()]
        assert letter["reason"] == "wrong_type"
        assert "feature 'int_rate'" in letter["detail"]
        assert f"percent text like '13.56%', found text {word!r}" in letter["detail"]


@pytest.mark.parametrize("word", ["abc%", "nan%"])
def test_a_malformed_rate_in_the_reference_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], word: str) -> None:
    _setup(tmp_path)
    ref = pd.read_csv(tmp_path / "ref_text.csv")
    ref.loc[3, "int_rate"] = word
    ref.to_csv(tmp_path / "ref_text.csv", index=False)
    stream = _write_stream(tmp_path, "s.jsonl", _rates().tolist())
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--reference",
                         str(tmp_path / "ref_text.csv"), "--input", f"predictions={stream}",
                         "--out", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code != 0 and "Traceback" not in err
    assert ("reference column 'int_rate' is read as percent text (format: percent in the "
            f"connector) but holds {word!r}") in err


# -- init -------------------------------------------------------------------------------------


def _point(r: float) -> str:
    return f"{r:.2f}%"


def _comma(r: float) -> str:
    """A European export's decimal comma."""
    return f"{r:.2f}%".replace(".", ",")


def _lending(tmp: Path, shift: float, pct: Callable[[float], str] = _point) -> None:
    """A Lending Club shape: int_rate as percent text in the reference CSV and the stream;
    the stream's second half charges ``shift`` points more."""
    rng = np.random.default_rng(11)
    ref = pd.DataFrame({"loan_amnt": rng.integers(1000, 35000, N).astype(float),
                        "int_rate": [pct(r) for r in rng.uniform(5, 25, N)],
                        "score": rng.uniform(0, 1, N).round(4)})
    ref.to_csv(tmp / "ref.csv", index=False)
    rates = rng.uniform(5, 25, N) + np.where(np.arange(N) >= N // 2, shift, 0.0)
    live = pd.DataFrame({"id": np.arange(N), "ts": 1_700_000_000 + 60 * np.arange(N),
                         "loan_amnt": rng.integers(1000, 35000, N).astype(float),
                         "int_rate": [pct(r) for r in rates],
                         "score": rng.uniform(0, 1, N).round(4)})
    with open(tmp / "live.jsonl", "w") as f:
        for r in live.to_dict("records"):
            f.write(json.dumps(r) + "\n")


@pytest.mark.parametrize("pct", [_point, _comma])
def test_init_maps_percent_text_and_replay_sees_a_rate_shift(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pct: Callable[[float], str]) -> None:
    """init ignored int_rate ("convert it with pandas"), so a rate shift went unseen; with
    a decimal comma ("13,56%") it was still a category with a level per rate."""
    _lending(tmp_path, shift=6.0, pct=pct)
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.jsonl"), "--pane", "500", "--model", "m",
                           "--connector-out", str(tmp_path / "c.yaml"), "--policy-out",
                           str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    assert feats["int_rate"] == {"path": "int_rate", "type": "numeric", "format": "percent"}
    pol = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert "int_rate" in pol["model"]["features"] and "int_rate" not in pol["reference"]["ignore"]
    line = next(x for x in out.splitlines() if x.startswith("  int_rate: numeric"))
    assert "format: percent" in line, out
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.jsonl"),
                         "--out", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (tmp_path / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    psi = [next(s["value"] for s in r["signals"]
                if s["signal"] == "psi" and s["feature"] == "int_rate") for r in records]
    assert max(psi[:2]) < 0.1 < min(psi[2:]), psi  # the shift, and only the shift


def test_init_reads_a_samples_percent_text_against_a_reference_of_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Numbers in the reference, "13.56%" in the stream: every record was wrong_type."""
    _lending(tmp_path, shift=0.0)
    ref = pd.read_csv(tmp_path / "ref.csv")
    ref["int_rate"] = ref["int_rate"].str.rstrip("%").astype(float)
    ref.to_parquet(tmp_path / "ref.parquet")
    lines = (tmp_path / "live.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace('"int_rate": "', '"int_rate": "abc')
    (tmp_path / "live.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.parquet"), "--sample",
                           str(tmp_path / "live.jsonl"), "--model", "m", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                          capsys)
    assert code == 0, err
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    assert feats["int_rate"]["format"] == "percent"
    warning = next(x for x in out.splitlines() if x.startswith("  warning: int_rate"))
    assert "'abc" in warning and "wrong_type" in warning, out


def test_a_decimal_comma_export_reads_rates_with_three_decimals(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ';' CSV with decimal commas writes 12.345% as '12,345%'. It was refused as
    ambiguous (1,234 could be a thousands comma): init left int_rate out, and a connector
    mapping it dead-lettered a rate in ten. In such a file the comma is the decimal mark,
    on every path: the reference through pandas, init's sample, the stream through
    pyarrow."""
    rng = np.random.default_rng(7)

    def pct(r: float) -> str:
        return f"{r:.3f}%".replace(".", ",")

    ref = pd.DataFrame({"loan_amnt": rng.uniform(1000, 35000, N).round(2),
                        "int_rate": [pct(r) for r in rng.uniform(5, 25, N)],
                        "score": rng.uniform(0, 1, N).round(4)})
    ref.to_csv(tmp_path / "ref.csv", index=False, sep=";", decimal=",")
    rates = rng.uniform(5, 25, N) + np.where(np.arange(N) >= N // 2, 6.0, 0.0)
    live = pd.DataFrame({"id": np.arange(N), "ts": 1_700_000_000 + 60 * np.arange(N),
                         "loan_amnt": rng.uniform(1000, 35000, N).round(2),
                         "int_rate": [pct(r) for r in rates],
                         "score": rng.uniform(0, 1, N).round(4)})
    live.to_csv(tmp_path / "live.csv", index=False, sep=";", decimal=",")
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--pane", "500", "--model", "m",
                           "--connector-out", str(tmp_path / "c.yaml"), "--policy-out",
                           str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert stream["csv"] == {"delimiter": ";", "decimal": ","}, out
    assert stream["fields"]["features"]["int_rate"] == {
        "path": "int_rate", "type": "numeric", "format": "percent"}, out
    first = live["int_rate"][0]
    assert f'# "{first}" reads as {float(first[:-1].replace(",", "."))!r}' in (
        tmp_path / "c.yaml").read_text()
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.csv"),
                         "--out", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_by_reason"] == {}, summary["bad_by_reason"]
    records = [json.loads(x) for x in (tmp_path / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    psi = [next(s["value"] for s in r["signals"]
                if s["signal"] == "psi" and s["feature"] == "int_rate") for r in records]
    assert max(psi[:2]) < 0.1 < min(psi[2:]), psi  # the shift, and only the shift
