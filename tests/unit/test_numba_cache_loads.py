"""numba's cache loads skip the target refresh only compiling needs: a loop compiled in one
process is read back in the next (no compile), gives the same numbers, and a new signature
after such a load still compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

LOOP = '''
import numba
import numpy as np


@numba.njit(cache=True)
def scaled(x):
    out = np.zeros(x.size)  # allocates: the loaded code calls numba's runtime
    s = np.sort(x)
    for i in range(x.size):
        out[i] = s[i] * 2.0 + np.sqrt(abs(s[i]))
    return out
'''

RUN = '''
import json, sys
import numpy as np
from driftwatch.numba_setup import numba_enabled
assert numba_enabled()
from numba.core.caching import Cache
sys.path.insert(0, sys.argv[1])
import loops
out = {"lean": getattr(Cache.load_overload, "_driftwatch_lean", False),
       "ints": loops.scaled(np.array([4, 1, 9], dtype=np.int64)).tolist()}
# the tables only compiling reads (numba's linear algebra among them) are filled or not
out["refreshed"] = "numba.np.linalg" in sys.modules
if sys.argv[2] == "new":
    out["floats"] = loops.scaled(np.array([2.25, -1.0], dtype=np.float32)).tolist()
st = loops.scaled.stats
out["hits"], out["misses"] = sum(st.cache_hits.values()), sum(st.cache_misses.values())
print(json.dumps(out))
'''


def _run(tmp: Path, mode: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp / "cache"), "DRIFTWATCH_KERNEL": "numba",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    res = subprocess.run([sys.executable, "-c", RUN, str(tmp), mode], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_cached_loop_loads_without_compiling_and_a_new_signature_still_compiles(tmp_path):
    (tmp_path / "loops.py").write_text(LOOP)
    ints = [1.0 * 2 + 1.0, 4.0 * 2 + 2.0, 9.0 * 2 + 3.0]  # sorted, 2x + sqrt(x)
    first = _run(tmp_path, "old")
    assert first == {"lean": True, "ints": ints, "refreshed": True, "hits": 0,
                     "misses": 1}
    again = _run(tmp_path, "new")  # int64 read back from the cache, float32 compiled
    assert again == {"lean": True, "ints": ints, "refreshed": False,
                     "floats": [-1.0 * 2 + 1.0, 2.25 * 2 + 1.5], "hits": 1, "misses": 1}


COMPILED_FIRST = '''
import sys
sys.path.insert(0, sys.argv[1])
import compiled_loops  # its loop is compiled before anything asked numba_enabled()
print(compiled_loops.twice(21))
'''

COMPILED_LOOP = '''
from driftwatch.numba_setup import compiled


@compiled()
def twice(x):
    return 2 * x
'''


def test_a_module_of_loops_imported_first_caches_in_the_users_folder(tmp_path):
    """A module of ``@compiled`` loops imported before anything had set numba's cache
    folder cached next to its sources (a package's ``__pycache__``, which an installed
    package may not own); the cache goes to the user's cache folder, as said."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "compiled_loops.py").write_text(COMPILED_LOOP)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), DRIFTWATCH_KERNEL="numba",
               PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    res = subprocess.run([sys.executable, "-c", COMPILED_FIRST, str(tmp_path / "src")],
                         env=env, capture_output=True, text=True, check=True)
    assert res.stdout.strip().splitlines()[-1] == "42"
    beside = list((tmp_path / "src").rglob("*.nbi"))
    assert beside == [], beside
    assert list((tmp_path / "xdg").rglob("compiled_loops.twice*.nbi")), \
        sorted((tmp_path / "xdg").rglob("*"))
