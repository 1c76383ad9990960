"""Names driftwatch uses in the MLflow registry, and what it reads back about a version.

Aliases ``champion`` (production) and ``challenger`` (in shadow); tags for lineage and
verdicts; the run artifacts ``model/`` and ``reference_profile.json``.

>>> uri = embedded_tracking_uri("state")
>>> uri.startswith("sqlite:///"), uri.endswith("/state/mlflow.db")
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CHALLENGER",
    "CHAMPION",
    "MODEL_ARTIFACT",
    "PROFILE_ARTIFACT",
    "TAG_ACTION_KEY",
    "TAG_ALIAS_HISTORY",
    "TAG_DATA_WINDOW",
    "TAG_MADE_BY",
    "TAG_MODEL_LOGGED",
    "TAG_PARENT",
    "TAG_PREVIOUS_CHAMPION",
    "TAG_PROFILE",
    "TAG_RECALIBRATION_OF",
    "TAG_UPDATE_DIGEST",
    "TAG_VERDICT",
    "ModelVersionInfo",
    "embedded_tracking_uri",
    "made_by_driftwatch",
]

CHAMPION = "champion"
CHALLENGER = "challenger"
MODEL_ARTIFACT = "model"
PROFILE_ARTIFACT = "reference_profile.json"
TAG_ACTION_KEY = "driftwatch.action_key"
TAG_PARENT = "driftwatch.parent_version"
TAG_DATA_WINDOW = "driftwatch.data_window"
TAG_PROFILE = "driftwatch.profile_fingerprint"
TAG_VERDICT = "driftwatch.verdict"
TAG_PREVIOUS_CHAMPION = "driftwatch.previous_champion"
TAG_MODEL_LOGGED = "driftwatch.model_logged"
TAG_ALIAS_HISTORY = "driftwatch.alias_history"
#: what an online update learned (parent, learner, labelled rows), so the same update is
#: never registered twice, across restarts too
TAG_UPDATE_DIGEST = "driftwatch.update_digest"
#: On a challenger that recalibrates the champion's score (a monotone map of it): the
#: champion's version. Such a challenger ranks rows as the champion does.
TAG_RECALIBRATION_OF = "driftwatch.recalibration_of"
#: On a version one of driftwatch's actions made (``retrain``, ``online_update``,
#: ``shadow``, ``bootstrap``): trained or recalibrated on driftwatch's own coding (label
#: 1 bad, score P(bad)), it answers P(bad), so what the champion declares of the user's own
#: model (``score_is``, ``score_scale``) is never applied to it. A retraining job's version
#: gets it from the retrain action once the job registered it.
TAG_MADE_BY = "driftwatch.made_by"


def embedded_tracking_uri(state_dir: str | Path) -> str:
    """``sqlite:///<state>/mlflow.db`` for a state directory (made absolute)."""
    return f"sqlite:///{(Path(state_dir).absolute() / 'mlflow.db').as_posix()}"


def made_by_driftwatch(tags: Mapping[str, str]) -> bool:
    """Whether a version's ``tags`` say one of driftwatch's actions made it (see
    :data:`TAG_MADE_BY`): the champion's declarations are then not applied to it.

    >>> made_by_driftwatch({TAG_MADE_BY: "retrain"})
    True
    >>> made_by_driftwatch({TAG_ACTION_KEY: "bank:v1"})  # the user registered it so
    False
    """
    return bool(tags.get(TAG_MADE_BY))


@dataclass(frozen=True)
class ModelVersionInfo:
    """What driftwatch needs to know about one registered version."""

    name: str
    version: str
    run_id: str | None
    source: str
    tags: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()

    @classmethod
    def of(cls, mv: Any) -> ModelVersionInfo:
        return cls(
            name=mv.name,
            version=str(mv.version),
            run_id=mv.run_id or None,
            source=mv.source or "",
            tags=dict(mv.tags or {}),
            aliases=tuple(mv.aliases or ()),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "run_id": self.run_id,
            "source": self.source,
            "tags": dict(self.tags),
            "aliases": list(self.aliases),
        }
