"""A failed model download is an outage when the server is gone, a failure when it is not.

MLflow reports an artifact store it cannot reach as "failed to download artifacts from
path 'model'" (a missing path); the scorer cache asks the server for the version to tell
the two apart, so an online update interrupted by an outage backs off instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mlflow.artifacts
import pytest
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST

from driftwatch.registry.retry import RegistryUnavailableError, Retry
from driftwatch.registry.scorers import ScorerCache


@dataclass
class _Client:
    server_up: bool

    def get_model_version_download_uri(self, name: str, version: str) -> str:
        return f"models:/{name}/{version}"

    def get_model_version(self, name: str, version: str) -> Any:
        if not self.server_up:
            raise ConnectionRefusedError("connection refused")
        return object()


@dataclass
class _Registry:
    client: _Client
    tracking_uri: str = "http://127.0.0.1:9"
    retry: Retry = field(default_factory=lambda: Retry(attempts=2, sleep=lambda s: None))


def _missing_path(**_: Any) -> str:
    raise MlflowException("Failed to download artifacts from path 'model', please ensure "
                          "that the path is correct.", error_code=RESOURCE_DOES_NOT_EXIST)


@pytest.mark.parametrize(("server_up", "raised", "says"), [
    (False, RegistryUnavailableError, "download credit-risk v3: MLflow unreachable"),
    (True, MlflowException, "Failed to download artifacts from path 'model'"),
])
def test_a_download_that_fails_is_an_outage_only_while_the_server_is_down(
        tmp_path, monkeypatch, server_up, raised, says) -> None:
    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", _missing_path)
    cache = ScorerCache(_Registry(_Client(server_up)), tmp_path)
    with pytest.raises(raised) as info:
        cache.get("credit-risk", 3)
    assert says in str(info.value)


def test_a_server_shutting_down_that_still_answers_the_check_gets_a_second_download(
        tmp_path, monkeypatch) -> None:
    """Its artifacts stopped being served before its API did: the version check succeeds,
    so the download is tried again before the path counts as missing (seen in the MLflow
    outage test: an online update failed for good during a kill)."""
    tries: list[str] = []

    def flaky(**kw: Any) -> str:
        tries.append(kw["dst_path"])
        if len(tries) == 1:
            _missing_path()
        return kw["dst_path"]

    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", flaky)
    slept: list[float] = []
    reg = _Registry(_Client(server_up=True), retry=Retry(attempts=2, sleep=slept.append))
    cache = ScorerCache(reg, tmp_path)
    assert cache._fetch("credit-risk", "3", "models:/credit-risk/3", tmp_path) == str(tmp_path)
    assert len(tries) == 2 and slept == [reg.retry.base_delay]


def test_a_path_missing_twice_while_the_server_answers_fails(tmp_path, monkeypatch) -> None:
    tries: list[int] = []

    def missing(**kw: Any) -> str:
        tries.append(1)
        return _missing_path()

    monkeypatch.setattr(mlflow.artifacts, "download_artifacts", missing)
    cache = ScorerCache(_Registry(_Client(server_up=True)), tmp_path)
    with pytest.raises(MlflowException, match="Failed to download artifacts"):
        cache._fetch("credit-risk", "3", "models:/credit-risk/3", tmp_path)
    assert len(tries) == 2
