"""Recordings for the replay regression tests: the bundled demo, plus scenarios the
generator makes on demand (deterministic: same seed, same bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def scenario_dir(tmp_path_factory: pytest.TempPathFactory):
    """``scenario_dir(name)``: a folder with that generated scenario's files."""
    made: dict[str, Path] = {}

    def make(name: str) -> Path:
        if name == "demo":
            return ROOT / "data" / "demo"
        if name not in made:
            out = tmp_path_factory.mktemp(name)
            write_scenario(name, out, seed=0)
            made[name] = out
        return made[name]

    return make
