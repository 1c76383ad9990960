"""The README's command blocks, read as a shell would, and a scratch folder to run them in.

Tests that run the README's commands literally share this, so a README edit and the test
cannot drift apart.

>>> text = "## Tour\\n```sh\\ndriftwatch replay \\\\\\n  --out out\\ndriftwatch list\\n```\\n"
>>> sh_commands(text)
[['driftwatch', 'replay', '--out', 'out'], ['driftwatch', 'list']]
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

__all__ = ["cli_shim", "sh_commands"]


def sh_commands(section: str) -> list[list[str]]:
    """The commands of the first ``sh`` block in ``section``: continuation lines joined,
    each line split like a shell would."""
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    if block is None:
        raise AssertionError("the README section has no sh block")
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def cli_shim(folder: Path) -> Path:
    """Writes ``folder/.venv/bin/driftwatch``, a launcher for this interpreter's
    ``driftwatch.cli``, so commands written for an installed venv run this checkout."""
    exe = folder / ".venv" / "bin" / "driftwatch"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m driftwatch.cli \"$@\"\n")
    exe.chmod(0o755)
    return exe
