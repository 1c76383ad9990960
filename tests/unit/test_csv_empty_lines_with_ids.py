"""Empty lines in a CSV stream whose records carry their own id: pyarrow numbers rows as
if the empty lines were not there but skips them as lines when a read resumes, so a bad
row was dead-lettered at the wrong line and a resumed read gave records twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import load_connector
from driftwatch.connectors.file import FileSource
from driftwatch.schema import FeatureSchema

_CONNECTOR = """apiVersion: driftwatch/v1
kind: Connector
metadata: {name: c}
source:
  kind: file
  streams:
    predictions:
      paths: [scored.csv]
      fields:
        event_id: app
        event_time: {source: order}
        score: score
        features: {x: {path: x, type: numeric}}
"""


def _write(folder: Path, n: int, spoiled: list[tuple[int, str]]) -> tuple[list[str], list[int]]:
    """``n`` good rows (ids A1, A2, ...) with empty (``""``, ``"\\r"``) and ragged lines put
    before the good rows ``spoiled`` names; the ids and the lines of the ragged ones."""
    lines = ["app,x,score"] + [f"A{i},{i},0.5" for i in range(1, n + 1)]
    for at, kind in sorted(spoiled, reverse=True):
        lines.insert(1 + min(at, n), {"ragged": "B,1,0.5,extra", "cr": "\r"}.get(kind, ""))
    (folder / "scored.csv").write_text("\n".join(lines) + "\n", newline="")
    (folder / "c.yaml").write_text(_CONNECTOR)
    return [f"A{i}" for i in range(1, n + 1)], [i for i, t in enumerate(lines, 1)
                                                 if t.startswith("B,")]


def _source(folder: Path, batch: int) -> FileSource:
    conn = load_connector(folder / "c.yaml", base_dir=folder)
    return FileSource(conn, FeatureSchema(numeric=("x",)), batch_size=batch, read_ahead=False)


def _read(source: FileSource, batch: int, polls: int | None = None
          ) -> tuple[list[str], list[int], dict[str, int]]:
    ids: list[str] = []
    bad: list[int] = []
    positions: dict[str, int] = {}
    while (polls is None or polls > 0) and (polled := source.poll(batch)) is not None:
        ids += [str(i) for b in polled.batches for i in b.ids]
        bad += [r.position for r in polled.bad]
        positions = polled.positions
        polls = None if polls is None else polls - 1
    return ids, bad, positions


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 40),
       spoiled=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["empty", "cr",
                                                                         "ragged"])),
                        max_size=8),
       batch=st.integers(1, 9), first=st.integers(1, 6))
def test_bad_lines_keep_their_line_and_a_resumed_read_repeats_nothing(
        tmp_path_factory: pytest.TempPathFactory, n: int, spoiled: list[tuple[int, str]],
        batch: int, first: int) -> None:
    folder = tmp_path_factory.mktemp("blank")
    ids, ragged = _write(folder, n, spoiled)
    whole, bad, _ = _read(_source(folder, batch), batch)
    assert whole == ids
    assert sorted(bad) == ragged  # the file's own line numbers, empty lines counted
    # a read stopped after `first` polls and resumed from its positions (a checkpoint)
    head, head_bad, positions = _read(_source(folder, batch), batch, polls=first)
    resumed = _source(folder, batch)
    resumed.seek(positions)
    rest, rest_bad, _ = _read(resumed, batch)
    assert head + rest == ids
    assert sorted(head_bad + rest_bad) == ragged  # each bad line dead-lettered once


def test_a_bad_row_after_two_empty_lines_is_dead_lettered_at_its_line(tmp_path: Path) -> None:
    ids, ragged = _write(tmp_path, 20, [(4, "empty"), (10, "empty"), (17, "ragged")])
    assert ragged == [21]  # header, 17 rows and two empty lines before it
    got, bad, _ = _read(_source(tmp_path, 7), 7)
    assert got == ids and bad == [21]
