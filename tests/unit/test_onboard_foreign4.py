"""``init`` and ``replay`` on the shapes of more public tables and streams: Lending Club
(a ``loan_status`` with four outcome texts in the reference, sent by the outcomes
service only)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.onboard.outcomewords import LOAN_STATES

from ._cli import run_cli as _cli

_STATUSES = ["Fully Paid", "Charged Off", "Does not meet the credit policy. Status:Fully Paid",
             "Does not meet the credit policy. Status:Charged Off"]


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample", str(tmp / "live.csv"),
                 "--outcomes", str(tmp / "out.csv"), "--model", "m", "--connector-out",
                 str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def _lending_club(tmp: Path, n: int = 400, status: str = "loan_status") -> None:
    rng = np.random.default_rng(5)
    ref = pd.DataFrame({"loan_amnt": rng.integers(1000, 35000, n).astype(float),
                        "dti": rng.gamma(4, 4.5, n).round(2),
                        "grade": rng.choice(list("ABCDEFG"), n),
                        status: rng.choice(_STATUSES, n, p=[.7, .2, .06, .04])})
    ref.to_csv(tmp / "ref.csv", index=False)
    live = ref.drop(columns=[status])
    live.insert(0, "id", np.arange(68_000_000, 68_000_000 + n))
    live.insert(1, "issue_d", rng.choice(["Jan-2016", "Feb-2016"], n))
    live.to_csv(tmp / "live.csv", index=False)
    out = pd.DataFrame({"id": live["id"], status: rng.choice(
        [*_STATUSES, "Current"], n)})
    out.to_csv(tmp / "out.csv", index=False)


def test_a_several_valued_status_only_the_outcomes_carry_is_the_label(tmp_path, capsys):
    """A loan status named unlike a label (four texts) was named as a reference column
    missing from the predictions, with the hint to --ignore it: following that lost the
    label."""
    _lending_club(tmp_path, status="final_status")
    # its words are outcome words (Charged Off, Fully Paid, after 'Status:' too): read
    # without --label-bad, as with it
    for flags in ((), ("--label-bad", "Charged Off", "--label-bad",
                       "Does not meet the credit policy. Status:Charged Off")):
        code, out, err = _init(tmp_path, capsys, "--force", *flags)
        assert code == 0, err
        assert "label: final_status" in out and "4 distinct values, in the outcomes sample" \
            in out
        label = yaml.safe_load((tmp_path / "p.yaml").read_text())["reference"]["label"]
        assert label == {"column": "final_status",
                         "bad": ["Charged Off",
                                 "Does not meet the credit policy. Status:Charged Off"],
                         "good": ["Does not meet the credit policy. Status:Fully Paid",
                                  "Fully Paid"]}
        stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
            "outcomes"]
        # Current, then the loan states the sample lacks: pending when they come
        assert stream["fields"]["label"]["pending"] == ["Current", *LOAN_STATES[1:]]


def test_a_several_valued_status_of_unknown_words_asks_which_are_bad(tmp_path, capsys):
    _lending_club(tmp_path, status="final_status")
    for name in ("ref.csv", "out.csv"):
        df = pd.read_csv(tmp_path / name)
        df["final_status"] = df["final_status"].str.replace("Charged Off", "Sold")
        df.to_csv(tmp_path / name, index=False)
    code, _, err = _init(tmp_path, capsys)
    assert code == 2
    assert "cannot tell which label value is bad" in err and "of final_status" in err
    assert "--label-bad VALUE" in err and "--ignore" not in err


def _timeline(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "timeline.jsonl").read_text().splitlines()]


_LENGTHS = ["10+ years", "< 1 year", "2 years", "n/a", "None"]


def _emp_length(tmp: Path, n: int = 600) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A reference CSV and a stream of the same applications whose ``emp_length`` holds
    ``n/a`` and ``None`` as text (both read as missing from a CSV)."""
    rng = np.random.default_rng(8)
    ref = pd.DataFrame({"dti": rng.gamma(4, 4.5, n).round(2),
                        "emp_length": rng.choice(_LENGTHS, n),
                        "score": rng.uniform(0, 1, n).round(4)})
    ref.to_csv(tmp / "ref.csv", index=False)
    live = ref.copy()
    live.insert(0, "id", [f"a{i}" for i in range(n)])
    live.insert(1, "ts", 1_700_000_000 + 60 * np.arange(n))
    return ref, live


