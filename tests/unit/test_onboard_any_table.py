"""Fuzz: whatever table a user brings, ``init`` -> ``policy check`` -> ``replay`` never crashes.

Hypothesis draws a user's data (see :mod:`tests.unit._usertables`: row counts down to none,
1 to 30 columns of every kind people send, odd column names, id/time/score/label spellings,
CSV with three separators, JSON lines (gzip too), Parquet, a few of init's flags) and
drives the command line in this process. The invariant: each command succeeds or exits
non-zero with an ``error:`` line and no Python exception text; where ``init`` succeeds,
``policy check`` and ``policy explain`` pass on what it wrote and ``replay`` of the drifted
stream completes.

The run is derandomised and keeps no example database, so CI sees the same examples each
time; ``DRIFTWATCH_FUZZ_EXAMPLES=500`` with ``DRIFTWATCH_FUZZ_RANDOM=1`` hunts wider.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings

from ._cli import run_cli
from ._usertables import UserData, user_data, write_user_data

EXAMPLES = int(os.environ.get("DRIFTWATCH_FUZZ_EXAMPLES", "40"))
RANDOM = os.environ.get("DRIFTWATCH_FUZZ_RANDOM") == "1"
SLOW_S = 60.0  # one command on a few hundred rows: far slower than this is a hang
# what Python or a library says, not driftwatch: a traceback, an exception class, a repr,
# pandas' CSV tokenizer
PYTHON_TEXT = re.compile(r"Traceback|\b[A-Z]\w*(Error|Exception)\b|<class |object at 0x|"
                         r"C error|Error tokenizing")


def _command(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    t0 = time.monotonic()
    code, out, err = run_cli(args, capsys)
    assert time.monotonic() - t0 < SLOW_S, f"{args[0]} took {time.monotonic() - t0:.0f} s"
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        first = [i for i, line in enumerate(lines) if line.startswith("error: ")]
        # one error line; what follows it is an indented hint
        assert len(first) == 1, (args[0], code, err)
        assert all(line[:1].isspace() for line in lines[first[0] + 1:]), (args[0], err)
        assert not PYTHON_TEXT.search(err), (args[0], err)
    return code, out + err


def _why(said: str, tmp: Path) -> str:
    """The gist of init's refusal, for the statistics: its error line's words."""
    line = next((x for x in said.splitlines() if x.startswith("error: ")), "")
    return re.sub(r"\S*" + re.escape(tmp.name) + r"\S*", "FILE", line)[7:60]


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(u=user_data())
def test_any_user_table_onboards_or_says_why(
        u: UserData, tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str]) -> None:
    tmp = tmp_path_factory.mktemp("user")
    paths = write_user_data(u, tmp)
    conn, pol, out = tmp / "c.yaml", tmp / "p.yaml", tmp / "out"
    code, said = _command(["init", "--reference", str(paths["reference"]), "--sample",
                           str(paths["sample"]), "--outcomes", str(paths["outcomes"]),
                           "--model", "fuzz", "--connector-out", str(conn),
                           "--policy-out", str(pol), *u.flags], capsys)
    if code != 0:
        event("init refused: " + _why(said, tmp))
        return
    code, said = _command(["policy", "check", "--connector", str(conn), str(pol)], capsys)
    assert code == 0, said
    code, said = _command(["policy", "explain", str(pol)], capsys)
    assert code == 0, said
    code, said = _command(["replay", "--connector", str(conn), "--policy", str(pol),
                           "--input", f"predictions={paths['stream']}",
                           f"outcomes={paths['stream_outcomes']}",
                           "--out", str(out)], capsys)
    assert code == 0, said
    assert (out / "timeline.jsonl").exists()
    event("replayed")


