"""``format: money`` reads a feature written as money text (the SBA loan table's
``DisbursementGross``, ``"$60,000.00 "`` with a trailing space) as the amount, on every
decoding path and in the reference table alike; ``init`` maps such a column as a numeric
feature, where it was a category with a level per amount (a new category in every record:
a data-quality fault per window, and an amount shift unseen). (The decoding paths:
``test_text_number_decode.py``.)"""

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

# -- init and replay: the SBA's loan table ----------------------------------------------------

N = 2000


def _money(a: np.ndarray) -> list[str]:
    return [f"${v:,.2f} " for v in a]


def _grouped(a: np.ndarray) -> list[str]:
    """Thousands commas, no currency sign (a spreadsheet's number format)."""
    return [f"{v:,.2f}" for v in a]


def _sba(tmp: Path, factor: float, money: Callable[[np.ndarray], list[str]] = _money) -> None:
    """The SBA's shape: amounts as money text in the reference CSV and the CSV stream; the
    stream's second half lends ``factor`` times as much."""
    rng = np.random.default_rng(5)
    ref = pd.DataFrame({"Term": rng.integers(12, 300, N),
                        "DisbursementGross": money(rng.lognormal(11, 1, N).round(-2)),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], N, p=[0.8, 0.2])})
    ref.to_csv(tmp / "ref.csv", index=False)
    gross = rng.lognormal(11, 1, N).round(-2) * np.where(np.arange(N) >= N // 2, factor, 1.0)
    live = pd.DataFrame({"id": np.arange(N), "ts": 1_700_000_000 + 60 * np.arange(N),
                         "Term": rng.integers(12, 300, N), "DisbursementGross": money(gross),
                         "score": rng.uniform(0, 1, N).round(4)})
    live.to_csv(tmp / "live.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                           str(tmp / "live.csv"), "--pane", "500", "--model", "m",
                           "--label-field", "MIS_Status", "--label-bad", "CHGOFF",
                           "--connector-out", str(tmp / "c.yaml"),
                           "--policy-out", str(tmp / "p.yaml")], capsys)
    assert code == 0, err
    return out


