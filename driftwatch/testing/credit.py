"""The synthetic credit stream's connector and feature schema, for tests and examples.

>>> c = credit_connector("p.jsonl", "o.jsonl")
>>> [s.name for s in c.streams], credit_schema().n_numeric
(['predictions', 'outcomes'], 7)
"""

from __future__ import annotations

from pathlib import Path

from driftwatch.connectors.config import Connector, parse_connector
from driftwatch.schema import FeatureSchema
from driftwatch.testing.generator import (
    CATEGORICAL,
    EMPLOYMENT,
    FEATURE_PATHS,
    HOME,
    NUMERIC,
    PURPOSES,
)

__all__ = ["credit_connector", "credit_connector_yaml", "credit_schema"]


def credit_schema() -> FeatureSchema:
    """The stream's features with every generated level (no reference profile needed)."""
    return FeatureSchema(numeric=NUMERIC, categorical=CATEGORICAL,
                         levels=(PURPOSES, HOME, EMPLOYMENT))  # fmt: skip


def credit_connector_yaml(
    predictions: str | Path | None,
    outcomes: str | Path | None,
    *,
    fmt: str = "auto",
    topics: tuple[str, str] | None = None,
    time_unit: str = "s",
) -> str:
    """Connector YAML for the generator's messages (``paths`` omitted where ``None``)."""
    feats = "\n".join(
        f"          {n}: {{path: {FEATURE_PATHS[n]}, type: "
        f"{'numeric' if n in NUMERIC else 'categorical'}}}"
        for n in NUMERIC + CATEGORICAL
    )

    def head(name: str, path: str | Path | None, topic: str | None) -> str:
        lines = [f"    {name}:", f"      format: {fmt}"]
        if path is not None:
            lines.append(f"      paths: ['{path}']")
        if topic is not None:
            lines.append(f"      topic: {topic}")
        return "\n".join(lines)

    t_pred, t_out = topics or (None, None)
    return f"""apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: credit-test}}
source:
  kind: file
  streams:
{head("predictions", predictions, t_pred)}
      fields:
        event_id: application_id
        event_time: {{path: ts, unit: {time_unit}}}
        features:
{feats}
        score: model.score
        model_version: model.version
        decision: {{path: decision, approve: [approve]}}
        segment: channel
        exposure: loan.amount
        metrics: {{revenue: loan.fee}}
{head("outcomes", outcomes, t_out)}
      fields:
        event_id: application_id
        event_time: {{path: outcome_ts, unit: {time_unit}}}
        label: {{path: defaulted, bad: [1, true], good: [0, false]}}
dead_letter: {{path: dead_letter.jsonl}}
"""


def credit_connector(
    predictions: str | Path | None,
    outcomes: str | Path | None,
    *,
    base_dir: str | Path | None = None,
    **kwargs: object,
) -> Connector:
    """The parsed connector of :func:`credit_connector_yaml`."""
    text = credit_connector_yaml(predictions, outcomes, **kwargs)  # type: ignore[arg-type]
    return parse_connector(text, file="credit-test.yaml", base_dir=base_dir)
