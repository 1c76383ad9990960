"""A one-stream CSV connector written inline, for the CSV reading tests."""

from __future__ import annotations

from pathlib import Path

from driftwatch.connectors.config import Connector, parse_connector

__all__ = ["csv_connector"]


def csv_connector(tmp: Path, path: str, csv_line: str = "", *, fmt: str = "csv",
                  fields: tuple[str, ...]) -> Connector:
    """A ``predictions`` stream reading ``path`` in format ``fmt``; ``csv_line`` (e.g.
    ``csv: {delimiter: ";"}``) is line 10 of ``t.yaml``, ``fields`` its field lines."""
    body = "\n        ".join(fields)
    text = f"""apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: t}}
source:
  kind: file
  streams:
    predictions:
      paths: ['{path}']
      format: {fmt}
      {csv_line}
      fields:
        {body}
"""
    return parse_connector(text, file="t.yaml", base_dir=tmp)
