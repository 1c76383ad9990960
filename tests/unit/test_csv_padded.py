"""A CSV whose fields are padded with spaces (UCI Adult's ``39, State-gov, 77516``) reads
as its unpadded twin in every reader; and a label written with a full stop in one file
(Adult's test file: ``>50K.``) is the same outcome as the other file's ``>50K``.

Before: the padded reference's names were `` workclass``, so init stopped with "reference
columns not found in the sample"; with the header unpadded, a category was `` State-gov``;
and an outcomes file spelling ``>50K.`` was written as ``bad: []`` with both values good,
so every outcome read as good."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.onboard.infer import label_values
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli
from ._csvconn import read_batches

_LEVELS = ("State-gov", "Self-emp-not-inc", "Private", "?x")
_PAD = st.sampled_from(["", " ", "  ", "\t"])


def _padded_csv(frame: pd.DataFrame, pads: list[tuple[str, str]]) -> str:
    """``frame`` as CSV with ``", "`` between fields and each row's fields padded with
    its pair of (before, after) spaces; missing written ``NA``."""
    def cell(v: object) -> str:
        return "NA" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)

    lines = [", ".join(frame.columns)]
    for (_, row), (before, after) in zip(frame.iterrows(), pads, strict=True):
        lines.append(", ".join(f"{before}{cell(v)}{after}" for v in row))
    return "\n".join(lines) + "\n"


_ROW = st.tuples(st.integers(0, 10**6).map(lambda i: f"c{i}"),
                 st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False).map(
                     lambda x: round(x, 3))),
                 st.one_of(st.none(), st.sampled_from(_LEVELS)), st.floats(0, 1).map(
                     lambda x: round(x, 4)), st.tuples(_PAD, _PAD))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=15, unique_by=lambda r: r[0]))
def test_a_padded_csv_stream_reads_into_the_batches_of_its_plain_twin(
    tmp_path: Path, rows: list[tuple],
) -> None:
    frame = pd.DataFrame([r[:4] for r in rows], columns=["id", "x", "cat", "score"])
    frame.insert(1, "ts", (1.75e9 + np.arange(len(frame))).astype(int))
    frame.to_csv(tmp_path / "plain.csv", index=False)
    (tmp_path / "padded.csv").write_text(_padded_csv(frame, [r[4] for r in rows]))
    schema = FeatureSchema(numeric=("x",), categorical=("cat",), levels=(_LEVELS,))
    want = read_batches(tmp_path, "plain.csv", schema)
    assert sum(len(b[0]) for b in want[0]) == len(frame) and want[1] == []
    assert read_batches(tmp_path, "padded.csv", schema) == want


def test_a_padded_reference_reads_as_its_plain_twin(tmp_path: Path) -> None:
    frame = pd.DataFrame({"age": [39, 50, 38], "workclass": ["State-gov", None, "Private"],
                          "fnlwgt": [77516.5, np.nan, 215646.0]})
    frame.to_csv(tmp_path / "plain.csv", index=False)
    (tmp_path / "padded.csv").write_text(
        "age, workclass , fnlwgt\n39, State-gov, 77516.5\n50,  NA , NA\n38, Private , 215646\n")
    plain, padded = (read_reference_table(tmp_path / f"{n}.csv") for n in ("plain", "padded"))
    assert list(padded.columns) == ["age", "workclass", "fnlwgt"]
    assert padded["workclass"].tolist()[::2] == ["State-gov", "Private"]
    assert padded["workclass"].isna().tolist() == [False, True, False]
    assert padded["fnlwgt"].dtype.kind == "f" and padded["age"].tolist() == [39, 50, 38]
    assert np.allclose(padded["fnlwgt"], plain["fnlwgt"], equal_nan=True)


# -- the label: a full stop added in one file -------------------------------------------

_WORD = st.text(alphabet=st.sampled_from(list("abcXYZ<=>0159 -")), min_size=1, max_size=8
                ).filter(lambda w: w.strip(" .") != "")


@given(bad=_WORD, good=_WORD)
def test_a_bad_value_matches_its_spelling_with_a_full_stop(bad: str, good: str) -> None:
    if bad.strip().lower() == good.strip().lower():
        return
    b, g = label_values([f"{good}.", f"{bad}.", f"{good}."], "test.csv", bad=[bad])
    assert b == [f"{bad}."] and g == [f"{good}."]


def test_outcomes_whose_two_values_hold_no_bad_one_are_refused_not_read_as_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _adult(tmp_path, 400)
    pd.DataFrame({"id": pd.read_csv("live0.csv")["id"], "income": ["yes", "no"] * 200}
                 ).to_csv("out0.csv", index=False)
    code, _, err = run_cli(["init", "--reference", "adult.csv", "--sample", "live0.csv",
                            "--outcomes", "out0.csv", "--label-bad", ">50K",
                            "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 2 and "out0.csv: none of the label values 'no', 'yes' of income is a " \
        "bad value ('>50K'): every outcome would read as good" in err, err
    assert "--label-bad VALUE, repeated for each spelling" in err and not Path("c.yaml").exists()
    # one value only: the sample may not hold a bad outcome yet
    assert label_values(["no"], "out.csv", bad=["yes"]) == ([], ["no"])


# -- end to end: files shaped like UCI Adult --------------------------------------------


def _adult(tmp: Path, n: int, *, shift: int = 0) -> None:
    """A training file padded with ', ' (its header too); a stream; outcomes spelled
    with a full stop, as adult.test is."""
    rng = np.random.default_rng(3 + shift)
    age = rng.integers(17, 90, n)
    work = rng.choice(["State-gov", "Private", "Local-gov", "?"], n)
    hours = rng.integers(1, 60, n) + shift
    rich = rng.uniform(size=n) < 1 / (1 + np.exp(-(age - 45) / 8))
    lines = ["age, workclass, hours-per-week, income"] + [
        f"{a}, {w}, {h}, {'>50K' if r else '<=50K'}"
        for a, w, h, r in zip(age, work, hours, rich, strict=True)]
    if not shift:
        (tmp / "adult.csv").write_text("\n".join(lines) + "\n")
    ids = [f"a{shift}-{i}" for i in range(n)]
    live = pd.DataFrame({"id": ids, "ts": 1.7e9 + np.arange(n) * 60.0, "age": age,
                         "workclass": work, "hours-per-week": hours,
                         "score": (0.2 + 0.6 * rich + rng.normal(0, 0.1, n)).clip(0, 1)})
    live.to_csv(tmp / f"live{shift}.csv", index=False)
    pd.DataFrame({"id": ids, "income": np.where(rich, ">50K.", "<=50K.")}).to_csv(
        tmp / f"out{shift}.csv", index=False)


def test_an_adult_shaped_table_goes_through_init_check_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _adult(tmp_path, 3000)
    _adult(tmp_path, 3000, shift=30)
    code, _out, err = run_cli(["init", "--reference", "adult.csv", "--sample", "live0.csv",
                              "--outcomes", "out0.csv", "--label-bad", ">50K",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    streams = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]
    assert streams["outcomes"]["fields"]["label"] == {
        "path": "income", "bad": [">50K."], "good": ["<=50K."]}, streams
    assert set(streams["predictions"]["fields"]["features"]) == {
        "age", "workclass", "hours-per-week"}
    code, _, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    tiers, bad_share = {}, {}
    for shift in (0, 30):
        code, _, err = run_cli(["replay", "-q", "--no-report", "-c", "c.yaml", "-p", "p.yaml",
                                "-i", f"predictions=live{shift}.csv", f"outcomes=out{shift}.csv",
                                "--out", f"o{shift}"], capsys)
        assert code == 0, err
        lines = [json.loads(x) for x in Path(f"o{shift}/timeline.jsonl").read_text().splitlines()]
        tiers[shift] = {r["tier"] for r in lines}
        summary = json.loads(Path(f"o{shift}/summary.json").read_text())
        assert summary["bad_records"] == 0, summary
        assert summary["labels"]["joined"] == 3000, summary["labels"]
        cohorts = summary["label_cohorts"]
        bad_share[shift] = sum(c["bad"] for c in cohorts) / sum(c["labelled"] for c in cohorts)
    assert tiers[0] == {"none"} and "severe" in tiers[30], tiers
    # the outcomes' bad share is the data's, not 0 (every outcome read as good before)
    rich = pd.read_csv("out0.csv")["income"].eq(">50K.").mean()
    assert bad_share[0] == pytest.approx(rich, abs=1e-9)


def test_columns_without_text_are_left_as_they_are() -> None:
    """A yes/no column with gaps (object dtype, booleans and NaN) has no text to strip:
    pandas' ``.str`` refuses it, and the reference read failed on it."""
    from driftwatch.csvpad import trimmed_frame

    frame = pd.DataFrame({"flag": pd.Series([True, np.nan, False], dtype=object),
                          "mixed": [" a ", 1, np.nan], "x": [1.5, 2.0, np.nan]})
    out = trimmed_frame(frame.copy())
    assert out["flag"].tolist()[::2] == [True, False] and out["flag"].isna().tolist()[1]
    assert out["mixed"].tolist()[:2] == ["a", 1] and out["x"].equals(frame["x"])
