"""Replay recorded streams from files: the :class:`~driftwatch.connectors.base.Source` for
``driftwatch replay``.

Every stream's files (JSONL, CSV, gzip or not, Parquet, Kafka recordings) are read in
micro-batches and merged into one event-time order (see :mod:`driftwatch.connectors.merge`):
a predictions file and an outcomes file come out interleaved as they happened. A poll
yields one batch per stream present, each in merged order, with ``Polled.order`` saying
which batch holds each next record; every record of a poll comes before every record of
the next.

Positions are ``{file: lines consumed}`` (the file as matched: relative to the base folder
when its glob was); :meth:`FileSource.seek` resumes after them; :meth:`FileSource.commit`
has nothing to acknowledge. A file not sorted by time keeps its own order (late records
follow the one before them); resuming such a file restarts its running maximum, so late
records after the resume point may interleave differently than in an uninterrupted run.

Reading ahead: with ``read_ahead`` (the default where the process may use two cores or
more), every file is read and decoded on one
worker thread, which starts on a file's next chunk as soon as its current one is taken.
pyarrow's JSON parse, CSV and Parquet reads release the GIL, so decoding overlaps with
whatever the caller does between polls (sketches, detectors, the timeline) on a second
core. The chunks, their order and every position are the same as without it: one
thread does every read, so the decoders are never used at once, and a file's chunk is
merged only when the merger asks for that file. At most one chunk per file is held
ahead.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from driftwatch.connectors.base import Polled
from driftwatch.connectors.config import Connector
from driftwatch.connectors.deadletter import DeadLetterWriter
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonscan import leave_cores
from driftwatch.connectors.mapping import StreamMapping
from driftwatch.connectors.merge import EventMerger
from driftwatch.connectors.readers import Chunk, FileReader, detect_format
from driftwatch.cores import usable_cores
from driftwatch.csvdecimal import DecimalMark, csv_notes, file_decimal
from driftwatch.csvheader import refuse_data_header
from driftwatch.csvnames import named_header
from driftwatch.csvsep import file_separator
from driftwatch.errors import ConnectorError, SourceError
from driftwatch.schema import FeatureSchema

__all__ = ["FileInput", "FileSource", "bind_inputs", "discover_inputs", "separator_notes"]


@dataclass(frozen=True)
class FileInput:
    """One file bound to the stream(s) it feeds (several only for a Kafka recording)."""

    path: Path  # where to open it
    key: str  # its name in positions and dead letters
    streams: tuple[str, ...]
    format: str  # resolved: jsonl | csv | parquet | kafka-recording
    delimiter: str | None = None  # a CSV's separator; None: found in its header on opening
    sniffed: bool = False  # the delimiter was found in the header, not configured
    decimal: str | None = None  # a CSV's decimal mark; None: found in its first rows on opening
    decimal_found: DecimalMark | None = None  # what its first rows show, when not configured
    #: a headerless CSV's column names (the stream's ``csv: {names:}``); None: its header's
    names: tuple[str, ...] | None = None
    #: with ``names``: whether its first line is a header equal to them, skipped
    named_header: bool = False


class FileSource:
    """Reads a connector's files (or explicit inputs) as one time-ordered stream.

    ``schema`` is the decoding schema (``connector.schema_for(reference.schema)``).
    Bad records come back in :attr:`Polled.bad` and, when ``dead_letter`` is given, are
    written and flushed there on every poll. ``read_ahead`` decodes each file's next
    chunk on a worker thread while the caller works (see the module docstring);
    :meth:`close` stops it.
    """

    def __init__(
        self,
        connector: Connector,
        schema: FeatureSchema,
        *,
        batch_size: int = 10_000,
        dead_letter: DeadLetterWriter | None = None,
        inputs: Sequence[FileInput] | None = None,
        read_ahead: bool | None = None,
    ) -> None:
        self.connector = connector
        self.schema = schema
        self.batch_size = batch_size
        self.dead_letter = dead_letter
        self.inputs = list(inputs) if inputs is not None else _discover(connector)
        names = [s.name for s in connector.streams]
        self._decoders = {s.name: Decoder(s, schema) for s in connector.streams}
        self._stream_index = {n: i for i, n in enumerate(names)}
        for inp in self.inputs:
            _check_input(connector, inp)
        _one_file_per_numbered_stream(connector, self.inputs)
        # ties in event time: stream order, then file order
        order = sorted(range(len(self.inputs)), key=lambda i: (
            min(self._stream_index[s] for s in self.inputs[i].streams), i))
        self._ranks = [order.index(i) for i in range(len(self.inputs))]
        self._skip: dict[str, int] = {}
        self._readers: list[FileReader] | None = None
        self._merger: EventMerger | None = None
        # by default only with a second core to run on: on one, the worker only adds
        # hand-offs and contention for the GIL to the same work
        self.read_ahead = usable_cores() >= 2 if read_ahead is None else read_ahead
        self._worker: ThreadPoolExecutor | None = None
        #: files opened from now on are mapped rather than read where they can be
        #: (:class:`~driftwatch.connectors.readers.FileReader`'s ``mapped``): set by the
        #: reader process, where a file truncated while mapped ends that process alone
        self.map_files = False
        self._ahead: dict[int, Future[tuple[Chunk, bool]]] = {}

    @classmethod
    def from_paths(
        cls,
        connector: Connector,
        schema: FeatureSchema,
        inputs: Sequence[str | Path],
        *,
        batch_size: int = 10_000,
        dead_letter: DeadLetterWriter | None = None,
    ) -> FileSource:
        """Bind each input to a stream: ``stream=path``, or the stream whose globs match it,
        or (a Kafka recording) the streams whose topics it holds."""
        return cls(connector, schema, batch_size=batch_size, dead_letter=dead_letter,
                   inputs=bind_inputs(connector, inputs))

    # -- Source -----------------------------------------------------------------------------
    def poll(self, max_records: int | None = None, timeout_s: float = 1.0) -> Polled | None:
        """The next records in event-time order (at most ``max_records``, default the batch
        size); ``None`` once every file is read and handed out."""
        _, merger = self._open()
        limit = max_records or self.batch_size
        nbytes = 0
        while not merger.done and merger.ready() < limit:
            i = merger.limiting()
            if i is None:
                break
            chunk, exhausted = self._next_chunk(i)
            nbytes += chunk.nbytes
            merger.add(i, chunk.parts, chunk.bad, chunk.bad_lines, end_line=chunk.end_line,
                       exhausted=exhausted)
        if merger.done and merger.ready() == 0:
            return None
        taken = merger.take(limit)
        lut = np.full(max((s for s, _ in taken.batches), default=0) + 1, -1, dtype=np.intp)
        for k, (s, _) in enumerate(taken.batches):
            lut[s] = k
        polled = Polled(
            batches=[b for _, b in taken.batches],
            bad=taken.bad,
            positions=self.positions,
            bytes_read=nbytes,
            order=lut[taken.order[taken.order >= 0]] if taken.batches else None,
            bad_at=taken.bad_at if taken.batches else None,
        )
        if self.dead_letter is not None and taken.bad:
            self.dead_letter.write(taken.bad)
            self.dead_letter.flush()
        return polled

    @property
    def positions(self) -> dict[str, int]:
        """Lines consumed per input file."""
        if self._merger is None:
            return {inp.key: self._skip.get(inp.key, 0) for inp in self.inputs}
        return {inp.key: n for inp, n in zip(self.inputs, self._merger.positions(), strict=True)}

    def seek(self, positions: Mapping[str, int]) -> None:
        """Resume after ``positions`` (lines consumed per file, as :attr:`positions` gives)."""
        known = {inp.key for inp in self.inputs}
        unknown = sorted(set(positions) - known)
        if unknown:
            raise SourceError(f"positions name files this source does not read: "
                              f"{', '.join(unknown)}; inputs: {', '.join(sorted(known))}")
        self.close()
        self._skip = {k: int(v) for k, v in positions.items()}

    def commit(self, positions: Mapping[str, int]) -> None:
        """Nothing to acknowledge for files."""

    def close(self) -> None:
        """Close the files; :attr:`positions` keeps what was handed out (a later poll
        reopens them and goes on from there)."""
        if self._merger is not None:
            self._skip = self.positions
        if self._worker is not None:  # chunks read ahead are dropped: the files reopen
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None
        self._ahead.clear()
        for r in self._readers or ():
            r.close()
        self._readers, self._merger = None, None
        if self.dead_letter is not None:
            self.dead_letter.flush()

    @property
    def skipped_topics(self) -> dict[str, int]:
        """Recorded messages of topics no stream maps, by topic (read and left out)."""
        out: dict[str, int] = {}
        for r in self._readers or ():
            for t, n in dict(r.skipped_topics).items():  # one copy: a worker may add to it
                out[t] = out.get(t, 0) + n
        return out

    def _open(self) -> tuple[list[FileReader], EventMerger]:
        if self._readers is None or self._merger is None:
            readers = []
            try:
                for inp in self.inputs:
                    decs = [(self._stream_index[s], self._decoders[s]) for s in inp.streams]
                    readers.append(FileReader(inp.path, inp.key, inp.format, decs,
                                              batch_size=self.batch_size,
                                              skip_lines=self._skip.get(inp.key, 0),
                                              delimiter=inp.delimiter,
                                              decimal=inp.decimal, names=inp.names,
                                              named_header=inp.named_header,
                                              mapped=self.map_files))
            except SourceError:
                for r in readers:
                    r.close()
                raise
            merger = EventMerger(self._ranks, [
                any(self.connector.stream(s).event_time.source == "order" for s in inp.streams)
                for inp in self.inputs])
            for i, inp in enumerate(self.inputs):
                merger.inputs[i].consumed = merger.inputs[i].read_to = self._skip.get(inp.key, 0)
            self._readers, self._merger = readers, merger
        return self._readers, self._merger

    def _next_chunk(self, i: int) -> tuple[Chunk, bool]:
        """File ``i``'s next chunk and whether the file ended with it; with read-ahead,
        the one read on the worker, whose next read then starts."""
        readers = self._readers
        assert readers is not None
        if not self.read_ahead:
            return _read_chunk(readers[i])
        if self._worker is None:
            # the loop keeps a core to judge on: the worker's scans leave it one
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="driftwatch-read",
                                              initializer=leave_cores, initargs=(1,))
        fut = self._ahead.pop(i, None)
        if fut is None:
            if readers[i].exhausted:  # the worker never touches a finished file
                return _read_chunk(readers[i])
            fut = self._worker.submit(_read_chunk, readers[i])
        chunk, exhausted = fut.result()  # a read's error is raised here, as without
        if not exhausted:
            self._ahead[i] = self._worker.submit(_read_chunk, readers[i])
        return chunk, exhausted




def _read_chunk(reader: FileReader) -> tuple[Chunk, bool]:
    chunk = reader.next_chunk() or Chunk(end_line=reader.line)
    return chunk, reader.exhausted


# -- binding files to streams ------------------------------------------------------------------


def _base(connector: Connector) -> Path:
    return connector.base_dir if connector.base_dir is not None else Path.cwd()


def _key(path: Path, base: Path) -> str:
    full = Path(os.path.normpath(path.absolute()))
    try:
        return full.relative_to(Path(os.path.normpath(base.absolute()))).as_posix()
    except ValueError:
        return full.as_posix()


def _resolve_format(s: StreamMapping, path: Path) -> str:
    return detect_format(path) if s.format == "auto" else s.format


def discover_inputs(connector: Connector) -> list[FileInput]:
    """The files of every stream's ``paths`` globs (what a source reads without inputs)."""
    return _discover(connector)