def _replay(tmp: Path, capsys: pytest.CaptureFixture[str], live: str) -> list[dict]:
    code, _, err = _cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                         str(tmp / "p.yaml"), "--input", str(tmp / live), "--out",
                         str(tmp / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    return _timeline(tmp / "run")


def _counts(records: list[dict]) -> tuple[int, int, int]:
    """(events, missing, unseen) of emp_length over the windows."""
    f = [r["features"]["emp_length"] for r in records]
    return (sum(r["n_events"] for r in records), sum(x["missing"] for x in f),
            sum(x["unseen"] for x in f))


def test_a_csv_stream_reads_none_as_missing_as_the_reference_does(tmp_path, capsys):
    """pandas reads a reference's ``None`` as missing, pyarrow kept it as text in a CSV
    stream: a level the reference never saw, in every window."""
    _, live = _emp_length(tmp_path)
    live.to_csv(tmp_path / "live.csv", index=False)
    code, _, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                         str(tmp_path / "live.csv"), "--model", "m", "--connector-out",
                         str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                        capsys)
    assert code == 0, err
    records = _replay(tmp_path, capsys, "live.csv")
    missing = int(live["emp_length"].isin(["n/a", "None"]).sum())
    assert _counts(records) == (600, missing, 0)
    assert not any(r["decision"]["data_quality_fault"] for r in records)


def test_init_reads_a_json_streams_na_text_as_missing_like_the_csv_reference(tmp_path, capsys):
    """A JSON service sends Lending Club's emp_length ``n/a`` as text; the reference CSV
    read it as missing, so every window had a new category (15% of rows) and a severe
    data-quality fault."""
    _, live = _emp_length(tmp_path)
    with (tmp_path / "live.jsonl").open("w") as f:
        for row in live.to_dict("records"):
            f.write(json.dumps(row) + "\n")
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.jsonl"), "--model", "m", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                          capsys)
    assert code == 0, err
    n_na = int((live["emp_length"] == "n/a").sum())
    n_none = int((live["emp_length"] == "None").sum())
    assert f"'None' in {n_none}, 'n/a' in {n_na} of 600 sample records" in out
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert fields["missing_values_by_feature"] == {"emp_length": ["None", "n/a"]}
    assert _counts(_replay(tmp_path, capsys, "live.jsonl")) == (600, n_na + n_none, 0)


def test_a_flag_sent_as_json_booleans_is_read_side_for_side(tmp_path, capsys):
    """Home Credit's FLAG_OWN_CAR is Y/N in the reference and true/false from a JSON
    service: init warned that the column may name a file or batch, and replay saw a new
    category on every record."""
    rng = np.random.default_rng(9)
    n = 600
    ref = pd.DataFrame({"AMT_CREDIT": rng.lognormal(13, .5, n).round(0),
                        "FLAG_OWN_CAR": rng.choice(["Y", "N"], n, p=[.34, .66]),
                        "score": rng.uniform(0, 1, n).round(4)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    with (tmp_path / "live.jsonl").open("w") as f:
        for i, row in enumerate(ref.to_dict("records")):
            row["FLAG_OWN_CAR"] = row["FLAG_OWN_CAR"] == "Y"
            f.write(json.dumps({"SK_ID_CURR": 100002 + i, "ts": 1_700_000_000 + 60 * i, **row})
                    + "\n")
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.jsonl"), "--model", "m", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")],
                          capsys)
    assert code == 0, err
    assert ("FLAG_OWN_CAR: flag" in out and "'N', 'Y' in the reference, 'false', 'true' in "
            "the sample: each read as the reference's value of the same side" in out)
    assert "warning: FLAG_OWN_CAR" not in out
    records = _replay(tmp_path, capsys, "live.jsonl")
    levels = {"N": 0, "Y": 0}
    for r in records:
        f = r["features"]["FLAG_OWN_CAR"]
        assert f["unseen"] == 0
        for k, v in f["levels"].items():
            levels[k] += v
    assert levels == ref["FLAG_OWN_CAR"].value_counts().to_dict()


def test_a_loan_status_in_the_predictions_is_the_label_not_a_feature(tmp_path, capsys):
    """With no outcomes sample, Lending Club's loan_status (four texts) in the predictions
    was taken for a categorical feature: the outcome measured as an input."""
    _lending_club(tmp_path)
    live = pd.read_csv(tmp_path / "live.csv")
    live["loan_status"] = pd.read_csv(tmp_path / "out.csv")["loan_status"]
    live.to_csv(tmp_path / "live.csv", index=False)
    args = ["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
            str(tmp_path / "live.csv"), "--model", "m", "--connector-out",
            str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")]
    code, out, err = _cli(args, capsys)  # Charged Off, Fully Paid: outcome words
    assert code == 0, err
    assert "label: loan_status" in out and "4 outcome texts" in out
    assert "label in the predictions: loan_status" in out
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    assert "loan_status" not in fields["features"]
    assert fields["label"]["pending"] == ["Current", *LOAN_STATES[1:]]
