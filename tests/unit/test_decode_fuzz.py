"""Fuzzing the file source: malformed lines among good ones never stop it, and every line is
accounted for: decoded, or dead-lettered with its line number and reason."""

from __future__ import annotations

import base64
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.deadletter import DeadLetterWriter, read_dead_letters
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.file import FileSource
from driftwatch.jsonloads import loads
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.testing.generator import generate, prediction_records
from driftwatch.testing.scenarios import scenario_plan

RECORDS = list(prediction_records(generate(scenario_plan("quiet", n_events=300, days=3), seed=2)))
# what a line should become: ("good", id), ("bad", reason) or ("skip", "")
Expect = tuple[str, str]
Mutation = Callable[[dict[str, Any], random.Random], tuple[bytes, Expect]]


def _dump(r: dict[str, Any]) -> bytes:
    return orjson.dumps(r)


def _with(r: dict[str, Any], path: str, value: Any, delete: bool = False) -> dict[str, Any]:
    r = orjson.loads(orjson.dumps(r))
    *parents, leaf = path.split(".")
    node = r
    for p in parents:
        node = node[p]
    if delete:
        node.pop(leaf, None)
    else:
        node[leaf] = value
    return r


def good(r: dict[str, Any], _: random.Random) -> tuple[bytes, Expect]:
    return _dump(r), ("good", r["application_id"])


def crlf(r: dict[str, Any], _: random.Random) -> tuple[bytes, Expect]:
    return _dump(r) + b"\r", ("good", r["application_id"])


