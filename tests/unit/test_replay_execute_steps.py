"""``replay --execute`` comes to the same actions whatever the batch size.

The actions stepped once per poll: on a small recording read in one poll (the default
batch of 10,000) a shadow started after every record was read, and ended with '0 of N
labelled outcomes', while a batch of 100 judged it on the outcomes that followed its
window. The actions now step where each window closed in the stream.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import orjson
import pytest

from driftwatch.replay import replay

ROOT = Path(__file__).resolve().parents[2]
START, END = 1708992000, 1712880000  # 2024-02-27 .. 2024-04-12: the demo's moderate episode

POLICY = f"""\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {{name: shadow-steps}}
model:
  name: credit-risk
  reference: {ROOT / "data/demo/reference.parquet"}
  approval_cutoff: 0.25
window: {{kind: count, pane: 200, panes: 2, mode: sliding}}
signals:
  - detector: psi
    features: [income, utilization, debt_to_income, purpose]
    thresholds: {{mild: 0.05, moderate: 0.10, severe: 5.0}}
persistence: {{mild: 1, moderate: 1, severe: 1}}
cooldown: {{mild: 60d, moderate: 60d, severe: 60d}}
actions:
  moderate: {{type: shadow, min_labelled: 100, metric: gini, margin: 0.0,
             max_duration: 60d, require_approval: false}}
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """One application in 12 of the demo's five weeks around its moderate episode (about
    2,400) and their outcomes known by the end (about 800); and the policy."""
    work = tmp_path_factory.mktemp("steps")
    preds, ids = [], set()
    with gzip.open(ROOT / "data/demo/predictions.jsonl.gz") as fh:
        for i, line in enumerate(fh):
            d = orjson.loads(line)
            if START <= d["ts"] < END and i % 12 == 0:
                preds.append(line)
                ids.add(d["application_id"])
    with gzip.open(ROOT / "data/demo/outcomes.jsonl.gz") as fh:
        outs = [line for line in fh if (d := orjson.loads(line))["application_id"] in ids
                and d["outcome_ts"] < END]
    (work / "predictions.jsonl").write_bytes(b"".join(preds))
    (work / "outcomes.jsonl").write_bytes(b"".join(outs))
    (work / "policy.yaml").write_text(POLICY, encoding="utf-8")
    return work / "predictions.jsonl", work / "outcomes.jsonl", work / "policy.yaml"


def _shadows(recording: tuple[Path, Path, Path], out: Path, batch_size: int
             ) -> list[dict[str, Any]]:
    preds, outs, policy = recording
    replay(ROOT / "connectors/demo-file.yaml", [f"predictions={preds}", f"outcomes={outs}"],
           out, policy=policy, batch_size=batch_size, progress=False, report=False,
           execute=True)
    entries = [orjson.loads(line) for line in (out / "actions.jsonl").read_bytes().splitlines()]
    return [e for e in entries if e["action"] == "shadow"]


def test_shadow_verdicts_do_not_depend_on_the_batch_size(recording, tmp_path: Path) -> None:
    whole = _shadows(recording, tmp_path / "whole", 10_000)  # the recording in one poll
    small = _shadows(recording, tmp_path / "small", 100)
    assert whole and len(whole) == len(small)
    for a, b in zip(whole, small, strict=True):
        ma, mb = a["shadow"]["metrics"], b["shadow"]["metrics"]
        assert a["window_id"] == b["window_id"]
        assert ma["challenger"]["labelled"] == mb["challenger"]["labelled"] > 0
        assert ma["challenger"]["live"] == mb["challenger"]["live"] > 0
        assert (a["state"], a["outcome"].get("verdict")) == (b["state"],
                                                             b["outcome"].get("verdict"))
        assert a["outcome"].get("verdict") in ("promoted", "discarded")
        assert ma["challenger"]["gini"] == pytest.approx(mb["challenger"]["gini"], abs=1e-12)
        assert ma["champion"]["gini"] == pytest.approx(mb["champion"]["gini"], abs=1e-12)
