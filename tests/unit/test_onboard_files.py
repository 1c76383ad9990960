"""Shapes of a user's files that ``init`` and ``replay`` met badly: a JSON array instead of
JSON lines, objects spread over lines, an id with a few repeats, infinities and constants
in the reference, a score named ``risk``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.connectors.file import FileSource
from driftwatch.errors import SourceError
from driftwatch.onboard.infer import column_kind
from driftwatch.testing.credit import credit_connector, credit_schema

from ._cli import run_cli as _cli


def _files(tmp: Path, n: int = 500, repeats: int = 0) -> list[dict[str, object]]:
    rng = np.random.default_rng(2)
    ref = pd.DataFrame({"util": rng.uniform(0, 1, n), "n_inq": rng.poisson(1.5, n),
                        "risk": rng.beta(2, 6, n).round(4), "y": rng.integers(0, 2, n)})
    ref.loc[::97, "util"] = np.inf
    ref["const"] = 1.0
    ref.to_parquet(tmp / "ref.parquet")
    live = ref.drop(columns=["y"]).copy()
    live.insert(0, "uid", [f"u{i}" for i in range(n)])
    live.loc[1 : repeats, "uid"] = "u0"
    live.insert(1, "event_ts", 1.76e9 + np.arange(n) * 5.0)
    live["util"] = live["util"].replace(np.inf, 2.0)
    recs = json.loads(live.to_json(orient="records"))
    (tmp / "live.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return recs


INIT = ["init", "--reference", "ref.parquet", "--model", "m", "--connector-out", "c.yaml",
        "--policy-out", "p.yaml", "--ignore", "y"]


def test_a_json_array_is_refused_with_how_to_convert_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    recs = _files(tmp_path)
    for name, text in (("one.json", json.dumps(recs)), ("pretty.json", json.dumps(recs,
                                                                               indent=2))):
        (tmp_path / name).write_text(text)
        code, _, err = _cli([*INIT, "--sample", name], capsys)
        assert code != 0 and f"{name} holds one JSON array" in err and "jq -c" in err, err
    (tmp_path / "spread.jsonl").write_text("".join(json.dumps(r, indent=2) + "\n"
                                                   for r in recs[:3]))
    code, _, err = _cli([*INIT, "--sample", "spread.jsonl"], capsys)
    assert code != 0 and "spread over several lines" in err, err
    # the replay refuses it too, before reading it as one bad record and no events
    (tmp_path / "p.json").write_text(json.dumps([{"application_id": "a", "ts": 1.7e9}]))
    (tmp_path / "o.jsonl").write_text("")
    src = FileSource(credit_connector("p.json", "o.jsonl", base_dir=tmp_path), credit_schema())
    with pytest.raises(SourceError, match=r"p\.json holds one JSON array"):
        src.poll()
    src.close()
    # a JSON lines file whose first record happens to be bad is a stream like any other
    (tmp_path / "p.json").write_text('[1, 2]\n{"application_id": "a", "ts": 1700000000}\n')
    src = FileSource(credit_connector("p.json", "o.jsonl", base_dir=tmp_path), credit_schema())
    polled = src.poll()
    assert polled is not None and [b.reason for b in polled.bad] == ["not_an_object"]
    src.close()
    # a lone bad line, or "[" before a whole record, is a bad record, not an array dump
    for text in ("[]\n", "[1, {}]\n", '[\n{"application_id": "a", "ts": 1700000000}\n'):
        (tmp_path / "p.json").write_text(text)
        src = FileSource(credit_connector("p.json", "o.jsonl", base_dir=tmp_path),
                         credit_schema())
        polled = src.poll()
        assert polled is not None and len(polled.bad) == 1, text
        src.close()


@pytest.mark.parametrize("repeats", [0, 4, 40])
def test_an_id_with_a_few_repeats_is_still_the_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    repeats: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, repeats=repeats)
    code, out, err = _cli([*INIT, "--sample", "live.jsonl"], capsys)
    if repeats == 0:
        assert code == 0 and "id: uid" in out and "unique in the sample" in out, err
    elif repeats <= 5:  # 1% of 500: a retried request or two
        assert code == 0 and f"unique but for {repeats} repeated value(s)" in out, err
    else:  # not an id: said why the field named like one was passed over
        assert code != 0, err
        assert "uid is named like one, but its values are missing or repeat" in err, err


def test_infinities_constants_and_a_risk_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "invalid value" once reached the user
        code, out, err = _cli([*INIT, "--sample", "live.jsonl"], capsys)
    assert code == 0, err
    assert "score: risk" in out
    assert column_kind(pd.Series([1.0, np.inf, 2.0])) == ("numeric", "numbers")
    assert column_kind(pd.Series([1.0, 1.0])) == ("categorical", "one value only (a constant)")
