"""A policy's ``metadata.owner`` and ``description`` reach the people who read a run:
replay's summary and its report name them (they were parsed and then unused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftwatch.replay import replay
from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]
CONNECTOR = ROOT / "connectors" / "demo-file.yaml"
POLICY = ROOT / "policies" / "credit-risk-demo.yaml"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_scenario("demo", tmp_path_factory.mktemp("rec"), n_events=4_000, days=10,
                          reference_rows=2_000)


def _policy(tmp: Path, owner: str, description: str) -> Path:
    text = POLICY.read_text()
    start, end = text.index("metadata:"), text.index("\nmodel:")
    meta = (f"metadata:\n  name: lending-pd\n  owner: {json.dumps(owner)}\n"
            f"  description: {json.dumps(description)}\n")
    path = tmp / "p.yaml"
    path.write_text(text[:start] + meta + text[end:])
    return path


@pytest.mark.parametrize(("owner", "description"), [
    ("credit-risk-models@bank.example", "PD scorecard for unsecured lending"),
    ("", "  "),
])
def test_the_summary_and_report_name_the_policys_owner(
        recording: dict[str, Path], tmp_path: Path, owner: str, description: str) -> None:
    out = tmp_path / "out"
    replay(CONNECTOR, [recording["predictions"], recording["outcomes"]], out,
           policy=_policy(tmp_path, owner, description), reference=recording["reference"],
           progress=False)
    summary = json.loads((out / "summary.json").read_text())
    html = (out / "report.html").read_text()
    assert summary["policy_name"] == "lending-pd"
    if owner:
        assert (summary["policy_owner"], summary["policy_description"]) == (owner, description)
        assert f"policy owner</th><td>{owner}" in html
        assert f"policy description</th><td>{description}" in html
    else:  # blank: nothing said rather than an empty row
        assert "policy_owner" not in summary and "policy_description" not in summary
        assert "policy owner" not in html and "policy description" not in html
