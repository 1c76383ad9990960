"""Text that stands for a missing number (the Polish bankruptcy data's ``?`` in ``Attr1`` ..
``Attr64``, HMDA's ``Exempt``): ``init`` types the column numeric and writes the text as a
missing value, which the stream and the reference both read as missing. Before, pandas read
each such column as text with a level per number: every one was ignored as "a value per
row" and init stopped with "the reference has no feature columns"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError
from driftwatch.onboard.textcodes import missing_texts
from driftwatch.schema import FeatureSchema
from driftwatch.sentinels import MissingValues
from driftwatch.windows.conventions import build_profile

from ._cli import run_cli
from ._csvconn import csv_connector

T0 = 1_700_000_000
ATTRS = [f"Attr{k}" for k in range(1, 7)]


def polish(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Polish-bankruptcy-shaped rows as its CSV export writes them: ratios as numbers, '?'
    where a ratio is missing (3% of cells), ``class`` 0/1."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({a: rng.normal(k / 10 + (shift if k == 1 else 0), 1, n).round(5)
                       for k, a in enumerate(ATTRS, 1)}).astype(object)
    df[rng.random(df.shape) < 0.03] = "?"
    df["class"] = (rng.random(n) < 0.1).astype(int)
    return df


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _stream(df: pd.DataFrame, name: str, start: int) -> None:
    live = df.drop(columns="class")
    live.insert(0, "id", [f"c{start + i}" for i in range(len(df))])
    live.insert(1, "ts", T0 + 60 * np.arange(len(df)))
    live.to_csv(f"{name}/pred.csv", index=False)
    out = pd.DataFrame({"id": live["id"], "outcome_ts": live["ts"] + 86_400 * 30,
                        "class": df["class"]})
    out.to_csv(f"{name}/out.csv", index=False)


def _replay(name: str, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    code, _, err = run_cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "--out",
                            f"o-{name}", "-i", f"predictions={name}/pred.csv",
                            f"outcomes={name}/out.csv", "--no-levels-cache"], capsys)
    assert code == 0, err
    return [w for x in Path(f"o-{name}/timeline.jsonl").read_text().splitlines()
            if (w := orjson.loads(x))["n_events"]]


def test_init_check_and_replay_read_question_marks_as_missing_numbers(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    polish(3000, 0).to_csv("ref.csv", index=False)
    for name, seed, shift in (("same", 1, 0.0), ("shift", 2, 1.5)):
        Path(name).mkdir()
        _stream(polish(2000, seed, shift), name, seed * 10_000)
    code, out, err = run_cli(["init", "--reference", "ref.csv", "--sample", "same/pred.csv",
                              "--outcomes", "same/out.csv", "--model", "polish",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml",
                              "--pane", "500"], capsys)
    assert code == 0, err
    assert f"features: {len(ATTRS)}" in out and f"{len(ATTRS)} numeric" in out
    assert "text for a missing value, read as missing" in out
    fields = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"][
        "fields"]
    assert fields["missing_values_by_feature"] == {a: ["?"] for a in ATTRS}
    assert {fields["features"][a]["type"] for a in ATTRS} == {"numeric"}

    code, checked, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
    assert (code, checked) == (0, "ok p.yaml\n"), err
    same = _replay("same", capsys)
    assert [w["n_bad"] for w in same] == [0] * len(same)  # no '?' dead-lettered
    assert {w["tier"] for w in same} == {"none"}
    shifted = _replay("shift", capsys)
    raised = {(r["signal"], r.get("feature")) for w in shifted
              for r in w["decision"]["reasons"]}
    assert ("psi", "Attr1") in raised
    assert not any(f != "Attr1" for s, f in raised if s == "psi"), raised


_LINES = {  # a number, declared missing text (with spaces around it in the CSV), other text
    "csv": "id,ts,x\na,1700000000,0.5\nb,1700000060, ? \nc,1700000120,n.a.\n",
    "jsonl": ('{"id": "a", "ts": 1700000000, "x": 0.5}\n'
              '{"id": "b", "ts": 1700000060, "x": "?"}\n'
              '{"id": "c", "ts": 1700000120, "x": "n.a."}\n'),
}


@pytest.mark.parametrize("fmt", _LINES)
def test_the_decoder_reads_declared_text_as_missing_and_other_text_as_wrong_type(
    tmp_path: Path, fmt: str
) -> None:
    (tmp_path / f"p.{fmt}").write_text(_LINES[fmt])
    conn = csv_connector(tmp_path, f"p.{fmt}", fmt=fmt, fields=(
        "event_id: id", "event_time: {path: ts, unit: s}",
        "features: {x: {path: x, type: numeric}}",
        "missing_values_by_feature: {x: ['?']}"))
    src = FileSource(conn, FeatureSchema(numeric=("x",)), read_ahead=False)
    x, bad = [], []
    while (polled := src.poll()) is not None:
        x += [v for b in polled.batches for v in b.numeric[:, 0].tolist()]
        bad += [r.reason for r in polled.bad]
    src.close()
    assert x[0] == 0.5 and np.isnan(x[1])
    assert bad == ["wrong_type"]  # 'n.a.' was not declared


def test_the_reference_reads_declared_text_as_missing(tmp_path: Path) -> None:
    (tmp_path / "ref.csv").write_text("x,y\n" + "".join(f"{i / 7:.3f},{i}\n"
                                                        for i in range(40)) + "?,5\n")
    profile = build_profile(tmp_path / "ref.csv", kinds={"x": "numeric"},
                            missing=MissingValues((), {"x": ("?",)}))
    assert "x" in profile.schema.numeric


@pytest.mark.parametrize("value", ["-9", "  "])
def test_a_numeric_feature_refuses_a_number_or_blank_written_as_text(
    tmp_path: Path, value: str
) -> None:
    (tmp_path / "p.csv").write_text("id,ts,x\na,1700000000,0.5\n")
    with pytest.raises(ConnectorError, match="missing"):
        conn = csv_connector(tmp_path, "p.csv", fields=(
            "event_id: id", "event_time: {path: ts, unit: s}",
            "features: {x: {path: x, type: numeric}}",
            f"missing_values_by_feature: {{x: ['{value}']}}"))
        conn.schema_for(FeatureSchema(numeric=("x",)))


@pytest.mark.parametrize(("values", "texts"), [
    (["0.25", "?", "1.5", "-3.75", "7.1", "0.01", "2.2"], ["?"]),
    (["3.875", "Exempt", "NA", "4.25", "4.5", "5.125", "3.99", "Exempt"], ["Exempt", "NA"]),
    ([str(v) for v in range(85_000, 1_285_000, 100_000)] + ["Exempt"], ["Exempt"]),
])
def test_texts_among_numbers_are_found(values: list[str], texts: list[str]) -> None:
    found = missing_texts(pd.Series(values, dtype=object))
    assert found is not None and found[0] == texts


@pytest.mark.parametrize("values", [
    ["20%-<30%", "<20%", "36", "41", "50%-60%", ">60%", "44", "30%-<36%"],  # HMDA's DTI
    ["A", "B", "1", "2", "3", "4", "5"],          # letters beside a few whole codes
    ["0.5", "1.5", "2.5", "3.5", "4.5", "?", "unknown", "n.a."],  # three texts: no code
    ["0.5", "?", "1.5"],                           # too few numbers to tell
    ["RENT", "OWN", "MORTGAGE"],
])
def test_other_text_columns_are_left_alone(values: list[str]) -> None:
    assert missing_texts(pd.Series(values, dtype=object)) is None


@settings(max_examples=100, deadline=None)
@given(nums=st.lists(st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)),
                     min_size=30, max_size=200, unique=True),
       token=st.sampled_from(["?", "-", ".", "*", "Exempt", "missing"]),
       every=st.integers(2, 9))
def test_a_token_without_digits_among_any_numbers_is_read_as_missing(
    nums: list[float], token: str, every: int
) -> None:
    """Whatever the numbers, the token is the one code and every number reads back."""
    text = [token if i % every == 0 else repr(v) for i, v in enumerate(nums)]
    found = missing_texts(pd.Series(text, dtype=object))
    assert found is not None and found[0] == [token]
    got = found[2].tolist()
    for i, v in enumerate(nums):
        assert np.isnan(got[i]) if i % every == 0 else got[i] == v
