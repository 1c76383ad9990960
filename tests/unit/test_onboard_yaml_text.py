"""Any column name ``init`` writes into the connector and the policy reads back as itself.

Found by the onboarding fuzz (test_onboard_any_table): a column named with a character past
U+FFFF (an emoji, a rare CJK ideograph) was written as JSON's two surrogate escapes, which
YAML refuses, so ``policy check`` failed on the files ``init`` had just written.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from driftwatch.onboard.write import q
from driftwatch.yamlio import load_yaml


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text())
@example("\U0001F600")
@example("\U00029dc7 and \x05")
@example('quote " and \\ backslash')
@example("yes")
def test_a_written_name_reads_back_as_itself(name: str) -> None:
    doc = load_yaml(f"features:\n  - {q(name)}\nk: {q(name)}\n", file="p.yaml")
    assert doc.data == {"features": [name], "k": name}
