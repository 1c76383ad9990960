"""Array files: every damaged byte is caught, both checksum kinds read, arrays read back
are private and hold no file open, and files written at once fail as one."""

from __future__ import annotations

import errno
import os
import struct
import zlib

import numpy as np
import pytest

import driftwatch.arrayfile as af
import driftwatch.checkpoint_store as cs
from driftwatch.errors import StateError
from driftwatch.state import CheckpointStore, write_fault
from driftwatch.statetree import Appended

ARRAYS = {"a": np.arange(7.0), "b": np.array([[1, -2], [3, 4]], np.int32), "e": np.zeros(0)}


def _kind(path) -> int:
    return struct.unpack_from("<I", path.read_bytes(), -4)[0]


def test_every_flipped_byte_of_a_file_is_a_state_error(tmp_path):
    p = tmp_path / "x.arr"
    af.write_arrays(p, {"note": "hi", "x": float("nan")}, ARRAYS)
    good = p.read_bytes()
    assert _kind(p) == 1  # CRC-32C
    for i in range(len(good)):
        bad = bytearray(good)
        bad[i] ^= 0x10
        p.write_bytes(bytes(bad))
        with pytest.raises(StateError, match="damaged"):
            af.read_arrays(p)


def test_a_file_cut_anywhere_is_a_state_error(tmp_path):
    p = tmp_path / "x.arr"
    af.write_arrays(p, {}, ARRAYS)
    good = p.read_bytes()
    for n in (0, 7, 16, len(good) // 2, len(good) - 1):
        p.write_bytes(good[:n])
        with pytest.raises(StateError):
            af.read_arrays(p)


def test_files_of_the_earlier_crc32_still_read_and_their_damage_is_caught(tmp_path,
                                                                          monkeypatch):
    p = tmp_path / "old.arr"
    monkeypatch.setattr(af, "_crc32c", None)  # as the earlier version wrote them
    af.write_arrays(p, {"n": 1}, ARRAYS)
    monkeypatch.undo()
    raw = p.read_bytes()
    assert _kind(p) == 0
    assert struct.unpack_from("<I", raw, len(raw) - 8)[0] == zlib.crc32(raw[:-24])
    meta, got = af.read_arrays(p)
    assert meta == {"n": 1} and got["b"].tolist() == [[1, -2], [3, 4]]
    bad = bytearray(raw)
    bad[len(bad) // 2] ^= 1
    p.write_bytes(bytes(bad))
    with pytest.raises(StateError, match="checksum mismatch"):
        af.read_arrays(p)


def test_a_crc32c_file_without_the_package_says_what_to_install(tmp_path, monkeypatch):
    p = tmp_path / "x.arr"
    af.write_arrays(p, {}, ARRAYS)
    monkeypatch.setattr(af, "_crc32c", None)
    with pytest.raises(StateError, match="install the crc32c package"):
        af.read_arrays(p)
    assert af.read_arrays(p, verify=False)[1]["a"].tolist() == list(range(7))


def test_arrays_read_back_are_writable_and_the_file_keeps_its_bytes(tmp_path):
    p = tmp_path / "x.arr"
    af.write_arrays(p, {}, ARRAYS)
    before = p.read_bytes()
    _, got = af.read_arrays(p)
    got["a"] += 100.0  # a component may count on in place
    got["b"][0, 0] = 9
    assert got["a"][0] == 100.0 and got["b"][0, 0] == 9
    assert p.read_bytes() == before
    assert af.read_arrays(p)[1]["a"].tolist() == list(range(7))


def _open_in(folder) -> list[str]:
    fds = "/proc/self/fd"
    out = []
    for f in os.listdir(fds):
        try:
            target = os.readlink(f"{fds}/{f}")
        except OSError:  # the descriptor listdir itself used
            continue
        if target.startswith(str(folder)):
            out.append(target)
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_restore_holds_no_file_of_the_folder_open(tmp_path):
    """A checkpoint of many models and segments may name thousands of files: checking and
    decoding them must not keep a descriptor per file (a map of a file keeps one)."""
    store = CheckpointStore(tmp_path / "cp")
    for i in range(3):
        store.save({f"m{k}": {"x": np.ones(4), "t": Appended("t", 0, i + 1, i,
                                                             {"v": np.array([i * 1.0])})}
                    for k in range(5)}, now=float(i))
    store.close()
    cp = CheckpointStore(tmp_path / "cp").load()
    assert _open_in(tmp_path) == []
    states = [cp.models[m] for m in cp.models]
    assert _open_in(tmp_path) == []
    assert [s["t"].columns["v"].tolist() for s in states] == [[0.0, 1.0, 2.0]] * 5
    states[0]["x"] += 1  # views of a private buffer, not of the file
    assert CheckpointStore(tmp_path / "cp").load().models["m0"]["x"].tolist() == [1.0] * 4


def test_a_file_that_fails_among_those_written_at_once_fails_the_checkpoint(tmp_path,
                                                                            monkeypatch):
    store = CheckpointStore(tmp_path / "cp")
    rows = {"v": np.arange(4.0)}
    store.save({"m": {"t": Appended("t1", 0, 4, 0, rows), "x": np.ones(3)}}, now=1.0)
    real = cs.write_arrays

    def full_for_segments(path, meta, arrays):
        if str(path).endswith(".seg"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, meta, arrays)

    monkeypatch.setattr(cs, "write_arrays", full_for_segments)
    more = Appended("t1", 0, 6, 4, {"v": np.array([4.0, 5.0])})
    with pytest.raises(StateError, match="not written") as err:
        store.save({"m": {"t": more, "x": np.ones(3)}}, now=2.0)
    assert write_fault(err.value) == "full"  # the daemon pauses rather than stops
    assert CheckpointStore.manifest_seqs(tmp_path / "cp") == [1]
    monkeypatch.undo()
    cp = CheckpointStore(tmp_path / "cp").load()
    assert cp.seq == 1 and cp.models["m"]["t"].columns["v"].tolist() == [0.0, 1.0, 2.0, 3.0]
    store.save({"m": {"t": Appended("t1", 0, 6, 4, {"v": np.array([4.0, 5.0])})}}, now=3.0)
    assert CheckpointStore(tmp_path / "cp").load().models["m"]["t"].columns["v"].size == 6
    store.close()


def test_a_damaged_segment_both_checkpoints_share_is_never_a_fresh_start(tmp_path):
    store = CheckpointStore(tmp_path / "cp", keep=2)
    store.save({"m": {"t": Appended("t1", 0, 4, 0, {"v": np.arange(4.0)})}}, now=1.0)
    store.save({"m": {"t": Appended("t1", 0, 6, 4, {"v": np.arange(4.0, 6.0)})}}, now=2.0)
    seg = min((tmp_path / "cp").glob("00000001-*.seg"))  # rows 0-3, named by both
    raw = bytearray(seg.read_bytes())
    raw[-40] ^= 0x04
    seg.write_bytes(bytes(raw))
    with pytest.raises(StateError, match="no intact checkpoint"):
        CheckpointStore(tmp_path / "cp").load()
