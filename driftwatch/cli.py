"""The ``driftwatch`` command line: a thin shell over the library.

Sub-commands register themselves through ``add_commands(subparsers)`` functions in their
packages, so this file only wires them together and turns errors into exit codes.
"""

from __future__ import annotations

import argparse
import errno
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftwatch import __version__
from driftwatch.countarg import at_least
from driftwatch.errors import ConfigError, DriftwatchError
from driftwatch.namesflags import add_names_flags

__all__ = ["build_parser", "main"]


def _cmd_replay(args: argparse.Namespace) -> int:
    from driftwatch.replay.cli import run_replay_command

    return run_replay_command(args)


def _cmd_profile(args: argparse.Namespace) -> int:
    from driftwatch.namesflags import names_fix, names_given
    from driftwatch.windows.profile import ReferenceProfile, read_reference_table

    if args.fine_bins % args.bins:  # each coarse bin is split into whole fine ones
        raise ConfigError(f"--fine-bins must be a multiple of --bins ({args.bins})",
                          found=str(args.fine_bins))
    names = names_given(args.names, args.names_file, "names", args.data)
    df = read_reference_table(args.data, names, given="--names", fix=names_fix("names"))
    prof = ReferenceProfile.build(
        df,
        numeric=args.numeric or None,
        categorical=args.categorical or None,
        bins=args.bins,
        fine_bins=args.fine_bins,
        top_k=args.top_k,
        meta={"source": Path(args.data).name},
    )
    prof.save(args.out)
    print(f"wrote {args.out}: {len(prof.schema.numeric)} numeric, "
          f"{len(prof.schema.categorical)} categorical features, {prof.sketch.n} rows")
    return 0


def _cmd_init(args: argparse.Namespace) -> int:
    from driftwatch.onboard.commands import run_init

    return run_init(args)


