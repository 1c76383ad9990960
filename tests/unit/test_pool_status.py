"""``driftwatch pool status``: the pool's own view from its state folder, relative or not,
with the GPUs and share taken from the flags or the service configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftwatch.cli import main
from driftwatch.clock import ManualClock
from driftwatch.gpupool import GpuPool, JobSpec


def test_pool_status_reads_an_absent_pool_as_idle(tmp_path: Path, capsys):
    assert main(["pool", "status", "--gpus", "10", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "10 in the cluster, 2 reserved (8, 9)" in out and "0 running" in out


def test_pool_status_shows_the_daemons_queue(tmp_path: Path, capsys):
    pool = GpuPool(tmp_path / "pool", clock=ManualClock(0.0), gpus=10)
    pool.submit(JobSpec(name="retrain-credit", argv=["python", "job.py"]), key="credit:severe:1")
    pool.close()
    assert main(["pool", "status", "--gpus", "10", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 queued" in out and "key=credit:severe:1" in out


def test_pool_status_takes_a_relative_folder_and_the_configs_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    pool = GpuPool(tmp_path / "state" / "pool", clock=ManualClock(0.0), gpus=4)
    pool.submit(JobSpec(name="retrain-fraud", argv=["python", "job.py"]))
    pool.close()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "svc.yaml").write_text(
        "models: [{connector: c.yaml, policy: p.yaml}]\nstate_dir: ../state\n"
        "pool: {gpus: 20, reserve_fraction: 0.25}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["pool", "status", "--state-dir", "state", "--gpus", "4"]) == 0
    assert "4 in the cluster, 1 reserved (3)" in capsys.readouterr().out
    assert main(["pool", "status", "--config", "conf/svc.yaml", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["capacity"], doc["reserved"], doc["queued"]) == (20, 5, 1)
    assert "ray" not in doc  # the local backend has no view of its own
