#!/usr/bin/env python3
"""Kafka read throughput: a bare kafka-python loop vs ``KafkaSource`` poll + decode.

Produces ``--events`` JSON credit applications to a fresh topic on a local broker (started
here from ``scripts/kafka_broker.py`` unless ``--bootstrap`` names one), then reads the
whole topic twice in the same run:

1. **bare**: ``KafkaConsumer.poll`` touching each message's bytes, nothing else;
2. **source**: ``KafkaSource.poll`` with the stream's decoder, i.e. columnar ``Batch``es;
3. **source, no decode**: ``KafkaSource.poll`` with a decoder that reads nothing, the
   source's own cost (group membership, offsets, bookkeeping) over the bare loop;
4. **source, no align**: as 2 with ``align_event_time: false``, what merging the
   partitions in event time costs (with ``--partitions`` above 1 it has work to do).

It prints events/s for both and their ratio. The source reads fetched record batches in
bulk (:mod:`driftwatch.connectors.kafka_records`) where the bare loop builds one
``ConsumerRecord`` per message, so the source can outrun the bare loop; the last line
gives the source's client side (its CPU time less the decoder's) against the bare loop's.

The decoder is ``driftwatch.connectors.decode.Decoder`` with a mapping like a connector
file's (five numeric, two categorical features, score, decision).
Both reads are repeated ``--repeat`` times, alternating, and the best of each is kept; the
ratio is given in wall time and in this process's CPU time (the broker runs elsewhere, so
CPU time holds still on a busy machine where wall time does not), with the decoder's share
of the source's CPU time. Both
reads use kafka-python's default fetch sizes (``KafkaSource``'s defaults are the same), so
like is compared with like.

    python benchmarks/kafka_throughput.py --events 200000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.batch import Batch  # noqa: E402
from driftwatch.connectors.decode import Decoder  # noqa: E402
from driftwatch.connectors.kafka import KafkaSource  # noqa: E402
from driftwatch.connectors.kafka_settings import (  # noqa: E402
    KafkaConnection,
    KafkaSourceSettings,
    KafkaTopic,
)
from driftwatch.connectors.mapping import (  # noqa: E402
    DecisionField,
    FeatureField,
    FieldPath,
    StreamMapping,
    TimeField,
)
from driftwatch.schema import FeatureSchema  # noqa: E402
from driftwatch.testing.kafka import bootstrap_or_broker  # noqa: E402

NUMERIC = ("income", "age", "loan_amount", "dti", "months_employed")
CATEGORICAL = ("purpose", "region")
LEVELS = (("car", "home", "education", "debt"), ("north", "south", "east", "west"))
SCHEMA = FeatureSchema(numeric=NUMERIC, categorical=CATEGORICAL, levels=LEVELS)


def applications(n: int, seed: int = 7) -> list[bytes]:
    """``n`` JSON credit applications, as a scoring service would publish them."""
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10.5, 0.5, n).round(2)
    age = rng.integers(18, 80, n)
    amount = rng.lognormal(9.0, 0.8, n).round(2)
    dti = rng.uniform(0, 0.6, n).round(4)
    months = rng.integers(0, 400, n)
    purpose = rng.choice(LEVELS[0], n)
    region = rng.choice(LEVELS[1], n)
    score = rng.beta(2, 8, n).round(5)
    out = []
    for i in range(n):
        out.append(
            orjson.dumps(
                {
                    "application_id": f"app-{i:08d}",
                    "ts": 1_717_000_000 + i * 0.05,
                    "applicant": {
                        "income": income[i],
                        "age": int(age[i]),
                        "months_employed": int(months[i]),
                        "region": region[i],
                    },
                    "loan": {"amount": amount[i], "purpose": purpose[i], "dti": dti[i]},
                    "model": {"score": score[i], "version": "v12"},
                    "decision": "approve" if score[i] < 0.3 else "decline",
                },
                option=orjson.OPT_SERIALIZE_NUMPY,
            )
        )
    return out


PATHS = {
    "income": ("applicant", "income"),
    "age": ("applicant", "age"),
    "loan_amount": ("loan", "amount"),
    "dti": ("loan", "dti"),
    "months_employed": ("applicant", "months_employed"),
    "purpose": ("loan", "purpose"),
    "region": ("applicant", "region"),
}


def make_decoder() -> Decoder:
    """The project's decoder with a connector-like mapping of the applications."""
    feats = tuple(FeatureField(f, FieldPath(PATHS[f])) for f in (*NUMERIC, *CATEGORICAL))
    mapping = StreamMapping(
        name="predictions",
        event_id=FieldPath.parse("application_id"),
        event_time=TimeField(FieldPath.parse("ts"), "s"),
        features=feats,
        score=FieldPath.parse("model.score"),
        model_version=FieldPath.parse("model.version"),
        decision=DecisionField(FieldPath.parse("decision")),
    ).resolve(SCHEMA)
    return Decoder(mapping, SCHEMA)


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int,
            compression: str | None = None) -> float:
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, partitions, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20,
                             compression_type=compression,
                             batch_size=512 * 1024)  # fmt: skip
    t0 = time.perf_counter()
    for v in values:
        producer.send(topic, value=v)
    producer.flush()
    producer.close()
    return time.perf_counter() - t0


