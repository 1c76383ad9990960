"""Hot reload: every class of invalid edit is refused, logged once and counted once, and
the running policy stays."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from driftwatch.metrics import Metrics
from driftwatch.policy import checks
from driftwatch.policy.watcher import MINIMAL, PolicyWatcher
from driftwatch.service.reload import refresh_policy


def _text(text: str) -> Callable[[Path], None]:
    return lambda p: p.write_text(text)


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda p: p.write_bytes(data)


def _laughs() -> str:
    lines = ["a0: &a0 [lol]"] + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]"
                                 for i in range(1, 10)]
    return MINIMAL + "\n".join(lines) + "\n"


def _oversize(p: Path) -> None:
    p.write_text(MINIMAL + ("# " + "x" * 78 + "\n") * 90_000)  # 7 MiB


def _vanish(p: Path) -> None:
    p.unlink()


def _directory(p: Path) -> None:
    p.unlink()
    p.mkdir()


#: (edit class, how to make the edit, a fragment the log line must hold)
EDITS: list[tuple[str, Callable[[Path], None], str]] = [
    ("syntax", _text(MINIMAL.replace("pane: 500", "pane: [oops")), "YAML syntax error"),
    ("type", _text(MINIMAL.replace("pane: 500", "pane: lots")), "pane"),
    ("unknown key", _text(MINIMAL.replace("thresholds:", "thresold:")), "unknown key"),
    ("nan threshold", _text(MINIMAL.replace("mild: 0.1", "mild: .nan")),
     "expected a finite number"),
    ("duplicate key", _text(MINIMAL.replace("severe: 0.5", "severe: 0.5, moderate: 0.25")),
     "duplicate key"),
    ("out of range", _text(MINIMAL + "data_quality:\n  signals:\n"
                           "    - {detector: missing_rate, threshold: 7}\n"), "out of range"),
    ("huge pane", _text(MINIMAL.replace("pane: 500", "pane: 100000000000000000000000000")),
     "a count pane holds at most"),
    ("not UTF-8", _bytes(MINIMAL.replace("minimal", "min\u00efmal").encode("latin-1")),
     "not UTF-8 text"),
    ("UTF-16", _bytes(b"\xff\xfe" + MINIMAL.encode("utf-16-le")), "UTF-16"),
    ("deep nesting", _text(MINIMAL + "x: " + "[" * 5000 + "]" * 5000 + "\n"),
     "nested deeper than"),
    ("alias bomb", _text(_laughs()), "aliases expand to more than"),
    ("recursive alias", _text(MINIMAL + "x: &a [*a]\n"), "nested deeper than"),
    ("too large", _oversize, "file too large"),
    ("empty", _text(""), "an empty document"),
    ("vanished", _vanish, "cannot read file"),
    ("a directory", _directory, "cannot read file"),
]


@pytest.fixture
def watched(tmp_path: Path) -> tuple[Path, PolicyWatcher, Metrics]:
    path = tmp_path / "p.yaml"
    path.write_text(MINIMAL)
    return path, PolicyWatcher(path), Metrics(CollectorRegistry())


def _errors(metrics: Metrics) -> float:
    return metrics["policy_reload_errors_total"].labels(model="credit")._value.get()


def _bump_mtime(path: Path) -> None:
    if path.is_file():
        st = path.stat()
        os.utime(path, ns=(st.st_mtime_ns + 10**9, st.st_mtime_ns + 10**9))


@pytest.mark.parametrize(("edit", "fragment"), [(e[1], e[2]) for e in EDITS],
                         ids=[e[0] for e in EDITS])
def test_each_invalid_edit_is_logged_and_counted(
    watched: tuple[Path, PolicyWatcher, Metrics], edit: Callable[[Path], None], fragment: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path, watcher, metrics = watched
    running = watcher.policy
    edit(path)
    _bump_mtime(path)
    with caplog.at_level(logging.ERROR, logger="driftwatch.service"):
        assert refresh_policy("credit", watcher, metrics) is None
        assert refresh_policy("credit", watcher, metrics) is None  # unchanged: not again
    assert _errors(metrics) == 1
    assert watcher.policy is running
    refused = [r.getMessage() for r in caplog.records if "policy edit refused" in r.getMessage()]
    assert len(refused) == 1
    assert str(path) in refused[0] and fragment in refused[0]

    if path.is_dir():
        path.rmdir()
    path.write_text(MINIMAL.replace("pane: 500", "pane: 800"))  # the fix is picked up
    _bump_mtime(path)
    new = refresh_policy("credit", watcher, metrics)
    assert new is not None and new.window.pane == 800
    assert metrics["policy_reloads_total"].labels(model="credit")._value.get() == 1


def test_a_failing_check_is_refused_like_any_bad_edit(
    watched: tuple[Path, PolicyWatcher, Metrics], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bug in one of our checks must not stop the daemon: the edit is refused."""
    path, watcher, metrics = watched

    def broken(doc: object) -> list[object]:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("driftwatch.policy.loader.semantic_errors", broken)
    assert checks.semantic_errors is not broken  # only the loader's reference is patched
    path.write_text(MINIMAL.replace("pane: 500", "pane: 700"))
    _bump_mtime(path)
    with caplog.at_level(logging.ERROR, logger="driftwatch.service"):
        assert refresh_policy("credit", watcher, metrics) is None
    assert _errors(metrics) == 1 and watcher.policy.window.pane == 500
    assert "internal error while checking the policy (ZeroDivisionError: a bug)" in caplog.text


def test_the_edit_classes_are_distinct() -> None:
    assert len({e[0] for e in EDITS}) == len(EDITS) >= 9
