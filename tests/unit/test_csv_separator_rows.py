"""A separator's header with a comma inside a name, and a ragged CSV, said in words.

Found by the onboarding fuzz (test_onboard_any_table): a tab- or semicolon-separated table
with a column named ``a,b`` has a header that splits on commas, so every reader took commas
and pandas stopped with "Error tokenizing data. C error: Expected 2 fields in line 21,
saw 3", its own words, about a file that is well formed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.csvsep import file_separator
from driftwatch.errors import SourceError
from driftwatch.schema import FeatureSchema
from driftwatch.windows.profile import read_reference_table

from ._csvconn import read_batches


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_name_with_a_comma_does_not_make_a_file_comma_separated(
        tmp_path: Path, sep: str) -> None:
    head = sep.join(["id", "ts", "x", "cat", "a,b", "score"])
    rows = [sep.join([str(i), str(1_700_000_000 + i), f"{i}.5", "c,d" if i % 2 else "e",
                      "1,5", "0.25"]) for i in range(30)]
    (tmp_path / "t.csv").write_text("\n".join([head, *rows]) + "\n")
    assert file_separator(tmp_path / "t.csv") == sep
    ref = read_reference_table(tmp_path / "t.csv")
    assert list(ref.columns) == ["id", "ts", "x", "cat", "a,b", "score"]
    assert ref["cat"].tolist()[:2] == ["e", "c,d"]
    schema = FeatureSchema(numeric=("x",), categorical=("cat",))
    batches, bad = read_batches(tmp_path, "t.csv", schema)
    assert bad == []
    assert sum(len(b[0]) for b in batches) == 30
    assert batches[0][2][1] == [1.5]


def test_a_comma_file_stays_comma_separated(tmp_path: Path) -> None:
    # a semicolon in a name and in values: the comma fits every row, so it stays
    (tmp_path / "t.csv").write_text("id,a;b\n1,x;y\n2,z\n")
    assert file_separator(tmp_path / "t.csv") == ","


def test_a_ragged_csv_says_which_line_in_words(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("x,y\n1,2\n3,4,5\n")
    with pytest.raises(SourceError) as info:
        read_reference_table(tmp_path / "r.csv")
    msg = str(info.value)
    assert ("r.csv:3: a ragged row: 3 fields where the header has 2, read with comma as the "
            "separator ('3,4,5')") in msg, msg
    assert "C error" not in msg
