"""GPU pool logic: reservation, priority, limits, retries, off-peak, persistence, manifests.

The pool runs here on a scripted backend (jobs end when the test says so) and a ManualClock;
real processes are exercised in tests/integration/test_gpupool_local.py.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from driftwatch.clock import ManualClock
from driftwatch.errors import PoolError
from driftwatch.gpupool import (
    CHECKPOINT_ENV,
    Backend,
    Exit,
    GpuPool,
    JobSpec,
    JobState,
    Launch,
    OffPeakWindows,
    create_backend,
    detect_gpu_ids,
    reserved_gpu_count,
    reserved_gpu_ids,
)
from driftwatch.gpupool.errors import (
    BackendUnavailableError,
    BackendUnreachableError,
    JobSpecError,
    ManifestError,
    PoolConfigError,
    PoolStateError,
    UnknownJobError,
)
from driftwatch.gpupool.kubernetes import check_manifests, render_job, render_queue, to_yaml
from driftwatch.gpupool.local import LocalBackend

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(*args: int) -> float:
    return datetime(*args, tzinfo=BERLIN).timestamp()


class ScriptedBackend(Backend):
    """Attempts 'run' until the test ends them; a polite stop ends them unless told not to."""

    name = "scripted"

    def __init__(self, *, obey_stop: bool = True) -> None:
        self.refuse: Exception | None = None  # raised by the next starts while set
        self.launches: list[Launch] = []
        self.exits: dict[str, Exit] = {}
        self.stops: list[tuple[str, bool]] = []
        self.obey_stop = obey_stop

    def start(self, launch: Launch) -> dict[str, Any]:
        if self.refuse is not None:
            raise self.refuse
        self.launches.append(launch)
        return {"backend": self.name, "run": f"{launch.job_id}#{launch.attempt}"}

    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        return self.exits.get(handle["run"])

    def stop(self, handle: Mapping[str, Any], *, force: bool) -> None:
        self.stops.append((handle["run"], force))
        if force or self.obey_stop:
            self.exits.setdefault(handle["run"], Exit(-9 if force else -15))

    # what the test does to the 'processes'
    def end(self, job_id: str, code: int | None = 0) -> None:
        last = [la for la in self.launches if la.job_id == job_id][-1]
        self.exits[f"{job_id}#{last.attempt}"] = Exit(code)

    def started(self) -> list[str]:
        return [la.job_id.split("-", 1)[1] for la in self.launches]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(berlin(2024, 5, 8, 12, 0))  # a Wednesday noon


@pytest.fixture
def backend() -> ScriptedBackend:
    return ScriptedBackend()


def make_pool(tmp_path: Path, clock: ManualClock, backend: Backend, **kw: Any) -> GpuPool:
    kw.setdefault("gpus", 10)
    return GpuPool(tmp_path / "pool", clock=clock, backend=backend, **kw)


def spec(name: str, severity: str = "severe", **kw: Any) -> JobSpec:
    return JobSpec(name=name, argv=["train", name], severity=severity, **kw)


# -- reservation ---------------------------------------------------------------------------


def test_ten_gpus_at_twenty_percent_reserve_two_the_last_two():
    assert reserved_gpu_count(10, 0.2) == 2
    assert reserved_gpu_ids(tuple(str(i) for i in range(10)), 0.2) == ("8", "9")


@pytest.mark.parametrize(
    ("total", "fraction", "expected"),
    [
        (10, 0.2, 2),
        (9, 0.2, 1),
        (4, 0.2, 1),
        (1, 0.2, 1),
        (0, 0.2, 0),
        (8, 0.0, 0),
        (8, 1.0, 8),
        (100, 0.29, 29),
        (16, 0.25, 4),
    ],
)
def test_reservation_floors_but_keeps_one_gpu_when_there_is_any(total, fraction, expected):
    assert reserved_gpu_count(total, fraction) == expected


@pytest.mark.parametrize("fraction", [-0.1, 1.5])
def test_reservation_rejects_fractions_outside_zero_one(fraction):
    with pytest.raises(PoolConfigError, match="reserve fraction"):
        reserved_gpu_count(10, fraction)


def test_status_reports_capacity_and_reserved_share(tmp_path, clock, backend):
    status = make_pool(tmp_path, clock, backend).status()
    assert (status.capacity, status.reserved, status.in_use, status.free) == (10, 2, 0, 2)


def test_explicit_gpu_ids_are_reserved_from_the_end(tmp_path, clock, backend):
    pool = make_pool(
        tmp_path, clock, backend, gpus=["GPU-a", "GPU-b", "GPU-c"], reserve_fraction=0.5
    )
    assert pool.reserved_ids == ("GPU-c",)


def test_gpus_are_detected_with_nvidia_smi_when_not_configured(tmp_path, clock, backend):
    def fake_run(argv, **kw):
        assert argv == ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"]
        return subprocess.CompletedProcess(argv, 0, stdout="0\n1\n2\n3\n4\n", stderr="")

    ids = detect_gpu_ids(run=fake_run, which=lambda name: name)
    assert ids == ["0", "1", "2", "3", "4"]
    assert detect_gpu_ids(run=fake_run, which=lambda name: None) == []
    pool = make_pool(tmp_path, clock, backend, gpus=None, detect=lambda: ids)
    assert (pool.status().capacity, pool.reserved_ids) == (5, ("4",))


def test_a_pool_without_gpus_refuses_jobs_with_a_clear_error(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend, gpus=None, detect=lambda: [])
    with pytest.raises(PoolConfigError, match="no GPU reserved"):
        pool.submit(spec("a"))


# -- job specs -----------------------------------------------------------------------------


def test_argv_as_a_shell_string_is_rejected_with_the_list_to_write_instead():
    with pytest.raises(JobSpecError, match=r"not a shell string: write \['python', 'train.py'"):
        JobSpec(name="r", argv="python train.py --epochs 3")


@pytest.mark.parametrize(
    "bad",
    [
        {"argv": []},
        {"argv": ["ok", 3]},
        {"gpus": 0},
        {"time_limit_s": 0},
        {"retries": -1},
        {"time_limit_s": "soon"},
        {"severity": "catastrophic"},
        {"name": "has space"},
        {"env": {"CUDA_VISIBLE_DEVICES": "0"}},
    ],
)
def test_invalid_job_specs_are_rejected(bad):
    fields = {"name": "r", "argv": ["train"], **bad}
    with pytest.raises(JobSpecError):
        JobSpec(**fields)


def test_a_job_needing_more_gpus_than_reserved_is_refused(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    with pytest.raises(JobSpecError, match="needs 3 GPUs, the pool reserves 2"):
        pool.submit(spec("big", gpus=3))


def test_submitting_twice_with_the_same_key_queues_one_job(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    first = pool.submit(spec("r"), key="model-a/severe/w42")
    assert pool.submit(spec("r"), key="model-a/severe/w42") == first
    assert pool.status().queued == 1


def test_unknown_job_ids_raise_lookup_error(tmp_path, clock, backend):
    with pytest.raises(UnknownJobError):
        make_pool(tmp_path, clock, backend).get("nope")


# -- priority, leases, limits ----------------------------------------------------------------


def test_jobs_start_by_severity_then_age_never_beyond_the_reserved_gpus(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    for name, severity in [
        ("a", "mild"),
        ("b", "moderate"),
        ("c", "severe"),
        ("d", "mild"),
        ("e", "severe"),
    ]:
        pool.submit(spec(name, severity))
        clock.advance(1)
    assert pool.dispatch() and backend.started() == ["c", "e"]
    assert pool.dispatch() == []  # both reserved GPUs are leased
    status = pool.status()
    assert (status.in_use, status.running, status.queued) == (2, 2, 3)
    assert sorted(g for lease in status.leases.values() for g in lease) == ["8", "9"]
    for expected in ["b", "a", "d"]:
        running = [la for la in backend.launches if pool.get(la.job_id).state is JobState.RUNNING]
        backend.end(running[0].job_id)
        pool.poll()
        pool.dispatch()
        assert backend.started()[-1] == expected
    assert all(len(la.gpu_ids) == 1 and la.gpu_ids[0] in ("8", "9") for la in backend.launches)


def test_the_queue_is_strict_a_waiting_two_gpu_job_is_not_overtaken(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    pool.submit(spec("first", "mild"))
    pool.dispatch()
    pool.submit(spec("big", "severe", gpus=2))
    pool.submit(spec("small", "mild"))
    pool.dispatch()
    assert backend.started() == ["first"]  # "small" would fit, but "big" is ahead
    backend.end(backend.launches[0].job_id)
    pool.poll()
    pool.dispatch()
    assert backend.started() == ["first", "big"]
    assert backend.launches[-1].gpu_ids == ("8", "9")


def test_concurrent_job_limit(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend, max_concurrent_jobs=1)
    pool.submit(spec("a"))
    pool.submit(spec("b"))
    pool.dispatch()
    assert backend.started() == ["a"] and pool.status().free == 1


def test_time_limit_stops_the_job_and_it_ends_timed_out_without_retry(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    job = pool.submit(spec("slow", time_limit_s=60, retries=3))
    pool.dispatch()
    clock.advance(59)
    pool.poll()
    assert pool.get(job).state is JobState.RUNNING and backend.stops == []
    assert pool.next_due(clock.now()) == pytest.approx(clock.now() + 1)
    clock.advance(1)
    pool.poll()  # sends the polite stop; the scripted job obeys
    pool.poll()
    record = pool.get(job)
    assert record.state is JobState.TIMED_OUT and record.lease == () and record.attempts == 1
    assert "time limit of 60 s" in record.message and pool.status().in_use == 0


def test_a_job_ignoring_the_stop_is_killed_after_the_grace_period(tmp_path, clock):
    backend = ScriptedBackend(obey_stop=False)
    pool = make_pool(tmp_path, clock, backend, kill_grace_s=10)
    job = pool.submit(spec("stubborn", time_limit_s=5))
    pool.dispatch()
    clock.advance(5)
    pool.poll()
    clock.advance(9)
    pool.poll()
    assert pool.get(job).state is JobState.RUNNING  # still holds its GPU while it lives
    clock.advance(1)
    pool.poll()
    pool.poll()
    assert [force for _, force in backend.stops] == [False, True]
    assert pool.get(job).state is JobState.TIMED_OUT and pool.get(job).exit_code == -9


def test_failed_attempts_are_retried_then_the_job_fails(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    job = pool.submit(spec("flaky", retries=2))
    for attempt in (1, 2, 3):
        pool.dispatch()
        assert pool.get(job).attempts == attempt and pool.get(job).state is JobState.RUNNING
        backend.end(job, code=1)
        pool.poll()
        assert pool.status().in_use == 0
    record = pool.get(job)
    assert (record.state, record.failures, record.exit_code) == (JobState.FAILED, 3, 1)
    assert pool.dispatch() == []


def test_every_attempt_gets_the_same_checkpoint_dir_and_its_own_log(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    job = pool.submit(spec("r", retries=1))
    pool.dispatch()
    backend.end(job, code=1)
    pool.poll()
    pool.dispatch()
    first, second = backend.launches
    assert first.env[CHECKPOINT_ENV] == second.env[CHECKPOINT_ENV] == pool.get(job).checkpoint_dir
    assert first.log_path != second.log_path and second.env["DRIFTWATCH_ATTEMPT"] == "2"


def test_a_job_that_cannot_start_is_a_failed_attempt(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    job = pool.submit(spec("r", retries=0))
    backend.refuse = FileNotFoundError("no such file: 'train'")
    assert pool.dispatch() == []
    record = pool.get(job)
    assert record.state is JobState.FAILED and "could not start" in record.message


def test_while_the_backend_is_unreachable_jobs_stay_queued_without_using_retries(
    tmp_path, clock, backend
):
    pool = make_pool(tmp_path, clock, backend)
    job = pool.submit(spec("r", retries=0))
    backend.refuse = BackendUnreachableError("Ray at http://127.0.0.1:8265: refused")
    assert pool.dispatch() == []
    record = pool.get(job)
    assert (record.state, record.attempts, record.failures) == (JobState.QUEUED, 0, 0)
    assert "waiting for the backend" in record.message
    backend.refuse = None
    assert pool.dispatch() == [job]


def test_cancel_a_queued_and_a_running_job(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend, max_concurrent_jobs=1)
    running, queued = pool.submit(spec("a")), pool.submit(spec("b"))
    pool.dispatch()
    assert pool.cancel(queued).state is JobState.CANCELLED
    assert pool.cancel(running).state is JobState.RUNNING  # stopping
    pool.poll()
    assert pool.get(running).state is JobState.CANCELLED and pool.status().in_use == 0


# -- preemption ----------------------------------------------------------------------------


def test_a_severe_job_preempts_preemptible_mild_ones_which_resume_later(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    mild = pool.submit(spec("mild", "mild", gpus=2, preemptible=True, retries=0))
    pool.dispatch()
    clock.advance(100)
    severe = pool.submit(spec("severe", "severe"))
    pool.dispatch()  # asks the mild job to stop; its GPUs are not free yet
    assert backend.started() == ["mild"] and backend.stops == [(f"{mild}#1", False)]
    pool.poll()
    pool.dispatch()
    assert backend.started() == ["mild", "severe"]
    record = pool.get(mild)
    assert (record.state, record.preemptions, record.failures) == (JobState.QUEUED, 1, 0)
    backend.end(severe)
    pool.poll()
    pool.dispatch()
    resumed = backend.launches[-1]
    assert resumed.job_id == mild and resumed.env[CHECKPOINT_ENV] == record.checkpoint_dir


def test_non_preemptible_jobs_are_never_preempted(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    pool.submit(spec("mild", "mild", gpus=2))
    pool.dispatch()
    pool.submit(spec("severe", "severe"))
    pool.dispatch()
    assert backend.stops == []


# -- off-peak ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ((2024, 5, 8, 21, 59), False),  # Wednesday evening
        ((2024, 5, 8, 22, 0), True),  # window opens (inclusive)
        ((2024, 5, 8, 23, 59), True),
        ((2024, 5, 9, 0, 0), True),  # across midnight
        ((2024, 5, 9, 5, 59), True),
        ((2024, 5, 9, 6, 0), False),  # window closes (exclusive)
        ((2024, 5, 10, 12, 0), False),  # Friday noon
        ((2024, 5, 11, 0, 0), True),  # Saturday
        ((2024, 5, 12, 15, 30), True),  # Sunday
        ((2024, 5, 13, 5, 0), True),  # Monday early: Sunday night's window
        ((2024, 5, 13, 7, 0), False),
    ],
)
def test_off_peak_windows_cross_midnight_and_cover_weekends(when, expected):
    windows = OffPeakWindows(["22:00-06:00"], weekends=True, tz="Europe/Berlin")
    assert windows.contains(berlin(*when)) is expected


def test_off_peak_is_local_time_in_the_configured_zone():
    # 21:30 UTC is 23:30 in Berlin (summer time) but 17:30 in New York.
    t = datetime(2024, 5, 8, 21, 30, tzinfo=ZoneInfo("UTC")).timestamp()
    assert OffPeakWindows(["22:00-06:00"], tz="Europe/Berlin").contains(t)
    assert not OffPeakWindows(["22:00-06:00"], tz="America/New_York").contains(t)


def test_weekends_can_be_left_out_and_several_windows_given():
    windows = OffPeakWindows(["01:00-05:00", "12:00-13:00"], weekends=False, tz="Europe/Berlin")
    assert not windows.contains(berlin(2024, 5, 11, 10, 0))
    assert windows.contains(berlin(2024, 5, 11, 12, 30))
    assert windows.next_start(berlin(2024, 5, 11, 13, 0)) == berlin(2024, 5, 12, 1, 0)


def test_next_off_peak_start_on_friday_is_friday_night():
    windows = OffPeakWindows(["22:00-06:00"], weekends=True, tz="Europe/Berlin")
    assert windows.next_start(berlin(2024, 5, 10, 12, 0)) == berlin(2024, 5, 10, 22, 0)
    assert windows.next_start(berlin(2024, 5, 11, 12, 0)) == berlin(2024, 5, 11, 12, 0)


@pytest.mark.parametrize("bad", ["22-06", "25:00-06:00", "06:00-06:00", "ten to six"])
def test_bad_off_peak_windows_say_what_is_expected(bad):
    with pytest.raises(PoolConfigError, match="off-peak window"):
        OffPeakWindows([bad])


def test_unknown_timezone_is_a_config_error():
    with pytest.raises(PoolConfigError, match="unknown timezone"):
        OffPeakWindows(["22:00-06:00"], tz="Mars/Olympus")


def test_deferrable_jobs_wait_for_off_peak_hours(tmp_path, clock, backend):
    offpeak = OffPeakWindows(["22:00-06:00"], weekends=True, tz="Europe/Berlin")
    pool = make_pool(tmp_path, clock, backend, offpeak=offpeak)
    deferred = pool.submit(spec("nightly", "moderate", deferrable=True))
    urgent = pool.submit(spec("urgent", "mild", time_limit_s=24 * 3600))
    assert pool.get(deferred).state is JobState.DEFERRED
    assert pool.dispatch() == [urgent]
    assert pool.next_due(clock.now()) == berlin(2024, 5, 8, 22, 0)
    clock.set(berlin(2024, 5, 8, 22, 0))
    assert pool.dispatch() == [deferred]


# -- persistence ---------------------------------------------------------------------------


def test_queue_and_leases_survive_a_restart(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    ids = [pool.submit(spec(n)) for n in ("a", "b", "c")]
    pool.dispatch()
    pool.close()
    again = make_pool(tmp_path, clock, backend)  # the processes are still running
    status = again.status()
    assert (status.running, status.queued, status.in_use) == (2, 1, 2)
    assert again.dispatch() == []
    backend.end(ids[0])
    again.poll()
    assert again.dispatch() == [ids[2]]


def test_after_a_restart_jobs_whose_process_is_gone_are_retried_or_failed(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    retried = pool.submit(spec("retried", retries=1))
    failed = pool.submit(spec("failed", retries=0))
    pool.dispatch()
    pool.close()
    backend.end(retried, code=None)  # gone without an exit status
    backend.end(failed, code=None)
    again = make_pool(tmp_path, clock, backend)
    assert again.get(retried).state is JobState.QUEUED
    assert again.get(failed).state is JobState.FAILED
    assert "exit code unknown" in again.get(failed).message
    assert again.status().in_use == 0


def test_a_second_live_pool_on_the_same_state_is_refused(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    with pytest.raises(PoolStateError, match="in use by another pool"):
        make_pool(tmp_path, clock, backend)
    pool.close()
    make_pool(tmp_path, clock, backend).close()


def test_a_state_dir_of_another_backend_is_refused(tmp_path, clock, backend):
    pool = make_pool(tmp_path, clock, backend)
    pool.submit(spec("a"))
    pool.dispatch()
    pool.close()
    with pytest.raises(PoolStateError, match="runs on backend 'scripted'"):
        make_pool(tmp_path, clock, LocalBackend())


# -- registry ------------------------------------------------------------------------------


def test_unknown_backend_names_list_the_valid_ones():
    with pytest.raises(LookupError, match="valid backends: local, ray"):
        create_backend("slurm")
    with pytest.raises(PoolError, match="rendered, not run"):
        create_backend("kubernetes")
    assert isinstance(create_backend("local"), LocalBackend)


def test_missing_ray_asks_for_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(BackendUnavailableError, match=r"pip install 'driftwatch\[ray\]'"):
        create_backend("ray", address="http://127.0.0.1:8265")


# -- Kubernetes ----------------------------------------------------------------------------


def test_kueue_queue_reserves_twenty_percent_of_the_cluster_gpus():
    docs = render_queue(cluster_gpus=10, reserve_fraction=0.2, namespace="risk")
    kinds = [d["kind"] for d in docs]
    assert kinds[:3] == ["ResourceFlavor", "ClusterQueue", "LocalQueue"]
    cq = docs[1]
    assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    group = cq["spec"]["resourceGroups"][0]
    assert group["coveredResources"] == ["nvidia.com/gpu"]
    assert group["flavors"] == [
        {"name": "driftwatch-gpu", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 2}]}
    ]
    assert docs[2]["metadata"]["namespace"] == "risk"
    assert docs[2]["spec"]["clusterQueue"] == cq["metadata"]["name"]


def test_job_manifest_carries_gpus_deadline_retries_and_queue():
    job_spec = spec(
        "retrain-pd", gpus=2, time_limit_s=3600, retries=2, preemptible=True, env={"MODEL": "pd"}
    )
    job = render_job(job_spec, job_id="000007-retrain-pd", image="pd-trainer:3", namespace="risk")
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "driftwatch-retrain"
    assert job["spec"]["backoffLimit"] == 2
    assert job["spec"]["activeDeadlineSeconds"] == 3 * 3600  # every attempt's limit
    pod = job["spec"]["template"]["spec"]
    assert pod["activeDeadlineSeconds"] == 3600 and pod["restartPolicy"] == "Never"
    container = pod["containers"][0]
    assert container["command"] == ["train", "retrain-pd"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 2}
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["MODEL"] == "pd" and env[CHECKPOINT_ENV].endswith("/000007-retrain-pd")
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0]["onPodConditions"] == [{"type": "DisruptionTarget"}]
    docs = [*render_queue(10, namespace="risk"), job]
    check_manifests(docs)
    assert list(yaml.safe_load_all(to_yaml(docs))) == docs


def test_manifest_check_names_every_missing_field():
    job = render_job(spec("r"), job_id="000001-r", image="trainer:1")
    del job["spec"]["activeDeadlineSeconds"]
    del job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    queue = render_queue(10)
    del queue[1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
    with pytest.raises(ManifestError) as err:
        check_manifests([*queue, job])
    text = str(err.value)
    assert "spec.activeDeadlineSeconds" in text
    assert "resources.limits['nvidia.com/gpu']" in text
    assert "nvidia.com/gpu has no nominalQuota" in text


def test_manifest_check_finds_broken_references_and_uncovered_resources():
    job = render_job(
        spec("r"), job_id="000001-r", image="trainer:1", local_queue="other", requests={"cpu": "4"}
    )
    with pytest.raises(ManifestError) as err:
        check_manifests([*render_queue(10), job])
    assert "local queue 'other' missing" in str(err.value)
    assert "cpu not covered by Kueue" in str(err.value)


# -- reading the pool without waiting on it -------------------------------------------------


class StalledBackend(ScriptedBackend):
    """A backend whose poll hangs until released: a Ray head that accepts and never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def poll(self, handle: Mapping[str, Any]) -> Exit | None:
        self.entered.set()
        self.release.wait(30)
        return None


def test_active_jobs_are_read_while_a_backend_call_holds_the_pool(
        tmp_path: Path, clock: ManualClock) -> None:
    stalled = StalledBackend()
    pool = make_pool(tmp_path, clock, stalled)
    running, queued = pool.submit(spec("a"), key="m:1"), pool.submit(spec("b"), key="m:2")
    pool.dispatch()
    poller = threading.Thread(target=pool.poll, daemon=True)
    poller.start()
    assert stalled.entered.wait(10)  # poll now holds the pool's lock inside the backend
    seen: list[tuple[str, ...]] = []
    reader = threading.Thread(target=lambda: seen.append(
        tuple(sorted(r.job_id for r in pool.active()))), daemon=True)
    reader.start()
    reader.join(10)
    stuck = reader.is_alive()
    stalled.release.set()
    poller.join(10)
    assert not stuck, "active() waited for the stalled backend call"
    assert seen == [tuple(sorted((running, queued)))]