def _init_parser(sub: Any) -> None:
    i = sub.add_parser(
        "init", help="write a connector and a policy from a reference table and a sample",
        description="Infer the fields of a reference table (CSV or Parquet) and a sample of "
        "the live stream, then write a connector and a policy that list every feature. "
        "Each decision is printed with its reason.")
    i.add_argument("--reference", "-r", help="reference table (training sample): CSV or "
                   "Parquet (a CSV without a header line: --reference-names); relative "
                   "paths are written as given")
    i.add_argument("--sample", "-s", metavar="FILE",
                   help="predictions sample: JSON lines, CSV or Parquet (gzip too)")
    i.add_argument("--outcomes", metavar="FILE", help="outcomes sample (id and label)")
    for flag, what, where in (
            ("names", "--sample", "its stream"), ("outcomes-names", "--outcomes", "its stream"),
            ("reference-names", "--reference", "the policy's reference: block")):
        add_names_flags(i, flag, f"a {what} CSV",
                        f"; written to {where} as csv: {{names: [...]}}")
    i.add_argument("--kafka-topic", metavar="TOPIC",
                   help="read the predictions sample from this topic instead (JSON "
                   "values; for an Avro topic give a JSON-lines sample with --sample)")
    i.add_argument("--outcomes-topic", metavar="TOPIC", help="outcomes sample topic")
    i.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers")
    i.add_argument("--model", "-m", default=None,
                   help="model name (default: the reference file's stem)")
    i.add_argument("--connector-out", metavar="FILE",
                   help="connector to write (default: connectors/MODEL.yaml)")
    i.add_argument("--policy-out", metavar="FILE",
                   help="policy to write (default: policies/MODEL.yaml)")
    i.add_argument("--force", action="store_true", help="overwrite existing files")
    for role in ("id", "time", "score", "label", "decision", "exposure"):
        i.add_argument(f"--{role}-field", metavar="NAME",
                       help=f"the {role} field (column or dotted path) when ambiguous"
                       + {"exposure": "; 'none' for no exposure",
                          "time": "; 'none' reads a file in record order; outcomes "
                          "without a time of their own take their field of that name, on "
                          "the same clock, where its values read alike",
                          "label": "; REFERENCE_NAME=STREAM_NAME where the outcomes name "
                          "it otherwise (a name spelled otherwise in case, spaces, dots "
                          "or hyphens is matched without it)"}.get(role, ""))
    i.add_argument("--time-format", metavar="FORMAT",
                   help="strptime format of a text event time (e.g. '%%d/%%m/%%Y'), when "
                   "init cannot tell it; written as the connector's event_time format")
    # onboard.times.COUNT_UNITS, written out: the command line imports no numpy to start
    i.add_argument("--time-unit", choices=("s", "ms", "us", "ns", "min", "h", "d"),
                   metavar="UNIT",
                   help="what one step of a numeric event time counts, when init cannot "
                   "tell it: s, ms, us, ns, min, h or d (PaySim's step counts hours: "
                   "--time-field step --time-unit h); written as the connector's "
                   "event_time unit")
    i.add_argument("--score-is", choices=("p_bad", "p_good"),
                   help="what the score is the probability of (default: checked on labels)")
    i.add_argument("--proba-at", type=int, metavar="N",
                   help="where the sample's score is a list of class probabilities (a "
                   "predict_proba row): the position, from 0, of the class whose "
                   "probability is the score (the bad class's; the good class's for "
                   "--score-is p_good); needed for three classes or more unless the "
                   "reference's label values settle it")
    i.add_argument("--label-bad", action="append", default=[], metavar="VALUE",
                   help="a label value meaning bad (repeatable)")
    i.add_argument("--approve", action="append", default=[], metavar="VALUE",
                   help="a decision value meaning approved (repeatable)")
    i.add_argument("--decline", action="append", default=[], metavar="VALUE",
                   help="a decision value meaning declined (repeatable); then a value in "
                   "neither list is no decision (HMDA's action_taken 4, withdrawn)")
    i.add_argument("--ignore", action="append", default=[], metavar="COL",
                   help="a reference column that is not a feature (repeatable)")
    i.add_argument("--pane", type=at_least(1), default=1000, help="events per window pane")
    i.add_argument("--rows", type=at_least(1), default=2000, help="sample records read")
    i.add_argument("--example", metavar="DEST",
                   help="write the bundled example connectors and policies to DEST instead")
    i.set_defaults(func=_cmd_init)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="driftwatch",
        description="Watch a production risk model for drift and repair it in tiers.",
    )
    p.add_argument("--version", action="version", version=f"driftwatch {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("replay", help="run the pipeline on a recording, in event time")
    r.add_argument("--connector", "-c", required=True, help="connector YAML (field maps)")
    r.add_argument("--policy", "-p", help="policy YAML (thresholds, tiers, actions)")
    r.add_argument("--input", "-i", nargs="+", action="extend", required=True, metavar="FILE",
                   help="recording files (predictions, outcomes; STREAM=PATH to bind one); "
                        "-i may be given more than once")
    r.add_argument("--out", "-o", required=True,
                   help="output folder (a previous run's files there are replaced)")
    r.add_argument("--reference", help="reference dataset or profile (default: the policy's)")
    r.add_argument("--batch-size", type=at_least(1), default=10_000,
                   help="events per micro-batch")
    r.add_argument("--expect", action="append", default=[], metavar="EXPR",
                   help='assertion on the timeline, e.g. "no retrain before 2026-03-01"')
    r.add_argument("--execute", action="store_true",
                   help="run the decided actions (default: dry run, actions only listed)")
    r.add_argument("--state-dir", default=None,
                   help="state folder for --execute (MLflow store, outbox, GPU pool; "
                        "default: OUT/state)")
    r.add_argument("--champion", metavar="URI",
                   help="with --execute: your registered model, models:/NAME@champion "
                        "(default: an empty registry gets the demo's river stand-in)")
    r.add_argument("--champion-column", action="append", default=[], metavar="COL=FEATURE",
                   help="read the champion's input column COL from connector feature FEATURE")
    r.add_argument("--champion-score-is", choices=("p_bad", "p_good"), default=None,
                   help="what the champion returns (default p_bad). p_good: a custom pyfunc "
                        "or bare Booster giving P(good) is read as 1 - p; a classifier whose "
                        "classes are 0/1 (or False/True) was trained with 1 = good and is "
                        "read at class 0; classes that name themselves (bad/good), a "
                        "classifier of three classes or more and a driftwatch river model "
                        "are read at the bad one whatever it says (the start notes it). Not "
                        "applied to the versions driftwatch registers")
    r.add_argument("--champion-score-scale", default=None, metavar="SCALE",
                   help="the scale a custom pyfunc champion's predict writes its score in: "
                        "probability (default), log_odds, percent, "
                        "points:base=600,odds=50,pdo=20 (a scorecard's points, higher = "
                        "safer: read as P(bad)), or stream (the scale the connector declares "
                        "for the stream's score); refused for a model that answers "
                        "probabilities (predict_proba, a Booster, a driftwatch river model). "
                        "Not applied to the versions driftwatch registers")
    r.add_argument("--tracking-uri", metavar="URI",
                   help="with --execute: MLflow tracking server (default: under --state-dir); "
                        "10 s per request unless MLFLOW_HTTP_REQUEST_TIMEOUT is set")
    r.add_argument("--no-report", action="store_true", help="skip report.html")
    r.add_argument("--levels-cache", metavar="DIR",
                   help="folder where calibrated levels and the reference's profile are "
                        "kept between runs on the same reference (default: "
                        "$XDG_CACHE_HOME/driftwatch/levels)")
    r.add_argument("--no-levels-cache", action="store_true",
                   help="resample calibrated levels and bin the reference on every run")
    r.add_argument("--reader", choices=("auto", "process", "thread"), default="auto",
                   help="where the files are read and decoded: a child process beside the "
                        "loop (Linux; auto: for 64 MiB or more, with a second core) or a "
                        "thread of the loop's own process; the results are the same")
    r.add_argument("--judge", choices=("auto", "process", "loop"), default="auto",
                   help="where the closed windows are judged (detectors, policy, timeline): "
                        "a process of their own beside the loop's intake (Linux; auto: with "
                        "a second core, the files read in a process and count panes of at "
                        "most 1,500 events, without --execute or cohort_* rules) or the "
                        "loop itself; the results are the same")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_replay)

    pr = sub.add_parser("profile", help="build a reference profile from training data")
    pr.add_argument("data", help="reference dataset (Parquet or CSV; a CSV without a header "
                    "line: --names)")
    add_names_flags(pr, "names", "DATA, a CSV")
    pr.add_argument("--out", "-o", required=True, help="profile file (.json or .json.gz)")
    pr.add_argument("--numeric", nargs="*", help="numeric features (default: inferred)")
    pr.add_argument("--categorical", nargs="*", help="categorical features (default: inferred)")
    # the policy's detectors.bins, fine_bins and top_k, with their least values
    pr.add_argument("--bins", type=at_least(2), default=10, help="coarse bins (deciles: 10)")
    pr.add_argument("--fine-bins", type=at_least(10), default=200,
                    help="fine bins for KS/Wasserstein (a multiple of --bins)")
    pr.add_argument("--top-k", type=at_least(1), default=20, help="categorical levels kept")
    pr.set_defaults(func=_cmd_profile)

    _init_parser(sub)

    for mod in _COMMAND_MODULES:
        try:
            module = __import__(mod, fromlist=["add_commands"])
        except ModuleNotFoundError as exc:  # an optional integration that is not installed
            if exc.name and exc.name.split(".")[0] != "driftwatch":
                continue
            raise
        module.add_commands(sub)
    return p


