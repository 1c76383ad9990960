"""``-i`` given more than once adds files, as a user writing ``-i preds -i outcomes``
expects: before, argparse kept the last one only, and a replay silently read the outcomes
file alone."""

from __future__ import annotations

import pytest

from driftwatch.cli import build_parser


@pytest.mark.parametrize("command", [
    ["replay", "-c", "c.yaml", "-o", "out"],
    ["produce", "-c", "c.yaml"],
])
def test_each_input_option_adds_its_files(command: list[str]) -> None:
    args = build_parser().parse_args(
        [*command, "-i", "predictions=p.jsonl", "extra.jsonl", "--input", "outcomes=o.jsonl"])
    assert args.input == ["predictions=p.jsonl", "extra.jsonl", "outcomes=o.jsonl"]
