"""The README's "Monitor your own model" commands, run literally, so the README cannot drift.

The commands are taken from the section's ``sh`` block as written (continuation lines
joined, split like a shell would), run in a scratch folder that has the repository's
``data/`` and a ``.venv/bin/driftwatch`` that runs this checkout's command line.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import yaml

from driftwatch.testing.readme import cli_shim, sh_commands

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Monitor your own model\n", 1)[1].split("\n## ", 1)[0]
    return sh_commands(section)


def test_the_commands_are_init_check_replay():
    cmds = readme_commands()
    assert [c[:2] for c in cmds] == [[".venv/bin/driftwatch", "init"],
                                     [".venv/bin/driftwatch", "policy"],
                                     [".venv/bin/driftwatch", "replay"]]


def test_the_readme_commands_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(ROOT / "data")
    cli_shim(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for cmd in readme_commands():
        res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600, check=False)
        assert res.returncode == 0, (cmd, res.stdout, res.stderr)
        outputs.append(res.stdout)
    init_out, check_out, replay_out = outputs
    assert "event time: ts" in init_out and "wrote out/my-model/connector.yaml" in init_out
    assert check_out == "ok out/my-model/policy.yaml\n"
    assert "model my-model: 90000 events" in replay_out
    out = tmp_path / "out" / "my-model"
    assert (out / "report.html").stat().st_size > 0
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["labels"]["joined"] > 0 and summary["bad_records"] == 0
    policy = yaml.safe_load((out / "policy.yaml").read_text())
    assert len(policy["model"]["features"]) == 10
    # the excerpt of init's output the README shows is what init prints
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = text.split("`init` prints one line per decision and why:\n\n```\n", 1)[1]
    for line in shown.split("```", 1)[0].splitlines():
        if line != "...":
            assert line in init_out.splitlines(), line
