"""The malformed-policy corpus: every file is answered at ``file:line:col`` or with a named
reason, never a traceback, within the caps that bound time and memory.

The corpus (``tests/data/bad_policies``) is written by ``scripts/make_bad_policies.py``;
its manifest holds the expectation of each file, written by hand in that script.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from driftwatch.errors import ConfigError
from driftwatch.policy import check_files
from driftwatch.policy.watcher import MINIMAL
from driftwatch.yamlio import LIMITS, YamlLimits, load_yaml

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "bad_policies"
MANIFEST: dict[str, dict[str, object]] = json.loads((CORPUS / "MANIFEST.json").read_text())


def _generator():
    spec = importlib.util.spec_from_file_location("make_bad_policies",
                                                  ROOT / "scripts" / "make_bad_policies.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()


def test_the_corpus_is_large_and_is_what_the_script_writes(tmp_path: Path) -> None:
    assert len(MANIFEST) >= 80
    files = GEN.write_corpus(tmp_path / "again")
    assert sorted(f.name for f in files) == sorted(MANIFEST)
    for f in files:
        assert f.read_bytes() == (CORPUS / f.name).read_bytes(), f.name


def test_the_corpus_covers_every_kind_of_fault() -> None:
    expected = [str(e["expect"]) for e in MANIFEST.values()]
    for kind, least in (("YAML syntax error", 10), ("expected a finite number", 5),
                        ("out of range", 2), ("lies between", 3),
                        ("not UTF-8 text", 8), ("UTF-16", 2),
                        ("nested deeper than", 5), ("aliases expand", 3),
                        ("too many values", 1), ("unsupported YAML value", 2),
                        ("expected a whole number", 2), ("unknown ", 3)):
        assert sum(kind in e for e in expected) >= least, kind


def _check(path: Path) -> tuple[int, str]:
    err = io.StringIO()
    status = check_files([path], out=io.StringIO(), err=err)
    return status, err.getvalue()


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_each_malformed_policy_is_located_or_named(name: str) -> None:
    path = CORPUS / name
    expected = MANIFEST[name]
    status, err = _check(path)
    assert status == 1
    assert "Traceback" not in err and "internal error" not in err
    assert err.startswith(f"{path}:")
    assert str(expected["expect"]) in err
    if expected["located"]:
        assert re.search(rf"^{re.escape(str(path))}:\d+:\d+: ", err, re.M), err


def test_a_policy_over_the_size_cap_is_refused_by_its_size(tmp_path: Path) -> None:
    big = GEN.oversize(tmp_path / "seven-mb.yaml", 7 * 1024 * 1024)
    status, err = _check(big)
    assert status == 1
    assert err.splitlines()[0] == f"{big}: file too large: 7.0 MiB (the limit is 1.0 MiB)"


def test_the_size_cap_is_exact(tmp_path: Path) -> None:
    at = GEN.oversize(tmp_path / "at.yaml", LIMITS.max_bytes)
    assert at.stat().st_size == LIMITS.max_bytes
    assert load_yaml(at).data["kind"] == "DriftPolicy"
    over = GEN.oversize(tmp_path / "over.yaml", LIMITS.max_bytes + 1)
    with pytest.raises(ConfigError, match="file too large"):
        load_yaml(over)
    with pytest.raises(ConfigError, match="file too large"):
        load_yaml(over.read_bytes(), file="over.yaml")


def test_a_sparse_file_of_many_gigabytes_is_refused_without_being_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as fh:
        fh.truncate(64 * 1024**3)  # reading it would take minutes and 64 GiB
    with pytest.raises(ConfigError, match=r"file too large: 65536\.0 MiB"):
        load_yaml(huge)


def _nested(depth: int) -> str:
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


def test_the_depth_cap_is_exact() -> None:
    load_yaml(_nested(LIMITS.max_depth))
    with pytest.raises(ConfigError, match=f"nested deeper than {LIMITS.max_depth} levels"):
        load_yaml(_nested(LIMITS.max_depth + 1))


def test_the_alias_expansion_cap_is_exact() -> None:
    text = "a: &x [1, 2, 3]\nb: [*x, *x]\n"  # 1 + 4 + 1 + 2 * 4 values once expanded
    assert load_yaml(text, limits=YamlLimits(max_nodes=14)).data["b"] == [[1, 2, 3]] * 2
    with pytest.raises(ConfigError, match="aliases expand to more than 13 values"):
        load_yaml(text, limits=YamlLimits(max_nodes=13))


def test_the_value_count_cap_stops_before_building_the_tree() -> None:
    text = "a: [" + ", ".join(["0"] * 20) + "]\n"
    with pytest.raises(ConfigError, match="too many values: more than 10") as info:
        load_yaml(text, limits=YamlLimits(max_nodes=10))
    # the 11th: the mapping, its key, the list and eight zeros (col 5 + 7 * 3)
    assert (info.value.line, info.value.col) == (1, 26)


def test_a_valid_policy_with_anchors_still_loads() -> None:
    text = MINIMAL.replace("thresholds: {mild: 0.1, moderate: 0.25, severe: 0.5}",
                           "thresholds: &t {mild: 0.1, moderate: 0.25, severe: 0.5}")
    text += "  - detector: js\n    thresholds: *t\n"
    data = load_yaml(text).data
    assert data["signals"][1]["thresholds"] == {"mild": 0.1, "moderate": 0.25, "severe": 0.5}


#: ``policy check`` in a child that writes its own peak RSS (``VmHWM``: the high-water mark of
#: this program's memory; ``ru_maxrss`` would include the forked test process's pages).
_CHECK_AND_MEASURE = """
import re, sys
from driftwatch.cli import main
rc = main(["policy", "check", *sys.argv[2:]])
status = open("/proc/self/status").read()
open(sys.argv[1], "w").write(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
sys.exit(rc)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_policy_check_of_the_whole_corpus_stays_under_200_mb(tmp_path: Path) -> None:
    """One process checks every file (and a 7 MB one): its peak RSS bounds each check's."""
    files = [str(CORPUS / n) for n in sorted(MANIFEST)]
    files.append(str(GEN.oversize(tmp_path / "big.yaml", 7 * 1024 * 1024)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    peak = tmp_path / "peak_kib"
    proc = subprocess.run([sys.executable, "-c", _CHECK_AND_MEASURE, str(peak), *files],
                          capture_output=True, env=env, cwd=ROOT, check=False)
    text = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, text[-2000:]
    assert "Traceback" not in text
    for f in files:
        assert re.search(rf"^{re.escape(f)}:", text, re.M), f
    assert int(peak.read_text()) < 200 * 1024