def _discover(connector: Connector) -> list[FileInput]:
    base = _base(connector)
    seen: dict[str, tuple[Path, list[str]]] = {}
    for s in connector.streams:
        if not s.paths:
            raise connector.error(("source", "streams", s.name), f"stream {s.name!r} has no "
                                  "paths; add `paths:` or give the files as inputs")
        for pi, pattern in enumerate(s.paths):
            full = pattern if Path(pattern).is_absolute() else str(base / pattern)
            found = sorted(glob.glob(full, recursive=True))
            if not found:
                raise connector.error(("source", "streams", s.name, "paths", pi),
                                      "no file matches this path", found=repr(pattern))
            for f in found:
                key = _key(Path(f), base)
                streams = seen.setdefault(key, (Path(f), []))[1]
                if s.name not in streams:
                    streams.append(s.name)
    return [_make_input(connector, path, key, tuple(streams)) for key, (path, streams) in
            seen.items()]


def _make_input(connector: Connector, path: Path, key: str, streams: tuple[str, ...]) -> FileInput:
    fmts = {_resolve_format(connector.stream(s), path) for s in streams}
    if len(fmts) > 1:
        raise SourceError(f"{key} is read by streams {', '.join(streams)} with different formats "
                          f"({', '.join(sorted(fmts))})")
    fmt = fmts.pop()
    if len(streams) > 1 and fmt != "kafka-recording":
        raise SourceError(f"{key} matches the paths of several streams ({', '.join(streams)}); "
                          "only a Kafka recording may feed several streams")
    if fmt != "csv" or not path.exists():  # a missing file fails where it is opened
        return FileInput(path, key, streams, fmt)
    (name,) = streams
    stream = connector.stream(name)
    # each file by its own head: a folder may hold exports of both kinds
    sep = stream.delimiter or file_separator(
        path, key, fix=f"set it on stream {name!r}: csv: {{delimiter: \";\"}}")
    if stream.names is None:
        refuse_data_header(path, sep, key, fix=f"or name the columns on stream {name!r}: "
                           "csv: {names: [...]}")
        header = False
    else:
        header = named_header(path, sep, stream.names, key)
    found = None if stream.decimal is not None else file_decimal(path, sep)
    return FileInput(path, key, streams, fmt, sep, sniffed=stream.delimiter is None,
                     decimal=stream.decimal or (found.mark if found else None),
                     decimal_found=found, names=stream.names, named_header=header)


