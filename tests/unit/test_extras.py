"""A core install (no extras): commands that need Kafka or MLflow name the extra, no traceback.

The commands run in a child interpreter where ``kafka``, ``mlflow`` and ``ray`` cannot be
imported (``sys.modules[name] = None`` makes every import of them fail), as on a machine
where ``pip install driftwatch`` installed no extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from driftwatch.errors import DriftwatchError, MissingExtraError
from driftwatch.extras import missing_extra

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import contextlib, io, json, sys
for name in ("kafka", "mlflow", "ray"):
    sys.modules[name] = None
from driftwatch.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    out.append([rc, err.getvalue()])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def core_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    tmp = tmp_path_factory.mktemp("core")
    kafka_cfg = tmp / "kafka.yaml"
    kafka_cfg.write_text(
        "models:\n"
        f"  - connector: {ROOT / 'connectors' / 'demo-kafka.yaml'}\n"
        f"    policy: {ROOT / 'policies' / 'credit-risk-demo.yaml'}\n"
        f"    reference: {ROOT / 'data' / 'demo' / 'reference.parquet'}\n"
        "actions: {execute: false}\n"
        "http: {port: 0}\n"
        f"state_dir: {tmp / 'state-kafka'}\n"
    )
    demo = ["-i", "data/demo/predictions.jsonl.gz", "data/demo/outcomes.jsonl.gz"]
    commands = {
        "run": ["run", "--state-dir", str(tmp / "state"), "--port", "0", "--exit-when-done"],
        "run_kafka": ["run", "--config", str(kafka_cfg), "--exit-when-done"],
        "replay_execute": ["replay", "--execute", "-q", "-c", "connectors/demo-file.yaml",
                           "-p", "policies/credit-risk-demo.yaml", *demo,
                           "-o", str(tmp / "exec")],
        "record": ["record", "-c", "connectors/demo-kafka.yaml", "--stream", "predictions",
                   "--out", str(tmp / "rec.jsonl"), "--idle-timeout", "1"],
        "produce": ["produce", "-c", "connectors/demo-kafka.yaml",
                    "-i", "data/demo/outcomes.jsonl.gz"],
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(list(commands.values()))],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.splitlines()[-1])
    return {name: (rc, err) for name, (rc, err) in zip(commands, results, strict=True)}


@pytest.mark.parametrize(
    ("command", "extra"),
    [("run", "mlflow"), ("run_kafka", "kafka"), ("replay_execute", "mlflow"),
     ("record", "kafka"), ("produce", "kafka")],
)
def test_missing_extra_is_named_without_a_traceback(
    core_results: dict[str, tuple[int, str]], command: str, extra: str
) -> None:
    rc, err = core_results[command]
    assert rc == 1
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert f"pip install 'driftwatch[{extra}]'" in err
    assert "Traceback" not in err


def test_missing_extra_maps_modules_to_extras() -> None:
    err = missing_extra(ModuleNotFoundError("No module named 'kafka.admin'", name="kafka.admin"))
    assert isinstance(err, MissingExtraError) and isinstance(err, DriftwatchError)
    assert isinstance(err, ModuleNotFoundError) and err.name == "kafka"
    assert str(err) == "kafka is not installed: pip install 'driftwatch[kafka]'"
    said = ModuleNotFoundError("the ray GPU pool backend needs Ray: pip install 'driftwatch[ray]'",
                               name="ray")
    assert str(missing_extra(said)) == str(said)
    assert missing_extra(ModuleNotFoundError("No module named 'numpyy'", name="numpyy")) is None
