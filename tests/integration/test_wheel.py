"""The built wheel alone is enough: installed into a fresh venv, it replays the demo.

The wheel is built from a copy of the package's sources (no build isolation, no index:
nothing is downloaded) and installed without dependencies into a new venv that sees the
running interpreter's site-packages only as a plain path, for numpy, pandas and the rest.
A plain path does not run that folder's ``.pth`` files, so an editable install of the
checkout there stays inert; the commands then run from a folder outside the checkout,
without PYTHONPATH, and the test checks that ``driftwatch`` was imported from the venv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import orjson
import pytest

from driftwatch.replay import replay

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("driftwatch", "data/demo", "connectors", "policies", "examples",
           "pyproject.toml", "setup.py", "README.md", "LICENSE")


def _run(argv: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, "building without isolation needs setuptools>=77 (the dev extra)"
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for rel in SOURCES:
        s, d = ROOT / rel, src / rel
        if s.is_dir():
            shutil.copytree(s, d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, d)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", tmp / "dist", src], tmp, env)
    (wheel,) = (tmp / "dist").glob("driftwatch-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"], tmp, env)
    py = tmp / "venv" / "bin" / "python"
    purelib = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   tmp, env).stdout.strip()
    (Path(purelib) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], tmp, env)
    work = tmp / "work"
    work.mkdir()
    return tmp / "venv", env, work


def test_wheel_alone_replays_the_demo(venv: tuple[Path, dict[str, str], Path],
                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, env, work = venv
    where = _run([root / "bin" / "python", "-c",
                  "import driftwatch, driftwatch.bundled as b; "
                  "print(driftwatch.__file__); print(b.bundled_path('demo'))"], work, env)
    module, demo = where.stdout.split()
    assert Path(module).is_relative_to(root) and Path(demo).is_relative_to(root)
    assert not Path(module).is_relative_to(ROOT)

    proc = _run([root / "bin" / "driftwatch", "demo", "--out", "out", "-q"], work, env)
    assert "model credit-risk: 90000 events, 60393 outcomes, 0 bad records, 90 windows" \
        in proc.stdout
    assert "wrote out/timeline.jsonl, out/summary.json, out/report.html" in proc.stdout
    summary = orjson.loads((work / "out" / "summary.json").read_bytes())
    assert (summary["windows"], summary["events"]) == (90, 90000)
    html = (work / "out" / "report.html").read_text(encoding="utf-8")
    assert "credit-risk" in html and "utilization" in html

    # the README's replay of the checkout (relative paths, so reasons name the policy
    # alike) gives the same timeline, byte for byte: one pipeline
    monkeypatch.chdir(ROOT)
    replay("connectors/demo-file.yaml",
           ["data/demo/predictions.jsonl.gz", "data/demo/outcomes.jsonl.gz"],
           tmp_path / "checkout", policy="policies/credit-risk-demo.yaml",
           progress=False, report=False)
    assert (work / "out" / "timeline.jsonl").read_bytes() == \
        (tmp_path / "checkout" / "timeline.jsonl").read_bytes()


def test_wheel_writes_the_examples(venv: tuple[Path, dict[str, str], Path]) -> None:
    root, env, work = venv
    proc = _run([root / "bin" / "driftwatch", "examples", "mine", "--with-data"], work, env)
    assert "wrote mine/policies/credit-risk-demo.yaml" in proc.stdout
    for rel in ("connectors/demo-file.yaml", "policies/template.yaml",
                "examples/retrain_job.py", "data/demo/reference.parquet"):
        assert (work / "mine" / rel).is_file(), rel
    _run([root / "bin" / "driftwatch", "policy", "check", "policies/credit-risk-demo.yaml"],
         work / "mine", env)
