"""``driftwatch record`` and ``driftwatch produce``: move recordings to and from Kafka.

``record`` writes what a Kafka connector's topics deliver to a recording that
``driftwatch replay`` reads with the same field maps; ``produce`` publishes recorded JSONL
files to the connector's topics (each input to its stream's topic), to try the daemon on a
real broker with the demo data.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
from pathlib import Path
from typing import IO, Any

from driftwatch.errors import ConnectorError

__all__ = ["add_commands", "produce_files"]


def _open(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")


def _stream_of(arg: str, streams: list[str]) -> tuple[str, Path]:
    if "=" in arg:
        name, path = arg.split("=", 1)
        if name not in streams:
            raise ConnectorError(f"unknown stream {name!r}", found=f"valid: {', '.join(streams)}")
        return name, Path(path)
    hits = [s for s in streams if s in Path(arg).name]
    if len(hits) != 1:
        raise ConnectorError(
            f"cannot tell which stream {arg} belongs to: write STREAM=PATH",
            found=f"streams {', '.join(streams)}",
        )
    return hits[0], Path(arg)


def produce_files(connector: Any, inputs: list[str], *, environ: Any = None) -> dict[str, int]:
    """Publish every line of each input file to its stream's topic; returns counts by topic."""
    from kafka import KafkaProducer

    from driftwatch.connectors.kafka_client import connect_client
    from driftwatch.connectors.kafka_settings import KafkaSourceSettings

    settings = KafkaSourceSettings.from_connector(connector)
    topics = {t.stream: t.name for t in settings.topics}
    producer = connect_client(
        KafkaProducer, **settings.connection.client_config(environ), linger_ms=20,
        batch_size=256 * 1024,
    )
    counts: dict[str, int] = {}
    try:
        for arg in inputs:
            stream, path = _stream_of(arg, list(topics))
            topic = topics[stream]
            with _open(path) as fh:
                for line in fh:
                    line = line.rstrip(b"\r\n")
                    if line:
                        producer.send(topic, value=line)
                        counts[topic] = counts.get(topic, 0) + 1
        producer.flush()
    finally:
        producer.close()
    return counts


def _cmd_record(args: argparse.Namespace) -> int:
    from driftwatch.connectors.config import load_connector
    from driftwatch.connectors.kafka_settings import KafkaSourceSettings
    from driftwatch.connectors.recorder import record

    conn = load_connector(args.connector)
    settings = KafkaSourceSettings.from_connector(conn)
    if args.stream:
        topics = tuple(t for t in settings.topics if t.stream == args.stream)
        if not topics:
            names = ", ".join(t.stream for t in settings.topics)
            raise ConnectorError(f"unknown stream {args.stream!r}", found=f"valid: {names}")
        settings = dataclasses.replace(settings, topics=topics)
    summary = record(
        settings,
        args.out,
        max_messages=args.max_messages,
        idle_timeout_s=args.idle_timeout,
    )
    print(f"recorded {summary.messages} messages ({summary.bytes} bytes) to {summary.path}")
    return 0


def _cmd_produce(args: argparse.Namespace) -> int:
    from driftwatch.connectors.config import load_connector

    counts = produce_files(load_connector(args.connector), args.input)
    for topic, n in sorted(counts.items()):
        print(f"produced {n} messages to {topic}")
    return 0


def add_commands(sub: Any) -> None:
    r = sub.add_parser("record", help="record what a Kafka connector's topics deliver")
    r.add_argument("--connector", "-c", required=True, help="a kind: kafka connector")
    r.add_argument("--out", "-o", required=True, help="recording file (.jsonl or .jsonl.gz)")
    r.add_argument("--max-messages", type=int, default=None, help="stop after this many")
    r.add_argument(
        "--stream",
        help="record only this stream's topic: Kafka orders a partition, not topics against "
        "each other, so one file per stream replays in exact event-time order",
    )
    r.add_argument(
        "--idle-timeout",
        type=float,
        default=30.0,
        help="stop after this many seconds without a message",
    )
    r.set_defaults(func=_cmd_record)
    p = sub.add_parser("produce", help="publish recorded JSONL files to a connector's topics")
    p.add_argument("--connector", "-c", required=True, help="a kind: kafka connector")
    p.add_argument(
        "--input",
        "-i",
        nargs="+",
        action="extend",
        required=True,
        metavar="FILE",
        help="JSONL(.gz) files; STREAM=PATH binds one to a stream; -i may be given more than "
             "once",
    )
    p.set_defaults(func=_cmd_produce)
