"""A label the outcomes spell otherwise than the reference (Taiwan's ``default payment next
month`` in the training table, ``default.payment.next.month`` in R's export of the
outcomes) is found there: ``init`` used to stop with "cannot find the outcomes label
field", and ``--label-field`` could name only one of the two. Names that differ in case
and separators now match, said on the label's line, and ``--label-field REF=STREAM``
names each where they differ otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.matching import name_key, stream_path

from ._cli import run_cli

WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6),
                 min_size=2, max_size=5)
SEPARATORS = st.sampled_from([" ", ".", "_", "-", "  "])


@given(WORDS, SEPARATORS, SEPARATORS, st.sampled_from([str, str.upper, str.title]))
def test_a_name_spelled_with_other_separators_or_case_is_found(
        words: list[str], ref_sep: str, stream_sep: str, case: object) -> None:
    ref = ref_sep.join(words)
    stream = case(stream_sep.join(words))  # type: ignore[operator]
    assert name_key(ref) == name_key(stream)
    assert stream_path(ref, ["ID", "score", stream]) == stream


@given(WORDS, SEPARATORS)
def test_other_words_are_not_found(words: list[str], sep: str) -> None:
    assert stream_path(sep.join(words), ["ID", sep.join([*words, "x"])]) is None


def _taiwan(tmp: Path, label: str, out_label: str, n: int = 400) -> None:
    rng = np.random.default_rng(2)
    lim = (rng.lognormal(11.8, 0.8, 2 * n) // 10000 * 10000).clip(10000, 1e6)
    pay0 = rng.integers(-2, 8, 2 * n)
    y = (rng.random(2 * n) < 1 / (1 + np.exp(1.6 - 0.5 * (pay0 > 0)))).astype(int)
    ref = pd.DataFrame({"ID": np.arange(1, n + 1), "LIMIT_BAL": lim[:n], "PAY_0": pay0[:n],
                        label: y[:n]})
    ref.to_csv(tmp / "ref.csv", index=False)
    live = pd.DataFrame({"ID": np.arange(n + 1, 2 * n + 1), "LIMIT_BAL": lim[n:],
                         "PAY_0": pay0[n:], "score": rng.random(n).round(5)})
    live.to_csv(tmp / "scored.csv", index=False)
    pd.DataFrame({"ID": live["ID"], out_label: y[n:]}).to_csv(tmp / "outcomes.csv",
                                                                index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "scored.csv"), "--outcomes", str(tmp / "outcomes.csv"),
                    "--model", "taiwan", "--connector-out", str(tmp / "c.yaml"),
                    "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _outcomes_label(tmp: Path) -> dict[str, object]:
    c = yaml.safe_load((tmp / "c.yaml").read_text())
    label: dict[str, object] = c["source"]["streams"]["outcomes"]["fields"]["label"]
    return label


def test_taiwans_label_spelled_with_dots_in_the_outcomes_is_found_and_joins(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _taiwan(tmp_path, "default payment next month", "default.payment.next.month")
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("outcomes label:"))
    assert line.startswith("outcomes label: default.payment.next.month"), out
    assert "the reference's 'default payment next month' spelled otherwise" in line, out
    assert "label: default payment next month" in out
    assert _outcomes_label(tmp_path)["path"] == "default.payment.next.month"
    code, out, err = run_cli(
        ["replay", "-c", str(tmp_path / "c.yaml"), "-p", str(tmp_path / "p.yaml"), "-i",
         f"predictions={tmp_path / 'scored.csv'}", f"outcomes={tmp_path / 'outcomes.csv'}",
         "-o", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["labels"]["joined"] == 400 and summary["labels"]["invalid_outcomes"] == 0


def test_label_field_names_the_reference_and_the_outcomes_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _taiwan(tmp_path, "SeriousDlqin2yrs", "dlq")
    code, out, err = _init(tmp_path, capsys)
    assert code != 0 and "--label-field SeriousDlqin2yrs (or SeriousDlqin2yrs=NAME" in err, err
    code, out, err = _init(tmp_path, capsys, "--label-field", "SeriousDlqin2yrs")
    assert code != 0 and "cannot find the outcomes label field" in err, (out, err)
    assert "--label-field REFERENCE_NAME=STREAM_NAME" in err, err
    code, out, err = _init(tmp_path, capsys, "--label-field", "SeriousDlqin2yrs=dlq")
    assert code == 0, err
    assert "label: SeriousDlqin2yrs" in out and "from --label-field" in out, out
    assert "outcomes label: dlq" in out, out
    assert _outcomes_label(tmp_path)["path"] == "dlq"


def test_label_field_naming_an_absent_outcomes_field_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _taiwan(tmp_path, "SeriousDlqin2yrs", "dlq")
    code, out, err = _init(tmp_path, capsys, "--label-field", "SeriousDlqin2yrs=nosuch")
    assert code != 0 and "--label-field 'nosuch': no such field" in err, (out, err)