_COMMAND_MODULES = (
    "driftwatch.policy.commands",
    "driftwatch.report.commands",
    "driftwatch.actions.commands",
    "driftwatch.service.pool_commands",
    "driftwatch.connectors.commands",
    "driftwatch.service.commands",
    "driftwatch.completion",
    "driftwatch.replay.demo",
)


def _stdout_gone() -> bool:
    """Whether standard output is a pipe its reader closed (poll says so: a socket or a
    child's pipe that broke is not); then it points at /dev/null, so that the flush at
    exit cannot raise again."""
    try:
        fd = sys.stdout.fileno()
        events = select.poll()
    except (AttributeError, OSError, ValueError):  # no file behind it; no poll (Windows)
        return False
    events.register(fd, 0)
    if not any(ev & select.POLLERR for _, ev in events.poll(0)):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


#: What the machine said about a path the user gave (a folder that cannot be made, a file
#: that cannot be written, a full disk): a user's matter, said in one line.
_FILE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR,
                          errno.EISDIR, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                          errno.EEXIST, errno.ENAMETOOLONG})


def _file_error(exc: OSError) -> str | None:
    """The one line for an error about a file or folder (None for other ``OSError`` s,
    such as a refused connection: those are the caller's to say).

    >>> _file_error(FileNotFoundError(2, "No such file or directory", "/proc/x/out"))
    'No such file or directory: /proc/x/out'
    >>> _file_error(OSError(28, "No space left on device"))
    'No space left on device (free some space, or write elsewhere)'
    >>> _file_error(ConnectionRefusedError(111, "Connection refused")) is None
    True
    """
    if exc.errno not in _FILE_ERRNOS:
        return None
    what = exc.strerror or type(exc).__name__
    if exc.filename is not None:
        return f"{what}: {exc.filename}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{what} (free some space, or write elsewhere)"
    return what


def interrupted_line(command: str | None, out: str | None) -> str:
    """What an interrupted command (Ctrl-C) leaves: a replay's output folder holds the
    windows closed so far, without its summary and report.

    >>> interrupted_line("replay", "out/run")
    'interrupted: the replay stopped before the end of its input; out/run/timeline.jsonl \
holds the windows closed so far, and no summary or report was written'
    >>> interrupted_line("init", None)
    'interrupted: init stopped before it finished'
    """
    if command == "replay" and out:
        return (f"interrupted: the replay stopped before the end of its input; "
                f"{Path(out) / 'timeline.jsonl'} holds the windows closed so far, and no "
                "summary or report was written")
    return f"interrupted: {command or 'driftwatch'} stopped before it finished"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        if not _stdout_gone():
            raise  # a socket or a child's pipe: not ours to hide
        return 141  # 128 + SIGPIPE: the reader (`| head`) went away, as a shell says it
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DriftwatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        if (line := _file_error(exc)) is None:
            raise
        print(f"error: {line}", file=sys.stderr)
        return 1
    except ImportError as exc:  # an optional dependency (kafka, mlflow, ray) not installed
        from driftwatch.extras import missing_extra

        if (err := missing_extra(exc)) is None:
            raise
        print(f"error: {err}", file=sys.stderr)
        return 1
    except Exception as exc:
        if type(exc).__name__ != "MlflowException":
            raise
        # MLflow refused the store or a request (a file store it keeps in maintenance mode,
        # a permission): its own words, without the traceback through driftwatch
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        print(f"error: MLflow: {lines[0]}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupted_line(args.command, getattr(args, "out", None)), file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
