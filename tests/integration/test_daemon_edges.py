"""``driftwatch run`` at the edges: a busy port, and stopping with actions still open."""

from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.integration


def test_a_busy_port_stops_the_daemon_with_one_line(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                     demo_recording["policy"],
                                     reference=demo_recording["reference"], port=port)
        d = driftwatch_daemon(cfg, tmp_path / "state")
        assert d.wait_exit(120) == 1
    log = d.log()
    assert f"error: cannot listen on 127.0.0.1:{port}: " in log
    assert "Traceback" not in log and "OSError" not in log


def test_exit_when_done_says_which_actions_are_still_open(
        tmp_path, demo_recording, driftwatch_daemon, service_config_factory):
    cfg = service_config_factory(tmp_path / "svc.yaml", demo_recording["connector"],
                                 demo_recording["policy"],
                                 reference=demo_recording["reference"])  # execute: false
    d = driftwatch_daemon(cfg, tmp_path / "state", "--exit-when-done")
    assert d.wait_exit(180) == 0
    log = d.log()
    assert "actions recorded and not run (actions.execute is false): ids 1" in log