def _psi(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[float], dict[str, Any]]:
    code, _, err = _cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                         str(tmp / "p.yaml"), "--input", str(tmp / "live.csv"),
                         "--out", str(tmp / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (tmp / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    psi = [next(s["value"] for s in r["signals"]
                if s["signal"] == "psi" and s["feature"] == "DisbursementGross")
           for r in records]
    return psi, json.loads((tmp / "run" / "summary.json").read_text())


@pytest.mark.parametrize("money", [_money, _grouped])
def test_init_maps_money_text_and_replay_sees_an_amount_shift(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        money: Callable[[np.ndarray], list[str]]) -> None:
    """With or without a currency sign: '60,000.00' was a category with a level per
    amount. Without one it is a number whose thousands are grouped, which every CSV reader
    reads as a number: no format to map."""
    _sba(tmp_path, factor=3.0, money=money)
    out = _init(tmp_path, capsys)
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    fmt = {"format": "money"} if money is _money else {}
    assert feats["DisbursementGross"] == {"path": "DisbursementGross", "type": "numeric",
                                          **fmt}
    line = next(x for x in out.splitlines() if x.startswith("  DisbursementGross: numeric"))
    assert ("format: money" in line) == bool(fmt), out
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {}
    assert max(psi[:2]) < 0.1 < min(psi[2:]), psi  # the shift, and only the shift


def test_unchanged_money_text_is_no_drift(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sba(tmp_path, factor=1.0)
    _init(tmp_path, capsys)
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {} and max(psi) < 0.1, psi


def test_a_malformed_amount_in_the_reference_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sba(tmp_path, factor=1.0)
    _init(tmp_path, capsys)
    ref = pd.read_csv(tmp_path / "ref.csv")
    ref.loc[3, "DisbursementGross"] = "$6,00.00"
    ref.to_csv(tmp_path / "ref.csv", index=False)
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.csv"),
                         "--out", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code != 0 and "Traceback" not in err
    assert ("reference column 'DisbursementGross' is read as money text (format: money in "
            "the connector) but holds '$6,00.00'") in err


# -- a European export: semicolons, decimal commas, amounts written 1.234,56 € -----------------

def _european(style: str) -> Callable[[np.ndarray], list[str]]:
    def write(a: np.ndarray) -> list[str]:
        out = []
        for v in a:
            sign = "-" if v < 0 else ""
            g = f"{abs(v):,.2f}".translate(str.maketrans(",.", ".,"))
            out.append({"after": f"{sign}{g} €", "before": f"€ {sign}{g}",
                        "plain": f"{sign}{g}"}[style])
        return out
    return write


def _sba_european(tmp: Path, factor: float, style: str) -> None:
    """:func:`_sba` as a European spreadsheet saves it: ``;``, a decimal comma in the
    rates, amounts (a tenth of them negative: repayments) with thousands points."""
    rng = np.random.default_rng(5)
    money = _european(style)

    def amounts(k: float) -> np.ndarray:
        a = rng.lognormal(11, 1, N).round(-2) * np.where(rng.uniform(size=N) < 0.1, -1, 1)
        return a * np.where(np.arange(N) >= N // 2, k, 1.0)

    ref = pd.DataFrame({"Term": rng.integers(12, 300, N), "Rate": rng.normal(5, 1, N).round(2),
                        "DisbursementGross": money(amounts(1.0)),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], N, p=[0.8, 0.2])})
    ref.to_csv(tmp / "ref.csv", index=False, sep=";", decimal=",")
    live = pd.DataFrame({"id": np.arange(N), "ts": 1_700_000_000 + 60 * np.arange(N),
                         "Term": rng.integers(12, 300, N), "Rate": rng.normal(5, 1, N).round(2),
                         "DisbursementGross": money(amounts(factor)),
                         "score": rng.uniform(0, 1, N).round(4)})
    live.to_csv(tmp / "live.csv", index=False, sep=";", decimal=",")


@pytest.mark.parametrize("style", ["after", "before", "plain"])
def test_init_and_replay_read_the_amounts_of_a_decimal_comma_export(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], style: str) -> None:
    """``1.234,56 €``, ``€ -1.234,56`` and ``-1.234,56`` are amounts in the reference and
    the stream alike: the column was ignored as a value per row (and ``-1.234,56`` made the
    whole file read with the point). Without a currency sign it is a number whose
    thousands are grouped: read as one by every CSV reader, with no format."""
    _sba_european(tmp_path, factor=1.0, style=style)
    out = _init(tmp_path, capsys)
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert stream["csv"] == {"delimiter": ";", "decimal": ","}, out
    fmt = {} if style == "plain" else {"format": "money"}
    assert stream["fields"]["features"]["DisbursementGross"] == {
        "path": "DisbursementGross", "type": "numeric", **fmt}, out
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {} and max(psi) < 0.1, psi
    _sba_european(tmp_path, factor=3.0, style=style)
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {}
    assert max(psi[:2]) < 0.1 < min(psi[2:]), psi  # the shift, and only the shift


@pytest.mark.parametrize(("european", "style"), [(False, ""), (True, "after"), (True, "before")])
def test_the_connector_comment_shows_an_amount_of_the_file_as_it_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], european: bool, style: str) -> None:
    """Before: '"$60,000.00 " reads as 60000' beside every money feature, a decimal-comma
    export's ('1.234,56 €') too, where 60,000.00 is no amount."""
    if european:
        _sba_european(tmp_path, factor=1.0, style=style)
        first = pd.read_csv(tmp_path / "live.csv", sep=";", dtype=str)["DisbursementGross"][0]
        number = float(first.strip(" €").replace(".", "").replace(",", "."))
    else:
        _sba(tmp_path, factor=1.0)
        first = pd.read_csv(tmp_path / "live.csv", dtype=str)["DisbursementGross"][0]
        number = float(first.strip(" $").replace(",", ""))
    _init(tmp_path, capsys)
    line = next(x for x in (tmp_path / "c.yaml").read_text().splitlines()
                if x.strip().startswith("DisbursementGross:"))
    shown = str(int(number)) if number.is_integer() else repr(number)
    assert f'# "{first.strip()}" reads as {shown}, here and in the reference' in line, line
    assert european == ("€" in line) and "$60,000.00" not in line
