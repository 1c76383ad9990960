"""Small things ops meet first: make run's port, pool status, stopping with open actions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from driftwatch.cli import main
from driftwatch.clock import SystemClock
from driftwatch.gpupool.pool import GpuPool
from driftwatch.service.actions import open_actions_note

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize(("args", "expected"), [
    (["PORT=9200"], "driftwatch run --port 9200"),
    (["PORT=9200", "ARGS=--exit-when-done"], "driftwatch run --port 9200 --exit-when-done"),
    ([], "driftwatch run"),
])
def test_make_run_passes_a_port_and_options(args: list[str], expected: str) -> None:
    out = subprocess.run(["make", "-n", "-W", "pyproject.toml", "run", *args], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    run = [line for line in out.splitlines() if "driftwatch run" in line]
    assert run and run[-1].split("/bin/", 1)[-1].strip() == expected


def test_pool_status_reads_a_relative_state_folder_and_the_daemons_gpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    GpuPool("state/pool", clock=SystemClock(), gpus=10)  # 10 logical GPUs, as the demo has
    assert main(["pool", "status", "--state-dir", "state", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["capacity"], status["reserved"]) == (10, 2)
    assert main(["pool", "status", "--state-dir", "state", "--reserve-fraction", "0.5"]) == 0
    assert capsys.readouterr().out.startswith("GPUs: 10 in the cluster, 5 reserved")


def test_stopping_with_open_actions_says_which_and_why() -> None:
    rows = [SimpleNamespace(id=i, state="pending") for i in range(1, 13)]
    note = open_actions_note(rows, execute=False, state_dir="state")
    assert note == ("exiting with 12 actions recorded and not run (actions.execute is false): "
                    "ids 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...")
    assert open_actions_note([], execute=True, state_dir="state") is None


def test_compose_services_wait_for_healthy_dependencies() -> None:
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    needed = set()
    for name, svc in services.items():
        deps = svc.get("depends_on", {})
        assert isinstance(deps, dict), f"{name}: depends_on without conditions"
        for dep, how in deps.items():
            assert how == {"condition": "service_healthy"}, (name, dep)
            needed.add(dep)
    assert needed == {"kafka", "mlflow", "driftwatch", "prometheus"}
    for dep in needed:
        check = services[dep]["healthcheck"]
        assert check["test"][0] in ("CMD", "CMD-SHELL") and check["retries"] >= 3, dep
    # each check asks the port its service listens on
    ports = {"kafka": "19092", "mlflow": "5000", "driftwatch": "9108", "prometheus": "9090"}
    for dep, port in ports.items():
        assert port in " ".join(services[dep]["healthcheck"]["test"]), dep
