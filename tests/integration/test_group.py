"""Instances of ``driftwatch run`` in one consumer group give the replay's timeline.

One recording (predictions and outcomes, both keyed by the application id) is produced to
two 16-partition topics. One, two and four real daemons in one consumer group sketch their
partitions, publish pane sketches to the pane log, and the decider of the model merges
them; the union of their timelines must be the replay's windows (bounds, sketches, every
signal, tiers and decisions), each window written by one instance only, and each decided
action in exactly one outbox. The policy has a cohort rule and a label-free estimate:
each partition's cohort rows travel with its panes, so the verdicts on cohorts (and the
estimates of each window) are the replay's too. Two daemons with a segmented policy
(the top 2 channels and ``other``) give every segment's signals and reasons as the
replay does. Then the same with the deciding instance (segmented policy)
SIGKILLed between a batch durable in the pane log and that batch's timeline lines and
actions, and restarted, and with an instance added mid-stream; a partition that never gets
a record; and outcomes partitioned unlike their predictions, refused.

The last windows of the replay close only at the end of the files (a flush); a live group
closes a pane once every partition has passed it, so the expected windows are those that
end before the slowest partition's watermark.
"""

from __future__ import annotations

import gzip
import math
import signal
import sqlite3
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.service.group.outputs import CRASH_HOOK
from driftwatch.testing.generator import CHANNELS, write_scenario
from driftwatch.testing.kafka import create_topic
from driftwatch.testing.recording import demo_kafka_connector
from driftwatch.testing.timelines import assert_same_windows

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = 16
PANE_S = 7 * 86_400.0
COHORT_SIGNALS = ("  - detector: cohort_bad_rate_gap\n    weight: 2\n"
                  "    thresholds: {mild: 0.03, moderate: 0.05}\n"
                  "  - detector: expected_bad_rate\n    measure: rel_change\n"
                  "    thresholds: {mild: 0.08}\n")
KEYS = ("window_id", "first_index", "last_index", "start_time", "end_time", "n_events",
        "n_bad", "n_late", "n_labelled", "n_labelled_bad", "features", "partial", "tier",
        "decision")


def _lines(path: Path) -> list[bytes]:
    with gzip.open(path, "rb") as fh:
        return [line for line in fh if line.strip()]


def _partition(line: bytes) -> int:
    return zlib.crc32(orjson.loads(line)["application_id"].encode()) % PARTITIONS


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("group")
    write_scenario("demo", out, seed=5, n_events=8_000, reference_rows=6_000)
    text = (ROOT / "policies" / "credit-risk-demo.yaml").read_text(encoding="utf-8")
    start, end = text.index("window:\n"), text.index("mode: sliding")
    text = text[:start] + "window:\n  kind: time\n  pane: 7d\n  panes: 4\n  " + text[end:]
    # event-time panes (a group merges by pane); a fixed KS level: calibrating every
    # window size of a time window costs seconds each, and is not what is tested here
    policy = out / "policy.yaml"
    text = text.replace("mild: {calibrated: {false_alarm_rate: 0.001}}", "mild: 0.12")
    # a cohort rule and a label-free estimate; cohorts of a week (about 270 outcomes each)
    # judged once 60% of their outcomes are in
    text = text.replace("signals:\n", "signals:\n" + COHORT_SIGNALS, 1)
    policy.write_text(text + "cohorts: {min_completeness: 0.6}\ndetectors: {min_labelled: 150}\n",
                      encoding="utf-8")
    lines = {s: _lines(out / f"{s}.jsonl.gz") for s in ("predictions", "outcomes")}
    want = _replayed(out, policy, out / "reference.parquet", lines)
    assert sum(bool(r.get("cohort")) for r in want) >= 5, "too few verdicts to compare"
    approved = {orjson.loads(x)["application_id"] for x in lines["predictions"]
                if orjson.loads(x)["decision"] == "approve"}
    joins = sum(orjson.loads(x)["application_id"] in approved for x in lines["outcomes"])
    # the labelled rows of the panes a live group completes: outcomes (of approved
    # applications) before the slowest partition's watermark, and the bad ones among them
    closable = _closable(lines)  # once: it reads every line
    landed = [o["defaulted"] for o in map(orjson.loads, lines["outcomes"])
              if o["application_id"] in approved and o["outcome_ts"] < closable]
    labelled = {"added": len(landed), "bad": sum(landed)}
    return {"dir": out, "policy": policy, "lines": lines, "want": want, "joins": joins,
            "labelled": labelled}


