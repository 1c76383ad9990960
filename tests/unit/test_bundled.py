"""Bundled files (``driftwatch.bundled``), ``driftwatch examples`` and the built-in config."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.bundled import KINDS, bundle_root, bundled_path, write_examples
from driftwatch.cli import main
from driftwatch.connectors.config import load_connector
from driftwatch.errors import ConfigError
from driftwatch.policy.loader import load_policy

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_paths_are_the_checkout_folders_here() -> None:
    assert bundle_root() == ROOT
    for kind, rel in KINDS.items():
        assert bundled_path(kind) == ROOT / rel
    names = {p.name for p in bundled_path("demo").iterdir()}
    assert {"predictions.jsonl.gz", "outcomes.jsonl.gz", "reference.parquet"} <= names
    with pytest.raises(LookupError, match="kinds: connectors, demo, examples, policies"):
        bundled_path("grafana")


def test_write_examples_copies_connectors_policies_and_job(tmp_path: Path) -> None:
    written = write_examples(tmp_path / "new")
    rel = sorted(p.relative_to(tmp_path / "new").as_posix() for p in written)
    assert "connectors/demo-file.yaml" in rel
    assert "policies/template.yaml" in rel and "policies/credit-risk-demo.yaml" in rel
    assert "examples/retrain_job.py" in rel
    assert not any(r.startswith("data/") for r in rel)
    for p in written:
        assert p.read_bytes() == (ROOT / p.relative_to(tmp_path / "new")).read_bytes()
    # what was written loads as it does in the checkout
    assert load_policy(tmp_path / "new" / "policies" / "credit-risk-demo.yaml").model.name
    assert load_connector(tmp_path / "new" / "connectors" / "demo-file.yaml").kind == "file"


def test_write_examples_with_data_makes_a_runnable_demo_folder(tmp_path: Path) -> None:
    written = write_examples(tmp_path, with_data=True)
    assert (tmp_path / "data" / "demo" / "reference.parquet") in written
    policy = load_policy(tmp_path / "policies" / "credit-risk-demo.yaml")
    assert (tmp_path / str(policy.model.reference)).is_file()


def test_write_examples_never_overwrites(tmp_path: Path) -> None:
    mine = tmp_path / "policies" / "template.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own policy\n")
    with pytest.raises(ConfigError) as err:
        write_examples(tmp_path)
    assert str(err.value).startswith(f"{mine}: already exists; nothing written")
    assert mine.read_text() == "my own policy\n"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["template.yaml"]


def test_examples_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "ex"
    assert main(["examples", str(dest)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {dest / 'connectors' / 'demo-file.yaml'}" in out
    assert main(["examples", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "already exists (and" in err and "Traceback" not in err


def test_run_outside_a_checkout_says_how_to_get_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--exit-when-done"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        "error: <default>: the built-in configuration runs the demo from the working "
        "directory, which has no connectors/demo-file.yaml")
    assert "driftwatch examples . --with-data" in err
    assert not (tmp_path / "state").exists()
