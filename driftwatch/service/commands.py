"""``driftwatch run``: start the daemon (registered in :mod:`driftwatch.cli`).

Without ``--config`` it runs the embedded default (the same as the bundled
``driftwatch.yaml``): the demo recording streamed live, state under ``./state``, HTTP on
127.0.0.1:9108. A finite recording, once consumed, gets its report written and the daemon
keeps serving ``/metrics`` and ``/reports/`` until SIGTERM or Ctrl-C; ``--exit-when-done``
ends it there instead, once the reports still queued are written and the decided actions
have run as far as they can alone (``--drain-timeout`` bounds that wait). Exit 0 after a
clean stop (final checkpoint, offsets committed); 3 when ``--drain-timeout`` passed with
work left, which resumes on the next start.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_commands", "run_command"]


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run", help="run the daemon (default: the demo recording, streamed live)",
        description=__doc__.split("\n\n")[1].replace("``", "") if __doc__ else None)
    p.add_argument("--config", "-c", metavar="FILE",
                   help="service configuration (default: the embedded demo configuration); "
                        "paths in it start at its folder, file globs inside connectors at "
                        "the working directory")
    p.add_argument("--state-dir", metavar="DIR", help="override state_dir")
    p.add_argument("--host", help="override http.host (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="override http.port (0: any free port)")
    p.add_argument("--speed", type=float, metavar="X",
                   help="override every file model's live speed (event seconds per wall "
                        "second, or records per second for a table without times; 0: as "
                        "fast as possible)")
    p.add_argument("--exit-when-done", action="store_true",
                   help="stop once every finite source is consumed, its reports are written "
                        "and its actions have run as far as they can without new data or "
                        "a person's approval (progress is logged every 5s)")
    p.add_argument("--drain-timeout", metavar="DURATION", type=_drain_timeout,
                   help="with --exit-when-done: wait at most this long (e.g. 30s, 10m; 0: "
                        "not at all) for those reports and actions; past it the daemon "
                        "stops and exits 3, and what is left resumes on the next start "
                        "(default: no limit; SIGTERM or Ctrl-C always stop within the "
                        "usual shutdown bound)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="log verbosity")
    p.set_defaults(func=run_command)


def _drain_timeout(text: str) -> float:
    from driftwatch.policy.durations import parse_duration

    if text.strip() == "0":
        return 0.0
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _overrides(cfg: Any, args: argparse.Namespace) -> Any:
    http = cfg.http
    if args.host is not None:
        http = dataclasses.replace(http, host=args.host)
    if args.port is not None:
        http = dataclasses.replace(http, port=args.port)
    models = cfg.models
    if args.speed is not None:
        if args.speed < 0:
            from driftwatch.errors import ConfigError

            raise ConfigError(f"--speed must be >= 0, got {args.speed}")
        # a Kafka model reads as its topics deliver: the override paces the file models
        models = tuple(dataclasses.replace(m, live_speed=args.speed, live_speed_at=None)
                       for m in models)
    state = Path(args.state_dir).resolve() if args.state_dir else cfg.state_dir
    return dataclasses.replace(cfg, http=http, models=models, state_dir=state)


def run_command(args: argparse.Namespace) -> int:
    from driftwatch.service import Service
    from driftwatch.service.config import load_service_config

    logging.basicConfig(level=getattr(logging, args.log_level), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(max(logging.WARNING, logging.root.level))
    # "skipped: maximum number of running instances reached" is max_instances=1 working
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # process-wide: `_created` series are noise for ops
    if args.drain_timeout is not None and not args.exit_when_done:
        from driftwatch.errors import ConfigError

        raise ConfigError("--drain-timeout applies to --exit-when-done: give both, or "
                          "neither")
    cfg = _overrides(load_service_config(args.config), args)
    service = Service(cfg, exit_when_done=args.exit_when_done,
                      drain_timeout_s=args.drain_timeout)

    def on_signal(signum: int, _frame: Any) -> None:
        logging.getLogger("driftwatch").info("%s: finishing the batch, checkpointing",
                                             signal.Signals(signum).name)
        service.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    code = service.run()
    if service.actions is not None and service.actions.abandoned:
        # an action thread is still inside an MLflow call, and libraries' worker threads
        # (joined at interpreter exit) may be too: leave now, the outbox resumes it
        logging.shutdown()
        sys.stdout.flush()
        os._exit(code)
    return code
