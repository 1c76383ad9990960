"""A replay keeps the reference's profile in its cache folder and reads it back only
where it would build the very same one; the timeline is the same either way."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pandas as pd
import pytest

from driftwatch.actions.reference import ReferenceReader
from driftwatch.policy.loader import load_policy_text
from driftwatch.policy.watcher import MINIMAL
from driftwatch.replay import profile_cache as pc
from driftwatch.replay import replay
from driftwatch.sentinels import MissingValues
from driftwatch.testing.generator import write_scenario

from ._forked_recording import CONNECTOR, POLICY


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The tables a reference profile was built from (not read back)."""
    built: list[Path] = []
    real = ReferenceReader.profile

    def profile(self: ReferenceReader, path: str | Path) -> object:
        built.append(Path(path))
        return real(self, path)

    monkeypatch.setattr(ReferenceReader, "profile", profile)
    return built


def _table(path: Path, shift: float = 0.0) -> Path:
    pd.DataFrame({"x": [float(i) + shift for i in range(200)], "score": 0.3,
                  "label": [i % 2 for i in range(200)]}).to_csv(path, index=False)
    return path


def test_a_second_replay_reads_the_profile_back_and_writes_the_same_timeline(
        tmp_path: Path, builds: list[Path]) -> None:
    paths = write_scenario("demo", tmp_path / "rec", n_events=3_000, days=10,
                           reference_rows=2_000, compress=False)
    cache = tmp_path / "cache"

    def run(out: str, levels: Path | None) -> bytes:
        replay(CONNECTOR, [paths["predictions"], paths["outcomes"]], tmp_path / out,
               policy=POLICY, reference=paths["reference"], progress=False, report=False,
               levels_cache=levels)
        return (tmp_path / out / "timeline.jsonl").read_bytes()

    plain = run("plain", None)
    assert len(builds) == 1
    first = run("first", cache)
    assert len(builds) == 2 and len(list(cache.glob("profile-*.json.gz"))) == 1
    again = run("again", cache)
    assert len(builds) == 2  # read back, not built
    assert plain == first == again


def test_the_key_follows_what_the_profile_is_built_from(tmp_path: Path) -> None:
    table = _table(tmp_path / "ref.csv")
    base = load_policy_text(MINIMAL, file="p.yaml")
    key = pc.profile_key(ReferenceReader(policy=base), table)
    same = load_policy_text(MINIMAL.replace("pane: 500", "pane: 800"), file="p.yaml")
    assert pc.profile_key(ReferenceReader(policy=same), table) == key  # a window: no
    for other in (
        ReferenceReader(policy=load_policy_text(MINIMAL + "reference: {score_is: p_good}",
                                                file="p.yaml")),
        ReferenceReader(policy=base, kinds={"x": "categorical"}),
        ReferenceReader(policy=base, missing=MissingValues(default=(-1,))),
        ReferenceReader(policy=base, formats={"x": "percent"}),
    ):
        assert pc.profile_key(other, table) != key, other
    copy = _table(tmp_path / "copy.csv")  # the same bytes elsewhere: the same profile
    assert pc.profile_key(ReferenceReader(policy=base), copy) == key
    _table(table, shift=1.0)  # the table edited in place
    assert pc.profile_key(ReferenceReader(policy=base), table) != key


def test_a_damaged_or_unwritable_cache_never_stops_the_build(
        tmp_path: Path, builds: list[Path]) -> None:
    table = _table(tmp_path / "ref.csv")
    cache = tmp_path / "cache"
    want = pc.cached_profile(ReferenceReader(), table, cache).fingerprint
    (kept,) = cache.glob("profile-*.json.gz")
    kept.write_bytes(gzip.compress(b"{not json"))
    assert pc.cached_profile(ReferenceReader(), table, cache).fingerprint == want
    assert len(builds) == 2  # built again, and the damaged file replaced
    assert pc.cached_profile(ReferenceReader(), table, cache).fingerprint == want
    assert len(builds) == 2
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    assert pc.cached_profile(ReferenceReader(), table, blocked).fingerprint == want


def test_a_saved_profile_is_read_as_it_is(tmp_path: Path, builds: list[Path]) -> None:
    table = _table(tmp_path / "ref.csv")
    saved = pc.cached_profile(ReferenceReader(), table, None).save(tmp_path / "p.json.gz")
    cache = tmp_path / "cache"
    pc.cached_profile(ReferenceReader(), saved, cache)
    assert not cache.exists()


def test_the_key_reads_the_package_source(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """A driftwatch whose code differs keys its own profiles."""
    table = _table(tmp_path / "ref.csv")
    key = pc.profile_key(ReferenceReader(), table)
    monkeypatch.setattr(pc, "_code", lambda: "another driftwatch")
    assert pc.profile_key(ReferenceReader(), table) != key
    assert os.path.basename(pc.__file__) == "profile_cache.py"


def test_the_key_is_the_same_in_another_process(tmp_path: Path) -> None:
    """Read back by the next replay: no set order or object id may leak into it (each
    process hashes strings with a seed of its own)."""
    import subprocess
    import sys

    table = _table(tmp_path / "ref.csv")
    code = ("import sys; from driftwatch.actions.reference import ReferenceReader; "
            "from driftwatch.connectors.config import load_connector; "
            "from driftwatch.policy.loader import load_policy; "
            "from driftwatch.replay.profile_cache import profile_key; from pathlib import Path; "
            "print(profile_key(ReferenceReader.of(load_policy(sys.argv[1]), "
            "load_connector(sys.argv[2])), Path(sys.argv[3])))")
    keys = {subprocess.run([sys.executable, "-c", code, str(POLICY), str(CONNECTOR), str(table)],
                           env={**os.environ, "PYTHONHASHSEED": seed}, check=True,
                           capture_output=True, text=True).stdout.strip()
            for seed in ("1", "2", "3")}
    assert len(keys) == 1 and len(next(iter(keys))) == 32, keys
