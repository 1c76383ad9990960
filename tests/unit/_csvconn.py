"""A one-stream connector written inline, for the reading tests (CSV and others)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from driftwatch.connectors.config import Connector, parse_connector
from driftwatch.connectors.file import FileSource
from driftwatch.schema import FeatureSchema

__all__ = ["csv_connector", "one_stream", "read_batches"]


def one_stream(path: str, fields: tuple[str, ...], *stream_lines: str) -> str:
    """The text of a connector whose one ``predictions`` stream reads ``path``, with
    ``stream_lines`` (``format: csv``, ...) after its ``paths:`` line and ``fields`` (one
    line each, nested lines indented further by the caller) under ``fields:``."""
    lines = "".join(f"      {line}\n" for line in stream_lines)
    body = "".join(f"        {f}\n" for f in fields)
    return ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\nsource:\n"
            f"  kind: file\n  streams:\n    predictions:\n      paths: ['{path}']\n{lines}"
            f"      fields:\n{body}")


def csv_connector(tmp: Path, path: str, csv_line: str = "", *, fmt: str = "csv",
                  fields: tuple[str, ...]) -> Connector:
    """A ``predictions`` stream reading ``path`` in format ``fmt``; ``csv_line`` (e.g.
    ``csv: {delimiter: ";"}``) is line 10 of ``t.yaml``, ``fields`` its field lines."""
    text = one_stream(path, fields, f"format: {fmt}", csv_line)
    return parse_connector(text, file="t.yaml", base_dir=tmp)


def read_batches(tmp: Path, name: str, schema: FeatureSchema) -> tuple[list, list]:
    """Every batch a stream of ``id, ts, x, cat, score`` in ``name`` reads into (as lists),
    and its bad records' reasons and positions."""
    conn = csv_connector(tmp, name, fmt="auto", fields=(
        "event_id: id", "event_time: {path: ts, unit: s}",
        "features: {x: {path: x, type: numeric}, cat: {path: cat, type: categorical}}",
        "score: score"))
    src = FileSource(conn, schema, batch_size=7, read_ahead=False)
    batches, bad = [], []
    while (polled := src.poll()) is not None:
        for b in polled.batches:
            batches.append((b.ids.tolist(), b.event_time.tolist(),
                            np.nan_to_num(b.numeric, nan=-9.5).tolist(),
                            b.categorical.tolist(), b.score.tolist(), b.position.tolist()))
        bad += [(r.reason, r.position) for r in polled.bad]
    src.close()
    return batches, bad
