"""IEEE-CIS's ``TransactionDT`` (seconds from an origin the data does not give, from 86400)
is no epoch time, so ``init`` does not take it by itself (replay would read it as 1970);
it used to say only "pass --time-field NAME if a field holds the time" on the record-order
line. It now names the field and the flag: ``pass --time-field TransactionDT``, which reads
it as seconds and prints the ``origin:`` line to add."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.timefields import offset_clock

from ._cli import run_cli


@given(st.sampled_from(["TransactionDT", "txn_dt", "DT", "eventDt"]),
       st.integers(0, 10**6), st.lists(st.integers(0, 3600), min_size=2, max_size=50))
def test_a_clock_named_dt_counting_up_is_named(name: str, start: int, steps: list[int]) -> None:
    values = (start + np.cumsum(steps)).tolist()
    assert offset_clock(["TransactionID", name], {name: values,
                                                  "TransactionID": values}.get) == name


@given(st.sampled_from(["TransactionID", "step", "amount", "DTI", "dt_flag"]),
       st.lists(st.integers(0, 3600), min_size=2, max_size=50))
def test_other_names_are_not(name: str, steps: list[int]) -> None:
    values = np.cumsum(steps).tolist()
    assert offset_clock([name], {name: values}.get) is None


def test_a_shuffled_or_epoch_dt_is_not_named() -> None:
    shuffled = [86400, 5, 90000, 7, 100000, 3]
    assert offset_clock(["TransactionDT"], {"TransactionDT": shuffled}.get) is None
    epoch = [1.7e9, 1.7e9 + 60]
    assert offset_clock(["TransactionDT"], {"TransactionDT": epoch}.get) is None


def _ieee(tmp: Path, n: int = 400) -> None:
    rng = np.random.default_rng(4)

    def frame(t0: int) -> pd.DataFrame:
        return pd.DataFrame({"TransactionDT": t0 + np.sort(rng.integers(0, 86400 * 60, n)),
                             "TransactionAmt": rng.lognormal(4.2, 1.1, n).round(3),
                             "ProductCD": rng.choice(list("WHCSR"), n)})

    ref = frame(86400)
    ref.insert(0, "TransactionID", np.arange(2987000, 2987000 + n))
    ref.insert(1, "isFraud", rng.integers(0, 2, n))
    ref.to_csv(tmp / "ref.csv", index=False)
    live = frame(86400 * 183)
    live.insert(0, "TransactionID", np.arange(3100000, 3100000 + n))
    live["score"] = rng.random(n).round(5)
    live.to_csv(tmp / "scored.csv", index=False)
    pd.DataFrame({"TransactionID": live["TransactionID"],
                  "isFraud": rng.integers(0, 2, n)}).to_csv(tmp / "outcomes.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "scored.csv"), "--outcomes", str(tmp / "outcomes.csv"),
                    "--model", "ieee", "--connector-out", str(tmp / "c.yaml"),
                    "--policy-out", str(tmp / "p.yaml"), "--force", *extra], capsys)


def test_init_names_the_time_field_to_pass_and_reads_it_as_seconds_when_passed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ieee(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("event time:"))
    assert "record order" in line and "pass --time-field TransactionDT" in line, out
    assert "not from 1970, so it is not taken" in line, out
    code, out, err = _init(tmp_path, capsys, "--time-field", "TransactionDT")
    assert code == 0, err
    assert "event time: TransactionDT" in out and "origin:" in out, out
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert stream["fields"]["event_time"] == {"path": "TransactionDT", "unit": "s"}