def _closable(lines: dict[str, list[bytes]]) -> float:
    """The slowest partition's watermark, floored to a pane: panes ending after it stay
    open in a live group."""
    field = {"predictions": "ts", "outcomes": "outcome_ts"}
    last: dict[tuple[str, int], float] = {}
    for s, ls in lines.items():
        for line in ls:
            key = (s, _partition(line))
            last[key] = max(last.get(key, -math.inf), float(orjson.loads(line)[field[s]]))
    return math.floor(min(last.values()) / PANE_S) * PANE_S


@pytest.fixture(scope="module")
def segmented(recording: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same recording under a segmented policy: the reference gets a channel column
    (the stream's mix), the policy ``reference.segment: channel`` and the top 2 channels,
    so the other two fall in ``other``."""
    out = tmp_path_factory.mktemp("group-segments")
    for s in ("predictions", "outcomes"):
        (out / f"{s}.jsonl.gz").symlink_to(recording["dir"] / f"{s}.jsonl.gz")
    ref = pq.read_table(recording["dir"] / "reference.parquet")
    channel = np.random.default_rng(5).choice(CHANNELS, ref.num_rows, p=[0.45, 0.25, 0.2, 0.1])
    pq.write_table(ref.append_column("channel", pa.array(channel.tolist())),
                   out / "reference.parquet")
    text = recording["policy"].read_text(encoding="utf-8")
    text = text.replace("\nreference:\n", "\nreference:\n  segment: channel\n", 1)
    # the deciding instance's test needs a verdict that repeats its window's action: the
    # missing debt_to_income the scenario plants closes the data-quality gate, which holds
    # verdicts as it holds windows, and a severe retraining's cooldown holds the tiers below
    text = text.replace("        utilization: 0.25", "        utilization: 0.25\n"
                        "        debt_to_income: 0.9", 1)
    severe = text.index("  severe:\n    type: retrain")
    text = text[:severe] + "  severe: none" + text[text.index("\n\n", severe):]
    policy = out / "policy.yaml"
    policy.write_text(text + "segments: {top_k: 2, min_events: 300}\n", encoding="utf-8")
    want = _replayed(out, policy, out / "reference.parquet", recording["lines"])
    named = {x["segment"] for r in want for x in (r["decision"] or {}).get("reasons", ())
             if x.get("segment")}
    assert named >= {"web", "other"}, f"too few segment verdicts to compare: {named}"
    return {**recording, "dir": out, "policy": policy, "want": want}


def _replayed(folder: Path, policy: Path, reference: Path,
              lines: dict[str, list[bytes]]) -> list[dict]:
    """The replay's lines of ``folder``'s recording that a live group writes: windows
    ending before the slowest partition's watermark (later panes stay open), and the
    cohort verdicts those windows' closes judged."""
    replay(ROOT / "connectors" / "demo-file.yaml",
           [folder / "predictions.jsonl.gz", folder / "outcomes.jsonl.gz"], folder / "replay",
           policy=policy, reference=reference, progress=False, report=False)
    closable = _closable(lines)
    # a cohort's verdict follows the window whose close judged it
    want, judged_at = [], None
    for r in read_timeline(folder / "replay" / "timeline.jsonl"):
        judged_at = judged_at if r.get("cohort") else r["end_time"]
        if judged_at <= closable:
            want.append(r)
    return want


def _topics(bootstrap: str) -> dict[str, str]:
    tag = time.monotonic_ns()
    return {s: create_topic(bootstrap, f"group-{s}-{tag}", PARTITIONS)
            for s in ("predictions", "outcomes")}


@pytest.fixture(scope="module")
def topics(recording, kafka_endpoint) -> dict[str, str]:
    names = _topics(kafka_endpoint.bootstrap)
    _produce(kafka_endpoint.bootstrap, names, recording["lines"], slice(None))
    return names


def _produce(bootstrap: str, topics: dict[str, str], lines: dict[str, list[bytes]],
             part: slice, shift: int = 0) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=[bootstrap], acks="all", linger_ms=20)
    try:
        for stream, ls in lines.items():
            for line in ls[part]:
                key = orjson.loads(line)["application_id"].encode()
                producer.send(topics[stream], key=key, value=line.rstrip(b"\n"),
                              partition=(zlib.crc32(key) + shift) % PARTITIONS)
        producer.flush(60)
    finally:
        producer.close()


def _config(tmp: Path, bootstrap: str, topics: dict[str, str], group: str, recording: dict,
            service_config_factory: Callable[..., Path], idle: str = "30s") -> Path:
    connector = demo_kafka_connector(tmp / "connector.yaml", bootstrap, topics, group)
    return service_config_factory(
        tmp / "driftwatch.yaml", connector, recording["policy"],
        reference=recording["dir"] / "reference.parquet", batch_size=5000,
        extra=f"group: {{enabled: true, topic: {group}.panes, idle_timeout: {idle}}}\n")


class Group:
    """Daemons of one group; their timelines and outboxes read together."""

    def __init__(self, tmp: Path, config: Path, start: Callable[..., object],
                 env: dict[str, str] | None = None) -> None:
        self.tmp, self.config, self._start, self.env = tmp, config, start, env
        self.daemons: dict[str, object] = {}

    def start(self, name: str) -> object:
        d = self._start(self.config, self.tmp / name, env=self.env)
        self.daemons[name] = d
        return d

    def records(self) -> list[dict]:
        out = []
        for path in sorted(self.tmp.glob("*/out/*/timeline.jsonl")):
            lines = path.read_bytes().split(b"\n")[:-1]  # not a line being written
            out += [orjson.loads(x) for x in lines if x.strip()]
        return out

    def actions(self) -> list[tuple[str, int, str]]:
        rows = []
        for db in sorted(self.tmp.glob("*/models/*/outbox.sqlite3")):
            con = sqlite3.connect(db)
            try:
                rows += con.execute("SELECT key, window_id, action FROM actions").fetchall()
            finally:
                con.close()
        return rows

    def wait_windows(self, n: int, timeout: float = 90.0) -> None:
        """Until ``n`` timeline lines (windows and cohort verdicts) are written."""
        any_daemon = next(iter(self.daemons.values()))
        any_daemon.wait_for(f"{n} lines", lambda: len({_line_id(r) for r in
                                                       self.records()}) >= n, timeout)

    def decider(self) -> str | None:
        """The name of the instance that decides now (None: none, mid-rebalance)."""
        for name, d in self.daemons.items():
            if d.proc.poll() is None and d.status()["models"][0]["group"]["deciding"]:
                return name
        return None

    def wait_assigned(self, *names: str) -> None:
        """Until each of ``names`` owns partitions (the group has rebalanced to them)."""
        for name in names:
            d = self.daemons[name]
            d.wait_ready()
            d.wait_for(f"partitions for {name}",
                       lambda d=d: d.status()["models"][0]["group"]["partitions"], 90.0)

    def stop(self) -> None:
        live = [d for d in self.daemons.values() if d.proc.poll() is None]
        for d in live:  # all at once: one rebalance, not one per instance
            d.proc.send_signal(signal.SIGTERM)
        for d in live:
            assert d.wait_exit() == 0, d.log()[-3000:]


def _line_id(r: dict) -> tuple[int, bool]:
    """A window and the verdict on its cohort share the window id."""
    return r["window_id"], bool(r.get("cohort"))


def _check_labelled(group: Group, recording: dict) -> None:
    """The decider's labelled rows (what its online updates and shadows learn from) are
    every partition's joins that landed in the panes it merged, once each."""
    for d in group.daemons.values():
        if d.proc.poll() is None:
            d.wait_ready()
    decider = group.daemons[next(iter(group.daemons.values())).wait_for("a decider",
                                                                       group.decider)]
    seen: list[dict] = []

    def rows() -> bool:
        got = decider.status()["models"][0]["labelled_rows"]
        seen.append({k: got[k] for k in ("added", "bad")})
        return seen[-1] == recording["labelled"]

    if not decider.wait_for("the labelled rows", rows, 60.0):
        pytest.fail(f"labelled rows {seen[-1]}, expected {recording['labelled']}")


def _check(group: Group, want: list[dict]) -> None:
    got = group.records()
    ids = [_line_id(r) for r in got]
    assert len(ids) == len(set(ids)), f"a line was written twice: {sorted(ids)}"
    for verdicts in (False, True):
        a = sorted((r for r in got if bool(r.get("cohort")) == verdicts), key=_line_id)
        b = sorted((r for r in want if bool(r.get("cohort")) == verdicts), key=_line_id)
        assert_same_windows(a, b, keys=(*KEYS, "cohort") if verdicts else KEYS, rel=1e-9)
    # one action per idempotency key (model:tier:window): a verdict that decides the
    # same tier on the same window as the window itself shares its action
    first: dict[tuple[int, str], str] = {}
    for r in want:
        if r["decision"] and r["decision"].get("action"):
            first.setdefault((r["window_id"], r["tier"]), r["decision"]["action"])
    decided = sorted((w, a) for (w, _), a in first.items())
    acted = group.actions()
    assert len({k for k, _, _ in acted}) == len(acted)
    assert sorted((w, a) for _, w, a in acted) == decided
    assert decided, "the recording decides no action: the test would prove nothing"


@pytest.mark.parametrize(("instances", "policy"), [(1, "recording"), (2, "recording"),
                                                    (4, "recording"), (2, "segmented")],
                         ids=["1", "2", "4", "2-segmented"])
def test_instances_give_the_replay_timeline(
    instances, policy, request, topics, kafka_endpoint, kafka_group, tmp_path,
    driftwatch_daemon, service_config_factory,
) -> None:
    recording = request.getfixturevalue(policy)  # the same events, judged per segment or not
    config = _config(tmp_path, kafka_endpoint.bootstrap, topics, kafka_group(), recording,
                     service_config_factory)
    group = Group(tmp_path, config, driftwatch_daemon)
    for i in range(instances):
        group.start(f"i{i}")
    group.wait_windows(len(recording["want"]))
    # each instance counts the joins of its own partitions: together, every outcome's
    for d in group.daemons.values():
        d.wait_ready()
    group.daemons["i0"].wait_for("every outcome joined", lambda: sum(
        d.status()["models"][0]["labels"]["joined"] for d in group.daemons.values())
        == recording["joins"])
    _check_labelled(group, recording)
    group.stop()
    _check(group, recording["want"])


def _half(recording: dict, first: bool) -> dict[str, list[bytes]]:
    return {s: ls[: len(ls) // 2] if first else ls[len(ls) // 2:]
            for s, ls in recording["lines"].items()}


def _between(recording: dict, lo: float, hi: float) -> dict[str, list[bytes]]:
    """Each stream's lines whose event time is in [lo, hi)."""
    field = {"predictions": "ts", "outcomes": "outcome_ts"}
    return {s: [x for x in ls if lo <= float(orjson.loads(x)[field[s]]) < hi]
            for s, ls in recording["lines"].items()}


def _window(want: list[dict], window_id: int, cohort: bool = False) -> dict:
    return next(r for r in want if _line_id(r) == (window_id, cohort))


def test_the_decider_killed_between_the_log_and_its_outputs(
    segmented, kafka_endpoint, kafka_group, tmp_path, driftwatch_daemon, service_config_factory,
) -> None:
    """SIGKILL the deciding instance at its worst moment: a batch of windows durable in
    the pane log, none of its lines or actions written yet. Its partitions and the
    decision move to the other instance (from the pane log), which resumes after that
    batch; on restart the killed one completes the batch; nothing lost or doubled. The
    policy is segmented: the decider's ring and the partitions' open panes move with
    their segment sketches.

    The stream goes in three parts, so that the killed instance decides a window with an
    action (window 12, its outbox holds the action), is killed in a later batch, and the
    other instance decides the verdict on window 12's cohort, which repeats its tier: the
    same action key, which the group must not record a second time in a second outbox."""
    recording = segmented
    want = recording["want"]
    window, verdict = _window(want, 12), _window(want, 12, cohort=True)
    assert window["decision"]["action"] and verdict["decision"]["action"], "no repeated key"
    assert verdict["decision"]["tier"] == window["decision"]["tier"]
    # the verdict on 12 comes with the close of a later window (16 here): parts end half
    # a pane past a window's end, so the windows up to it close and the next does not
    judged_at = next(r for r in want[want.index(verdict) - 1::-1] if not r.get("cohort"))
    cut1 = window["end_time"] + 1.5 * PANE_S  # window 13 at most
    cut2 = judged_at["end_time"] - 0.5 * PANE_S  # not the verdict's window
    assert cut1 < cut2, (cut1, cut2)
    boot = kafka_endpoint.bootstrap
    topics = _topics(boot)
    _produce(boot, topics, _between(recording, -math.inf, cut1), slice(None))
    arm = tmp_path / "kill-the-decider"
    group = Group(tmp_path, _config(tmp_path, boot, topics, kafka_group(), recording,
                                    service_config_factory), driftwatch_daemon,
                  env={CRASH_HOOK: str(arm)})
    for name in ("a", "b"):
        group.start(name)
    group.wait_assigned("a", "b")
    victim = group.daemons["a"].wait_for("a decider", group.decider)
    group.daemons[victim].wait_for("window 12 decided", lambda: (12, False) in {
        _line_id(r) for r in group.records()}, 90.0)
    arm.touch()  # the decider's next batch kills it
    _produce(boot, topics, _between(recording, cut1, cut2), slice(None))
    killed = group.daemons[victim]
    killed.proc.wait(90)
    assert killed.proc.returncode == -signal.SIGKILL, killed.log()[-3000:]
    assert not arm.exists()
    survivor = "b" if victim == "a" else "a"
    group.daemons[survivor].wait_for("the survivor to decide",
                                     lambda: group.decider() == survivor, 90.0)
    _produce(boot, topics, _between(recording, cut2, math.inf), slice(None))
    group.daemons[survivor].wait_for("the verdict on 12 decided by the survivor", lambda: (
        12, True) in {_line_id(r) for r in group.records()}, 90.0)
    again = group.start(victim)
    group.wait_assigned(victim)
    group.wait_windows(len(want))
    _check_labelled(group, recording)
    group.stop()
    assert "completed the batch from window" in again.log(), again.log()[-3000:]
    _check(group, want)


def test_an_instance_added_mid_stream(
    recording, kafka_endpoint, kafka_group, tmp_path, driftwatch_daemon, service_config_factory,
) -> None:
    boot = kafka_endpoint.bootstrap
    topics = _topics(boot)
    _produce(boot, topics, _half(recording, True), slice(None))
    group = Group(tmp_path, _config(tmp_path, boot, topics, kafka_group(), recording,
                                    service_config_factory), driftwatch_daemon)
    group.start("a")
    group.wait_windows(3)
    group.start("b")
    group.wait_assigned("b")
    _produce(boot, topics, _half(recording, False), slice(None))
    group.wait_windows(len(recording["want"]))
    _check_labelled(group, recording)
    group.stop()
    _check(group, recording["want"])


def test_a_partition_without_traffic_holds_no_pane_back(
    recording, kafka_endpoint, kafka_group, tmp_path, driftwatch_daemon, service_config_factory,
) -> None:
    """Partition 0 gets nothing: past group.idle_timeout its owner marks it idle, /readyz
    says so, and the windows are the replay's of the same data (without partition 0)."""
    lines = {s: [x for x in ls if _partition(x) != 0] for s, ls in recording["lines"].items()}
    folder = tmp_path / "recording"
    folder.mkdir()
    for s, ls in lines.items():
        with gzip.open(folder / f"{s}.jsonl.gz", "wb") as fh:
            fh.writelines(ls)
    want = _replayed(folder, recording["policy"], recording["dir"] / "reference.parquet", lines)
    boot = kafka_endpoint.bootstrap
    topics = _topics(boot)
    _produce(boot, topics, lines, slice(None))
    group = Group(tmp_path, _config(tmp_path, boot, topics, kafka_group(), recording,
                                    service_config_factory, idle="1s"), driftwatch_daemon)
    d = group.start("a")
    group.wait_windows(len(want))
    d.wait_ready()
    ready = orjson.loads(d.get("/readyz")[1])["group"]
    (member,) = ready.values()
    assert 0 in member["idle_partitions"] and 0 in member["merge_ignores"], ready
    group.stop()
    # every partition's last event is in the same pane here, so a group whose partitions
    # have all gone idle closes no window beyond these
    _check(group, want)


def test_outcomes_not_co_partitioned_are_refused(
    recording, kafka_endpoint, kafka_group, tmp_path, driftwatch_daemon, service_config_factory,
) -> None:
    boot = kafka_endpoint.bootstrap
    tag = time.monotonic_ns()
    topics = {"predictions": create_topic(boot, f"group-p16-{tag}", PARTITIONS),
              "outcomes": create_topic(boot, f"group-o8-{tag}", 8)}
    config = _config(tmp_path, boot, topics, kafka_group(), recording, service_config_factory)
    d = driftwatch_daemon(config, tmp_path / "state")
    assert d.wait_exit() != 0
    last = d.log().strip().splitlines()[-1]
    assert "co-partitioned" in last and "has 8 partitions" in last, d.log()[-2000:]
    assert "Traceback" not in d.log()


def test_outcomes_on_other_partitions_than_their_predictions_are_refused(
    recording, kafka_endpoint, kafka_group, tmp_path, driftwatch_daemon, service_config_factory,
) -> None:
    """Equal partition counts, but the outcomes' producer partitions by another rule: the
    first events seen on both topics give it away."""
    boot = kafka_endpoint.bootstrap
    topics = _topics(boot)
    preds = recording["lines"]["predictions"][:400]
    ids = {orjson.loads(x)["application_id"] for x in preds}
    outs = [x for x in recording["lines"]["outcomes"] if orjson.loads(x)["application_id"] in ids]
    _produce(boot, topics, {"predictions": preds}, slice(None))
    _produce(boot, topics, {"outcomes": outs}, slice(None), shift=1)
    config = _config(tmp_path, boot, topics, kafka_group(), recording, service_config_factory)
    d = driftwatch_daemon(config, tmp_path / "state")
    assert d.wait_exit(90) != 0
    last = d.log().strip().splitlines()[-1]
    assert "co-partitioned" in last and "but on partition" in last, d.log()[-2000:]
    assert "Traceback" not in d.log()