def separator_notes(inputs: Sequence[FileInput]) -> list[str]:
    """The lines that say how each CSV is read, when its head decided something other than
    the comma and the decimal point (or could not tell its decimal mark)."""
    return [note for i in inputs if i.format == "csv" for note in csv_notes(
        i.key, i.delimiter or ",", i.decimal_found, sep_found=i.sniffed,
        fix=f'if it is the comma, set it on stream {i.streams[0]!r}: csv: {{decimal: ","}}',
        header=i.names is None or i.named_header)]


def bind_inputs(connector: Connector, inputs: Sequence[str | Path]) -> list[FileInput]:
    """Inputs given on the command line, bound to streams (see :meth:`FileSource.from_paths`)."""
    base = _base(connector)
    names = [s.name for s in connector.streams]
    out: list[FileInput] = []
    for raw in inputs:
        text = str(raw)
        stream, _, rest = text.partition("=")
        if rest and stream in names:
            path = Path(rest)
            out.append(_make_input(connector, path, _key(path, base), (stream,)))
            continue
        if rest and not Path(text).exists():
            raise SourceError(f"input {text!r}: no stream named {stream!r}; streams: "
                              f"{', '.join(names)}")
        path = Path(text)
        if not path.exists():
            raise SourceError(f"input {text!r} does not exist")
        key = _key(path, base)
        matched = [s.name for s in connector.streams if any(
            fnmatch.fnmatch(key, p) or fnmatch.fnmatch(path.name, Path(p).name) for p in s.paths)]
        if not matched and detect_format(path) == "kafka-recording":
            matched = [s.name for s in connector.streams if s.topic_name]
        if not matched:  # a file named after exactly one stream ("...predictions...")
            named = [n for n in names if n in path.name]
            matched = named if len(named) == 1 else []
        if not matched:
            raise SourceError(f"input {text!r} matches no stream's paths; write it as "
                              f"stream=path (streams: {', '.join(names)})")
        out.append(_make_input(connector, path, key, tuple(matched)))
    return out


