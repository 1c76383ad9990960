"""``replay --execute`` against a tracking store that MLflow refuses or cannot reach: one
line, and soon. Before, a ``file:`` store (MLflow 3 keeps it in maintenance mode) ended in a
traceback through driftwatch, and an unreachable server held the replay for minutes (MLflow's
own client: 120 s a request, 7 retries) before a word."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from driftwatch.cli import main
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.retry import HTTP_RETRIES_ENV, HTTP_TIMEOUT_ENV, RegistryUnavailableError

ROOT = Path(__file__).resolve().parents[2]


def _argv(tmp_path: Path, tracking_uri: str) -> list[str]:
    inputs = []
    for stream, lines in (("predictions", 200), ("outcomes", 20)):
        with gzip.open(ROOT / f"data/demo/{stream}.jsonl.gz", "rt") as fh:
            head = [next(fh) for _ in range(lines)]
        path = tmp_path / f"{stream}.jsonl"
        path.write_text("".join(head))
        inputs.append(f"{stream}={path}")
    return ["replay", "-q", "--connector", "connectors/demo-file.yaml",
            "--policy", "policies/credit-risk-demo.yaml", "--input", *inputs,
            "--out", str(tmp_path / "out"), "--execute", "--tracking-uri", tracking_uri,
            "--champion", "models:/credit-pd@champion"]


def test_a_store_mlflow_refuses_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    assert main(_argv(tmp_path, f"file://{tmp_path / 'mlruns'}")) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: MLflow: The filesystem tracking backend") and \
        err.count("\n") == 1, err


def test_replay_bounds_mlflow_requests_while_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, str | None] = {}

    def unreachable(self: MlflowRegistry, name: str, alias: str) -> None:
        seen.update({k: os.environ.get(k) for k in (HTTP_TIMEOUT_ENV, HTTP_RETRIES_ENV)})
        raise RegistryUnavailableError("alias champion: MLflow unreachable after 3 attempts")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(MlflowRegistry, "by_alias", unreachable)
    monkeypatch.delenv(HTTP_TIMEOUT_ENV, raising=False)
    monkeypatch.delenv(HTTP_RETRIES_ENV, raising=False)
    assert main(_argv(tmp_path, "http://127.0.0.1:9")) == 1
    assert "MLflow unreachable after 3 attempts" in capsys.readouterr().err
    assert seen == {HTTP_TIMEOUT_ENV: "10", HTTP_RETRIES_ENV: "0"}
    assert HTTP_TIMEOUT_ENV not in os.environ and HTTP_RETRIES_ENV not in os.environ  # put back

    seen.clear()  # a bound the user set is theirs
    monkeypatch.setenv(HTTP_TIMEOUT_ENV, "45")
    assert main(_argv(tmp_path, "http://127.0.0.1:9")) == 1
    assert seen == {HTTP_TIMEOUT_ENV: "45", HTTP_RETRIES_ENV: None}
