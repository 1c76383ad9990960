"""IEEE-CIS's outcomes carry a ``TransactionDT`` of their own, seconds from the same unstated
start as the predictions'. With ``--time-field TransactionDT`` init read the predictions'
clock but left the outcomes on arrival (``event_time: {source: arrival}``): read ahead of
the predictions, every outcome joined at once (label delay 0, ``late_predictions`` on
every join), whenever it came. It now reads the outcomes' field of the same name (or
spelled otherwise) on the predictions' clock, says so, and measures the label wait on it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.plandata import StreamPlan
from driftwatch.onboard.timefields import same_clock

from ._cli import init_then_replay, run_cli

DAY = 86400
ORIGIN = "2017-11-30T00:00:00Z"


def _ieee(tmp: Path, n: int = 600, delay_days: int = 30, out_time: str = "TransactionDT",
          out_values: str = "offsets") -> None:
    """An IEEE-CIS-shaped recording: predictions in ``TransactionDT`` order (seconds from
    an unstated start), outcomes ``delay_days`` later in their own ``out_time`` field,
    as ``out_values``: ``offsets`` (the same clock) or ``epoch`` (another)."""
    rng = np.random.default_rng(8)

    def frame(t0: int) -> pd.DataFrame:
        return pd.DataFrame({"TransactionDT": t0 + np.sort(rng.integers(0, DAY * 60, n)),
                             "TransactionAmt": rng.lognormal(4.2, 1.1, n).round(3),
                             "ProductCD": rng.choice(list("WHCSR"), n)})

    ref = frame(DAY)
    ref.insert(0, "TransactionID", np.arange(2987000, 2987000 + n))
    ref.insert(1, "isFraud", (rng.random(n) < 0.1).astype(int))
    ref.to_csv(tmp / "ref.csv", index=False)
    live = frame(DAY * 183)
    live.insert(0, "TransactionID", np.arange(3100000, 3100000 + n))
    live["score"] = rng.random(n).round(5)
    live.to_csv(tmp / "live.csv", index=False)
    later = live["TransactionDT"] + delay_days * DAY
    pd.DataFrame({"TransactionID": live["TransactionID"],
                  out_time: later if out_values == "offsets" else later + 1_600_000_000,
                  "isFraud": (rng.random(n) < 0.1).astype(int)}).to_csv(tmp / "out.csv",
                                                                        index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model",
                    "ieee", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml"), "--pane", "100", "--force", *extra], capsys)


def _event_times(tmp: Path) -> dict[str, dict[str, str]]:
    streams = yaml.safe_load((tmp / "c.yaml").read_text())["source"]["streams"]
    return {k: v["fields"]["event_time"] for k, v in streams.items()}


def _line(out: str, start: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith(start))


_PREDS = StreamPlan("predictions", None, "id", "TransactionDT",  # type: ignore[arg-type]
                    time_unit="s", time_offsets=True)


@given(st.sampled_from(["TransactionDT", "transaction_dt", "transaction.dt", "TRANSACTION_DT"]),
       st.integers(0, 10**7), st.lists(st.integers(0, 10**5), min_size=1, max_size=40))
def test_the_outcomes_field_of_the_predictions_clock_is_found_in_any_spelling(
        name: str, start: int, steps: list[int]) -> None:
    values = (start + np.cumsum(steps)).tolist()
    assert same_clock(_PREDS, ["TransactionID", name], {name: values}.get) == name


@given(st.sampled_from([[1.7e9, 1.7e9 + 60], ["2018-01-01", "2018-01-02"], [-5, 10], [None]]))
def test_values_that_do_not_count_from_the_same_start_are_not_taken(values: list) -> None:
    assert same_clock(_PREDS, ["TransactionDT"], {"TransactionDT": values}.get) is None


def test_predictions_without_a_time_field_give_the_outcomes_none() -> None:
    preds = StreamPlan("predictions", None, "id", None,  # type: ignore[arg-type]
                       time_source="order")
    assert same_clock(preds, ["TransactionDT"], {"TransactionDT": [1, 2]}.get) is None


@pytest.mark.parametrize("out_time", ["TransactionDT", "transaction_dt"])
def test_time_field_reads_the_outcomes_time_on_the_predictions_clock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], out_time: str) -> None:
    _ieee(tmp_path, out_time=out_time)
    code, out, err = _init(tmp_path, capsys, "--time-field", "TransactionDT")
    assert code == 0, err
    line = _line(out, "outcomes time:")
    assert line.startswith(f"outcomes time: {out_time} "), line
    assert ("the predictions' time field TransactionDT (--time-field), read as theirs "
            "(unit: s, a count from the same start)") in line, line
    assert "not at its arrival; give it the predictions' origin: too" in line, line
    assert _event_times(tmp_path) == {"predictions": {"path": "TransactionDT", "unit": "s"},
                                      "outcomes": {"path": out_time, "unit": "s"}}
    text = (tmp_path / "c.yaml").read_text()
    assert "the instant of 0, the predictions' own" in text, text


def test_the_outcomes_stay_on_arrival_where_their_field_is_another_clock(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ieee(tmp_path, out_values="epoch")
    code, out, err = _init(tmp_path, capsys, "--time-field", "TransactionDT")
    assert code == 0, err
    assert _line(out, "outcomes time:").startswith("outcomes time: arrival "), out
    assert _event_times(tmp_path)["outcomes"] == {"source": "arrival"}


def test_without_time_field_both_are_read_in_record_order_as_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ieee(tmp_path)
    code, _, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert _event_times(tmp_path) == {"predictions": {"source": "order"},
                                      "outcomes": {"source": "arrival"}}


def test_the_label_wait_is_measured_between_two_counts_from_one_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ieee(tmp_path, delay_days=200)
    code, out, err = _init(tmp_path, capsys, "--time-field", "TransactionDT")
    assert code == 0, err
    assert "label wait: 400d" in out, out
    assert yaml.safe_load((tmp_path / "p.yaml").read_text())["labels"] == {"ttl": "400d"}


def _replay(tmp: Path, capsys: pytest.CaptureFixture[str], name: str,
            policy: str = "p.yaml") -> tuple[dict, str]:
    code, said, err = run_cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                               str(tmp / policy), "--input", str(tmp / "live.csv"),
                               str(tmp / "out.csv"), "--out", str(tmp / name)], capsys)
    assert code == 0, err
    return json.loads((tmp / name / "summary.json").read_text()), said


def test_a_replay_windows_and_ages_the_outcomes_on_their_own_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _ieee(tmp_path)
    init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                     outcomes="out.csv", init_flags=["--time-field", "TransactionDT",
                                                     "--pane", "100"])
    # the user adds the origin init asked for, the same to both streams
    text = (tmp_path / "c.yaml").read_text()
    (tmp_path / "c.yaml").write_text(text.replace(
        "{path: TransactionDT, unit: s}", f'{{path: TransactionDT, unit: s, origin: "{ORIGIN}"}}'))
    summary, said = _replay(tmp_path, capsys, "dated")
    labels = summary["labels"]
    assert labels["joined"] == 600 and labels["late_predictions"] == 0, labels
    assert summary["label_delay"]["p50"] == 30 * DAY, summary["label_delay"]
    assert summary["first_event"].startswith("2018-06-"), summary  # origin + 183 days
    assert "outcomes read ahead" not in said and "outcomes_read_ahead" not in summary
    # outcomes 30 days late against a 20-day wait: their predictions expire first
    policy = yaml.safe_load((tmp_path / "p.yaml").read_text())
    policy["labels"] = {"ttl": "20d"}
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(policy))
    summary, said = _replay(tmp_path, capsys, "short", "short.yaml")
    assert summary["labels"]["expired"] > 0 and "predictions expired:" in said, said