def _one_file_per_numbered_stream(connector: Connector, inputs: Sequence[FileInput]) -> None:
    """A stream whose ids are its records' numbers in their file (``event_id: {source:
    order}``) reads one file: the numbers of a second would repeat the first's."""
    for s in connector.streams:
        if s.event_id is not None:
            continue
        files = [inp.key for inp in inputs if s.name in inp.streams]
        if len(files) > 1:
            raise ConnectorError(f"stream {s.name!r} numbers its records as their ids "
                                 "(event_id: {source: order}), one file's numbers: expected "
                                 f"one file, found {len(files)} ({', '.join(files)})",
                                 file=connector.file, hint="join them into one file, or "
                                 "replay each on its own")


def _check_input(connector: Connector, inp: FileInput) -> None:
    if inp.format == "kafka-recording" and len(inp.streams) > 1:
        for s in inp.streams:
            if connector.stream(s).topic_name is None:
                raise ConnectorError(f"{inp.key}: a Kafka recording feeding several streams "
                                     f"needs a topic on each; stream {s!r} has none",
                                     file=connector.file)
    for s in inp.streams:
        if connector.stream(s).avro is not None and inp.format != "kafka-recording":
            raise ConnectorError(f"{inp.key}: stream {s!r} reads Avro values (avro:), which "
                                 "only a Kafka recording holds (format "
                                 f"{inp.format}); record the topic with driftwatch record",
                                 file=connector.file)
        if connector.stream(s).event_id is None and inp.format == "kafka-recording":
            raise ConnectorError(f"{inp.key}: stream {s!r} numbers its records as their ids "
                                 "(event_id: {source: order}); a Kafka recording's records "
                                 "are Kafka messages", file=connector.file,
                                 hint="map the records' id field")
        t = connector.stream(s).event_time
        if t.source == "kafka_timestamp" and inp.format != "kafka-recording":
            raise ConnectorError(f"{inp.key}: stream {s!r} takes event time from the Kafka "
                                 f"timestamp, which only a Kafka recording has (format "
                                 f"{inp.format})", file=connector.file)
