"""The reference dataset as the monitor reads it, for actions.

An action that registers a version without a profile of its own (a champion the bank
registered without one), that starts a learner on reference rows, or that exports them for
a retraining must read the reference with the same conventions the monitor was built with:
the policy's ``reference:`` columns (score column and ``score_is``, label coding,
decision, ``ignore:``, segment), the connector's feature types, missing values, percent
and money text, and score scale. Read otherwise, the id column becomes a feature, the label
disappears or the score flips, and the monitor that adopts that profile on a promotion
judges against another reference than before. The composition roots build one
:class:`ReferenceReader` where they build the monitor's profile and hand it to the
executor.

>>> ReferenceReader().conventions().label
'label'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from driftwatch.windows.conventions import TableConventions
from driftwatch.windows.profile import ReferenceProfile

__all__ = ["ReferenceReader", "is_saved_profile"]


def is_saved_profile(path: str | Path) -> bool:
    """Whether ``path`` names a saved profile (which holds no rows) rather than a table."""
    return Path(path).name.endswith((".json", ".json.gz"))


@dataclass(frozen=True)
class ReferenceReader:
    """Reads a reference file as the monitor does (see the module doc).

    ``policy`` supplies the ``reference:`` columns and the bin settings; ``kinds``,
    ``missing``, ``formats`` and ``score_scale`` are the connector's feature types,
    missing values, percent/money text formats and score scale. Left empty, the
    defaults apply (a table whose columns are already named score, label, decision).
    """

    policy: Any = None
    kinds: Mapping[str, str] | None = None
    missing: Any = None
    formats: Mapping[str, str] = field(default_factory=dict)
    score_scale: Any = None

    @classmethod
    def of(cls, policy: Any, connector: Any = None) -> ReferenceReader:
        """The reader for ``policy``'s reference as ``connector`` feeds the monitor (its
        ``type:`` kinds, ``missing_values``, percent/money formats and score scale); the
        policy's columns alone without a connector. The monitor's profile and the actions'
        are both read through it, so they cannot differ."""
        if connector is None:
            return cls(policy=policy)
        score_is = policy.reference.score_is if policy is not None else "p_bad"
        return cls(policy=policy, kinds=connector.declared_kinds(),
                   missing=connector.missing_values(), formats=dict(connector.text_formats()),
                   score_scale=connector.score_scale(score_is))

    def conventions(self) -> TableConventions:
        """The policy's ``reference:`` columns (the defaults without a policy)."""
        table = getattr(self.policy, "reference", None)
        return table.conventions() if table is not None else TableConventions()

    def profile(self, path: str | Path) -> ReferenceProfile:
        """The reference profile of ``path``: the one the monitor builds from it."""
        from driftwatch.policy.levels import load_reference

        return load_reference(path, self.policy, kinds=self.kinds, missing=self.missing,
                              formats=self.formats, score_scale=self.score_scale)

    def rows(self, path: str | Path) -> pd.DataFrame | None:
        """The rows of the reference table at ``path`` as live rows hold them: the label
        as 1 bad / 0 good (NaN pending) in column ``label``, the score as P(bad) in
        ``score``, the decision as approve/decline in ``decision``, ignored columns
        dropped, percent and money text as numbers, the connector's missing values of a
        feature (``-999``, ``"?"``) as missing. None for a saved profile."""
        from driftwatch.registry.trial import reference_rows

        if is_saved_profile(path):
            return None
        return reference_rows(path, self.conventions(), formats=self.formats,
                              score_scale=self.score_scale, missing=self.missing)
