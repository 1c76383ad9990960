"""A champion looked up in a SQLite store whose file was not there says so.

MLflow creates an empty store at any ``sqlite:///`` path, so a mistyped path only said
"no registered model 'credit-pd'", pointing at the model rather than at the path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.errors import ActionError
from driftwatch.registry.bootstrap import require_champion
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.scorers import ChampionRef, ScorerCache


def _lookup(uri: str, cache: Path) -> str:
    reg = MlflowRegistry(uri)
    with pytest.raises(ActionError) as e:
        require_champion(reg, ChampionRef("credit-pd"), ["income"], ScorerCache(reg, cache))
    return str(e.value)


def test_a_missing_store_file_is_named_as_the_likely_mistake(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/typo/mlflow.db"
    msg = _lookup(uri, tmp_path / "c")
    assert "no registered model 'credit-pd'" in msg
    assert "no database file was at that path" in msg and uri in msg
    # the store now exists (MLflow made it): a second start points at the model instead
    again = _lookup(uri, tmp_path / "c")
    assert "no registered model 'credit-pd'" in again
    assert "no database file" not in again
