"""A CSV saved with semicolons (or tabs, or pipes) is refused with the reason wherever a
CSV is read, instead of reading as one column and failing later for a reason that hides
the cause ("cannot find the id field", every record missing its fields)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.cli import main
from driftwatch.connectors.file import FileSource
from driftwatch.errors import SourceError
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.windows.profile import read_reference_table


def _frames(n: int = 200) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    ref = pd.DataFrame({"income": rng.normal(3000, 500, n).round(2),
                        "score": rng.uniform(size=n).round(3),
                        "default": rng.integers(0, 2, n)})
    live = ref.drop(columns=["default"]).copy()
    live.insert(0, "id", range(n))
    live.insert(1, "ts", 1.75e9 + np.arange(n) * 10)
    return ref, live


@pytest.mark.parametrize(("sep", "word"), [(";", "semicolon"), ("\t", "tab"), ("|", "pipe")])
def test_init_names_the_separator_of_the_reference_and_of_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    sep: str, word: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    ref, live = _frames()
    ref.to_csv("ref_other.csv", sep=sep, index=False)
    ref.to_csv("ref.csv", index=False)
    live.to_csv("live.csv", sep=sep, index=False)
    base = ["init", "--model", "m", "--connector-out", "c.yaml", "--policy-out", "p.yaml"]
    for reference, culprit in (("ref_other.csv", "reference dataset ref_other.csv"),
                               ("ref.csv", "the sample live.csv")):
        code = main([*base, "--reference", reference, "--sample", "live.csv"])
        err = capsys.readouterr().err
        assert code != 0 and "Traceback" not in err
        assert f"{culprit} looks {word}-separated" in err, err
    with pytest.raises(SourceError, match=f"looks {word}-separated"):
        read_reference_table("ref_other.csv")


def test_a_replayed_csv_with_semicolons_is_refused_not_dead_lettered_row_by_row(
    tmp_path: Path,
) -> None:
    _, live = _frames()
    live.rename(columns={"id": "application_id", "score": "model.score"}).to_csv(
        tmp_path / "p.csv", sep=";", index=False)
    (tmp_path / "o.csv").write_text("application_id,outcome_ts,defaulted\n")
    src = FileSource(credit_connector("p.csv", "o.csv", base_dir=tmp_path), credit_schema())
    with pytest.raises(SourceError, match=r"p\.csv looks semicolon-separated"):
        src.poll()
    src.close()
    # a comma-separated file with semicolons inside a value is read as ever
    (tmp_path / "p.csv").write_text('application_id,ts,model.score\n"a;b",1750000000,0.5\n')
    src = FileSource(credit_connector("p.csv", "o.csv", base_dir=tmp_path), credit_schema())
    polled = src.poll()
    assert polled is not None and polled.batches[0].ids.tolist() == ["a;b"]
    src.close()