class Timed:
    """Time spent in a decoder's ``decode_lines`` (process CPU seconds)."""

    def __init__(self, decoder: Decoder) -> None:
        self.decoder = decoder
        self.cpu = 0.0

    def decode_lines(self, *args: Any, **kw: Any) -> Any:
        c0 = time.process_time()
        try:
            return self.decoder.decode_lines(*args, **kw)
        finally:
            self.cpu += time.process_time() - c0


def read_bare(bootstrap: str, topic: str, n: int, batch: int) -> tuple[float, float]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    seen = nbytes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while seen < n:
        for recs in consumer.poll(timeout_ms=1000, max_records=batch).values():
            seen += len(recs)
            nbytes += sum(len(r.value) for r in recs)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    consumer.close()
    return elapsed, cpu


class Skip:
    """A decoder that reads nothing: the source's own cost (client, offsets, bookkeeping)."""

    cpu = 0.0

    def decode_lines(self, lines: Any, **kw: Any) -> Any:
        return Batch.empty("predictions"), []


def read_source(
    bootstrap: str, topic: str, n: int, batch: int, decoder: Timed | Skip, *, align: bool = True
) -> tuple[float, float]:
    settings = KafkaSourceSettings(
        connection=KafkaConnection(bootstrap_servers=(bootstrap,),
                                   group_id=f"bench-{topic}-{uuid.uuid4().hex[:6]}"),
        topics=(KafkaTopic(topic, "predictions"),),
        dead_letter_path=str(Path(tempfile.gettempdir()) / f"{topic}-dead.jsonl"),
        align_event_time=align,
    )
    source = KafkaSource(settings, {"predictions": decoder})  # type: ignore[dict-item]
    seen = 0
    t0, c0 = time.perf_counter(), time.process_time()
    while seen < n:
        polled = source.poll(max_records=batch, timeout_s=1.0)
        assert polled is not None
        # counted by offsets: the skipping decoder returns no events
        seen = sum(source.positions.values())
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    source.close()
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--partitions", type=int, default=1)
    p.add_argument("--batch", type=int, default=10_000, help="max records per poll")
    p.add_argument("--bootstrap", help="use this broker instead of starting one")
    p.add_argument("--repeat", type=int, default=2, help="reads of each kind; best kept")
    p.add_argument("--compression", choices=["gzip", "snappy", "lz4", "zstd"],
                   help="the producer compresses its batches (both reads decompress them)")
    args = p.parse_args(argv)

    decoder = Timed(make_decoder())
    values = applications(args.events)
    size = sum(map(len, values)) / len(values)
    with bootstrap_or_broker(args.bootstrap) as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        t_produce = produce(bootstrap, topic, values, args.partitions, args.compression)
        bare, source, skip, unaligned = [], [], [], []
        for _ in range(args.repeat):
            bare.append(read_bare(bootstrap, topic, args.events, args.batch))
            skip.append(read_source(bootstrap, topic, args.events, args.batch, Skip()))
            decoder.cpu = 0.0
            source.append((*read_source(bootstrap, topic, args.events, args.batch, decoder),
                           decoder.cpu))
            unaligned.append(read_source(bootstrap, topic, args.events, args.batch,
                                         Timed(make_decoder()), align=False))
    n = args.events
    print(f"events            {n} x {size:.0f} B JSON, {args.partitions} partition(s), "
          f"{args.compression or 'no'} compression")
    print(f"produce           {n / t_produce:12,.0f} events/s")
    t_bare, c_bare = min(b[0] for b in bare), min(b[1] for b in bare)
    t_source, c_source, c_decode = min(source)
    c_source_best = min(s[1] for s in source)
    print(f"bare consumer     {n / t_bare:12,.0f} events/s  ({t_bare:.2f} s, {c_bare:.2f} s CPU)")
    print(f"KafkaSource       {n / t_source:12,.0f} events/s  ({t_source:.2f} s, "
          f"{c_source_best:.2f} s CPU, poll + decode)")
    t_skip, c_skip = min(b[0] for b in skip), min(b[1] for b in skip)
    print(f"source, no decode {n / t_skip:12,.0f} events/s  ({t_skip:.2f} s, {c_skip:.2f} s CPU)")
    t_un, c_un = min(u[0] for u in unaligned), min(u[1] for u in unaligned)
    print(f"source, no align  {n / t_un:12,.0f} events/s  ({t_un:.2f} s, {c_un:.2f} s CPU)")
    print(f"source / bare     {t_bare / t_source:12.2f}  (CPU time: {c_bare / c_source_best:.2f})")
    print(f"aligned / not     {t_un / t_source:12.2f}  (CPU time: {c_un / c_source_best:.2f})")
    print(f"no decode / bare  {t_bare / t_skip:12.2f}  (CPU time: {c_bare / c_skip:.2f})")
    print(f"decode share      {c_decode / c_source:12.0%}  of the source's CPU time")
    # the source's client side (fetching, record batches read in bulk, offsets, lag)
    # against the bare loop's (fetching, one ConsumerRecord per message)
    client = c_source - c_decode
    print(f"source's client   {client / c_bare:12.0%}  of the bare loop's CPU time "
          f"({client:.2f} s against {c_bare:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
