"""The label join's loops loaded ahead (:mod:`driftwatch.pipeline.loadahead`) are loaded
with the types the join then gives them, so the join loads nothing more; a replay loads
them only once its reader process has forked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from driftwatch.connectors.file_process import reads_in_process
from driftwatch.labels.hashindex import compiled
from driftwatch.replay import replay
from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]

_CHECK = textwrap.dedent("""
    import numpy as np
    from driftwatch.batch import Batch
    from driftwatch.labels import _cohortloops, _hashloops
    from driftwatch.labels.joiner import LabelJoiner
    from driftwatch.pipeline.loadahead import load_loops_ahead

    def signatures():
        loops = [getattr(_hashloops, n) for n in _hashloops.__all__]
        return {f.__name__: set(f.signatures) for f in [*loops, _cohortloops.bin_sums]}

    load_loops_ahead().join()
    ahead = signatures()
    assert all(ahead.values()), ahead
    rng = np.random.default_rng(1)
    j = LabelJoiner(ttl_seconds=50.0, max_pending=3000, remember_joined=500)
    for k in range(12):  # holds, joins, duplicates, expiry, eviction, compaction
        ids = [f"id{i}" for i in rng.integers(0, 6000, 700)]
        t = np.sort(rng.uniform(k * 10, k * 10 + 10, 700))
        j.add_predictions(Batch.build("predictions", n=700, ids=ids, event_time=t,
                                      score=rng.uniform(size=700)),
                          cohort=np.full(700, k))
        j.add_outcomes(Batch.build("outcomes", n=300, ids=ids[:300], event_time=t[:300] + 5,
                                   label=rng.integers(0, 2, 300).astype(float)))
        j.expire(k * 10 + 10)
    assert j.joined and j.expired and j.duplicate_predictions, j.stats()
    assert signatures() == ahead, (signatures(), ahead)
    print("ok")
""")


@pytest.mark.skipif(compiled() is None, reason="the compiled loops are off")
def test_the_loops_are_loaded_with_the_types_the_join_gives_them() -> None:
    """In a process of its own: numba's loaded signatures are process-wide."""
    done = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True,
                          cwd=ROOT, timeout=600, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.skipif(not reads_in_process(total_bytes=0, wanted=True),
                    reason="needs the fork start method")
def test_a_replay_loads_them_once_its_reader_has_forked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    import driftwatch.replay.run as run

    paths = write_scenario("demo", tmp_path / "rec", n_events=1_000, days=5,
                           reference_rows=1_000, compress=False)
    readers: list[list[str]] = []
    monkeypatch.setattr(run, "load_loops_ahead", lambda: readers.append(
        [p.name for p in multiprocessing.active_children()]))
    for read_process in (False, True):
        replay(ROOT / "connectors" / "demo-file.yaml", [paths["predictions"], paths["outcomes"]],
               tmp_path / str(read_process), policy=ROOT / "policies" / "credit-risk-demo.yaml",
               reference=paths["reference"], progress=False, report=False,
               read_process=read_process)
    # once, in the replay that forks: after the reader (and the judge, where one judges)
    assert len(readers) == 1 and "driftwatch-read" in readers[0], readers
    assert set(readers[0]) <= {"driftwatch-read", "driftwatch-judge"}, readers