def int_id(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    n = rng.randrange(10**12)
    return _dump(_with(r, "application_id", n)), ("good", str(n))


def duplicate_key(r: dict[str, Any], _: random.Random) -> tuple[bytes, Expect]:
    return b'{"application_id":"shadowed",' + _dump(r)[1:], ("good", r["application_id"])


def missing_feature(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    key = rng.choice(["applicant.income", "applicant.age", "loan.purpose", "model.score"])
    return _dump(_with(r, key, None, delete=rng.random() < 0.5)), ("good", r["application_id"])


def truncated(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    line = _dump(r)
    return line[: rng.randrange(1, len(line) - 1)], ("bad", "invalid_json")


def json_token(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    tok = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"01", b"'x'", b"tru"])
    line = _dump(_with(r, "model.score", "@@")).replace(b'"@@"', tok)
    # Python's json.dumps writes NaN and the infinities: read, and no score a model gives
    python = tok in (b"NaN", b"Infinity", b"-Infinity")
    return line, ("bad", "non_finite_score" if python else "invalid_json")


def encoding(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    line = _dump(r)
    if rng.random() < 0.5:
        return b"\xef\xbb\xbf" + line, ("bad", "invalid_json")
    return line.replace(b'"web"', b'"w\xffb"').replace(b'"mobile"', b'"m\x01b"') \
        .replace(b'"branch"', b'"b\xc3"').replace(b'"broker"', b'"\xed\xa0\x80"'), \
        ("bad", "invalid_json")


def deep(r: dict[str, Any], _: random.Random) -> tuple[bytes, Expect]:
    return _dump(r)[:-1] + b',"x":' + b"[" * 1100 + b"]" * 1100 + b"}", ("bad", "invalid_json")


def not_object(_: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    return rng.choice([b"null", b"[]", b"[1,{}]", b"3", b'"x"', b"true", b" null "]), \
        ("bad", "not_an_object")


def no_id(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    v = rng.choice([None, "", "   ", "DELETE"])
    return _dump(_with(r, "application_id", v, delete=v == "DELETE")), ("bad", "missing_id")


def no_time(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    return _dump(_with(r, "ts", None, delete=rng.random() < 0.5)), ("bad", "missing_time")


def bad_time(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    v = rng.choice(["yesterday", "2024-13-45", True, {}, [1], "", "nan"])
    return _dump(_with(r, "ts", v)), ("bad", "bad_time")


def wrong_type(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    key = rng.choice(["applicant.income", "applicant.age", "loan.amount", "model.score"])
    # a boolean feature typed numeric is 0/1, a boolean score is not a probability
    v = rng.choice(["abc", "1.5", {}, [1], *((True, False) if key == "model.score" else ())])
    if rng.random() < 0.2:
        key, v = rng.choice(["applicant", "loan"]), rng.choice([5, "x", [1], True])
    return _dump(_with(r, key, v)), ("bad", "wrong_type")


def score_range(r: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    return _dump(_with(r, "model.score", rng.choice([1.5, -0.25, 7, -1e300]))), \
        ("bad", "score_out_of_range")


def blank(_: dict[str, Any], rng: random.Random) -> tuple[bytes, Expect]:
    return rng.choice([b"", b"   ", b"\t", b"\r"]), ("skip", "")


MUTATIONS: list[Mutation] = [good, crlf, int_id, duplicate_key, missing_feature, truncated,
                             json_token, encoding, deep, not_object, no_id, no_time, bad_time,
                             wrong_type, score_range, blank]  # fmt: skip


def garbage(data: bytes) -> tuple[bytes, Expect]:
    """Random bytes on one line; the reference parser (orjson, with Python's NaN and
    Infinity tokens) says what they are."""
    line = data.replace(b"\n", b" ").replace(b"\r", b" ")
    if not line.strip():
        return line, ("skip", "")
    try:
        v = loads(line)
    except orjson.JSONDecodeError:
        return line, ("bad", "invalid_json")
    if isinstance(v, dict):
        return b"{" + line, ("bad", "invalid_json")
    return line, ("bad", "not_an_object")


def check(lines: list[tuple[bytes, Expect]], batch_size: int, block_parse: bool = True) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "p.jsonl").write_bytes(b"\n".join(line for line, _ in lines) + b"\n")
        (root / "o.jsonl").write_bytes(b"")
        dl = DeadLetterWriter(root / "dead.jsonl")
        c = credit_connector("p.jsonl", "o.jsonl", base_dir=root)
        src = FileSource(c, credit_schema(), batch_size=batch_size, dead_letter=dl)
        if not block_parse:
            src._decoders["predictions"] = Decoder(c.stream("predictions"), credit_schema(),
                                                   block_parse=False)  # fmt: skip
        ids, positions, polled_bad = [], [], 0
        while (p := src.poll()) is not None:
            for b in p.batches:
                ids += b.ids.tolist()
                positions += b.position.tolist()
            polled_bad += len(p.bad)
        src.close()
        want_good = [(e[1], n) for n, (_, e) in enumerate(lines, 1) if e[0] == "good"]
        want_bad = sorted((n, e[1]) for n, (_, e) in enumerate(lines, 1) if e[0] == "bad")
        assert list(zip(ids, positions, strict=True)) == want_good
        letters = read_dead_letters(dl.path) if dl.path.exists() else []
        assert sorted((d["position"], d["reason"]) for d in letters) == want_bad
        assert polled_bad == len(want_bad)
        assert dl.counts == dict(Counter(reason for _, reason in want_bad))
        for d in letters:  # the raw line comes back byte for byte (its line end excluded)
            raw = d["raw"].encode() if "raw" in d else base64.b64decode(d["raw_b64"])
            assert raw == lines[d["position"] - 1][0].removesuffix(b"\r")
        assert src.positions == {"p.jsonl": len(lines), "o.jsonl": 0}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(
    plan=st.lists(st.tuples(st.integers(0, len(MUTATIONS)), st.integers(0, 2**32),
                            st.binary(max_size=40)), min_size=1, max_size=150),
    batch_size=st.sampled_from([1, 3, 64, 1000]),
)  # fmt: skip
def test_malformed_lines_never_stop_the_source(plan: list[tuple[int, int, bytes]],
                                               batch_size: int) -> None:  # fmt: skip
    lines = []
    for i, (m, seed, data) in enumerate(plan):
        rng = random.Random(seed)
        rec = RECORDS[i % len(RECORDS)]
        lines.append(garbage(data) if m == len(MUTATIONS) else MUTATIONS[m](rec, rng))
    # a file that opens like a JSON array dump is refused whole (test_onboard_files.py)
    first = next((ln.strip() for ln, _ in lines if ln.strip()), b"")
    assume(first != b"[" and not first.startswith(b"[{"))
    check(lines, batch_size)


def test_thousands_of_seeded_lines_both_parsers() -> None:
    rng = random.Random(20240101)
    weights = np.array([30.0] + [1.0] * (len(MUTATIONS) - 1))
    picks = np.random.default_rng(7).choice(len(MUTATIONS), 6000, p=weights / weights.sum())
    lines = []
    for i, m in enumerate(picks.tolist()):
        rec = RECORDS[i % len(RECORDS)]
        if i % 97 == 0:
            lines.append(garbage(rng.randbytes(rng.randrange(1, 30))))
        else:
            lines.append(MUTATIONS[m](rec, rng))
    assert {e[1] for _, e in lines if e[0] == "bad"} == {  # every reason a prediction can get
        "invalid_json", "not_an_object", "missing_id", "missing_time", "bad_time", "wrong_type",
        "score_out_of_range", "non_finite_score"}
    check(lines, batch_size=1024)
    check(lines, batch_size=500, block_parse=False)
