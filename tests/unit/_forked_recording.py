"""The small demo recording the reader- and judge-process tests replay: 6,000 events over
30 days, with bad records among the good ones (three cut-off lines and one whose time is
not a time), so dead letters and bad-record counts are compared too."""

from __future__ import annotations

from pathlib import Path

from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]
CONNECTOR = ROOT / "connectors" / "demo-file.yaml"
POLICY = ROOT / "policies" / "credit-risk-demo.yaml"


def write_recording(out: Path) -> dict[str, Path]:
    """Write it under ``out``; its paths by role (``predictions``, ``outcomes``,
    ``reference``)."""
    paths = write_scenario("demo", out, n_events=6_000, days=30, reference_rows=3_000,
                           compress=False)
    # bad records among the good ones: they are dead-lettered where they sit
    lines = paths["predictions"].read_bytes().splitlines(keepends=True)
    for at in (5, 2_000, 4_500):
        lines.insert(at, b'{"application_id": "broken", "ts": \n')
    lines.insert(3_000, b'{"application_id": "X1", "ts": "not a time"}\n')
    paths["predictions"].write_bytes(b"".join(lines))
    return paths
